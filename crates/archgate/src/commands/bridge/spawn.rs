//! Starting the daemon when no one answers on the bridge socket.
//!
//! A daemon belongs to a desktop session, so one is started only where a session is found: the
//! systemd user manager answers `systemctl --user show-environment` for this runtime directory
//! (its `XDG_RUNTIME_DIR` is the bridge's), or the runtime directory holds the session bus or a
//! Wayland socket. Then `setsid archgate serve --http --detached` is spawned through
//! archgate_exec (own session and process group, stdio on /dev/null; it logs to `daemon.log`
//! in the state directory). When the configured port is taken (another daemon of another runtime
//! directory), the new one listens on a free port. Without a session there is no daemon to
//! start: the bridge serves in-process and says so.
//!
//! **The daemon's environment is the session's, never the client's** (issue 33, item 8). The
//! daemon serves every client after the one whose bridge started it, so what that client had in
//! its environment must not become every client's. When the user manager answers, the daemon
//! starts from a cleared environment with the manager's variables only (those
//! `archgate_exec::env::TABLE` names; `PATH` rebuilt from trusted directories). Without a
//! manager (a session whose compositor never imported its variables) it starts from a cleared
//! environment too, holding what the person's passwd entry and the runtime directory show
//! (`session.rs`): never the bridge's own (attack 2 F6: that fallback handed the first client's
//! `PATH`, `HOME` and `XDG_*` to the daemon serving everyone; `adversary/daemon_env.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_core::paths::Paths;
use archgate_exec::{CommandSpec, run_for_person, spawn_for_person};

use super::dirs::SessionDirs;

/// Where the daemon's environment comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum Session {
    /// The systemd user manager's environment for this runtime directory.
    Manager(Vec<(String, String)>),
    /// Only the runtime directory (held here) shows a session (the session bus or a Wayland
    /// socket).
    Sockets(PathBuf),
}

/// The session's environment as the systemd user manager holds it, or where the runtime
/// directory shows a session; `Err` says why there is none.
async fn session_env(paths: &Paths) -> Result<Session, String> {
    let base = paths.runtime_dir.parent().unwrap_or(Path::new("/"));
    // Asked with the runtime directory the daemon will serve, on an otherwise cleared
    // environment: a bridge started without XDG_RUNTIME_DIR (or with another bus address) must
    // not make the manager unreachable and so force the fallback (attack 2 F6).
    let spec = CommandSpec::new("systemctl")
        .args(["--user", "show-environment"])
        .clear_env()
        .env("XDG_RUNTIME_DIR", base.to_string_lossy().into_owned())
        .timeout(Duration::from_secs(3));
    let manager = match run_for_person(spec).await {
        Ok(o) if o.success() => Some(parse_environment(&o.stdout_lossy())),
        Ok(o) => {
            tracing::debug!(
                "systemctl --user show-environment: {}",
                o.stderr_lossy().trim()
            );
            None
        }
        Err(e) => {
            tracing::debug!("systemctl --user show-environment: {e}");
            None
        }
    };
    // The manager's session is this runtime directory's only when it names the same one (a
    // bridge with another XDG_RUNTIME_DIR — a test's, a container's — is not in that session).
    if let Some(env) = manager {
        let same = env
            .iter()
            .find(|(k, _)| k == "XDG_RUNTIME_DIR")
            .is_some_and(|(_, v)| same_dir(Path::new(v), base));
        if same {
            return Ok(Session::Manager(env));
        }
    }
    if has_session_socket(base) {
        return Ok(Session::Sockets(base.to_owned()));
    }
    Err(format!(
        "no desktop session to start a daemon in (no systemd user manager for this runtime directory, no session bus or Wayland socket in {})",
        base.display()
    ))
}

/// `KEY=VALUE` lines (systemd quotes values with `$'…'` only when they hold odd characters;
/// those are left out rather than guessed at).
pub fn parse_environment(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, v)| {
            !k.is_empty()
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !v.starts_with("$'")
        })
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

fn has_session_socket(dir: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        (name == "bus" || (name.starts_with("wayland-") && !name.ends_with(".lock")))
            && e.file_type().is_ok_and(|t| t.is_socket())
    })
}

/// The port a started daemon listens on: the configured one when free; a free one when the person
/// holds it already (another daemon of theirs, for another runtime directory). Never a quiet
/// move away from a port **another uid** holds: the person's HTTP clients configured for it would
/// send their token and calls to that process, so no daemon is started and the reason is said
/// (attack 3 F12; `e2e/bridge.rs` `a_port_held_by_another_user_is_said_not_moved_from`).
fn daemon_port(port: u16) -> Result<u16, String> {
    if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
        return Ok(port);
    }
    use crate::server::port_holder::{Holder, holder};
    match holder(port) {
        Holder::Me => Ok(0),
        // Freed since the bind failed.
        Holder::Nobody => Ok(port),
        Holder::Other(uid) => {
            let why = format!(
                "127.0.0.1:{port}, archgate's configured port, is held by uid {uid}, not you: your HTTP \
                 clients configured for it would send their token and calls to that process. archgate \
                 does not move quietly; free the port, or choose another with [server] port and \
                 `archgate client-config`"
            );
            tracing::warn!("{why}");
            Err(why)
        }
        Holder::Unnamed => {
            let why = format!(
                "127.0.0.1:{port}, archgate's configured port, is taken and its holder cannot be \
                 named; archgate does not move quietly to another port"
            );
            tracing::warn!("{why}");
            Err(why)
        }
    }
}

/// Spawns a detached daemon for these paths; `Err` says why none was started.
pub async fn start_daemon(config: Option<PathBuf>, paths: &Paths) -> Result<(), String> {
    let session = session_env(paths).await?;
    // The person's files are where the session puts them, never where this bridge's
    // environment does (attack 4 F4): a client that moved them gets no shared daemon.
    let dirs = match &session {
        Session::Manager(env) => SessionDirs::from_vars(env),
        Session::Sockets(runtime) => SessionDirs::from_session_process(runtime).await,
    };
    let base = paths.runtime_dir.parent().unwrap_or(Path::new("/"));
    if let Some(why) = super::dirs::differs(&dirs, base, config.as_deref()) {
        return Err(format!(
            "this client places archgate's files elsewhere than the desktop session does ({why}); \
             the daemon serves every client, so it starts only with the session's files, and this \
             client is served in its own process"
        ));
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find archgate itself: {e}"))?;
    let (cfg, _) = crate::app::config_and_paths(config.clone()).map_err(|e| e.to_string())?;
    let port = daemon_port(cfg.server.port)?;
    // Through util-linux's `setsid`: a new session (no terminal's hangup reaches it), which a
    // process group leader — what archgate_exec makes of every program — cannot enter itself.
    let mut spec = CommandSpec::new("setsid").arg(exe.to_string_lossy().into_owned());
    if let Some(c) = &config {
        spec = spec.arg("--config").arg(c.to_string_lossy().into_owned());
    }
    spec = spec
        .args(["serve", "--http", "--detached", "--port"])
        .arg(port.to_string());
    spec = daemon_env(spec, session, &dirs);
    // `setsid` is found and checked like any program; archgate is the binary running now.
    let pid = spawn_for_person(spec).map_err(|e| format!("starting the daemon failed: {e}"))?;
    tracing::info!(
        pid,
        port,
        "started an archgate daemon (its log: {})",
        paths.state_dir.join("daemon.log").display()
    );
    Ok(())
}

/// The daemon's environment (see the module documentation): the manager's variables the
/// executor's table names, on a cleared base; or, without a manager, what the person's passwd
/// entry and the runtime directory show (`session.rs`), on a cleared base too.
/// The base directories of archgate's files are the session's (`dirs`) in both cases.
pub fn daemon_env(spec: CommandSpec, session: Session, dirs: &SessionDirs) -> CommandSpec {
    match session {
        Session::Manager(env) => super::session::apply(spec, env),
        Session::Sockets(runtime) => {
            let mut vars = super::session::from_runtime_dir(&runtime);
            vars.extend(dirs.vars());
            super::session::apply(spec, vars)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_managers_environment_is_read_line_by_line() {
        let env = parse_environment(
            "HOME=/home/p\nWAYLAND_DISPLAY=wayland-1\nODD=$'a\\nb'\nnot a line\n=x\nDBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus\n",
        );
        assert_eq!(
            env,
            vec![
                ("HOME".to_owned(), "/home/p".to_owned()),
                ("WAYLAND_DISPLAY".to_owned(), "wayland-1".to_owned()),
                (
                    "DBUS_SESSION_BUS_ADDRESS".to_owned(),
                    "unix:path=/run/user/1000/bus".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn a_managed_daemon_gets_the_managers_table_names_only() {
        let spec = daemon_env(
            CommandSpec::new("setsid"),
            Session::Manager(parse_environment(
                "HOME=/home/p\nPATH=/tmp/w:/usr/bin\nBASH_ENV=/tmp/x\nLANG=C.UTF-8\nARCHGATE_TOKEN=t\n",
            )),
            &SessionDirs::default(),
        );
        assert!(!spec.inherits_env());
        assert_eq!(
            spec.env_list(),
            [
                ("HOME".to_owned(), "/home/p".to_owned()),
                ("LANG".to_owned(), "C.UTF-8".to_owned())
            ]
        );
        let sockets = daemon_env(
            CommandSpec::new("setsid"),
            Session::Sockets(PathBuf::from("/nonexistent-runtime")),
            &SessionDirs::default(),
        );
        assert!(!sockets.inherits_env(), "never the bridge's environment");
        assert!(sockets.env_list().contains(&(
            "XDG_RUNTIME_DIR".to_owned(),
            "/nonexistent-runtime".to_owned()
        )));
    }
}

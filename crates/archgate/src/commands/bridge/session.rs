//! The environment of a daemon started where no user manager holds the session's: built from
//! what the session itself shows, never from the bridge's (its client's) environment.
//!
//! **Class closed here:** *the first client's environment chooses the daemon* (attack 2 F6,
//! issue 33 item 8). The daemon serves every client after the first, so each variable it starts
//! with comes from something the client cannot choose by setting a variable:
//!
//! | variable | from |
//! |---|---|
//! | `HOME`, `USER`, `LOGNAME` | the person's passwd entry |
//! | `XDG_RUNTIME_DIR` | the runtime directory whose `bridge.sock` the daemon serves (where the bridge looks for it) |
//! | `WAYLAND_DISPLAY` | the lowest `wayland-N` socket in that directory |
//! | `DBUS_SESSION_BUS_ADDRESS` | `unix:path=DIR/bus`, when that socket exists |
//! | `SWAYSOCK` | the one `sway-ipc.UID.PID.sock` socket there whose process lives |
//! | `HYPRLAND_INSTANCE_SIGNATURE` | the one `hypr/SIG/` there holding `.socket.sock` |
//! | `LANG`, `LC_*` | `/etc/locale.conf` (root's), plain locale names only |
//! | `XDG_CONFIG_HOME`, `XDG_STATE_HOME`, `XDG_CACHE_HOME` | the process serving the session's socket (`dirs.rs`), added by `spawn.rs` |
//!
//! `PATH` is rebuilt by the executor from the trusted search directories (it is never set). A
//! value found more than once (two Sway sockets, two Hyprland instances) is left out rather
//! than guessed at.
//!
//! The three base directories of archgate's own files are the session's too (`dirs.rs`): a bridge
//! whose own differ starts no daemon (attack 4 F4), so bridge and daemon agree on the config,
//! state and runtime files without the daemon ever taking them from the bridge.

use std::path::{Path, PathBuf};

use archgate_exec::CommandSpec;

/// The variables for a daemon serving `runtime` (the directory holding `archgate/`).
pub fn from_runtime_dir(runtime: &Path) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if let Ok(Some(me)) = nix::unistd::User::from_uid(nix::unistd::getuid()) {
        env.push(("HOME".into(), me.dir.to_string_lossy().into_owned()));
        env.push(("USER".into(), me.name.clone()));
        env.push(("LOGNAME".into(), me.name));
    }
    env.push((
        "XDG_RUNTIME_DIR".into(),
        runtime.to_string_lossy().into_owned(),
    ));
    if let Some(w) = wayland_socket(runtime) {
        env.push(("WAYLAND_DISPLAY".into(), w));
    }
    if is_socket(&runtime.join("bus")) {
        env.push((
            "DBUS_SESSION_BUS_ADDRESS".into(),
            format!("unix:path={}", runtime.join("bus").display()),
        ));
    }
    if let Some(s) = sway_socket(runtime) {
        env.push(("SWAYSOCK".into(), s.to_string_lossy().into_owned()));
    }
    if let Some(h) = hyprland_signature(runtime) {
        env.push(("HYPRLAND_INSTANCE_SIGNATURE".into(), h));
    }
    if let Ok(text) = std::fs::read_to_string("/etc/locale.conf") {
        env.extend(locale(&text));
    }
    env
}

/// `spec` on a cleared environment holding `vars` (each name the executor's table allows).
pub fn apply(spec: CommandSpec, vars: Vec<(String, String)>) -> CommandSpec {
    vars.into_iter()
        .filter(|(k, _)| archgate_exec::env::may_set(k))
        .fold(spec.clear_env(), |spec, (k, v)| spec.env(k, v))
}

fn is_socket(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket())
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The lowest-numbered `wayland-N` socket (the compositor's first display).
fn wayland_socket(dir: &Path) -> Option<String> {
    names(dir)
        .into_iter()
        .filter_map(|n| {
            let num: u32 = n.strip_prefix("wayland-")?.parse().ok()?;
            is_socket(&dir.join(&n)).then_some((num, n))
        })
        .min()
        .map(|(_, n)| n)
}

/// `sway-ipc.UID.PID.sock` whose PID lives, when there is exactly one.
fn sway_socket(dir: &Path) -> Option<PathBuf> {
    let live: Vec<PathBuf> = names(dir)
        .into_iter()
        .filter(|n| {
            let Some(mid) = n
                .strip_prefix("sway-ipc.")
                .and_then(|r| r.strip_suffix(".sock"))
            else {
                return false;
            };
            mid.split_once('.').is_some_and(|(_, pid)| {
                pid.parse::<u32>()
                    .is_ok_and(|p| Path::new(&format!("/proc/{p}")).exists())
            })
        })
        .map(|n| dir.join(n))
        .filter(|p| is_socket(p))
        .collect();
    (live.len() == 1).then(|| live.into_iter().next()).flatten()
}

/// The one Hyprland instance whose `hypr/SIG/.socket.sock` is there.
fn hyprland_signature(dir: &Path) -> Option<String> {
    let hypr = dir.join("hypr");
    let live: Vec<String> = names(&hypr)
        .into_iter()
        .filter(|s| is_socket(&hypr.join(s).join(".socket.sock")))
        .collect();
    (live.len() == 1).then(|| live.into_iter().next()).flatten()
}

/// The locale lines of `/etc/locale.conf` (`KEY=VALUE`, optionally double-quoted): names of the
/// locale row only, values made of letters, digits and `._@-` (never a path).
pub fn locale(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().split_once('='))
        .filter(|(k, _)| *k == "LANG" || *k == "LANGUAGE" || k.starts_with("LC_"))
        .map(|(k, v)| (k, v.trim().trim_matches('"')))
        .filter(|(k, v)| {
            archgate_exec::env::row(k)
                .is_some_and(|r| r.carries == archgate_exec::env::Carries::Name)
                && !v.is_empty()
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._@-:".contains(&b))
        })
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_conf_gives_plain_names_only() {
        let got = locale(
            "# a comment\nLANG=\"en_US.UTF-8\"\nLC_TIME=de_DE.UTF-8\nLC_CTYPE=/tmp/x\nPATH=/tmp\nLANGUAGE=en_US:en\n",
        );
        assert_eq!(
            got,
            [
                ("LANG".to_owned(), "en_US.UTF-8".to_owned()),
                ("LC_TIME".to_owned(), "de_DE.UTF-8".to_owned()),
                ("LANGUAGE".to_owned(), "en_US:en".to_owned()),
            ]
        );
    }

    #[test]
    fn sockets_are_found_in_the_runtime_dir_only_once() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let _w2 = std::os::unix::net::UnixListener::bind(d.join("wayland-2")).unwrap();
        let _w1 = std::os::unix::net::UnixListener::bind(d.join("wayland-1")).unwrap();
        std::fs::write(d.join("wayland-0"), "").unwrap();
        assert_eq!(wayland_socket(d).as_deref(), Some("wayland-1"));
        let me = std::process::id();
        let _s = std::os::unix::net::UnixListener::bind(d.join(format!("sway-ipc.0.{me}.sock")))
            .unwrap();
        assert_eq!(
            sway_socket(d),
            Some(d.join(format!("sway-ipc.0.{me}.sock")))
        );
        let _s2 = std::os::unix::net::UnixListener::bind(d.join("sway-ipc.0.1.sock")).unwrap();
        assert_eq!(
            sway_socket(d),
            None,
            "two live instances: neither is guessed"
        );
        assert_eq!(hyprland_signature(d), None);
    }
}

//! Which of archgate's files are the person's: read from the session, never from the bridge.
//!
//! **Class closed here:** *the first client's environment chooses the daemon*, through the base
//! directories of archgate's own files (attack 4 F4; attack 3 F7 closed it for `ARCHGATE_CONFIG`
//! only). A bridge judged "the person's own config" by deriving it from its own
//! `XDG_CONFIG_HOME`, the very variable a project's `.mcp.json` env block sets, so a project's
//! config became the shared daemon's policy. Now the reference comes from what the client cannot
//! set by a variable:
//!
//! - with a systemd user manager for the runtime directory: its environment (`XDG_CONFIG_HOME`,
//!   `XDG_STATE_HOME`, `XDG_CACHE_HOME` when it holds them, its `HOME` otherwise);
//! - without one: the environment of the process serving the session's socket in the runtime
//!   directory (the compositor's lowest `wayland-N`, else the session bus), found by the socket's
//!   peer credentials and required to be this uid's; for what it does not set, the passwd home.
//!
//! A bridge whose config file, state or cache directory differs from the session's starts no
//! shared daemon (it is served in its own process), and a running daemon refuses a bridge whose
//! config file (`other_config`) or state directory (`other_state`) is not its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_core::paths::{PathEnv, Paths};

/// The session's base directories of archgate's files (`None`: not set there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionDirs {
    pub home: Option<PathBuf>,
    pub config_home: Option<PathBuf>,
    pub state_home: Option<PathBuf>,
    pub cache_home: Option<PathBuf>,
}

const NAMES: [&str; 3] = ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"];

fn passwd_home() -> Option<PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.dir)
}

impl SessionDirs {
    /// From `KEY=VALUE` pairs (the manager's, or a session process's environment); `HOME` from
    /// them when absolute, else the passwd entry's.
    pub fn from_vars(vars: &[(String, String)]) -> SessionDirs {
        let get = |k: &str| {
            vars.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| PathBuf::from(v))
                .filter(|p| p.is_absolute())
        };
        SessionDirs {
            home: get("HOME").or_else(passwd_home),
            config_home: get(NAMES[0]),
            state_home: get(NAMES[1]),
            cache_home: get(NAMES[2]),
        }
    }

    /// From the process serving the session's socket in `runtime` (see the module doc); the
    /// passwd home alone when none can be read.
    pub async fn from_session_process(runtime: &Path) -> SessionDirs {
        let mut dirs = SessionDirs {
            home: passwd_home(),
            ..SessionDirs::default()
        };
        if let Some(vars) = session_process_env(runtime).await {
            let found = SessionDirs::from_vars(&vars);
            dirs.config_home = found.config_home;
            dirs.state_home = found.state_home;
            dirs.cache_home = found.cache_home;
        }
        dirs
    }

    /// The variables a daemon started in this session gets for them.
    pub fn vars(&self) -> Vec<(String, String)> {
        [&self.config_home, &self.state_home, &self.cache_home]
            .into_iter()
            .zip(NAMES)
            .filter_map(|(v, k)| {
                v.as_ref()
                    .map(|p| (k.to_owned(), p.to_string_lossy().into_owned()))
            })
            .collect()
    }

    /// archgate's files as this session places them (no `[paths]` overrides: those come from the
    /// config file, compared on its own).
    pub fn paths(&self, runtime_base: &Path) -> Option<Paths> {
        let env = PathEnv {
            home: self.home.clone(),
            xdg_config_home: self.config_home.clone(),
            xdg_state_home: self.state_home.clone(),
            xdg_cache_home: self.cache_home.clone(),
            xdg_runtime_dir: Some(runtime_base.to_owned()),
            uid: nix::unistd::getuid().as_raw(),
            runtime_dir_discovered: false,
        };
        Paths::resolve(&env, None, &Default::default()).ok()
    }
}

/// Why this bridge's files are not the session's (`None`: they are): its config file (explicit,
/// or derived from its own environment), its state and its cache directory, each against the
/// session's.
pub fn differs(
    session: &SessionDirs,
    runtime_base: &Path,
    explicit: Option<&Path>,
) -> Option<String> {
    let Some(theirs) = session.paths(runtime_base) else {
        return Some("the session's home directory is unknown".into());
    };
    let mine = match Paths::resolve(
        &PathEnv::from_process(),
        explicit.map(Path::to_path_buf),
        &Default::default(),
    ) {
        Ok(p) => p,
        Err(e) => return Some(e.to_string()),
    };
    let same = crate::server::bridge::same_config;
    let mut why = Vec::new();
    if !same(&mine.config_file, &theirs.config_file) {
        why.push(format!(
            "config file {} (the session's: {})",
            mine.config_file.display(),
            theirs.config_file.display()
        ));
    }
    if !same(&mine.state_dir, &theirs.state_dir) {
        why.push(format!(
            "state directory {} (the session's: {})",
            mine.state_dir.display(),
            theirs.state_dir.display()
        ));
    }
    if !same(&mine.cache_dir, &theirs.cache_dir) {
        why.push(format!(
            "cache directory {} (the session's: {})",
            mine.cache_dir.display(),
            theirs.cache_dir.display()
        ));
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// The environment of the process listening on the session's socket in `runtime` (the lowest
/// `wayland-N`, else `bus`), when it is this uid's and its environment can be read.
async fn session_process_env(runtime: &Path) -> Option<Vec<(String, String)>> {
    let mut sockets: Vec<(u32, PathBuf)> = std::fs::read_dir(runtime)
        .ok()?
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_owned();
            let num = n.strip_prefix("wayland-")?.parse().ok()?;
            Some((num, e.path()))
        })
        .collect();
    sockets.sort();
    let candidates = sockets
        .into_iter()
        .map(|(_, p)| p)
        .chain(std::iter::once(runtime.join("bus")));
    for socket in candidates {
        let Ok(Ok(stream)) = tokio::time::timeout(
            Duration::from_secs(1),
            tokio::net::UnixStream::connect(&socket),
        )
        .await
        else {
            continue;
        };
        let Ok(cred) = crate::server::peer::credentials(&stream) else {
            continue;
        };
        drop(stream);
        if cred.uid() != crate::server::peer::my_uid() || cred.pid() <= 0 {
            continue;
        }
        let Ok(raw) = std::fs::read(format!("/proc/{}/environ", cred.pid())) else {
            continue;
        };
        return Some(
            raw.split(|b| *b == 0)
                .filter_map(|e| {
                    let e = std::str::from_utf8(e).ok()?;
                    e.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned()))
                })
                .collect(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_variables_place_the_files_and_a_relative_one_is_not_taken() {
        let d = SessionDirs::from_vars(&[
            ("HOME".into(), "/home/p".into()),
            ("XDG_CONFIG_HOME".into(), "/home/p/cfg".into()),
            ("XDG_STATE_HOME".into(), "relative/state".into()),
        ]);
        let p = d.paths(Path::new("/run/user/1000")).unwrap();
        assert_eq!(p.config_file, Path::new("/home/p/cfg/archgate/config.toml"));
        assert_eq!(p.state_dir, Path::new("/home/p/.local/state/archgate"));
        assert_eq!(p.cache_dir, Path::new("/home/p/.cache/archgate"));
        assert_eq!(
            d.vars(),
            [("XDG_CONFIG_HOME".to_owned(), "/home/p/cfg".to_owned())]
        );
    }
}

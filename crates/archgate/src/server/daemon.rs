//! One daemon per runtime directory — and per state directory: the locks `serve --http` takes,
//! and the files that say which daemon runs and where its bridge socket is.
//!
//! `daemon.lock` (flock, held for the daemon's life) and `daemon.json` (pid, since, socket) in the
//! runtime directory. A second `serve --http` on the same runtime directory cannot take the lock
//! and refuses to start, naming the one that runs. The files are private (0600 in 0700
//! directories) and a reader believes them only while the pid lives.
//!
//! **A bridge finds its daemon where the session puts it, never through a pointer file** (issue
//! 33): the runtime directory's `bridge.sock` and nothing else. A client started without
//! `XDG_RUNTIME_DIR` uses `/run/user/UID` when that is a real directory of this uid with mode 0700
//! (`archgate_core::paths`), else archgate's private `run` directory in its state directory. An
//! earlier version kept a copy of `daemon.json` in the state directory for such clients; a
//! same-user process could write that copy and point the bridge at a fake daemon, which then
//! received the agent's calls and forged answers. The copy is no longer written, read or
//! trusted (an old one is removed when a daemon starts).

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

use archgate_core::paths::{Paths, write_private_file};

pub const LOCK: &str = "daemon.lock";
pub const INFO: &str = "daemon.json";

/// What a running daemon says about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct DaemonInfo {
    pub pid: u32,
    /// When it started (RFC 3339).
    pub since: String,
    /// The runtime directory it owns.
    pub runtime_dir: PathBuf,
    /// Its bridge socket.
    pub socket: PathBuf,
    /// Started by a stdio bridge (detached) rather than by the person, the plugin or systemd.
    #[serde(default)]
    pub spawned: bool,
}

impl DaemonInfo {
    pub fn alive(&self) -> bool {
        i32::try_from(self.pid).is_ok_and(|p| {
            p > 0 && nix::sys::signal::kill(nix::unistd::Pid::from_raw(p), None).is_ok()
        })
    }
}

/// Another daemon holds this runtime directory.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error(
        "archgate already runs as the daemon of {dir}: pid {pid} since {since}; stop it first (`archgate service stop`, or the Omarchy plugin's stop) or use it"
    )]
    Running {
        dir: PathBuf,
        pid: String,
        since: String,
    },
    #[error(
        "archgate already runs as the daemon of these files (state directory {state}) from another runtime directory; one daemon serves one person's files (attack 33 F8: a second one had budgets and a pending list of its own). Start clients with the session's XDG_RUNTIME_DIR, or stop the other daemon"
    )]
    StateHeld { state: PathBuf },
    #[error("cannot take the daemon lock {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Held while the daemon runs; removes its files when dropped.
pub struct Claim {
    _lock: nix::fcntl::Flock<File>,
    /// The state directory's lock: one daemon for one person's files, whatever runtime
    /// directory it was started for.
    _state: nix::fcntl::Flock<File>,
    files: Vec<PathBuf>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        for f in &self.files {
            // Only our own: a file another daemon wrote since stays.
            if read(f).is_some_and(|i| i.pid == std::process::id()) {
                let _ = std::fs::remove_file(f);
            }
        }
    }
}

/// Takes the runtime directory's daemon lock and writes its `daemon.json`.
pub fn claim(paths: &Paths, spawned: bool) -> Result<Claim, ClaimError> {
    let path = paths.runtime_dir.join(LOCK);
    let io = |source| ClaimError::Io {
        path: path.clone(),
        source,
    };
    // In the runtime directory judged now, as archgate's own file (never a link, never
    // another's): class *a file written at a path judged once follows what is there now*.
    let file = archgate_core::paths::OwnDir::open(&paths.runtime_dir)
        .and_then(|d| d.open_lock(LOCK.as_ref()))
        .map_err(io)?;
    let lock = match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            let other = read(&paths.runtime_dir.join(INFO));
            return Err(ClaimError::Running {
                dir: paths.runtime_dir.clone(),
                pid: other
                    .as_ref()
                    .map(|i| i.pid.to_string())
                    .unwrap_or_else(|| "unknown".into()),
                since: other
                    .map(|i| i.since)
                    .unwrap_or_else(|| "an unknown time".into()),
            });
        }
        Err((_, e)) => return Err(io(std::io::Error::from(e))),
    };
    let state = match state_lock(paths) {
        Ok(Some(l)) => l,
        Ok(None) => {
            return Err(ClaimError::StateHeld {
                state: paths.state_dir.clone(),
            });
        }
        Err(e) => {
            return Err(ClaimError::Io {
                path: paths.state_dir.join(LOCK),
                source: e,
            });
        }
    };
    let info = DaemonInfo {
        pid: std::process::id(),
        since: archgate_core::audit::now_rfc3339(),
        runtime_dir: paths.runtime_dir.clone(),
        socket: paths.runtime_dir.join(crate::server::bridge::SOCKET),
        spawned,
    };
    let bytes = serde_json::to_vec(&info).unwrap_or_default();
    // The state directory's copy of earlier versions is a pointer nothing may follow.
    let _ = std::fs::remove_file(paths.state_dir.join(INFO));
    let files = vec![paths.runtime_dir.join(INFO)];
    for f in &files {
        if let Err(e) = write_private_file(f, &bytes) {
            tracing::warn!(file = %f.display(), "cannot write the daemon's pid file: {e}");
        }
    }
    Ok(Claim {
        _lock: lock,
        _state: state,
        files,
    })
}

/// The state directory's `daemon.lock`, taken: `None` when a daemon holds it. A file, not the
/// directory: the directory's own flock is the audit log's orphan finders' (`audit/orphans.rs`),
/// and a daemon holding it for its life made every other finder wait and then go on without it
/// (attack 35 F8: each `archgate call` 5 s slower, an orphan recorded three times). A same-user
/// process can remove the file, or move the directory, and so start a second gate — the same
/// limit as its editing the budgets in the config (SECURITY.md).
fn state_lock(paths: &Paths) -> std::io::Result<Option<nix::fcntl::Flock<File>>> {
    let file = archgate_core::paths::OwnDir::open(&paths.state_dir)?.open_lock(LOCK.as_ref())?;
    match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(l) => Ok(Some(l)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(std::io::Error::from(e)),
    }
}

/// Whether a daemon serves these files (holds the state directory's `daemon.lock`), found from
/// another runtime directory than the one it owns: a bridge that found no daemon where it
/// looked then serves nothing in-process beside it (attack 33 F8: a client started with another
/// `XDG_RUNTIME_DIR` got budgets and a pending list of its own on the person's files). Looked
/// at, never made: nothing is created in a state directory the bridge has not judged; no file,
/// no daemon.
pub fn serves_these_files(paths: &Paths) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(paths.state_dir.join(LOCK))
    else {
        return false;
    };
    matches!(
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockSharedNonblock),
        Err((_, nix::errno::Errno::EWOULDBLOCK))
    )
}

/// A `daemon.json`, if it parses and its pid lives.
pub fn read(path: &Path) -> Option<DaemonInfo> {
    // Only archgate's own file: a link or another uid's file never names the daemon.
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(archgate_core::paths::open_private(path).ok()?, 1 << 20),
        &mut bytes,
    )
    .ok()?;
    let info: DaemonInfo = serde_json::from_slice(&bytes).ok()?;
    info.alive().then_some(info)
}

/// The running daemon for these paths: the runtime directory's `daemon.json`, if its pid lives.
pub fn running(paths: &Paths) -> Option<DaemonInfo> {
    read(&paths.runtime_dir.join(INFO))
}

/// Where a bridge reaches its daemon: the runtime directory's bridge socket, the one place the
/// session puts it (see the module documentation).
pub fn socket(paths: &Paths) -> PathBuf {
    paths.runtime_dir.join(crate::server::bridge::SOCKET)
}

//! The executor's settings (`Executor` in `executor.rs` holds them).

use std::path::PathBuf;
use std::time::Duration;

/// How programs are found, trusted, timed and capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecConfig {
    /// Directories searched, in order, for a program named without a path; an absolute program
    /// path must lie directly in one of them. Default: `$OMARCHY_PATH/bin` (only when
    /// `OMARCHY_PATH` is set), then [`Self::system_search_dirs`].
    pub search_dirs: Vec<PathBuf>,
    /// When true (the default) the program file and every directory on the way to it (symbolic
    /// links followed, each hop checked, up to `/`) must be owned by root or by
    /// [`person_uid`](Self::person_uid), and writable by neither group nor others.
    pub require_root_owned: bool,
    /// Besides root, the owner whose files and directories are trusted: the person, i.e. the uid
    /// archgate runs as (the default), so a git install of Omarchy under `~/.local/share` runs.
    /// `None` trusts root alone.
    pub person_uid: Option<u32>,
    /// Timeout used when neither the spec nor the permit names one. Default 30 s.
    pub default_timeout: Duration,
    /// Time between SIGTERM to the process group and SIGKILL. Default 2 s.
    pub kill_grace: Duration,
    /// Bytes of stdout and stderr kept together (head and tail). Default 256 KiB.
    pub output_cap: usize,
}

impl ExecConfig {
    /// The default search directories for the current environment.
    pub fn default_search_dirs() -> Vec<PathBuf> {
        let mut dirs = Vec::with_capacity(4);
        if let Some(omarchy) = std::env::var_os("OMARCHY_PATH").filter(|v| !v.is_empty()) {
            let omarchy = PathBuf::from(omarchy);
            if omarchy.is_absolute() {
                dirs.push(omarchy.join("bin"));
            }
        }
        dirs.extend(Self::system_search_dirs());
        dirs
    }

    /// The system's own program directories, searched after Omarchy's `bin/`: `/usr/local/bin`,
    /// `/usr/bin` and `/usr/sbin`. On Arch `/usr/sbin` is a link to `bin`; where it is a
    /// directory of its own (Debian), a program only it holds (`smartctl`) would otherwise be
    /// found only as a copy in a directory of the person's (attack 35 L4).
    pub fn system_search_dirs() -> [PathBuf; 3] {
        ["/usr/local/bin", "/usr/bin", "/usr/sbin"].map(PathBuf::from)
    }
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            search_dirs: Self::default_search_dirs(),
            require_root_owned: true,
            person_uid: Some(nix::unistd::geteuid().as_raw()),
            default_timeout: Duration::from_secs(30),
            kill_grace: Duration::from_secs(2),
            output_cap: 256 * 1024,
        }
    }
}

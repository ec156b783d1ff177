//! The executor's settings and the `Executor` that holds them.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::ExecError;

/// How programs are found, trusted, timed and capped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecConfig {
    /// Directories searched, in order, for a program named without a path; an absolute program
    /// path must lie directly in one of them. Default: `$OMARCHY_PATH/bin` (only when
    /// `OMARCHY_PATH` is set), `/usr/local/bin`, `/usr/bin`.
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
        let mut dirs = Vec::with_capacity(3);
        if let Some(omarchy) = std::env::var_os("OMARCHY_PATH").filter(|v| !v.is_empty()) {
            let omarchy = PathBuf::from(omarchy);
            if omarchy.is_absolute() {
                dirs.push(omarchy.join("bin"));
            }
        }
        dirs.push(PathBuf::from("/usr/local/bin"));
        dirs.push(PathBuf::from("/usr/bin"));
        dirs
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

/// Finds, checks and runs programs under one [`ExecConfig`]. Shared behind an `Arc` by permits.
#[derive(Debug, Clone)]
pub struct Executor {
    config: ExecConfig,
}

impl Executor {
    /// An executor with the given settings.
    pub fn new(config: ExecConfig) -> Self {
        Self { config }
    }

    /// The settings in force.
    pub fn config(&self) -> &ExecConfig {
        &self.config
    }

    /// The file that would run for `program` (a bare name or an absolute path), after the
    /// search-directory and ownership checks. Symlinks are followed: the answer is the real file.
    pub fn resolve_program(&self, program: &str) -> Result<PathBuf, ExecError> {
        crate::resolve::resolve(&self.config, program)
    }

    /// `spec` with its program found, checked and pinned to the file found (and a script's
    /// interpreter, likewise): the program is replaced by that file's real path, and the
    /// command runs only while the path still names that very file with that very content
    /// ([`crate::ExecError::Changed`] otherwise). The gate pins every command it judges, before
    /// the person is asked.
    pub fn pin(&self, spec: crate::CommandSpec) -> Result<crate::CommandSpec, ExecError> {
        let pin = crate::pin::pin_program(&self.config, spec.program())?;
        let mut spec = spec.with_program(pin.path().to_string_lossy().into_owned());
        spec.pin = Some(std::sync::Arc::new(pin));
        Ok(spec)
    }

    /// Whether a pinned program (and each interpreter) is still the file that was judged, and
    /// still trusted where it is. The executor asks this again just before it starts one.
    pub fn verify_pin(&self, pin: &crate::ProgramPin) -> Result<(), ExecError> {
        crate::pin::verify(&self.config, pin)
    }

    /// Whether programs in `dir` could be trusted under these settings: the directory and every
    /// component up to `/` (symbolic links followed, each hop checked) owned by root or the person
    /// and writable by neither group nor others. The answer is the real directory, or the first
    /// component that fails and why. With `require_root_owned` off every existing directory passes.
    pub fn check_directory(
        &self,
        dir: &std::path::Path,
    ) -> Result<PathBuf, crate::UntrustedReason> {
        crate::resolve::check_directory(&self.config, dir)
    }
}

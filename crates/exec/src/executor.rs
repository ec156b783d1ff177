//! The `Executor`: one set of settings, and the program checks made under them (finding a
//! program, pinning it, checking a directory), shared behind an `Arc` by permits.

use std::path::PathBuf;

use crate::config::ExecConfig;
use crate::error::ExecError;

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

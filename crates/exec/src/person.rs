//! Starting a program for the person at their own command — not for an agent.
//!
//! `archgate ui` opens the person's browser on the approval page; `archgate service install`
//! runs `systemctl --user` for them. That is the person acting in their own terminal, so no gate permit exists (the gate decides agents' calls); it still goes
//! through this crate, the one spawn site, with the same trust checks as every launch: argv
//! only, the program found in the fixed trusted directories (owned by root or the person, not writable by
//! others), the allowlisted environment of [`crate::env`], its own process group, no stdin. [`spawn_for_person`] detaches
//! and keeps no output; [`run_for_person`] waits (bounded) and hands back the capped output.
//!
//! **Invariant:** only `crates/archgate/src/commands/` calls [`spawn_for_person`],
//! [`run_for_person`] or [`become_for_person`]; a tidy test (`tests/exec/tidy.rs`) fails the build's tests when anything else
//! does. No tool may use them.

use crate::capture::Output;
use crate::config::ExecConfig;
use crate::error::ExecError;
use crate::executor::Executor;
use crate::spec::CommandSpec;

/// Starts `spec` detached for the person (see the module documentation) and returns its pid.
/// Uses the default [`ExecConfig`]: the trusted search directories and ownership checks (root or the person).
pub fn spawn_for_person(spec: CommandSpec) -> Result<u32, ExecError> {
    let executor = Executor::new(ExecConfig::default());
    crate::run::spawn_detached(&executor, spec, None)
}

/// [`spawn_for_person`] under the person's own executor settings (the `[exec]` section of their
/// config: search directories, root ownership), so a program they configured is the one started.
pub fn spawn_for_person_with(config: ExecConfig, spec: CommandSpec) -> Result<u32, ExecError> {
    let executor = Executor::new(config);
    crate::run::spawn_detached(&executor, spec, None)
}

/// Runs `spec` to its end for the person (see the module documentation) and returns its output,
/// whatever the exit code. Uses the default [`ExecConfig`] (trusted directories, owned by root or the person,
/// 30 s unless the spec names a timeout, output capped).
pub async fn run_for_person(spec: CommandSpec) -> Result<Output, ExecError> {
    let executor = Executor::new(ExecConfig::default());
    crate::run::run(&executor, None, spec, None).await
}

/// Replaces this process with `program` and `args` (execve), the environment kept as it is: for
/// archgate's asking sudo, which a hand-off's route script starts by the name `sudo` in the
/// person's terminal and which becomes root's `sudo -k` there (the script's environment was
/// built by the hand-off; sudo resets it by its own rules). `program` must be an absolute path
/// the caller checked. Returns only when the exec failed, with why.
#[allow(clippy::disallowed_methods)] // part of the one spawn site, see DESIGN invariant 2
pub fn become_for_person(program: &std::path::Path, args: &[std::ffi::OsString]) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    if !program.is_absolute() {
        return std::io::Error::other(format!("{} is not an absolute path", program.display()));
    }
    // Told the name that was judged, as every program archgate starts (`run::arg0`).
    let real = match program.canonicalize() {
        Ok(real) => real,
        Err(e) => return e,
    };
    std::process::Command::new(&real)
        .arg0(crate::run::arg0(program.as_os_str(), &real))
        .args(args)
        .exec()
}

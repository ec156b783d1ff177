//! `Permit`: the proof that the gate allowed a call, and the only handle that runs programs.

use std::sync::Arc;
use std::time::Duration;

use crate::capture::Output;
use crate::error::ExecError;
use crate::executor::Executor;
use crate::pin::ProgramPin;
use crate::spec::CommandSpec;

/// Proof that the gate allowed this call. Only `archgate_core::gate` constructs it (enforced by a
/// tidy test that greps for `__issued_by_gate`). Not `Clone`: a permit is handed to the one call
/// it was issued for.
#[derive(Debug)]
pub struct Permit {
    executor: Arc<Executor>,
    timeout: Option<Duration>,
    /// When not empty, the only commands this permit runs (see [`Permit::bound_to`]).
    bound: Vec<CommandSpec>,
}

impl Permit {
    /// Issued by the gate alone, after policy, resolution and approval said yes. `timeout` is the
    /// tool's own timeout, used when a spec names none.
    #[doc(hidden)]
    pub fn __issued_by_gate(executor: Arc<Executor>, timeout: Option<Duration>) -> Permit {
        Permit {
            executor,
            timeout,
            bound: Vec::new(),
        }
    }

    /// The same permit, bound to exactly these commands: every `run` and `spawn_detached` must
    /// then be one of them (same program, arguments and stdin), else it is refused with
    /// [`ExecError::NotApproved`]. The gate binds the permit of a call whose resolution named
    /// the commands it will run, so what runs is exactly what policy judged and the person saw,
    /// however the tool builds its command again. An empty list leaves the permit unbound.
    pub fn bound_to(mut self, commands: Vec<CommandSpec>) -> Permit {
        self.bound = commands;
        self
    }

    /// The commands this permit is bound to (empty: unbound).
    pub fn bound(&self) -> &[CommandSpec] {
        &self.bound
    }

    /// A bound permit runs `spec` only if it is one of the approved commands: the same
    /// arguments and stdin, and a program that resolves to the same file (`omarchy-theme-set`
    /// and the path it was pinned to at approval are one program; another file is not).
    ///
    /// The answer is the pin of the approved command matched, which is what runs (the spec's own
    /// pin for an unbound permit).
    fn check_bound(&self, spec: &CommandSpec) -> Result<Option<Arc<ProgramPin>>, ExecError> {
        if self.bound.is_empty() {
            return Ok(spec.pin.clone());
        }
        let refused = || ExecError::NotApproved {
            command: spec.display(),
        };
        let file = self.executor.resolve_program(spec.program()).ok();
        let same = self.bound.iter().find(|b| {
            b.args == spec.args
                && b.stdin == spec.stdin
                && (b.program == spec.program
                    || (file.is_some()
                        && match &b.pin {
                            Some(pin) => file.as_deref() == Some(pin.path()),
                            None => self.executor.resolve_program(b.program()).ok() == file,
                        }))
        });
        match same {
            Some(b) => Ok(b.pin.clone().or_else(|| spec.pin.clone())),
            None => Err(refused()),
        }
    }

    /// For tests of crates that run programs; behind the `test-support` cargo feature.
    #[cfg(any(test, feature = "test-support"))]
    pub fn for_tests(cfg: crate::config::ExecConfig) -> Permit {
        Permit {
            executor: Arc::new(Executor::new(cfg)),
            timeout: None,
            bound: Vec::new(),
        }
    }

    /// The executor this permit runs programs with (its settings, program resolution).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The timeout this permit carries, if the gate gave one.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Run a program to its end and collect its output: argv only, in its own process group,
    /// stdin from `/dev/null` unless the spec gives bytes. After the timeout (the spec's, else the
    /// permit's, else the configured default) the group gets SIGTERM, then SIGKILL after the
    /// grace period, and the answer is [`ExecError::TimedOut`]. Any exit code is an `Ok`: check
    /// [`Output::success`]. Whatever the program started in its group does not outlive the call.
    pub async fn run(&self, spec: CommandSpec) -> Result<Output, ExecError> {
        let pin = self.check_bound(&spec)?;
        crate::run::run(&self.executor, self.timeout, spec, pin).await
    }

    /// Start a program and return its pid without waiting for it: its own process group (so the
    /// ends of archgate's calls never reach it), stdin, stdout and stderr on `/dev/null`. Meant
    /// for launching desktop applications. A spec with stdin bytes is refused.
    pub fn spawn_detached(&self, spec: CommandSpec) -> Result<u32, ExecError> {
        let pin = self.check_bound(&spec)?;
        crate::run::spawn_detached(&self.executor, spec, pin)
    }
}

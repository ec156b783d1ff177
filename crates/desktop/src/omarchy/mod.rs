//! Omarchy's commands: the registry, search, usages, and how a route is judged (by its words,
//! its script, its arguments). Pure: reading them from this desktop and running a route through
//! a `Permit` is `routes.rs`'s.

pub mod argcode;
pub mod classify;
pub mod guard;
pub mod registry;
pub mod script;
pub mod search;
pub mod usage;

use archgate_exec::CommandSpec;
use serde::Serialize;

use crate::error::Result;

pub use classify::{RouteTier, classify};
pub use guard::{Invocation, forwarded_ipc, ipc_runs_code, targets_archgate};
pub use registry::{Registry, Route, spelling};
pub use script::{ScriptFacts, Seen};
pub use search::SearchHit;
pub use usage::{Flag, Slot, Usage};

/// How a program run by a route or call ended, as the agent sees it.
#[derive(Debug, Clone, Serialize)]
pub struct CommandOutcome {
    /// The command that ran, shell-quoted for reading.
    pub command: String,
    /// Whether it exited 0.
    pub success: bool,
    /// Its exit code, if it exited.
    pub exit_code: Option<i32>,
    /// Its stdout (lossy UTF-8).
    pub stdout: String,
    /// Its stderr (lossy UTF-8).
    pub stderr: String,
    /// Whether output was cut to the executor's cap (head and tail kept).
    pub truncated: bool,
}

impl CommandOutcome {
    pub(crate) fn from_output(command: String, out: &archgate_exec::Output) -> Self {
        CommandOutcome {
            command,
            success: out.success(),
            exit_code: out.status.code,
            stdout: out.stdout_lossy(),
            stderr: out.stderr_lossy(),
            truncated: out.truncated,
        }
    }
}

/// The command that runs `route` with `args`: the route's own script (found in the trusted
/// program directories) with the arguments as given, after checking them against the route's
/// usage. Pure: the gate shows and judges exactly this before anything runs. No `--` is added:
/// Omarchy's scripts do not parse it (the dispatcher hands it to them as an argument).
pub fn route_command(route: &Route, args: &[String]) -> Result<CommandSpec> {
    Registry::check_args(route, args)?;
    Ok(CommandSpec::new(route.binary.clone()).args(args.iter().cloned()))
}

/// The route's tier and `requires_sudo` from what its script was read doing: a script that
/// elevates (itself or through a script it calls) needs root whatever its comment says; one that
/// runs its values as code is destructive (never automatic); one that changes files or uses the
/// network, or that could not be read, is not a read whatever its name says.
pub fn judge_by_script(route: &mut Route, facts: &ScriptFacts) {
    if facts.elevates.is_some() {
        route.requires_sudo = true;
    }
    if facts.runs_values.is_some() {
        route.tier = RouteTier::Destructive;
    }
    if route.tier == RouteTier::Read && (facts.unread || facts.changes.is_some()) {
        route.tier = RouteTier::Act;
    }
}

/// A route resolved with its arguments: the command and the exact spec that will run.
#[derive(Debug, Clone)]
pub struct RouteCall {
    /// The registry entry.
    pub route: Route,
    /// Exactly what runs (the environment of the person's session applied).
    pub spec: CommandSpec,
    /// The call would stop, restart, reconfigure or remove archgate or its supervisor (by the
    /// route or by its arguments).
    pub targets_archgate: bool,
    /// What the route's script (and the scripts it calls) was read doing; the route's tier and
    /// `requires_sudo` above already include it.
    pub script: ScriptFacts,
}

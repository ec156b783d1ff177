//! Omarchy's commands: the registry (cached until Omarchy's version changes), search, and
//! running a route through a [`Permit`].

pub mod argcode;
pub mod classify;
pub mod guard;
pub mod registry;
pub mod script;
pub mod search;
pub mod usage;

use std::sync::Arc;

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::programs::{self, Program};

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

impl Desktop {
    /// Omarchy's version: `$OMARCHY_PATH/version` when it exists, else `omarchy version`.
    pub async fn omarchy_version(&self, permit: &Permit) -> Result<String> {
        if let Some(dir) = &self.env.omarchy_path {
            let file = dir.join("version");
            if let Ok(text) = tokio::fs::read_to_string(&file).await {
                let v = text.trim();
                if !v.is_empty() {
                    return Ok(v.to_owned());
                }
            }
        }
        let spec = Program::Omarchy
            .spec(&self.env)
            .arg("version")
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Omarchy, spec).await?;
        let v = out.stdout_lossy().trim().to_owned();
        if v.is_empty() {
            return Err(DesktopError::malformed("omarchy version", "empty answer"));
        }
        Ok(v)
    }

    /// The registry, from the cache while Omarchy's version is unchanged, else freshly from
    /// `omarchy commands --json`.
    pub async fn omarchy_registry(&self, permit: &Permit) -> Result<Arc<Registry>> {
        let version = self.omarchy_version(permit).await?;
        let mut cache = self.registry.lock().await;
        if let Some(reg) = cache.as_ref()
            && reg.version.as_deref() == Some(version.as_str())
        {
            return Ok(Arc::clone(reg));
        }
        let spec = Program::Omarchy
            .spec(&self.env)
            .args(["commands", "--all", "--json"])
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Omarchy, spec).await?;
        if out.truncated {
            return Err(DesktopError::TooLarge {
                what: "omarchy commands --json",
                limit: permit.executor().config().output_cap,
            });
        }
        let reg = Arc::new(Registry::parse(&out.stdout, Some(&version))?);
        *cache = Some(Arc::clone(&reg));
        Ok(reg)
    }

    /// The registry last loaded, without running anything.
    pub async fn cached_registry(&self) -> Option<Arc<Registry>> {
        self.registry.lock().await.clone()
    }

    /// `omarchy_search`: routes ranked against `query`, each with its tier and whether it is
    /// blocked (needs sudo, or targets archgate).
    pub async fn omarchy_search(
        &self,
        permit: &Permit,
        query: &str,
        limit: usize,
    ) -> Result<Vec<SearchHit>> {
        Ok(self.omarchy_registry(permit).await?.search(query, limit))
    }

    /// Resolves `route` (any spelling) with `args` against the registry: the usage is checked
    /// and the exact command built. Whether it needs root or reaches archgate is said in the
    /// answer, for policy to block; [`Desktop::run_route`] refuses those again.
    pub async fn resolve_route(
        &self,
        permit: &Permit,
        route: &str,
        args: &[String],
    ) -> Result<RouteCall> {
        let reg = self.omarchy_registry(permit).await?;
        let mut route = reg.resolve(route)?.clone();
        let spec = route_command(&route, args)?;
        // Judged by what the script does, not by what it says about itself (attack 3, F1/F8).
        let script = script::scan(permit.executor(), &route.binary);
        judge_by_script(&mut route, &script);
        // `menu summon <item>` runs the item's action: what runs is not in the words.
        if classify::runs_route(&route.words, args) {
            route.tier = RouteTier::Destructive;
        }
        let targets = route.targets_archgate
            || targets_archgate(Invocation::Route {
                words: &route.words,
                args,
            });
        let spec = self.env.apply_to(spec.timeout(self.config.program_timeout));
        Ok(RouteCall {
            route,
            spec,
            targets_archgate: targets,
            script,
        })
    }

    /// Runs a resolved route: exactly its spec. Sudo routes and calls that reach archgate are
    /// refused here too, as a second lock behind policy.
    pub async fn run_route(&self, permit: &Permit, call: &RouteCall) -> Result<CommandOutcome> {
        if call.route.requires_sudo {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route needs root: `handoff` with op omarchy hands it to the person's terminal",
            });
        }
        if call.targets_archgate {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route would stop, restart, reconfigure or remove archgate or its supervisor",
            });
        }
        self.run_command(permit, Program::Omarchy, call.spec.clone())
            .await
    }

    /// Runs a command resolution built (a route, a shell call), reporting how it ended; a
    /// missing program is named by the package that provides `program`'s family.
    pub async fn run_command(
        &self,
        permit: &Permit,
        program: Program,
        spec: CommandSpec,
    ) -> Result<CommandOutcome> {
        let shown = spec.display();
        let out = programs::run_any(permit, program, spec).await?;
        Ok(CommandOutcome::from_output(shown, &out))
    }
}

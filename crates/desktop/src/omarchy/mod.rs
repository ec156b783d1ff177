//! Omarchy's commands: the registry (cached until Omarchy's version changes), search, and
//! running a route through a [`Permit`].

pub mod guard;
pub mod registry;
pub mod search;

use std::sync::Arc;

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::programs::{self, Program};

pub use guard::{Invocation, targets_archgate};
pub use registry::{Registry, Route, RouteArg, SuggestedTier};
pub use search::SearchHit;

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

/// The command that runs `route` with `args`: `omarchy <route words…> <args…>`, after checking
/// the arguments against the registry. Pure: the gate shows this before anything runs.
pub fn route_command(route: &Route, args: &[String]) -> Result<CommandSpec> {
    Registry::check_args(route, args)?;
    Ok(CommandSpec::new(Program::Omarchy.name())
        .args(route.words.iter().cloned())
        .args(args.iter().cloned()))
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
            .args(["commands", "--json"])
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Omarchy, spec).await?;
        if out.truncated {
            return Err(DesktopError::TooLarge {
                what: "omarchy commands --json",
                limit: permit.executor().config().output_cap,
            });
        }
        let mut reg = Registry::parse(&out.stdout)?;
        // The cache key is the version we checked, whatever the listing says about itself.
        reg.version = Some(version);
        let reg = Arc::new(reg);
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

    /// `omarchy_run`: runs `omarchy <route> <args…>`. The route must exist in the registry.
    /// Policy has already judged the route (`needs_sudo` and `targets_archgate` are blocked)
    /// before the permit was issued; this refuses them again, as a second lock.
    pub async fn omarchy_run(
        &self,
        permit: &Permit,
        route: &str,
        args: &[String],
    ) -> Result<CommandOutcome> {
        let reg = self.omarchy_registry(permit).await?;
        let route = reg.resolve(route)?;
        let spec = route_command(route, args)?;
        if route.needs_sudo {
            return Err(DesktopError::Blocked {
                command: spec.display(),
                reason: "the route elevates privilege; run it yourself in a terminal",
            });
        }
        if route.targets_archgate
            || targets_archgate(Invocation::Route {
                words: &route.words,
                args,
            })
        {
            return Err(DesktopError::Blocked {
                command: spec.display(),
                reason: "the route would stop, restart, reconfigure or remove archgate or its supervisor",
            });
        }
        let spec = self.env.apply_to(spec);
        let shown = spec.display();
        let out = programs::run_any(permit, Program::Omarchy, spec).await?;
        Ok(CommandOutcome::from_output(shown, &out))
    }
}

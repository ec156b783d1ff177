//! Omarchy's routes on this desktop: its version and registry (read through a `Permit`, cached
//! until the version changes), search, resolving a route with its arguments into the exact
//! command that will run, and running it. What a route is and how it is judged is `omarchy/`'s.

use std::sync::Arc;

use archgate_exec::{CommandSpec, Permit};

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::omarchy::{
    CommandOutcome, Invocation, Registry, RouteCall, RouteTier, SearchHit, classify,
    forwarded_routes, judge_by_script, judge_call, judge_picks, picked, route_command, script,
    targets_archgate,
};
use crate::programs::{self, Program};

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
        let script = script::scan(
            permit.executor(),
            self.env.omarchy_path.as_deref(),
            &route.binary,
        );
        judge_by_script(&mut route, &script);
        judge_call(&mut route, &script, args)?;
        // `menu summon <item>` runs the item's action: what runs is not in the words.
        if classify::runs_route(&route.words, args) {
            route.tier = RouteTier::Destructive;
        }
        let mut targets = route.targets_archgate
            || targets_archgate(Invocation::Route {
                words: &route.words,
                args,
            });
        // Judged as the route its script forwards to as well (issue 33, attack 5a F6: `bar` +
        // `plugin set …` passed the plugin guard and the person's deny of `bar plugin`).
        let forwarded = forwarded_routes(permit, &reg, &script, args)?;
        for f in &forwarded {
            route.tier = route.tier.max(f.tier);
            route.requires_sudo |= f.requires_sudo;
            targets |= f.targets_archgate;
        }
        // The programs its scripts pick from the person's files (attack 23 F5).
        let picked = picked::resolve(&self.env, &script.picks, &route.binary, args)?;
        judge_picks(&mut route, &reg, &picked)?;
        // Power and session commands are no browser, editor or terminal by any door
        // (`launch_door::NOT_APPLICATIONS`).
        if let Some(p) = picked.iter().find(|p| {
            p.program.as_deref().is_some_and(|prog| {
                crate::launch_door::NOT_APPLICATIONS
                    .contains(&prog.rsplit('/').next().unwrap_or(prog))
            })
        }) {
            return Err(DesktopError::Blocked {
                command: format!("{}: {}", route.route, p.describe()),
                reason: "the program it picks is a power or session command, not an application",
            });
        }
        let spec = self.env.apply_to(spec.timeout(self.config.program_timeout));
        Ok(RouteCall {
            route,
            spec,
            targets_archgate: targets,
            script,
            forwarded,
            picked,
        })
    }

    /// At the run: the programs the route's scripts pick are still the ones the call was judged
    /// (and the person asked) on — each deciding file the same file with the same content, and
    /// no new one. Anything else refuses the run; nothing started.
    pub fn check_picks(&self, call: &RouteCall) -> Result<()> {
        let now = picked::resolve(
            &self.env,
            &call.script.picks,
            &call.route.binary,
            call.spec.arg_list(),
        )?;
        if now == call.picked {
            return Ok(());
        }
        let files: Vec<String> = now
            .iter()
            .chain(call.picked.iter())
            .filter(|p| !(now.contains(p) && call.picked.contains(p)))
            .map(|p| p.file.display().to_string())
            .collect();
        Err(DesktopError::Blocked {
            command: format!("{} (picked by {})", call.spec.display(), files.join(", ")),
            reason: "a file this route's script picks its program from changed since the call \
                     was judged and approved; ask again",
        })
    }

    /// Runs a resolved route: exactly its spec. Sudo routes and calls that reach archgate are
    /// refused here too, as a second lock behind policy.
    pub async fn run_route(&self, permit: &Permit, call: &RouteCall) -> Result<CommandOutcome> {
        if call.route.requires_sudo {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route needs root; run it yourself in a terminal",
            });
        }
        if call.targets_archgate {
            return Err(DesktopError::Blocked {
                command: call.spec.display(),
                reason: "the route would stop, restart, reconfigure or remove archgate or its supervisor",
            });
        }
        self.check_picks(call)?;
        // (Omarchy's tree is judged again as its program starts: `programs::run_any`.)
        crate::omarchy::files_still_the_persons(&call.route, &call.script, call.spec.arg_list())?;
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

//! The desktop: the compositor's state, Omarchy's command registry and Quickshell IPC (search and
//! dispatch), and curated doors to the same room — screenshot, screen text, clipboard, notify,
//! theme, background, audio, brightness, media, toggles, launch.
//!
//! Tiers follow risk, not only change: reading the screen or the clipboard is `act` (it exposes
//! what the person sees), so it asks unless the person allows it. Routes from Omarchy's registry
//! take the registry's tier; until the registry has been read once in this process, a route is
//! unclassified and asked, and the desktop crate refuses sudo routes again when it runs them.

use archgate_core::exec::Permit;
use archgate_core::gate::Catalogue;
use archgate_core::policy::Tier;
use archgate_core::tool::{CallCx, Plan, Tool, ToolError, ToolOutput, ToolSpec};
use archgate_desktop::{Desktop, Invocation, Registry, SuggestedTier};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::{Arc, RwLock};

use super::domain_err;
use super::packages::NoArgs;

/// The desktop handle and the last registry read (policy reads it without running anything).
pub struct DesktopService {
    pub(super) desktop: Desktop,
    registry: RwLock<Option<Arc<Registry>>>,
}

impl DesktopService {
    pub fn new(env: archgate_desktop::DesktopEnv) -> DesktopService {
        DesktopService {
            desktop: Desktop::new(env, archgate_desktop::DesktopConfig::default()),
            registry: RwLock::new(None),
        }
    }

    pub(super) async fn remember(&self) {
        if let Some(r) = self.desktop.cached_registry().await {
            *self.registry.write().unwrap_or_else(|p| p.into_inner()) = Some(r);
        }
    }

    fn registry(&self) -> Option<Arc<Registry>> {
        self.registry
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

pub(super) fn tier_of(t: SuggestedTier) -> Tier {
    match t {
        SuggestedTier::Read => Tier::Read,
        SuggestedTier::Act => Tier::Act,
        SuggestedTier::Destructive => Tier::Destructive,
    }
}

macro_rules! spec {
    ($name:literal, $title:literal, $tier:ident, read_only: $ro:literal, destructive: $de:literal, private: [$($p:literal),*], $desc:expr) => {{
        static SPEC: ToolSpec = ToolSpec {
            name: $name,
            title: $title,
            description: $desc,
            tier: Tier::$tier,
            read_only: $ro,
            destructive: $de,
            idempotent: $ro,
            open_world: false,
            private_args: &[$($p),*],
        };
        &SPEC
    }};
}

pub(super) fn json(v: impl serde::Serialize) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::json(v))
}

mod controls;
mod look;
use controls::*;
use look::*;

// ---- state, registry, shell --------------------------------------------------------------

pub struct DesktopState(Arc<DesktopService>);
impl Tool for DesktopState {
    type Args = NoArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("desktop_state", "Desktop state", Read, read_only: true, destructive: false, private: [],
            "Monitors, workspaces and windows (class, title, workspace, geometry, floating, fullscreen) \
             and focus, on Hyprland or Sway. Look here before acting on a window or monitor.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { json(self.0.desktop.desktop_state().await.map_err(domain_err)?) })
    }
}

/// Arguments of `omarchy_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmarchySearchArgs {
    /// What the person wants done, in words ("dark theme", "screen recording", "wifi").
    pub query: String,
    /// Most routes returned (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct OmarchySearch(Arc<DesktopService>);
impl Tool for OmarchySearch {
    type Args = OmarchySearchArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("omarchy_search", "Find an Omarchy command", Read, read_only: true, destructive: false, private: [],
            "Search Omarchy's own command registry (everything its menus can do) by name, description \
             and group; each route shows its tier and arguments. Then run one with omarchy_run.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: OmarchySearchArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let hits = self
                .0
                .desktop
                .omarchy_search(&p, &a.query, a.limit.unwrap_or(10).clamp(1, 50))
                .await;
            self.0.remember().await;
            json(hits.map_err(domain_err)?)
        })
    }
}

/// Arguments of `omarchy_run`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmarchyRunArgs {
    /// The route as omarchy_search shows it, e.g. "theme set".
    pub route: String,
    /// Its arguments, each one word.
    #[serde(default)]
    pub args: Vec<String>,
}

pub struct OmarchyRun(Arc<DesktopService>);
impl Tool for OmarchyRun {
    type Args = OmarchyRunArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("omarchy_run", "Run an Omarchy command", Act, read_only: false, destructive: false, private: [],
            "Run a route of Omarchy's command registry with its arguments, through the gate.")
    }
    fn plan(&self, a: &OmarchyRunArgs) -> Plan {
        let words: Vec<String> = a.route.split_whitespace().map(str::to_owned).collect();
        let mut p = Plan::simple(self.spec());
        p.route = format!("omarchy_run {}", words.join(" "));
        p.argv = std::iter::once("omarchy".to_owned())
            .chain(words.iter().cloned())
            .chain(a.args.iter().cloned())
            .collect();
        p.targets_archgate = archgate_desktop::targets_archgate(Invocation::Route {
            words: &words,
            args: &a.args,
        });
        match self
            .0
            .registry()
            .as_ref()
            .and_then(|r| r.get(&a.route).cloned())
        {
            Some(route) => {
                p.tier = Some(tier_of(route.tier));
                p.needs_sudo = route.needs_sudo;
                p.targets_archgate |= route.targets_archgate;
            }
            // Not read yet in this process: unclassified, so the person is asked.
            None => p.tier = None,
        }
        p
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: OmarchyRunArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let r = self.0.desktop.omarchy_run(&p, &a.route, &a.args).await;
            self.0.remember().await;
            json(r.map_err(domain_err)?)
        })
    }
}

pub struct ShellTargets(Arc<DesktopService>);
impl Tool for ShellTargets {
    type Args = NoArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("shell_targets", "Quickshell IPC targets", Read, read_only: true, destructive: false, private: [],
            "The desktop shell's IPC targets (Omarchy's bar, launcher, OSD …) with typed method signatures.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move { json(self.0.desktop.shell_targets(&p).await.map_err(domain_err)?) })
    }
}

/// Arguments of `shell_call`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellCallArgs {
    /// IPC target, as shell_targets lists it.
    pub target: String,
    /// Method of that target.
    pub method: String,
    /// Arguments, checked against the method's signature.
    #[serde(default)]
    pub args: Vec<serde_json::Value>,
}

pub struct ShellCall(Arc<DesktopService>);
impl Tool for ShellCall {
    type Args = ShellCallArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("shell_call", "Call the desktop shell", Act, read_only: false, destructive: false, private: [],
            "Call a Quickshell IPC method; arguments are checked against its signature first.")
    }
    fn plan(&self, a: &ShellCallArgs) -> Plan {
        let mut p = Plan::with_tier(self.spec(), Tier::Act, &[&a.target, &a.method]);
        let args: Vec<String> = a
            .args
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect();
        p.targets_archgate = archgate_desktop::targets_archgate(Invocation::ShellCall {
            target: &a.target,
            method: &a.method,
            args: &args,
        });
        p.argv = ["qs", "ipc", "call", &a.target, &a.method]
            .iter()
            .map(|s| s.to_string())
            .chain(args)
            .collect();
        p
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: ShellCallArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .shell_call(&p, &a.target, &a.method, &a.args)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

pub fn register(c: &mut Catalogue, env: archgate_desktop::DesktopEnv) {
    let svc = Arc::new(DesktopService::new(env));
    c.add(DesktopState(svc.clone()));
    c.add(OmarchySearch(svc.clone()));
    c.add(OmarchyRun(svc.clone()));
    c.add(ShellTargets(svc.clone()));
    c.add(ShellCall(svc.clone()));
    c.add(Screenshot(svc.clone()));
    c.add(ScreenText(svc.clone()));
    c.add(ClipboardRead(svc.clone()));
    c.add(ClipboardWrite(svc.clone()));
    c.add(Notify(svc.clone()));
    c.add(Osd(svc.clone()));
    c.add(Theme(svc.clone()));
    c.add(Background(svc.clone()));
    c.add(Audio(svc.clone()));
    c.add(BrightnessTool(svc.clone()));
    c.add(Media(svc.clone()));
    c.add(Toggle(svc.clone()));
    c.add(Launch(svc));
}

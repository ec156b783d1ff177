//! `launch`: an application (a desktop entry or a program) or an address, started detached. What
//! it would start is judged by what it is (`archgate_desktop::launch_door`): an Omarchy route's
//! script is that route, resolved and judged by the code `omarchy_run` uses (its tier, blocks,
//! guards and script facts), and a power or session command is refused (attack 15 F4; class: *a
//! route reached by another door skips the route's judgement*). What it may start at all is an
//! allowlist (`archgate_desktop::app_entries`, attack 18): what root's desktop entries declare,
//! and the person's own entries only as Omarchy web apps.

use archgate_core::exec::{CommandSpec, Permit};
use archgate_core::policy::Tier;
use archgate_core::tool::{
    Action, CallCx, ErrorKind, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_desktop::launch_door::LaunchDoor;
use archgate_desktop::*;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::{DesktopService, json, resolve_route_call, route_action};
use crate::tools::domain_err;

/// Arguments of `launch`: exactly one of `app` and `url`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// Desktop-entry id or program name.
    #[serde(default)]
    pub app: Option<String>,
    /// An http(s) or mailto: address.
    #[serde(default)]
    pub url: Option<String>,
}

impl LaunchArgs {
    fn target(&self) -> Result<LaunchTarget, ToolError> {
        match (&self.app, &self.url) {
            (Some(app), None) => Ok(LaunchTarget::App { app: app.clone() }),
            (None, Some(url)) => Ok(LaunchTarget::Url { url: url.clone() }),
            _ => Err(ToolError::new(
                ErrorKind::InvalidArguments,
                "give exactly one of `app` and `url`",
            )),
        }
    }
}

/// What a launch starts, resolved.
pub enum LaunchRun {
    /// An application or an address: this command, detached.
    Program(LaunchTarget, CommandSpec),
    /// An Omarchy route's script (a web app's `omarchy-launch-webapp URL` among them): the route
    /// call as `omarchy_run` resolved it, detached.
    Route(Box<RouteCall>),
}

pub struct Launch(pub(super) Arc<DesktopService>);
impl Tool for Launch {
    type Args = LaunchArgs;
    type Run = LaunchRun;
    fn spec(&self) -> &'static ToolSpec {
        spec!("launch", "Launch an app or open a URL", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase::cases(&[("url", "{link:url}"), ("app", "start the application {app}")]),
            "Start an application or open an http(s) address, detached. An application is what a system desktop entry (root's, e.g. /usr/share/applications) declares: its entry id, or the program its Exec= names; the person's own entries (~/.local/share/applications) launch only as Omarchy web apps. An Omarchy script is judged as its omarchy_run route.")
    }
    /// One route per application, whatever the spelling (`X` and `X.desktop`).
    fn plan(&self, a: &LaunchArgs) -> Plan {
        match (&a.app, &a.url) {
            (Some(app), _) => {
                let id = Desktop::app_id(app);
                let mut p = Plan::with_tier(self.spec(), Tier::Act, &["app", id]);
                p.argv = vec![id.to_owned()];
                p
            }
            _ => Plan::with_tier(self.spec(), Tier::Act, &["url"]),
        }
    }
    /// The command the entry or URL resolves to is what policy judges (an `Exec=su …` entry is
    /// blocked), what the person sees, and the only thing the permit runs. When that command is
    /// an Omarchy route's script, the call is that route: resolved by `omarchy_run`'s own
    /// `resolve_route_call`, judged by `route_action` (a destructive route is never automatic, a
    /// route that needs root or reaches archgate is blocked); the words `launch app X` stay a
    /// name of it, so the person's rules on them still apply.
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: LaunchArgs,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>> {
        Box::pin(async move {
            let target = a.target()?;
            if let LaunchTarget::Url { url } = &target
                && !url.starts_with("mailto:")
            {
                cx.resolver.url(url)?;
            }
            let d = &self.0.desktop;
            let planned = d.plan_app_launch(&target).map_err(domain_err)?;
            let door = match &target {
                LaunchTarget::App { .. } => d
                    .launch_door(&probe.permit, &planned)
                    .await
                    .map_err(domain_err)?,
                LaunchTarget::Url { .. } => LaunchDoor::Application,
            };
            let spec = planned.spec;
            let shown = match &target {
                LaunchTarget::App { app } => format!("application {}", Desktop::app_id(app)),
                LaunchTarget::Url { url } => url.clone(),
            };
            match door {
                LaunchDoor::Application => {
                    let mut action = Action::from_plan(plan);
                    action.commands = vec![spec.clone()];
                    action.target = Some(shown);
                    Ok(Resolved {
                        action,
                        run: LaunchRun::Program(target, spec),
                    })
                }
                LaunchDoor::Route { route, args } => {
                    let (call, files) =
                        resolve_route_call(d, cx, &probe.permit, &route, &args).await?;
                    let mut action = route_action(&call);
                    action.files = files;
                    action.target = Some(format!("{shown}: Omarchy's `{}`", call.route.route));
                    Ok(Resolved {
                        action,
                        run: LaunchRun::Route(Box::new(call)),
                    })
                }
            }
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        run: LaunchRun,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let d = &self.0.desktop;
        Box::pin(async move {
            let launched = match run {
                LaunchRun::Program(target, spec) => d.launch(&p, &target, spec),
                LaunchRun::Route(call) => d.launch_route(&p, &call),
            };
            json(launched.map_err(domain_err)?)
        })
    }
}

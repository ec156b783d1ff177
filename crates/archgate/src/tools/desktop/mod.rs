//! The desktop: the compositor's state, Omarchy's command registry and Quickshell IPC (search and
//! dispatch), and curated doors to the same room — screenshot, screen text, clipboard, notify,
//! theme, background, audio, brightness, media, toggles, launch.
//!
//! Tiers follow risk, not only change: reading the screen or the clipboard is `act` (it exposes
//! what the person sees), so it asks unless the person allows it. An Omarchy route, whichever
//! tool reaches it (`omarchy_run`, `toggle`, `theme`, `background`, `osd`), resolves to one
//! action (`route_action`): its canonical route and every spelling, the tier from the
//! classification table (sudo routes blocked) and exactly the script that runs.
//!
//! `destructive` (MCP's `destructiveHint`: the call may do more than add) is true where a call
//! can lose what the person had: `clipboard_write` replaces the clipboard, `omarchy_run` reaches
//! every route (those the table classifies `destructive` among them; the tier, not the hint,
//! makes them always ask), `shell_call` any function the shell exports. Settings a call changes
//! and the person sets back (theme, background, volume, brightness, toggles) and additions
//! (a notification, a launched app) are not destructive.

use archgate_core::exec::Permit;
use archgate_core::gate::Catalogue;
use archgate_core::policy::Tier;
use archgate_core::resolve_as_planned;
use archgate_core::tool::{
    Action, CallCx, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_desktop::{Desktop, Invocation, RouteCall, RouteTier};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::domain_err;
use super::packages::NoArgs;

/// The desktop handle every desktop tool shares (its registry cache among them).
pub struct DesktopService {
    pub(super) desktop: Desktop,
}

impl DesktopService {
    pub fn new(env: archgate_desktop::DesktopEnv) -> DesktopService {
        DesktopService {
            desktop: Desktop::new(env, archgate_desktop::DesktopConfig::default()),
        }
    }
}

pub(super) fn tier_of(t: RouteTier) -> Tier {
    match t {
        RouteTier::Read => Tier::Read,
        RouteTier::Act => Tier::Act,
        RouteTier::Destructive => Tier::Destructive,
    }
}

/// The action of an Omarchy route, whichever tool reached it: the canonical route, every other
/// spelling (aliases, with and without `omarchy`, as `omarchy_run` words), the route's tier and
/// exactly the command that runs.
/// Whether a parameter's name (lowercase: a route's usage slot, a shell IPC parameter) says its
/// value names a file: such a value is resolved as a path (protected paths refused) and pinned.
fn names_a_file(name: &str) -> bool {
    ["path", "file", "image", "dir"]
        .iter()
        .any(|w| name.contains(w))
}

pub(super) fn route_action(call: &RouteCall) -> Action {
    let r = &call.route;
    let mut names = Vec::new();
    // A route whose script forwards the arguments to another (`bar plugin …` → `bar plugin`)
    // goes by that route's names too: the person's rules for it apply to every spelling.
    for (i, n) in r.names().map(|n| (0, n)).chain(
        call.forwarded
            .iter()
            .flat_map(|f| f.names().map(|n| (1, n))),
    ) {
        let bare = n.trim_start_matches("omarchy ");
        if i == 1 || n != r.route {
            names.push(n.to_owned());
        }
        names.push(bare.to_owned());
        names.push(format!("omarchy_run {bare}"));
    }
    Action {
        route: r.route.clone(),
        names,
        tier: Some(tier_of(r.tier)),
        commands: vec![call.spec.clone()],
        target: None,
        shown: None,
        needs_sudo: r.requires_sudo,
        targets_archgate: call.targets_archgate,
        files: Vec::new(),
        picture: None,
        preview: false,
        // The file and its identity: the person approves what runs, and a rule made for one
        // pick (or for none) never covers another (attack 23 F5).
        starts: call
            .picked
            .iter()
            .map(|p| format!("{} [{}]", p.describe(), p.identity))
            .collect(),
    }
}

macro_rules! spec {
    ($name:literal, $title:literal, $tier:ident, read_only: $ro:literal, destructive: $de:literal, private: [$($p:literal),*], provenance: $prov:expr, says: $says:expr, $desc:expr) => {{
        static SPEC: ToolSpec = ToolSpec {
            long_running: false,
            name: $name,
            title: $title,
            description: $desc,
            tier: Tier::$tier,
            read_only: $ro,
            destructive: $de,
            idempotent: $ro,
            open_world: false,
            private_args: &[$($p),*],
            provenance: $prov,
            says: $says,
        };
        &SPEC
    }};
}

/// The `execute` of a desktop tool whose answer is one serialized value:
/// `execute!(|d, p, run: Run| body)` binds `d` to the desktop handle and `p` to the permit, and
/// answers the JSON of `body` (a `Result<impl Serialize, ToolError>`, awaited inside).
macro_rules! execute {
    (|$d:ident, $p:ident, $run:ident: $ty:ty| $body:expr) => {
        fn execute<'a>(
            &'a self,
            _cx: &'a CallCx,
            $p: Permit,
            $run: $ty,
        ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
            let $d = &self.0.desktop;
            Box::pin(async move {
                let answer: Result<_, ToolError> = $body;
                json(answer?)
            })
        }
    };
}

/// The answer of a desktop tool. A relayed program's outcome (an Omarchy route's, a shell
/// method's: `stdout` and `stderr`) whose streams are both empty carries no words of the
/// program, only the command archgate built and how it ended: its own words, opening no
/// untrusted window (`ToolOutput::own_words`).
pub(super) fn json(v: impl serde::Serialize) -> Result<ToolOutput, ToolError> {
    let out = ToolOutput::json(v);
    let silent = out
        .structured
        .as_ref()
        .and_then(serde_json::Value::as_object)
        .is_some_and(|o| {
            ["stdout", "stderr"].iter().all(|k| {
                o.get(*k)
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|t| t.trim().is_empty())
            })
        });
    Ok(if silent { out.own_words() } else { out })
}

mod controls;
mod launch;
mod screen;
use controls::*;
use launch::*;
use screen::*;

// ---- state, registry, shell --------------------------------------------------------------

/// Arguments of `desktop_state`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DesktopStateArgs {
    /// Window titles too (a terminal's title is its running command line, a browser's the page:
    /// they may hold secrets, so this asks the person first).
    #[serde(default)]
    pub titles: Option<bool>,
}

/// What the person is asked when window titles are wanted.
const TITLES_TARGET: &str = "read every window's title (a terminal's title is the command it runs, a browser's the page: they may hold passwords or tokens)";

/// Said in place of each title when they were not asked for.
const TITLE_WITHHELD: &str =
    "(withheld: titles may carry command lines; desktop_state with titles: true asks the person)";

/// Class (attack 3, F11): *a read answer that carries what may hold another program's secrets*
/// — a terminal sets its title to the running command line (`mysql -pSECRET`), the text
/// `processes cmdline` asks for. Titles are withheld from the read; `titles: true` is the route
/// `desktop_state titles`, `act`, as `processes cmdline` is.
pub struct DesktopState(Arc<DesktopService>);
impl Tool for DesktopState {
    type Args = DesktopStateArgs;
    type Run = DesktopStateArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("desktop_state", "Desktop state", Read, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::WindowTitles), says: archgate_core::sentence::Phrase::cases(&[("titles", "read the desktop's window titles (they may carry command lines)"), ("", "read {tool} (it changes nothing)")]),
            "Monitors, workspaces and windows (class, workspace, geometry, floating, fullscreen) \
             and focus, on Hyprland or Sway. Look here before acting on a window or monitor. \
             With titles: true, window titles too (they may carry command lines: act, the person \
             is asked first).")
    }
    fn plan(&self, a: &DesktopStateArgs) -> Plan {
        if a.titles == Some(true) {
            Plan::with_tier(self.spec(), Tier::Act, &["titles"])
        } else {
            Plan::simple(self.spec())
        }
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a Probe,
        plan: &'a Plan,
        a: DesktopStateArgs,
    ) -> BoxFuture<'a, Result<Resolved<DesktopStateArgs>, ToolError>> {
        Box::pin(async move {
            let titles = a.titles == Some(true);
            let mut r = Resolved::planned(plan, a);
            if titles {
                r.action.target = Some(TITLES_TARGET.to_owned());
            }
            Ok(r)
        })
    }
    execute!(|d, _p, a: DesktopStateArgs| {
        let mut state = d.desktop_state().await.map_err(domain_err)?;
        if a.titles != Some(true) {
            for w in &mut state.windows {
                w.title = TITLE_WITHHELD.to_owned();
            }
        }
        Ok::<_, ToolError>(state)
    });
}

/// Arguments of `omarchy_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OmarchySearchArgs {
    /// What to do, in words ("dark theme", "wifi").
    pub query: String,
    /// Most routes returned (default 10).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct OmarchySearch(Arc<DesktopService>);
impl Tool for OmarchySearch {
    type Args = OmarchySearchArgs;
    type Run = OmarchySearchArgs;
    resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        spec!("omarchy_search", "Find an Omarchy command", Read, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::OmarchySummaries), says: archgate_core::sentence::Phrase::READS,
            "Search Omarchy's own command registry (everything its menus can do) by name, description \
             and group; each route shows its tier and arguments. Then run one with omarchy_run.")
    }
    execute!(|d, p, a: OmarchySearchArgs| d
        .omarchy_search(&p, &a.query, a.limit.unwrap_or(10).clamp(1, 50))
        .await
        .map_err(domain_err));
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
    type Run = RouteCall;
    fn spec(&self) -> &'static ToolSpec {
        spec!("omarchy_run", "Run an Omarchy command", Act, read_only: false, destructive: true, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::OmarchyOutput), says: archgate_core::sentence::Phrase::cases(&[("", "run the Omarchy command {route}")]),
            "Run an Omarchy route found with omarchy_search, with its arguments.")
    }
    /// The route's tier comes from the classification table, before anything read the registry.
    fn plan(&self, a: &OmarchyRunArgs) -> Plan {
        let words: Vec<String> = a.route.split_whitespace().map(str::to_owned).collect();
        let mut p = Plan::simple(self.spec());
        let bare = archgate_desktop::omarchy::spelling(&a.route).unwrap_or_else(|| words.join(" "));
        p.route = format!("omarchy {bare}");
        p.names = vec![bare.clone(), format!("omarchy_run {bare}")];
        p.tier = Some(tier_of(archgate_desktop::omarchy::classify(&words)));
        if archgate_desktop::omarchy::classify::runs_route(&words, &a.args) {
            p.tier = Some(Tier::Destructive);
        }
        p.argv = words
            .iter()
            .cloned()
            .chain(a.args.iter().cloned())
            .collect();
        p.targets_archgate = archgate_desktop::targets_archgate(Invocation::Route {
            words: &words,
            args: &a.args,
        });
        p
    }
    /// The route, its arity, flags and choices from its usage string, and the names its values
    /// give — a theme, a file — are all checked before anyone is asked: a yes is never followed
    /// by a refusal resolution could have given first.
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        _plan: &'a Plan,
        a: OmarchyRunArgs,
    ) -> BoxFuture<'a, Result<Resolved<RouteCall>, ToolError>> {
        Box::pin(async move {
            let (call, files) =
                resolve_route_call(&self.0.desktop, cx, &probe.permit, &a.route, &a.args).await?;
            let mut action = route_action(&call);
            action.files = files;
            Ok(Resolved { action, run: call })
        })
    }
    execute!(|d, p, call: RouteCall| d.run_route(&p, &call).await.map_err(domain_err));
}

/// A route resolved with its arguments as `omarchy_run` resolves them, for every door that runs
/// one (`omarchy_run`, a `handoff` of a route that needs root): the usage checked, a theme named
/// resolved, a file argument resolved as a path (protected paths refused) and pinned, an address
/// checked as `launch` checks one. The call, and the pins of the files it names.
pub(super) async fn resolve_route_call(
    d: &Desktop,
    cx: &CallCx,
    permit: &Permit,
    route: &str,
    given: &[String],
) -> Result<(RouteCall, Vec<archgate_exec::FilePin>), ToolError> {
    let mut call = d
        .resolve_route(permit, route, given)
        .await
        .map_err(domain_err)?;
    let mut args = given.to_vec();
    let mut files = Vec::new();
    for (slot, i) in call.route.usage.values(given) {
        let name = slot.name.to_ascii_lowercase();
        if slot.choices.is_some() {
            // A closed choice is one of its words (`share <clipboard|file|folder>`): checked
            // against them by the usage, never a name of anything.
            continue;
        }
        if name.contains("theme") && !name.contains("dir") && !name.contains('.') {
            args[i] = d.resolve_theme(&args[i]).map_err(domain_err)?;
        } else if names_a_file(&name) && !args[i].contains("://") {
            // archgate's own files and the person's secrets are refused here too; the
            // file is pinned: at the yes it must still be the one the person saw.
            let (t, pin) = cx.resolver.pinned_path(&args[i])?;
            args[i] = t.value;
            files.push(pin);
        } else if args[i].contains("://") || (name.contains("url") && args[i].contains(':')) {
            // An address opens only as `launch` would open it (http, https, mailto): a
            // `file://` to a key was refused by `launch` and passed as a route's value
            // (attack 3, F2: one capability, two doors).
            archgate_desktop::launch::check_url(&args[i]).map_err(domain_err)?;
        }
    }
    if args != given {
        call = d
            .resolve_route(permit, &call.route.route, &args)
            .await
            .map_err(domain_err)?;
    }
    Ok((call, files))
}

pub struct ShellTargets(Arc<DesktopService>);
impl Tool for ShellTargets {
    type Args = NoArgs;
    type Run = NoArgs;
    resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        spec!("shell_targets", "Quickshell IPC targets", Read, read_only: true, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase::READS,
            "Quickshell's IPC targets (Omarchy's bar, launcher, OSD …) with typed method signatures.")
    }
    execute!(|d, p, _a: NoArgs| d.shell_targets(&p).await.map_err(domain_err));
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
    #[schemars(with = "Vec<IpcArg>")]
    pub args: Vec<serde_json::Value>,
}

/// What an IPC argument can be (the schema's view; the signature check is the real one):
/// Quickshell's IPC types are strings, numbers and booleans.
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum IpcArg {
    Text(String),
    Number(f64),
    Flag(bool),
}

pub struct ShellCall(Arc<DesktopService>);
impl Tool for ShellCall {
    type Args = ShellCallArgs;
    type Run = archgate_core::exec::CommandSpec;
    fn spec(&self) -> &'static ToolSpec {
        spec!("shell_call", "Call the desktop shell", Act, read_only: false, destructive: true, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::ShellAnswers), says: archgate_core::sentence::Phrase::cases(&[("", "call the desktop shell: {route}")]),
            "Call a Quickshell IPC method; arguments are checked against its signature first.")
    }
    fn plan(&self, a: &ShellCallArgs) -> Plan {
        let args: Vec<String> = a
            .args
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| v.to_string())
            })
            .collect();
        // A method that runs what it is given (the dispatcher `shell call`, `runAction`) runs
        // code no table can judge: never automatic (attack 3, F9).
        let tier = if archgate_desktop::omarchy::ipc_runs_code(&a.target, &a.method, &args) {
            Tier::Destructive
        } else {
            Tier::Act
        };
        let mut p = Plan::with_tier(self.spec(), tier, &[&a.target, &a.method]);
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
    /// The method and its signature are read from `qs ipc show` before anyone is asked: a
    /// wrong method or argument is refused first, and the person sees the exact command.
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: ShellCallArgs,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>> {
        Box::pin(async move {
            let d = &self.0.desktop;
            // A string a parameter named for a file (`set(path: string)`) is a path like any
            // other: archgate's own files and the person's secrets are refused, and the file is
            // pinned — at the yes it must still be the one the person saw.
            let targets = d.shell_targets(&probe.permit).await.map_err(domain_err)?;
            let params = targets
                .iter()
                .find(|t| t.name == a.target)
                .and_then(|t| t.functions.iter().find(|f| f.name == a.method))
                .map(|f| f.params.clone())
                .unwrap_or_default();
            let mut args = a.args.clone();
            let mut files = Vec::new();
            for (p, v) in params.iter().zip(args.iter_mut()) {
                if let Some(given) = v.as_str()
                    && names_a_file(&p.name.to_ascii_lowercase())
                    && !given.contains("://")
                {
                    let (t, pin) = cx.resolver.pinned_path(given)?;
                    *v = serde_json::Value::String(t.value);
                    files.push(pin);
                }
            }
            let spec = d
                .plan_shell_call(&probe.permit, &a.target, &a.method, &args)
                .await
                .map_err(domain_err)?;
            let mut action = Action::from_plan(plan);
            action.commands = vec![spec.clone()];
            action.files = files;
            Ok(Resolved { action, run: spec })
        })
    }
    execute!(|d, p, spec: Self::Run| d
        .run_command(&p, archgate_desktop::Program::Qs, spec)
        .await
        .map_err(domain_err));
}

pub fn register(c: &mut Catalogue, svc: Arc<DesktopService>) {
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

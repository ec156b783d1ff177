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
use archgate_core::tool::{CallCx, Content, Plan, Tool, ToolError, ToolOutput, ToolSpec};
use archgate_desktop::{
    AudioAction, BackgroundAction, BrightnessAction, CaptureTarget, Desktop, Invocation,
    LaunchTarget, MediaAction, Registry, SuggestedTier, ThemeAction,
};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::{Arc, RwLock};

use super::domain_err;
use super::packages::NoArgs;

/// The desktop handle and the last registry read (policy reads it without running anything).
pub struct DesktopService {
    desktop: Desktop,
    registry: RwLock<Option<Arc<Registry>>>,
}

impl DesktopService {
    pub fn new() -> DesktopService {
        DesktopService {
            desktop: Desktop::new(
                archgate_desktop::DesktopEnv::from_process(),
                archgate_desktop::DesktopConfig::default(),
            ),
            registry: RwLock::new(None),
        }
    }

    async fn remember(&self) {
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

fn tier_of(t: SuggestedTier) -> Tier {
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

fn json(v: impl serde::Serialize) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::json(v))
}

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

// ---- screen and clipboard ------------------------------------------------------------------

/// Arguments of `screenshot` and `screen_text`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaptureArgs {
    /// What to capture (default: every output).
    #[serde(default)]
    pub target: Option<CaptureTarget>,
}

pub struct Screenshot(Arc<DesktopService>);
impl Tool for Screenshot {
    type Args = CaptureArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("screenshot", "Screenshot", Act, read_only: true, destructive: false, private: [],
            "A PNG of the screen, a monitor, a window or a region, scaled to at most the configured size.")
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        p: Permit,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let target = a.target.unwrap_or(CaptureTarget::Output);
            let shot = self
                .0
                .desktop
                .screenshot(&p, &target, cx.config.desktop.screenshot_max_dim)
                .await
                .map_err(domain_err)?;
            let meta = serde_json::to_value(&shot).unwrap_or_default();
            Ok(ToolOutput {
                content: vec![Content::Image {
                    data: shot.png,
                    mime: "image/png",
                }],
                structured: Some(meta),
                exit_code: None,
            })
        })
    }
}

pub struct ScreenText(Arc<DesktopService>);
impl Tool for ScreenText {
    type Args = CaptureArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("screen_text", "Read text on screen", Act, read_only: true, destructive: false, private: [],
            "The text shown on screen (OCR), best on a region or a window.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: CaptureArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let target = a.target.unwrap_or(CaptureTarget::Output);
            json(
                self.0
                    .desktop
                    .screen_text(&p, &target)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

pub struct ClipboardRead(Arc<DesktopService>);
impl Tool for ClipboardRead {
    type Args = NoArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_read", "Read the clipboard", Act, read_only: true, destructive: false, private: [],
            "The text on the clipboard. Its contents never reach the audit log.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .clipboard_read(&p)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

/// Arguments of `clipboard_write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardWriteArgs {
    /// Text to put on the clipboard.
    pub text: String,
}

pub struct ClipboardWrite(Arc<DesktopService>);
impl Tool for ClipboardWrite {
    type Args = ClipboardWriteArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("clipboard_write", "Write the clipboard", Act, read_only: false, destructive: false, private: ["text"],
            "Put text on the clipboard.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: ClipboardWriteArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.0
                .desktop
                .clipboard_write(&p, &a.text)
                .await
                .map_err(domain_err)?;
            json(serde_json::json!({"written_bytes": a.text.len()}))
        })
    }
}

// ---- notifications ---------------------------------------------------------------------------

/// Arguments of `notify`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotifyArgs {
    /// Title.
    pub title: String,
    /// Body text.
    #[serde(default)]
    pub body: String,
}

pub struct Notify(Arc<DesktopService>);
impl Tool for Notify {
    type Args = NotifyArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("notify", "Desktop notification", Act, read_only: false, destructive: false, private: [],
            "Show the person a desktop notification.")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: NotifyArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            self.0
                .desktop
                .notify(&p, &a.title, &a.body)
                .await
                .map_err(domain_err)?;
            json(serde_json::json!({"shown": true}))
        })
    }
}

/// Arguments of `osd`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OsdArgs {
    /// A short message.
    pub message: String,
}

pub struct Osd(Arc<DesktopService>);
impl Tool for Osd {
    type Args = OsdArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("osd", "On-screen message", Act, read_only: false, destructive: false, private: [],
            "Flash a short on-screen message (Omarchy's OSD, else a notification).")
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: OsdArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .osd(&p, &a.message)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

// ---- look and sound ------------------------------------------------------------------------

/// Arguments of `theme`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThemeArgs {
    /// list, current or set.
    pub action: ThemeVerb,
    /// For set: the theme's name as listed (case and spaces are forgiven).
    #[serde(default)]
    pub name: Option<String>,
}

/// What to do with themes.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThemeVerb {
    List,
    Current,
    Set,
}

impl ThemeArgs {
    fn action(&self) -> Result<ThemeAction, ToolError> {
        Ok(match self.action {
            ThemeVerb::List => ThemeAction::List,
            ThemeVerb::Current => ThemeAction::Current,
            ThemeVerb::Set => ThemeAction::Set {
                name: need(&self.name, "name", "set")?,
            },
        })
    }
}

fn need<T: Clone>(v: &Option<T>, field: &str, action: &str) -> Result<T, ToolError> {
    v.clone().ok_or_else(|| {
        ToolError::new(
            "invalid_arguments",
            format!("action {action} needs `{field}`"),
        )
    })
}

pub struct Theme(Arc<DesktopService>);
impl Tool for Theme {
    type Args = ThemeArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("theme", "Omarchy theme", Act, read_only: false, destructive: false, private: [],
            "List the installed Omarchy themes, show the current one, or switch.")
    }
    fn plan(&self, a: &ThemeArgs) -> Plan {
        match a.action {
            ThemeVerb::List => Plan::with_tier(self.spec(), Tier::Read, &["list"]),
            ThemeVerb::Current => Plan::with_tier(self.spec(), Tier::Read, &["current"]),
            ThemeVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
        }
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        a: &'a mut ThemeArgs,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            if let ThemeAction::Set { name } = a.action()? {
                let resolved = self.0.desktop.resolve_theme(&name).map_err(domain_err)?;
                a.name = Some(resolved.clone());
                return Ok(Some(format!("omarchy-theme-set {resolved}")));
            }
            Ok(None)
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: ThemeArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .theme(&p, &a.action()?)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

/// Arguments of `background`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundArgs {
    /// next (the theme's next background) or set.
    pub action: BackgroundVerb,
    /// For set: absolute path of a PNG, JPEG or WebP image.
    #[serde(default)]
    pub path: Option<String>,
}

/// What to do with the background.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundVerb {
    Next,
    Set,
}

impl BackgroundArgs {
    fn action(&self) -> Result<BackgroundAction, ToolError> {
        Ok(match self.action {
            BackgroundVerb::Next => BackgroundAction::Next,
            BackgroundVerb::Set => BackgroundAction::Set {
                path: need(&self.path, "path", "set")?,
            },
        })
    }
}

pub struct Background(Arc<DesktopService>);
impl Tool for Background {
    type Args = BackgroundArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("background", "Desktop background", Act, read_only: false, destructive: false, private: [],
            "Switch to the next background of the theme, or set an image file as background.")
    }
    fn plan(&self, a: &BackgroundArgs) -> Plan {
        match a.action {
            BackgroundVerb::Next => Plan::with_tier(self.spec(), Tier::Act, &["next"]),
            BackgroundVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
        }
    }
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        a: &'a mut BackgroundArgs,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            if let BackgroundAction::Set { path } = a.action()? {
                // archgate's own files and the person's secrets are refused before anything else.
                let t = cx.resolver.existing_path(&path)?;
                let p = self
                    .0
                    .desktop
                    .resolve_background(&t.value)
                    .map_err(domain_err)?;
                let shown = p.display().to_string();
                a.path = Some(shown.clone());
                return Ok(Some(format!("background {shown}")));
            }
            Ok(None)
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: BackgroundArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let done = self
                .0
                .desktop
                .background(&p, &a.action()?)
                .await
                .map_err(domain_err)?;
            json(serde_json::json!({ "background": done }))
        })
    }
}

/// Arguments of `audio`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AudioArgs {
    /// get, set (percent), mute (muted; absent toggles), sinks, or switch (sink).
    pub action: AudioVerb,
    /// For set: volume in percent, 0 to 150.
    #[serde(default)]
    pub percent: Option<u32>,
    /// For mute: true mutes, false unmutes, absent toggles.
    #[serde(default)]
    pub muted: Option<bool>,
    /// For switch: sink id or name as sinks lists them.
    #[serde(default)]
    pub sink: Option<String>,
}

/// What to do with audio.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AudioVerb {
    Get,
    Set,
    Mute,
    Sinks,
    Switch,
}

impl AudioArgs {
    fn action(&self) -> Result<AudioAction, ToolError> {
        Ok(match self.action {
            AudioVerb::Get => AudioAction::Get,
            AudioVerb::Sinks => AudioAction::Sinks,
            AudioVerb::Set => AudioAction::Set {
                percent: need(&self.percent, "percent", "set")?,
            },
            AudioVerb::Mute => AudioAction::Mute { muted: self.muted },
            AudioVerb::Switch => AudioAction::Switch {
                sink: need(&self.sink, "sink", "switch")?,
            },
        })
    }
}

pub struct Audio(Arc<DesktopService>);
impl Tool for Audio {
    type Args = AudioArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("audio", "Audio", Act, read_only: false, destructive: false, private: [],
            "Volume and mute of the default output, the list of outputs, and switching between them.")
    }
    fn plan(&self, a: &AudioArgs) -> Plan {
        match a.action {
            AudioVerb::Get => Plan::with_tier(self.spec(), Tier::Read, &["get"]),
            AudioVerb::Sinks => Plan::with_tier(self.spec(), Tier::Read, &["sinks"]),
            AudioVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
            AudioVerb::Mute => Plan::with_tier(self.spec(), Tier::Act, &["mute"]),
            AudioVerb::Switch => Plan::with_tier(self.spec(), Tier::Act, &["switch"]),
        }
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        a: &'a mut AudioArgs,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move { a.action().map(|_| None) })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: AudioArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .audio(&p, &a.action()?)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

/// Arguments of `brightness`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrightnessArgs {
    /// get or set.
    pub action: BrightnessVerb,
    /// For set: brightness in percent, 1 to 100.
    #[serde(default)]
    pub percent: Option<u32>,
}

/// What to do with brightness.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BrightnessVerb {
    Get,
    Set,
}

impl BrightnessArgs {
    fn action(&self) -> Result<BrightnessAction, ToolError> {
        Ok(match self.action {
            BrightnessVerb::Get => BrightnessAction::Get,
            BrightnessVerb::Set => BrightnessAction::Set {
                percent: need(&self.percent, "percent", "set")?,
            },
        })
    }
}

pub struct BrightnessTool(Arc<DesktopService>);
impl Tool for BrightnessTool {
    type Args = BrightnessArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("brightness", "Screen brightness", Act, read_only: false, destructive: false, private: [],
            "Read or set the screen's brightness.")
    }
    fn plan(&self, a: &BrightnessArgs) -> Plan {
        match a.action {
            BrightnessVerb::Get => Plan::with_tier(self.spec(), Tier::Read, &["get"]),
            BrightnessVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
        }
    }
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        a: &'a mut BrightnessArgs,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move { a.action().map(|_| None) })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: BrightnessArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .brightness(&p, &a.action()?)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

/// Arguments of `media`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MediaArgs {
    /// play, pause, toggle, next, previous or status.
    pub action: MediaAction,
}

pub struct Media(Arc<DesktopService>);
impl Tool for Media {
    type Args = MediaArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("media", "Media player", Act, read_only: false, destructive: false, private: [],
            "Control the media player (play, pause, next …) or see what is playing.")
    }
    fn plan(&self, a: &MediaArgs) -> Plan {
        let tier = if matches!(a.action, MediaAction::Status) {
            Tier::Read
        } else {
            Tier::Act
        };
        let word = format!("{:?}", a.action).to_lowercase();
        Plan::with_tier(self.spec(), tier, &[&word])
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: MediaArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .media(&p, a.action)
                    .await
                    .map_err(domain_err)?,
            )
        })
    }
}

/// Arguments of `toggle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToggleArgs {
    /// A toggle Omarchy offers (e.g. "nightlight", "idle"); omarchy_search "toggle" lists them.
    pub name: String,
}

pub struct Toggle(Arc<DesktopService>);
impl Tool for Toggle {
    type Args = ToggleArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("toggle", "Toggle a desktop feature", Act, read_only: false, destructive: false, private: [],
            "Switch one of Omarchy's toggles (night light, idle lock, …).")
    }
    fn plan(&self, a: &ToggleArgs) -> Plan {
        let mut p = Plan::with_tier(self.spec(), Tier::Act, &[&a.name]);
        p.argv = vec!["omarchy".into(), "toggle".into(), a.name.clone()];
        p
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: ToggleArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let r = self.0.desktop.toggle(&p, &a.name).await;
            self.0.remember().await;
            json(r.map_err(domain_err)?)
        })
    }
}

/// Arguments of `launch`: exactly one of `app` and `url`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// An application: desktop-entry id (e.g. "org.gnome.Nautilus") or program name.
    #[serde(default)]
    pub app: Option<String>,
    /// An http(s) or mailto: address, opened with the default handler.
    #[serde(default)]
    pub url: Option<String>,
}

impl LaunchArgs {
    fn target(&self) -> Result<LaunchTarget, ToolError> {
        match (&self.app, &self.url) {
            (Some(app), None) => Ok(LaunchTarget::App { app: app.clone() }),
            (None, Some(url)) => Ok(LaunchTarget::Url { url: url.clone() }),
            _ => Err(ToolError::new(
                "invalid_arguments",
                "give exactly one of `app` and `url`",
            )),
        }
    }
}

pub struct Launch(Arc<DesktopService>);
impl Tool for Launch {
    type Args = LaunchArgs;
    fn spec(&self) -> &'static ToolSpec {
        spec!("launch", "Launch an app or open a URL", Act, read_only: false, destructive: false, private: [],
            "Start an application (desktop entry or program) or open an http(s) address, detached.")
    }
    fn plan(&self, a: &LaunchArgs) -> Plan {
        match (&a.app, &a.url) {
            (Some(app), _) => {
                let mut p = Plan::with_tier(self.spec(), Tier::Act, &["app", app]);
                p.argv = vec![app.clone()];
                p
            }
            _ => Plan::with_tier(self.spec(), Tier::Act, &["url"]),
        }
    }
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        a: &'a mut LaunchArgs,
    ) -> BoxFuture<'a, Result<Option<String>, ToolError>> {
        Box::pin(async move {
            let target = a.target()?;
            if let LaunchTarget::Url { url } = &target
                && !url.starts_with("mailto:")
            {
                cx.resolver.url(url)?;
            }
            let spec = self.0.desktop.plan_launch(&target).map_err(domain_err)?;
            Ok(Some(spec.display()))
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        a: LaunchArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            json(
                self.0
                    .desktop
                    .launch(&p, &a.target()?)
                    .map_err(domain_err)?,
            )
        })
    }
}

pub fn register(c: &mut Catalogue) {
    let svc = Arc::new(DesktopService::new());
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

//! The desktop's controls: theme, background, audio, brightness, media and toggles —
//! each with flat arguments (an action and its fields) so the schema stays an object.

use archgate_core::exec::Permit;
use archgate_core::picture::Picture;
use archgate_core::policy::Tier;
use archgate_core::tool::{
    Action, CallCx, ErrorKind, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use archgate_desktop::*;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

use super::{DesktopService, json, route_action};
use crate::tools::domain_err;

// ---- look and sound ------------------------------------------------------------------------

/// Arguments of `theme`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThemeArgs {
    pub action: ThemeVerb,
    /// For set: a name as listed (any case).
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
            ErrorKind::InvalidArguments,
            format!("action {action} needs `{field}`"),
        )
    })
}

/// What `theme` will do, resolved.
pub enum ThemeRun {
    /// List or show (reads files; nothing runs).
    Look(ThemeAction),
    /// Switch: Omarchy's `theme set` route with the resolved theme name (kept: the answer names
    /// it).
    Set(Box<RouteCall>, String),
}

pub struct Theme(pub(super) Arc<DesktopService>);
impl Tool for Theme {
    type Args = ThemeArgs;
    type Run = ThemeRun;
    fn spec(&self) -> &'static ToolSpec {
        spec!("theme", "Omarchy theme", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::FileNames), says: archgate_core::sentence::Phrase::cases(&[("action=set", "switch your Omarchy theme to {name}"), ("", "look at your Omarchy themes")]),
            "List the installed Omarchy themes, show the current one, or switch.")
    }
    fn plan(&self, a: &ThemeArgs) -> Plan {
        match a.action {
            ThemeVerb::List => Plan::with_tier(self.spec(), Tier::Read, &["list"]),
            ThemeVerb::Current => Plan::with_tier(self.spec(), Tier::Read, &["current"]),
            ThemeVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
        }
    }
    /// `set` is Omarchy's `theme set` route: one decision whether reached here or through
    /// omarchy_run.
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: ThemeArgs,
    ) -> BoxFuture<'a, Result<Resolved<ThemeRun>, ToolError>> {
        Box::pin(async move {
            match a.action()? {
                ThemeAction::Set { name } => {
                    let theme = self.0.desktop.resolve_theme(&name).map_err(domain_err)?;
                    let call = self
                        .0
                        .desktop
                        .resolve_route(&probe.permit, "theme set", std::slice::from_ref(&theme))
                        .await
                        .map_err(domain_err)?;
                    let mut action = route_action(&call);
                    action.target = Some(format!("theme {theme}"));
                    action.picture =
                        self.0
                            .desktop
                            .theme_preview(&theme)
                            .map(|path| Picture::Image {
                                what: "the theme's preview",
                                path,
                            });
                    Ok(Resolved {
                        action,
                        run: ThemeRun::Set(Box::new(call), theme),
                    })
                }
                look => Ok(Resolved::planned(plan, ThemeRun::Look(look))),
            }
        })
    }
    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        p: Permit,
        run: ThemeRun,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let d = &self.0.desktop;
            match run {
                ThemeRun::Look(look) => json(d.theme(&p, &look).await.map_err(domain_err)?),
                ThemeRun::Set(call, theme) => {
                    let out = d.run_route(&p, &call).await.map_err(domain_err)?;
                    let current = d.current_theme();
                    // A quiet switch to the theme asked for says only the agent's own word and
                    // how it ended: no window (a standing rule for it keeps working).
                    let own = out.stdout.trim().is_empty()
                        && out.stderr.trim().is_empty()
                        && current.as_deref() == Some(theme.as_str());
                    let answer = json(serde_json::json!({ "ran": out, "current": current }))?;
                    Ok(if own { answer.own_words() } else { answer })
                }
            }
        })
    }
}

/// Arguments of `background`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundArgs {
    /// next: the theme's next one.
    pub action: BackgroundVerb,
    /// For set: a PNG, JPEG or WebP file.
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

pub struct Background(pub(super) Arc<DesktopService>);
impl Tool for Background {
    type Args = BackgroundArgs;
    type Run = BackgroundPlan;
    fn spec(&self) -> &'static ToolSpec {
        spec!("background", "Desktop background", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::FileNames), says: archgate_core::sentence::Phrase::cases(&[("action=set", "set your desktop background to {target}"), ("action=next", "show the next background of your theme"), ("", "change your desktop background")]),
            "The theme's next background, or an image file as background.")
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
        probe: &'a Probe,
        plan: &'a Plan,
        a: BackgroundArgs,
    ) -> BoxFuture<'a, Result<Resolved<BackgroundPlan>, ToolError>> {
        Box::pin(async move {
            let mut action = a.action()?;
            let mut target = None;
            let mut picture = None;
            let mut files = Vec::new();
            if let BackgroundAction::Set { path } = &action {
                // archgate's own files and the person's secrets are refused before anything else;
                // the image is pinned: at the yes it must still be the one the person saw.
                let (t, pin) = cx.resolver.pinned_path(path)?;
                files.push(pin);
                let p = self
                    .0
                    .desktop
                    .resolve_background(&t.value)
                    .map_err(domain_err)?;
                let shown = p.display().to_string();
                picture = Some(Picture::Image {
                    what: "the new background",
                    path: p.clone(),
                });
                target = Some(shown.clone());
                action = BackgroundAction::Set { path: shown };
            }
            let bg = self
                .0
                .desktop
                .background_plan(&probe.permit, &action)
                .await
                .map_err(domain_err)?;
            let mut act = match &bg {
                BackgroundPlan::Route(call) => route_action(call),
                BackgroundPlan::Sway(cmd) => {
                    let mut a = Action::from_plan(plan);
                    a.shown = Some(format!("swaymsg {cmd}"));
                    a
                }
            };
            act.target = target;
            act.files = files;
            act.picture = picture;
            Ok(Resolved {
                action: act,
                run: bg,
            })
        })
    }
    execute!(|d, p, bg: BackgroundPlan| {
        let done = d.background(&p, &bg).await.map_err(domain_err)?;
        Ok(serde_json::json!({ "background": done }))
    });
}

/// Arguments of `audio`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AudioArgs {
    /// set takes percent, mute muted, switch sink.
    pub action: AudioVerb,
    /// 0 to 150.
    #[serde(default)]
    pub percent: Option<u32>,
    /// Absent toggles.
    #[serde(default)]
    pub muted: Option<bool>,
    /// Id or name, as sinks lists them.
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

pub struct Audio(pub(super) Arc<DesktopService>);
impl Tool for Audio {
    type Args = AudioArgs;
    type Run = AudioAction;
    fn spec(&self) -> &'static ToolSpec {
        spec!("audio", "Audio", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::DeviceStrings), says: archgate_core::sentence::Phrase::cases(&[("action=set", "set your volume to {percent}%"), ("action=mute", "mute or unmute your sound"), ("action=switch", "send your sound to {target}"), ("", "look at your sound settings")]),
            "Default output's volume and mute; list the outputs or switch the default.")
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
    /// `wpctl` is found, the volume is in range and the sink named exists before anyone is
    /// asked; `switch` then carries the sink's id, and the question names the sink.
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: AudioArgs,
    ) -> BoxFuture<'a, Result<Resolved<AudioAction>, ToolError>> {
        Box::pin(async move {
            let mut action = a.action()?;
            if let AudioAction::Set { percent } = action
                && percent > archgate_desktop::audio::MAX_PERCENT
            {
                return Err(ToolError::new(
                    ErrorKind::InvalidArguments,
                    format!(
                        "percent {percent}: must be 0 to {}",
                        archgate_desktop::audio::MAX_PERCENT
                    ),
                ));
            }
            if matches!(action, AudioAction::Get | AudioAction::Sinks) {
                return Ok(Resolved::planned(plan, action));
            }
            Program::Wpctl.require(&probe.permit).map_err(domain_err)?;
            let mut target = None;
            if let AudioAction::Switch { sink } = &action {
                let d = &self.0.desktop;
                let sinks = d.audio_sinks(&probe.permit).await.map_err(domain_err)?;
                let s = Desktop::resolve_sink(&sinks, sink).map_err(domain_err)?;
                target = Some(format!("audio sink {} ({})", s.id, s.name));
                action = AudioAction::Switch {
                    sink: s.id.to_string(),
                };
            }
            let mut r = Resolved::planned(plan, action);
            r.action.target = target;
            Ok(r)
        })
    }
    execute!(|d, p, a: AudioAction| d.audio(&p, &a).await.map_err(domain_err));
}

/// Arguments of `brightness`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BrightnessArgs {
    pub action: BrightnessVerb,
    /// For set: 1 to 100.
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

pub struct BrightnessTool(pub(super) Arc<DesktopService>);
impl Tool for BrightnessTool {
    type Args = BrightnessArgs;
    /// The action, and for `set` the backlight resolution settled.
    type Run = (BrightnessAction, Option<String>);
    fn spec(&self) -> &'static ToolSpec {
        spec!("brightness", "Screen brightness", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::ArchgateOnly, says: archgate_core::sentence::Phrase::cases(&[("action=set", "set your screen brightness to {percent}%"), ("", "look at your screen brightness")]),
            "Read or set the screen's brightness.")
    }
    fn plan(&self, a: &BrightnessArgs) -> Plan {
        match a.action {
            BrightnessVerb::Get => Plan::with_tier(self.spec(), Tier::Read, &["get"]),
            BrightnessVerb::Set => Plan::with_tier(self.spec(), Tier::Act, &["set"]),
        }
    }
    /// `set`: the percent is in range, `brightnessctl` is found and a backlight exists before
    /// anyone is asked, and the question names the device.
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: BrightnessArgs,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>> {
        Box::pin(async move {
            let action = a.action()?;
            let BrightnessAction::Set { percent } = action else {
                return Ok(Resolved::planned(plan, (action, None)));
            };
            if !(1..=100).contains(&percent) {
                return Err(ToolError::new(
                    ErrorKind::InvalidArguments,
                    format!("percent {percent}: must be 1 to 100"),
                ));
            }
            Program::Brightnessctl
                .require(&probe.permit)
                .map_err(domain_err)?;
            let b = self
                .0
                .desktop
                .backlight(&probe.permit)
                .await
                .map_err(domain_err)?;
            let mut r = Resolved::planned(plan, (action, Some(b.device.clone())));
            r.action.target = Some(format!("backlight {}", b.device));
            Ok(r)
        })
    }
    execute!(|d, p, run: (BrightnessAction, Option<String>)| d
        .brightness(&p, &run.0, run.1.as_deref())
        .await
        .map_err(domain_err));
}

/// Arguments of `media`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MediaArgs {
    pub action: MediaAction,
}

pub struct Media(pub(super) Arc<DesktopService>);
impl Tool for Media {
    type Args = MediaArgs;
    type Run = MediaArgs;
    /// `playerctl` is found before anyone is asked (no player running is an answer, not a
    /// refusal).
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: MediaArgs,
    ) -> BoxFuture<'a, Result<Resolved<MediaArgs>, ToolError>> {
        Box::pin(async move {
            if a.action != MediaAction::Status {
                Program::Playerctl
                    .require(&probe.permit)
                    .map_err(domain_err)?;
            }
            Ok(Resolved::planned(plan, a))
        })
    }
    fn spec(&self) -> &'static ToolSpec {
        spec!("media", "Media player", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::MediaTitles), says: archgate_core::sentence::Phrase::cases(&[("action=play", "start your media player"), ("action=pause", "pause your media player"), ("action=toggle", "play or pause your media player"), ("action=next", "skip to the next track"), ("action=previous", "go back to the previous track"), ("", "look at what is playing")]),
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
    execute!(|d, p, a: MediaArgs| d.media(&p, a.action).await.map_err(domain_err));
}

/// Arguments of `toggle`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToggleArgs {
    /// E.g. "nightlight"; omarchy_search "toggle" lists them.
    pub name: String,
}

pub struct Toggle(pub(super) Arc<DesktopService>);
impl Tool for Toggle {
    type Args = ToggleArgs;
    type Run = RouteCall;
    fn spec(&self) -> &'static ToolSpec {
        spec!("toggle", "Toggle a desktop feature", Act, read_only: false, destructive: false, private: [], provenance: archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::OmarchyOutput), says: archgate_core::sentence::Phrase::cases(&[("", "toggle {name} on your desktop")]),
            "Switch one of Omarchy's toggles (night light, idle lock, …).")
    }
    fn plan(&self, a: &ToggleArgs) -> Plan {
        let mut p = Plan::with_tier(self.spec(), Tier::Act, &[&a.name]);
        p.argv = vec!["toggle".into(), a.name.clone()];
        p
    }
    /// A toggle is an Omarchy route: its rules and its tier apply (a destructive toggle asks).
    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        probe: &'a Probe,
        _plan: &'a Plan,
        a: ToggleArgs,
    ) -> BoxFuture<'a, Result<Resolved<RouteCall>, ToolError>> {
        Box::pin(async move {
            let call = self
                .0
                .desktop
                .resolve_toggle_call(&probe.permit, &a.name)
                .await
                .map_err(domain_err)?;
            Ok(Resolved {
                action: route_action(&call),
                run: call,
            })
        })
    }
    execute!(|d, p, call: RouteCall| d.run_route(&p, &call).await.map_err(domain_err));
}

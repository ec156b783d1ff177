//! Brightness (brightnessctl), media players (playerctl, MPRIS) and Omarchy's toggles.

use archgate_exec::Permit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::omarchy::{Route, RouteCall};
use crate::programs::{self, Program};

/// What to do with the screen brightness.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum BrightnessAction {
    /// Current brightness.
    Get,
    /// Set brightness.
    Set {
        /// Brightness in percent, 1 to 100 (0 would turn some panels off).
        percent: u32,
    },
}

/// A backlight's brightness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Brightness {
    /// The device, e.g. `intel_backlight`.
    pub device: String,
    /// Current raw value.
    pub current: u64,
    /// Maximum raw value.
    pub max: u64,
    /// Current value in percent.
    pub percent: u32,
}

/// Parses `brightnessctl -m` (`device,class,current,percent%,max`, one line per device; the
/// first backlight is taken).
pub fn parse_brightness(text: &str) -> Result<Brightness> {
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.trim().split(',').collect::<Vec<_>>())
        .filter(|f| f.len() >= 5)
        .collect();
    let f = lines
        .iter()
        .find(|f| f[1] == "backlight")
        .or_else(|| lines.first())
        .ok_or_else(|| DesktopError::malformed("brightnessctl -m", "no device line"))?;
    let num = |s: &str| {
        s.trim_end_matches('%')
            .parse::<u64>()
            .map_err(|_| DesktopError::malformed("brightnessctl -m", format_args!("number {s:?}")))
    };
    Ok(Brightness {
        device: f[0].to_owned(),
        current: num(f[2])?,
        percent: num(f[3])?.min(100) as u32,
        max: num(f[4])?,
    })
}

/// What to do with media players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MediaAction {
    /// Start playing.
    Play,
    /// Pause.
    Pause,
    /// Play or pause.
    Toggle,
    /// Next track.
    Next,
    /// Previous track.
    Previous,
    /// What is playing.
    Status,
}

/// What a player is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MediaStatus {
    /// `Playing`, `Paused`, `Stopped`, or absent when no player runs.
    pub status: Option<String>,
    /// The player's name.
    pub player: Option<String>,
    /// Artist.
    pub artist: Option<String>,
    /// Title.
    pub title: Option<String>,
}

const MEDIA_FORMAT: &str = "{{status}}\t{{playerName}}\t{{artist}}\t{{title}}";

/// Parses playerctl's answer to [`MEDIA_FORMAT`].
pub fn parse_media(text: &str) -> MediaStatus {
    let line = text.lines().next().unwrap_or("");
    let mut f = line.split('\t').map(|s| {
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_owned())
    });
    MediaStatus {
        status: f.next().flatten(),
        player: f.next().flatten(),
        artist: f.next().flatten(),
        title: f.next().flatten(),
    }
}

impl Desktop {
    /// `brightness`: get, or set `device` (as [`Desktop::backlight`] settled it; absent:
    /// brightnessctl's default).
    pub async fn brightness(
        &self,
        permit: &Permit,
        action: &BrightnessAction,
        device: Option<&str>,
    ) -> Result<Brightness> {
        if let BrightnessAction::Set { percent } = action {
            if !(1..=100).contains(percent) {
                return Err(DesktopError::invalid("percent", "must be 1 to 100"));
            }
            let mut spec = Program::Brightnessctl.spec(&self.env).arg("--quiet");
            if let Some(d) = device {
                spec = spec.args(["--device", d]);
            }
            let spec = spec
                .args(["set", &format!("{percent}%")])
                .timeout(self.config.program_timeout);
            programs::run_ok(permit, Program::Brightnessctl, spec).await?;
        }
        let out = self.brightnessctl_list(permit).await?;
        parse_brightness(&out)
    }

    async fn brightnessctl_list(&self, permit: &Permit) -> Result<String> {
        let spec = Program::Brightnessctl
            .spec(&self.env)
            .arg("-m")
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Brightnessctl, spec).await?;
        Ok(out.stdout_lossy())
    }

    /// The screen's backlight that `brightness set` changes, read with `brightnessctl -m`
    /// (read-only) through the gate's probe in resolution: a machine without `brightnessctl` or
    /// without a backlight (only keyboard LEDs, say) is refused before anyone is asked, the
    /// devices it has as the near misses.
    pub async fn backlight(&self, permit: &Permit) -> Result<Brightness> {
        let out = self.brightnessctl_list(permit).await?;
        let has_backlight = out
            .lines()
            .map(|l| l.trim().split(',').collect::<Vec<_>>())
            .any(|f| f.len() >= 5 && f[1] == "backlight");
        if !has_backlight {
            return Err(DesktopError::NotFound {
                what: "screen backlight",
                name: "backlight".to_owned(),
                near: out
                    .lines()
                    .filter_map(|l| {
                        let f: Vec<_> = l.trim().split(',').collect();
                        (f.len() >= 2).then(|| format!("{} ({})", f[0], f[1]))
                    })
                    .collect(),
            });
        }
        parse_brightness(&out)
    }

    /// `media`: control the active MPRIS player, answering with its status afterwards.
    pub async fn media(&self, permit: &Permit, action: MediaAction) -> Result<MediaStatus> {
        let verb = match action {
            MediaAction::Play => Some("play"),
            MediaAction::Pause => Some("pause"),
            MediaAction::Toggle => Some("play-pause"),
            MediaAction::Next => Some("next"),
            MediaAction::Previous => Some("previous"),
            MediaAction::Status => None,
        };
        if let Some(verb) = verb {
            let spec = Program::Playerctl
                .spec(&self.env)
                .arg(verb)
                .timeout(self.config.program_timeout);
            let out = programs::run_any(permit, Program::Playerctl, spec).await?;
            if !out.success() && !out.stderr_lossy().contains("No players found") {
                return Err(programs::failed(format!("playerctl {verb}"), &out));
            }
        }
        let spec = Program::Playerctl
            .spec(&self.env)
            .args(["metadata", "--format", MEDIA_FORMAT])
            .timeout(self.config.program_timeout);
        let out = programs::run_any(permit, Program::Playerctl, spec).await?;
        if !out.success() {
            // No player running is an answer, not a failure.
            return Ok(parse_media(""));
        }
        Ok(parse_media(&out.stdout_lossy()))
    }

    /// The toggle route named `name` (`nightlight`, `idle`…) among the toggles the registry
    /// offers; `not_found` lists them.
    pub async fn resolve_toggle(&self, permit: &Permit, name: &str) -> Result<Route> {
        let reg = self.omarchy_registry(permit).await?;
        let want = crate::theme::normalize_theme_name(name);
        let toggles = reg.toggles();
        toggles
            .iter()
            .find(|r| r.toggle_name() == want)
            .or_else(|| {
                // A unique toggle whose name ends with the word asked for (`gaps`).
                let mut ends = toggles
                    .iter()
                    .filter(|r| r.toggle_name().ends_with(&format!("-{want}")));
                match (ends.next(), ends.next()) {
                    (Some(one), None) => Some(one),
                    _ => None,
                }
            })
            .map(|r| (*r).clone())
            .ok_or_else(|| DesktopError::NotFound {
                what: "toggle",
                name: name.to_owned(),
                near: toggles.iter().map(|r| r.toggle_name()).collect(),
            })
    }

    /// `toggle`, resolved: one of Omarchy's toggles by name, with the exact command it runs.
    pub async fn resolve_toggle_call(&self, permit: &Permit, name: &str) -> Result<RouteCall> {
        let route = self.resolve_toggle(permit, name).await?;
        self.resolve_route(permit, &route.route, &[]).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brightnessctl_machine_output() {
        let b = parse_brightness("kbd,leds,1,33%,3\namdgpu_bl0,backlight,120,47%,255\n").unwrap();
        assert_eq!(b.device, "amdgpu_bl0");
        assert_eq!((b.current, b.max, b.percent), (120, 255, 47));
        assert_eq!(parse_brightness("").unwrap_err().kind(), "malformed");
    }

    #[test]
    fn playerctl_format() {
        let m = parse_media("Playing\tspotify\tSome Band\tA Song\n");
        assert_eq!(m.status.as_deref(), Some("Playing"));
        assert_eq!(m.title.as_deref(), Some("A Song"));
        let none = parse_media("");
        assert_eq!(none.status, None);
    }
}

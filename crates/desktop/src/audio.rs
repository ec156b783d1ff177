//! Audio through WirePlumber's `wpctl`: volume, mute, the sinks and the default sink.

use archgate_exec::Permit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::programs::{self, Program};

const DEFAULT_SINK: &str = "@DEFAULT_AUDIO_SINK@";
/// Loudest volume archgate sets, in percent (wpctl's limit argument).
pub const MAX_PERCENT: u32 = 150;

/// What to do with audio.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum AudioAction {
    /// Volume and mute of the default output.
    Get,
    /// Set the default output's volume.
    Set {
        /// Volume in percent, 0 to 150.
        percent: u32,
    },
    /// Mute, unmute or toggle the default output.
    Mute {
        /// `true` mutes, `false` unmutes, absent toggles.
        #[serde(default)]
        muted: Option<bool>,
    },
    /// List the output devices.
    Sinks,
    /// Make another output the default.
    Switch {
        /// Sink id or name, as `sinks` lists them.
        sink: String,
    },
}

/// Volume of a node.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Volume {
    /// Volume in percent (100 is unity).
    pub percent: u32,
    /// Whether it is muted.
    pub muted: bool,
}

/// An audio output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sink {
    /// PipeWire object id.
    pub id: u32,
    /// Description.
    pub name: String,
    /// Whether it is the default.
    pub default: bool,
    /// Its volume, when listed.
    pub volume: Option<Volume>,
}

/// The answer of an audio action.
#[derive(Debug, Clone, Serialize)]
pub struct AudioReport {
    /// The default output's volume after the action.
    pub volume: Option<Volume>,
    /// The outputs (for `sinks` and `switch`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sinks: Vec<Sink>,
}

/// Parses `wpctl get-volume`: `Volume: 0.40` or `Volume: 0.40 [MUTED]`.
pub fn parse_get_volume(text: &str) -> Result<Volume> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("Volume:"))
        .ok_or_else(|| DesktopError::malformed("wpctl get-volume", "no `Volume:` line"))?;
    let rest = line.trim_start().trim_start_matches("Volume:").trim();
    let number = rest.split_whitespace().next().unwrap_or("");
    let v: f64 = number.parse().map_err(|_| {
        DesktopError::malformed("wpctl get-volume", format_args!("volume {number:?}"))
    })?;
    Ok(Volume {
        percent: (v * 100.0).round().max(0.0) as u32,
        muted: rest.contains("[MUTED]"),
    })
}

/// Parses the `Sinks:` part of the `Audio` section of `wpctl status`.
pub fn parse_sinks(status: &str) -> Vec<Sink> {
    let mut sinks = Vec::new();
    let mut in_audio = false;
    let mut in_sinks = false;
    for line in status.lines() {
        let bare = line.trim_matches(|c: char| c.is_whitespace() || "│├└─".contains(c));
        if !line.starts_with(' ') && !line.starts_with('│') && !bare.is_empty() {
            // A top-level section title: Audio, Video, Settings, PipeWire …
            in_audio = bare == "Audio";
            in_sinks = false;
            continue;
        }
        if !in_audio {
            continue;
        }
        if bare.ends_with(':') {
            in_sinks = bare == "Sinks:";
            continue;
        }
        if !in_sinks || bare.is_empty() {
            continue;
        }
        let (default, entry) = match bare.strip_prefix('*') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, bare),
        };
        let Some((id, rest)) = entry.split_once(". ") else {
            continue;
        };
        let Ok(id) = id.trim().parse::<u32>() else {
            continue;
        };
        let (name, volume) = match rest.rfind("[vol:") {
            Some(i) => {
                let vol = &rest[i + 5..];
                let number = vol
                    .split_whitespace()
                    .next()
                    .unwrap_or("")
                    .trim_end_matches(']');
                let volume = number.parse::<f64>().ok().map(|v| Volume {
                    percent: (v * 100.0).round().max(0.0) as u32,
                    muted: vol.contains("MUTED"),
                });
                (rest[..i].trim(), volume)
            }
            None => (rest.trim(), None),
        };
        sinks.push(Sink {
            id,
            name: name.to_owned(),
            default,
            volume,
        });
    }
    sinks
}

impl Desktop {
    async fn wpctl(&self, permit: &Permit, args: &[&str]) -> Result<String> {
        let spec = Program::Wpctl
            .spec(&self.env)
            .args(args.iter().copied())
            .timeout(self.config.program_timeout);
        let out = programs::run_ok(permit, Program::Wpctl, spec).await?;
        Ok(out.stdout_lossy())
    }

    /// The audio outputs.
    pub async fn audio_sinks(&self, permit: &Permit) -> Result<Vec<Sink>> {
        Ok(parse_sinks(&self.wpctl(permit, &["status"]).await?))
    }

    /// Resolves a sink by id or name (case-insensitive).
    pub fn resolve_sink<'a>(sinks: &'a [Sink], want: &str) -> Result<&'a Sink> {
        let w = want.trim();
        sinks
            .iter()
            .find(|s| s.id.to_string() == w)
            .or_else(|| sinks.iter().find(|s| s.name.eq_ignore_ascii_case(w)))
            .ok_or_else(|| DesktopError::NotFound {
                what: "audio sink",
                name: want.to_owned(),
                near: sinks
                    .iter()
                    .map(|s| format!("{} ({})", s.id, s.name))
                    .collect(),
            })
    }

    /// `audio`: get, set, mute, sinks or switch, answering with the state afterwards.
    pub async fn audio(&self, permit: &Permit, action: &AudioAction) -> Result<AudioReport> {
        let mut sinks = Vec::new();
        match action {
            AudioAction::Get => {}
            AudioAction::Set { percent } => {
                if *percent > MAX_PERCENT {
                    return Err(DesktopError::invalid(
                        "percent",
                        format!("must be 0 to {MAX_PERCENT}"),
                    ));
                }
                let level = format!("{:.2}", f64::from(*percent) / 100.0);
                let limit = format!("{:.2}", f64::from(MAX_PERCENT) / 100.0);
                self.wpctl(permit, &["set-volume", "-l", &limit, DEFAULT_SINK, &level])
                    .await?;
            }
            AudioAction::Mute { muted } => {
                let arg = match muted {
                    Some(true) => "1",
                    Some(false) => "0",
                    None => "toggle",
                };
                self.wpctl(permit, &["set-mute", DEFAULT_SINK, arg]).await?;
            }
            AudioAction::Sinks => sinks = self.audio_sinks(permit).await?,
            AudioAction::Switch { sink } => {
                let all = self.audio_sinks(permit).await?;
                let id = Self::resolve_sink(&all, sink)?.id.to_string();
                self.wpctl(permit, &["set-default", &id]).await?;
                sinks = self.audio_sinks(permit).await?;
            }
        }
        let volume = parse_get_volume(&self.wpctl(permit, &["get-volume", DEFAULT_SINK]).await?)?;
        Ok(AudioReport {
            volume: Some(volume),
            sinks,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_volume_lines() {
        assert_eq!(
            parse_get_volume("Volume: 0.40\n").unwrap(),
            Volume {
                percent: 40,
                muted: false
            }
        );
        assert_eq!(
            parse_get_volume("Volume: 1.25 [MUTED]\n").unwrap(),
            Volume {
                percent: 125,
                muted: true
            }
        );
        assert_eq!(parse_get_volume("nothing").unwrap_err().kind(), "malformed");
    }
}

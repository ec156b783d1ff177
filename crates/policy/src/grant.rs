//! Grants: which tools, and which tiers, a client sees and may call.
//!
//! Presets:
//! - `read-only`: every tool, `read` tier only — the client can look, never change.
//! - `desktop`: every tool, `read` and `act` — the client can look and make everyday changes
//!   that are easy to undo (a theme, a window, the volume), each still under policy and approval;
//!   destructive tools (removing packages, deleting files) are not even listed for it.
//! - `full`: every tool, `read`, `act` and `destructive` (destructive calls still always ask).
//!
//! `blocked` is never granted: a grant naming it is refused when read, and
//! [`Grant::permits`] is false for it whatever the grant says.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::tier::Tier;

/// The tools a grant covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSet {
    /// Every tool.
    All,
    /// Only these tools, by name.
    Only(BTreeSet<String>),
}

impl ToolSet {
    /// Whether `tool` is in the set (an entry ending in `*` names every tool it starts).
    pub fn contains(&self, tool: &str) -> bool {
        match self {
            ToolSet::All => true,
            ToolSet::Only(set) => set.contains(tool) || set.iter().any(|e| names_tool(e, tool)),
        }
    }
}

/// Whether a tool-list entry names `tool`: the name itself (ASCII case aside), or a word ending
/// in `*` that `tool` starts with (`"aur_*"` names `aur_search`), as the rule lists read it. An
/// entry with a `*` anywhere else names no tool (config refuses such a file before it applies).
pub fn names_tool(entry: &str, tool: &str) -> bool {
    let entry = entry.trim();
    match entry.strip_suffix('*') {
        Some(stem) if !stem.contains('*') => tool
            .get(..stem.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(stem)),
        Some(_) => false,
        None => entry.eq_ignore_ascii_case(tool),
    }
}

impl Serialize for ToolSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolSet::All => s.serialize_str("all"),
            ToolSet::Only(set) => set.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ToolSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            List(BTreeSet<String>),
        }
        match Raw::deserialize(d)? {
            Raw::Word(w) if w == "all" || w == "*" => Ok(ToolSet::All),
            Raw::Word(w) => Err(serde::de::Error::custom(format!(
                "tools must be \"all\" or a list of tool names, not {w:?}"
            ))),
            Raw::List(list) => Ok(ToolSet::Only(list)),
        }
    }
}

/// A named set of grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// `read` only.
    ReadOnly,
    /// `read` and `act`.
    Desktop,
    /// `read`, `act` and `destructive`.
    Full,
}

impl Preset {
    /// The spelling in config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::ReadOnly => "read-only",
            Preset::Desktop => "desktop",
            Preset::Full => "full",
        }
    }

    /// The tiers this preset grants.
    pub fn tiers(self) -> BTreeSet<Tier> {
        let tiers: &[Tier] = match self {
            Preset::ReadOnly => &[Tier::Read],
            Preset::Desktop => &[Tier::Read, Tier::Act],
            Preset::Full => &[Tier::Read, Tier::Act, Tier::Destructive],
        };
        tiers.iter().copied().collect()
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a grant could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantError {
    /// An unknown preset name.
    #[error("unknown preset {given:?}: expected read-only, desktop or full")]
    UnknownPreset {
        /// What was given.
        given: String,
    },
    /// The grant names the `blocked` tier.
    #[error("the blocked tier can never be granted")]
    BlockedTier,
    /// Neither a preset nor tiers.
    #[error("a grant needs a preset or a list of tiers")]
    NoTiers,
}

impl GrantError {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        "malformed"
    }
}

impl FromStr for Preset {
    type Err = GrantError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "read-only" | "readonly" | "read_only" => Ok(Preset::ReadOnly),
            "desktop" => Ok(Preset::Desktop),
            "full" => Ok(Preset::Full),
            _ => Err(GrantError::UnknownPreset {
                given: s.to_owned(),
            }),
        }
    }
}

/// Which tools and tiers one client may see and call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    /// The tools.
    pub tools: ToolSet,
    /// The tiers (never `blocked`).
    pub tiers: BTreeSet<Tier>,
}

impl Grant {
    /// The grant of a preset, over every tool.
    pub fn preset(preset: Preset) -> Self {
        Grant {
            tools: ToolSet::All,
            tiers: preset.tiers(),
        }
    }

    /// `read-only`.
    pub fn read_only() -> Self {
        Self::preset(Preset::ReadOnly)
    }

    /// `desktop`.
    pub fn desktop() -> Self {
        Self::preset(Preset::Desktop)
    }

    /// `full`.
    pub fn full() -> Self {
        Self::preset(Preset::Full)
    }

    /// The same tiers, limited to these tools.
    pub fn with_tools<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tools: I) -> Self {
        self.tools = ToolSet::Only(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Whether the client may see and call `tool`, whose tier is `tier`. Never for `blocked`.
    pub fn permits(&self, tool: &str, tier: Tier) -> bool {
        tier != Tier::Blocked && self.tiers.contains(&tier) && self.tools.contains(tool)
    }
}

/// A grant as written: `{ preset = "desktop" }`, `{ tiers = ["read"], tools = ["a"] }`, or a
/// preset with `tools` and/or `tiers` overriding it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrant {
    #[serde(default)]
    preset: Option<String>,
    #[serde(default)]
    tools: Option<ToolSet>,
    #[serde(default)]
    tiers: Option<BTreeSet<Tier>>,
}

impl TryFrom<RawGrant> for Grant {
    type Error = GrantError;
    fn try_from(raw: RawGrant) -> Result<Self, GrantError> {
        let preset = raw.preset.as_deref().map(Preset::from_str).transpose()?;
        let tiers = match (raw.tiers, preset) {
            (Some(tiers), _) => tiers,
            (None, Some(p)) => p.tiers(),
            (None, None) => return Err(GrantError::NoTiers),
        };
        if tiers.contains(&Tier::Blocked) {
            return Err(GrantError::BlockedTier);
        }
        Ok(Grant {
            tools: raw.tools.unwrap_or(ToolSet::All),
            tiers,
        })
    }
}

impl<'de> Deserialize<'de> for Grant {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Grant::try_from(RawGrant::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

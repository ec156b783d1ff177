//! Tiers: how much a call can change, from `read` to `blocked`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much a call can change. Ordered from least to most dangerous.
///
/// `Blocked` is never granted and never approved: no configuration, standing rule or developer mode
/// makes a blocked call run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Looks only: reading state, listing, searching.
    Read,
    /// Changes something the person can easily undo (a theme, the volume, a window).
    Act,
    /// Changes something that is hard to undo (removing packages, deleting files). Always asks.
    Destructive,
    /// Never runs through archgate (privilege elevation, archgate's own secrets).
    Blocked,
}

impl Tier {
    /// All tiers, from least to most dangerous.
    pub const ALL: [Tier; 4] = [Tier::Read, Tier::Act, Tier::Destructive, Tier::Blocked];

    /// The config / wire spelling: `read`, `act`, `destructive`, `blocked`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Act => "act",
            Tier::Destructive => "destructive",
            Tier::Blocked => "blocked",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tier name that is none of `read`, `act`, `destructive`, `blocked`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tier {given:?}: expected one of read, act, destructive, blocked")]
pub struct TierParseError {
    /// What was given.
    pub given: String,
}

impl TierParseError {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        "malformed"
    }
}

impl FromStr for Tier {
    type Err = TierParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        Tier::ALL
            .into_iter()
            .find(|tier| tier.as_str().eq_ignore_ascii_case(t))
            .ok_or_else(|| TierParseError {
                given: s.to_owned(),
            })
    }
}

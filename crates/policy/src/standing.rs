//! Standing rules: the person's "Always…" for one (client, tool, route, resolved action,
//! arguments).
//!
//! Only the person creates them (core stores them 0600 in the state directory); no tool can.
//! A rule matches exactly the client, the tool, the route and an argument pattern — the exact
//! canonical JSON arguments by default, or a per-field pattern the person confirmed. Every rule is
//! capped: uses per rolling 24 hours (default 20) and an expiry (default and at most 24 hours; at
//! most 60 minutes for a rule broader than one exact command).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::pattern::normalize_route;

/// Seconds in the rolling window for the daily use cap.
pub const DAY_SECS: u64 = 24 * 60 * 60;
/// Default uses per rolling day.
pub const DEFAULT_USES_PER_DAY: u32 = 20;
/// Largest accepted uses per rolling day.
pub const MAX_USES_PER_DAY: u32 = 500;
/// Default and maximum lifetime of a rule for one exact command.
pub const EXACT_MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// Default and maximum lifetime of a rule broader than one exact command.
pub const BROAD_MAX_TTL: Duration = Duration::from_secs(60 * 60);

/// How one argument field must look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "match", content = "value", rename_all = "snake_case")]
pub enum FieldPattern {
    /// Exactly this JSON value.
    Exact(Value),
    /// A string starting with this prefix. The rest may not contain a `..` path segment, so a
    /// prefix on a directory cannot be climbed out of.
    Prefix(String),
    /// Any value, or the field absent.
    Any,
}

impl FieldPattern {
    fn matches(&self, value: Option<&Value>) -> bool {
        match (self, value) {
            (FieldPattern::Any, _) => true,
            (FieldPattern::Exact(want), Some(got)) => want == got,
            (FieldPattern::Prefix(prefix), Some(Value::String(s))) => s
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| !rest.split(['/', '\\']).any(|seg| seg == "..")),
            _ => false,
        }
    }

    fn is_exact(&self) -> bool {
        matches!(self, FieldPattern::Exact(_))
    }
}

/// Which arguments a standing rule covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ArgPattern {
    /// Exactly these canonical JSON arguments (the default).
    Exact {
        /// The arguments.
        args: Value,
    },
    /// A per-field pattern the person confirmed. The arguments must be an object; every field
    /// in them must be named here, and every `exact`/`prefix` field must be present.
    Fields {
        /// Field name → pattern.
        fields: BTreeMap<String, FieldPattern>,
    },
}

impl ArgPattern {
    /// Exactly these arguments.
    pub fn exact(args: Value) -> Self {
        ArgPattern::Exact { args }
    }

    /// Whether the pattern covers more than one exact command.
    pub fn is_broad(&self) -> bool {
        match self {
            ArgPattern::Exact { .. } => false,
            ArgPattern::Fields { fields } => !fields.values().all(FieldPattern::is_exact),
        }
    }

    /// Whether `args` (canonical JSON) is covered.
    pub fn matches(&self, args: &Value) -> bool {
        match self {
            ArgPattern::Exact { args: want } => want == args,
            ArgPattern::Fields { fields } => {
                let Value::Object(map) = args else {
                    return false;
                };
                map.keys().all(|k| fields.contains_key(k))
                    && fields.iter().all(|(k, p)| p.matches(map.get(k)))
            }
        }
    }
}

/// A standing rule as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StandingRule {
    /// Stable id, shown in audit records.
    pub id: String,
    /// The client it covers.
    pub client: String,
    /// The tool it covers.
    pub tool: String,
    /// The route it covers (normalized).
    pub route: String,
    /// The fingerprint of the resolved action it was created for (the exact commands and
    /// target): a changed command behind the same words is not covered. Rules stored before
    /// fingerprints existed have none and cover nothing.
    #[serde(default)]
    pub command: Option<String>,
    /// The arguments it covers.
    pub args: ArgPattern,
    /// Created, unix seconds.
    pub created: u64,
    /// Expires (first second it no longer applies), unix seconds.
    pub expires: u64,
    /// Uses allowed per rolling 24 hours.
    pub max_uses_per_day: u32,
    /// When it was used, unix seconds (only the last 24 hours are kept).
    #[serde(default)]
    pub uses: Vec<u64>,
    /// Whether it covers more than one exact command.
    pub broad: bool,
    /// Whether it still approves an act call of a session that just read text archgate did not
    /// write (see [`route_approval`](crate::route_approval)); set only by the person, in the
    /// rules file. Off by default.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub after_untrusted: bool,
}

/// What the person asked for when creating a rule.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRule {
    /// Id chosen by core (unique among the stored rules).
    pub id: String,
    /// The client.
    pub client: String,
    /// The tool.
    pub tool: String,
    /// The route.
    pub route: String,
    /// The fingerprint of the resolved action (see [`StandingRule::command`]).
    pub command: String,
    /// The argument pattern (exact by default).
    pub args: ArgPattern,
    /// Lifetime; `None` takes the default (24 h exact, 60 min broad).
    pub ttl: Option<Duration>,
    /// Uses per rolling day; `None` takes the default (20).
    pub max_uses_per_day: Option<u32>,
}

/// Why a standing rule could not be created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A required field is empty.
    #[error("a standing rule needs a non-empty {field}")]
    Empty {
        /// Which field.
        field: &'static str,
    },
    /// The lifetime is zero or longer than allowed.
    #[error(
        "a {} rule may last at most {} minutes; {} seconds were asked",
        if *.broad { "broad" } else { "standing" },
        .max_secs / 60,
        .requested_secs
    )]
    TtlOutOfRange {
        /// Asked for, seconds.
        requested_secs: u64,
        /// Allowed, seconds.
        max_secs: u64,
        /// Whether the rule is broad.
        broad: bool,
    },
    /// The daily cap is zero or too large.
    #[error("uses per day must be between 1 and {max}; {requested} was asked")]
    UsesOutOfRange {
        /// Asked for.
        requested: u32,
        /// Largest allowed.
        max: u32,
    },
}

impl RuleError {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        match self {
            RuleError::Empty { .. } => "malformed",
            RuleError::TtlOutOfRange { .. } | RuleError::UsesOutOfRange { .. } => "out_of_range",
        }
    }
}

/// Creates a standing rule at `now`, enforcing the caps.
pub fn new_rule(spec: NewRule, now: u64) -> Result<StandingRule, RuleError> {
    for (field, value) in [
        ("id", &spec.id),
        ("client", &spec.client),
        ("tool", &spec.tool),
        ("route", &spec.route),
        ("command", &spec.command),
    ] {
        if value.trim().is_empty() {
            return Err(RuleError::Empty { field });
        }
    }
    let broad = spec.args.is_broad();
    let max = if broad { BROAD_MAX_TTL } else { EXACT_MAX_TTL };
    let ttl = spec.ttl.unwrap_or(max);
    if ttl.is_zero() || ttl > max {
        return Err(RuleError::TtlOutOfRange {
            requested_secs: ttl.as_secs(),
            max_secs: max.as_secs(),
            broad,
        });
    }
    let uses = spec.max_uses_per_day.unwrap_or(DEFAULT_USES_PER_DAY);
    if uses == 0 || uses > MAX_USES_PER_DAY {
        return Err(RuleError::UsesOutOfRange {
            requested: uses,
            max: MAX_USES_PER_DAY,
        });
    }
    // Round a sub-second remainder up so a rule never ends earlier than asked.
    let ttl_secs = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    Ok(StandingRule {
        id: spec.id,
        client: spec.client,
        tool: spec.tool,
        route: normalize_route(&spec.route),
        command: Some(spec.command),
        args: spec.args,
        created: now,
        expires: now.saturating_add(ttl_secs),
        max_uses_per_day: uses,
        uses: Vec::new(),
        broad,
        after_untrusted: false,
    })
}

impl StandingRule {
    /// Whether the rule has expired at `now`.
    pub fn is_expired(&self, now: u64) -> bool {
        now >= self.expires
    }

    /// Uses in the 24 hours before `now`.
    pub fn uses_today(&self, now: u64) -> u32 {
        let n = self.uses.iter().filter(|&&t| in_last_day(t, now)).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// Uses left in the rolling day at `now`.
    pub fn remaining_today(&self, now: u64) -> u32 {
        self.max_uses_per_day.saturating_sub(self.uses_today(now))
    }

    /// Whether the rule may approve a call at `now` (not expired, not before its creation,
    /// daily cap not reached).
    /// A rule whose stored lifetime exceeds the cap for its breadth (a hand-edited file) is
    /// never usable.
    pub fn is_usable(&self, now: u64) -> bool {
        let broad = self.broad || self.args.is_broad();
        let max = if broad { BROAD_MAX_TTL } else { EXACT_MAX_TTL };
        now >= self.created
            && !self.is_expired(now)
            && self.expires.saturating_sub(self.created) <= max.as_secs()
            && self.uses_today(now) < self.max_uses_per_day.min(MAX_USES_PER_DAY)
    }

    /// Whether the rule covers this call (ignores expiry and caps; see [`is_usable`](Self::is_usable)):
    /// the same client, tool and route, the same resolved action (`command`, its fingerprint),
    /// and arguments its pattern covers.
    pub fn covers(
        &self,
        client: &str,
        tool: &str,
        route: &str,
        command: &str,
        canonical_args: &Value,
    ) -> bool {
        self.client == client
            && self.tool == tool
            && normalize_route(&self.route) == normalize_route(route)
            && self.command.as_deref() == Some(command)
            && self.args.matches(canonical_args)
    }

    /// Records one use at `now`, forgetting uses older than a day.
    pub fn record_use(&mut self, now: u64) {
        self.uses.retain(|&t| in_last_day(t, now));
        self.uses.push(now);
    }
}

fn in_last_day(t: u64, now: u64) -> bool {
    t <= now && now - t < DAY_SECS
}

/// The rule that approves this call at `now`, if any: an exact rule before a broad one.
pub fn find_matching<'a>(
    rules: &'a [StandingRule],
    client: &str,
    tool: &str,
    route: &str,
    command: &str,
    canonical_args: &Value,
    now: u64,
) -> Option<&'a StandingRule> {
    let mut usable = rules
        .iter()
        .filter(|r| r.is_usable(now) && r.covers(client, tool, route, command, canonical_args));
    let is_broad = |r: &StandingRule| r.broad || r.args.is_broad();
    let first = usable.next()?;
    if !is_broad(first) {
        return Some(first);
    }
    usable.find(|r| !is_broad(r)).or(Some(first))
}

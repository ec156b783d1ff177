//! The approval router: after policy, who (if anyone) approves a call.
//!
//! In this order: blocked or denied → refused, never asked; a destructive call → the person,
//! always; allowed by policy → approved; an unclassified route → the person, always; developer
//! mode (which never covers blocked) → approved; always-ask tools skip standing rules and go to
//! the person; a usable matching standing rule → approved with its id; otherwise the person is
//! asked.
//!
//! Some yeses are never automatic: a destructive call is approved by nobody but the person —
//! not policy, not developer mode, not a standing rule — whatever else is on.

use serde::Serialize;

use crate::decide::{Decision, Reason, Verdict};
use crate::standing::StandingRule;
use crate::tier::Tier;

/// Who approved a call without asking the person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "by", content = "rule_id", rename_all = "snake_case")]
pub enum ApprovedBy {
    /// Policy allowed it outright.
    Policy,
    /// Developer mode was on.
    DeveloperMode,
    /// The standing rule with this id.
    StandingRule(String),
}

/// Where a call goes after policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Routing {
    /// Never runs; the person is not asked. Carries policy's reason.
    Refuse(Reason),
    /// Runs without asking the person.
    Approved {
        /// What approved it.
        by: ApprovedBy,
    },
    /// The person must answer.
    AskPerson,
}

/// Routes one decision. `always_ask` is the tool's own flag; destructive tiers always ask anyway.
/// `dev_mode_until` is the unix second developer mode ends (exclusive), if it is on.
/// `matching_rule` is what [`find_matching`](crate::find_matching) returned; it is re-checked
/// for usability at `now`.
pub fn route_approval(
    d: &Decision,
    always_ask: bool,
    dev_mode_until: Option<u64>,
    now: u64,
    matching_rule: Option<&StandingRule>,
) -> Routing {
    if d.tier == Tier::Blocked || d.verdict == Verdict::Deny {
        return Routing::Refuse(d.reason.clone());
    }
    // Some yeses are never automatic: a destructive call always reaches the person.
    if d.tier == Tier::Destructive {
        return Routing::AskPerson;
    }
    if d.verdict == Verdict::Allow {
        return Routing::Approved {
            by: ApprovedBy::Policy,
        };
    }
    // A route nobody could classify is never approved on the person's behalf.
    if !d.classified {
        return Routing::AskPerson;
    }
    if dev_mode_until.is_some_and(|until| now < until) {
        return Routing::Approved {
            by: ApprovedBy::DeveloperMode,
        };
    }
    if always_ask {
        return Routing::AskPerson;
    }
    match matching_rule {
        Some(rule) if rule.is_usable(now) => Routing::Approved {
            by: ApprovedBy::StandingRule(rule.id.clone()),
        },
        _ => Routing::AskPerson,
    }
}

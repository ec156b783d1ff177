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
//!
//! After untrusted text (`after_untrusted`: the calling session read text archgate did not write,
//! within the person's window), an act call is not approved by developer mode, nor by a standing
//! rule unless the rule opted in (`StandingRule::after_untrusted`). Read calls are not affected,
//! and policy's own allow still stands.

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
/// for usability at `now`. `after_untrusted`: the session read untrusted text within the window.
pub fn route_approval(
    d: &Decision,
    always_ask: bool,
    dev_mode_until: Option<u64>,
    now: u64,
    matching_rule: Option<&StandingRule>,
    after_untrusted: bool,
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
    // What the agent just read is not the person's word: for what it acts on, they are asked.
    let stepped_back = steps_back(d.tier, after_untrusted);
    if !stepped_back && dev_mode_until.is_some_and(|until| now < until) {
        return Routing::Approved {
            by: ApprovedBy::DeveloperMode,
        };
    }
    if always_ask {
        return Routing::AskPerson;
    }
    match matching_rule {
        Some(rule) if rule.is_usable(now) && (!stepped_back || rule.after_untrusted) => {
            Routing::Approved {
                by: ApprovedBy::StandingRule(rule.id.clone()),
            }
        }
        _ => Routing::AskPerson,
    }
}

/// Whether developer mode and standing rules (but one that opted in) step back for a call of
/// this tier after untrusted text: act and destructive calls do; read calls never.
pub fn steps_back(tier: Tier, after_untrusted: bool) -> bool {
    after_untrusted && tier >= Tier::Act
}

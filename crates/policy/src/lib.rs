//! archgate's pure decisions: tiers, the person's rules, privilege elevation, the approval
//! router, standing rules, the nag guard, budgets and grants.
//!
//! **Architecture invariant:** this crate does no I/O, no async, reads no clock and no
//! environment, and starts no process. Time comes in as unix seconds (`u64`) or a
//! [`std::time::Duration`]; everything here is a function of its arguments and of state the
//! caller owns, so every decision can be tested as a table.

#![forbid(unsafe_code)]

mod budget;
mod decide;
mod grant;
mod nag;
mod pattern;
mod privilege;
mod router;
mod standing;
mod tier;

pub use budget::{Budget, BudgetCounters, BudgetKind, BudgetState, DAY, Exhausted, HOUR, MINUTE};
pub use decide::{
    CallFacts, Decision, Explanation, FoundIn, PolicyInput, Reason, Verdict, decide, explain,
};
pub use grant::{Grant, GrantError, Preset, ToolSet, names_tool};
pub use nag::{NagConfig, NagGuard, NagRefusal};
pub use pattern::{Pattern, PatternError, RuleList, RuleMatch, Rules, RulesError, normalize_route};
pub use privilege::elevates_privilege;
pub use router::{ApprovedBy, Routing, route_approval, steps_back};
pub use standing::{
    ArgPattern, BROAD_MAX_TTL, DAY_SECS, DEFAULT_USES_PER_DAY, EXACT_MAX_TTL, FieldPattern,
    MAX_USES_PER_DAY, NewRule, RuleError, StandingRule, find_matching, new_rule,
};
pub use tier::{Tier, TierParseError};

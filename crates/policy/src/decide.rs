//! The policy decision: may this call run, must the person be asked, or is it refused?
//!
//! Read top to bottom, [`decide`] is the whole policy:
//! 1. anything that elevates privilege (in any name of the route or in a command that would
//!    run, as resolution built it), a route that
//!    needs sudo, a call that reaches archgate's own files, or a route defined as blocked →
//!    `blocked`, denied; nothing below can change that;
//! 2. the person's rules, read deny → ask → allow against every name of the route (the
//!    canonical route and its other spellings; a deny or ask also against the tool's own name,
//!    so `deny = ["omarchy_run"]` denies every route of it), first match wins; an allow never lets a
//!    destructive route skip the question, and an allow *prefix* covers a route that is more than
//!    a read only once the person has acknowledged that route (restrictions extend forward,
//!    grants do not);
//! 3. no rule: `read` runs, everything else asks.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use crate::pattern::{RuleList, Rules, normalize_route};
use crate::privilege::elevates_privilege;
use crate::tier::Tier;

/// What is known about one call when policy decides it.
#[derive(Debug, Clone, Copy)]
pub struct CallFacts<'a> {
    /// The client's name (`local`, `default`, ...).
    pub client: &'a str,
    /// The tool called.
    pub tool: &'a str,
    /// The canonical route: space-separated words naming what will happen
    /// (`"omarchy theme set"`), the same whatever the spelling or the tool that reached it.
    pub route: &'a str,
    /// Other names of the same target (aliases, the words the agent used, another tool's
    /// spelling). A rule written against any of them applies: a deny on any name denies.
    pub names: &'a [String],
    /// The route's tier from its definition; `None` when the route is unclassified.
    pub declared_tier: Option<Tier>,
    /// The exact commands that will run (program and arguments each), as resolution built
    /// them; empty when nothing runs or before resolution.
    pub commands: &'a [Vec<String>],
    /// The route's registry entry says it needs sudo.
    pub needs_sudo: bool,
    /// The call reaches archgate's own config, state, runtime or cache directories.
    pub targets_archgate: bool,
}

/// The configuration a decision is taken under (one snapshot per call).
#[derive(Debug, Clone, Copy)]
pub struct PolicyInput<'a> {
    /// The person's deny / ask / allow rules.
    pub rules: &'a Rules,
    /// Routes the person acknowledged under an allow prefix (normalized or not).
    pub acknowledged: &'a BTreeSet<String>,
}

/// What policy says about a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Runs without asking.
    Allow,
    /// Runs only if approved (developer mode, a standing rule, or the person).
    Ask,
    /// Never runs, and the person is not asked.
    Deny,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        })
    }
}

/// Where a privilege-elevating word was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundIn {
    /// In the route's words.
    Route,
    /// In the command that would run.
    Command,
}

/// Why policy decided as it did. `Display` gives one sentence for people and agents.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum Reason {
    /// A privilege-elevating program appears in the route or the command.
    PrivilegeElevation {
        /// Which program (`sudo`, `pkexec`, ...).
        program: &'static str,
        /// Where it was seen.
        found_in: FoundIn,
    },
    /// The route's registry entry needs sudo.
    NeedsSudo,
    /// The call reaches archgate's own files.
    TargetsArchgate,
    /// The route is defined as blocked.
    DeclaredBlocked,
    /// A deny rule matched.
    DeniedByRule {
        /// The rule as written, e.g. `deny: "theme *"`.
        rule: String,
    },
    /// An ask rule matched.
    AskByRule {
        /// The rule as written.
        rule: String,
    },
    /// An allow rule matched.
    AllowedByRule {
        /// The rule as written.
        rule: String,
    },
    /// The route is destructive; destructive routes always ask, whatever allows them.
    DestructiveAlwaysAsks {
        /// The allow rule that would otherwise have allowed it, if any.
        rule: Option<String>,
    },
    /// Only an allow prefix covers the route and the person has not acknowledged the route.
    NeedsAcknowledgement {
        /// The route (normalized).
        route: String,
        /// The prefix rule, e.g. `allow: "theme *"`.
        rule: String,
    },
    /// No rule matched and the route only reads.
    ReadByDefault,
    /// No rule matched and the route changes something.
    ActAsksByDefault,
    /// No rule matched and the route has no tier.
    Unclassified,
}

impl Reason {
    /// Stable snake_case code, the same as the `code` field in JSON.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::PrivilegeElevation { .. } => "privilege_elevation",
            Reason::NeedsSudo => "needs_sudo",
            Reason::TargetsArchgate => "targets_archgate",
            Reason::DeclaredBlocked => "declared_blocked",
            Reason::DeniedByRule { .. } => "denied_by_rule",
            Reason::AskByRule { .. } => "ask_by_rule",
            Reason::AllowedByRule { .. } => "allowed_by_rule",
            Reason::DestructiveAlwaysAsks { .. } => "destructive_always_asks",
            Reason::NeedsAcknowledgement { .. } => "needs_acknowledgement",
            Reason::ReadByDefault => "read_by_default",
            Reason::ActAsksByDefault => "act_asks_by_default",
            Reason::Unclassified => "unclassified",
        }
    }
}

/// Quotes `s` for a POSIX shell with single quotes.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::PrivilegeElevation { program, found_in } => {
                let place = match found_in {
                    FoundIn::Route => "route",
                    FoundIn::Command => "command",
                };
                write!(
                    f,
                    "The {place} involves `{program}`, which elevates privilege; archgate never \
                     does that, whatever the configuration says, so run it yourself if you want it."
                )
            }
            Reason::NeedsSudo => f.write_str(
                "This route needs root (sudo); archgate never elevates privilege, so the person \
                 must run it themselves in a terminal.",
            ),
            Reason::TargetsArchgate => f.write_str(
                "This reaches archgate's own configuration, state or secrets, which no tool may \
                 touch.",
            ),
            Reason::DeclaredBlocked => f.write_str(
                "This route is blocked by its definition, and no configuration can allow it.",
            ),
            Reason::DeniedByRule { rule } => {
                write!(f, "The person's rule {rule} forbids this route.")
            }
            Reason::AskByRule { rule } => {
                write!(f, "The person's rule {rule} says to ask every time.")
            }
            Reason::AllowedByRule { rule } => {
                write!(
                    f,
                    "The person's rule {rule} allows this route without asking."
                )
            }
            Reason::DestructiveAlwaysAsks { rule: Some(rule) } => write!(
                f,
                "This route is destructive, and destructive routes always ask, even under the \
                 rule {rule}."
            ),
            Reason::DestructiveAlwaysAsks { rule: None } => f.write_str(
                "This route is destructive, and destructive routes always ask the person.",
            ),
            Reason::NeedsAcknowledgement { route, rule } => write!(
                f,
                "The route {} is covered only by the prefix rule {rule}, and the person has not \
                 acknowledged it yet, so it asks until they run `archgate policy ack {}`.",
                shell_quote(route),
                shell_quote(route)
            ),
            Reason::ReadByDefault => {
                f.write_str("This route only reads, and no rule restricts it.")
            }
            Reason::ActAsksByDefault => f.write_str(
                "This route changes something and no rule allows it, so the person is asked.",
            ),
            Reason::Unclassified => {
                f.write_str("This route has no tier yet (unclassified), so the person is asked.")
            }
        }
    }
}

/// Policy's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// The tier the call is treated as (an unclassified route is treated as `act`).
    pub tier: Tier,
    /// Whether the route had a declared tier.
    pub classified: bool,
    /// Why.
    pub reason: Reason,
    /// The config entry that decided, e.g. `deny: "theme *"`; `None` for built-in decisions.
    pub rule: Option<String>,
}

impl Decision {
    /// Whether the call is blocked (never runs, never asked, nothing overrides it).
    pub fn is_blocked(&self) -> bool {
        self.tier == Tier::Blocked
    }
}

fn blocked(reason: Reason) -> Decision {
    Decision {
        verdict: Verdict::Deny,
        tier: Tier::Blocked,
        classified: true,
        reason,
        rule: None,
    }
}

/// Decides one call under one configuration snapshot. Pure and total.
pub fn decide(facts: &CallFacts<'_>, input: &PolicyInput<'_>) -> Decision {
    // 1. Built-in blocks. No configuration reaches past these.
    let route_words: Vec<&str> = facts.route.split_whitespace().collect();
    if let Some(program) = elevates_privilege(&route_words) {
        return blocked(Reason::PrivilegeElevation {
            program,
            found_in: FoundIn::Route,
        });
    }
    for name in facts.names {
        let words: Vec<&str> = name.split_whitespace().collect();
        if let Some(program) = elevates_privilege(&words) {
            return blocked(Reason::PrivilegeElevation {
                program,
                found_in: FoundIn::Route,
            });
        }
    }
    for argv in facts.commands {
        if let Some(program) = elevates_privilege(argv) {
            return blocked(Reason::PrivilegeElevation {
                program,
                found_in: FoundIn::Command,
            });
        }
    }
    if facts.needs_sudo {
        return blocked(Reason::NeedsSudo);
    }
    if facts.targets_archgate {
        return blocked(Reason::TargetsArchgate);
    }
    if facts.declared_tier == Some(Tier::Blocked) {
        return blocked(Reason::DeclaredBlocked);
    }

    let classified = facts.declared_tier.is_some();
    let tier = facts.declared_tier.unwrap_or(Tier::Act);
    let decision = |verdict, reason, rule| Decision {
        verdict,
        tier,
        classified,
        reason,
        rule,
    };

    // 2. The person's rules: deny → ask → allow, first match wins.
    let mut names: Vec<&str> = Vec::with_capacity(1 + facts.names.len());
    names.push(facts.route);
    names.extend(facts.names.iter().map(String::as_str));
    if let Some(hit) = input.rules.first_match_for_tool(&names, facts.tool) {
        let rule = hit.describe();
        return match hit.list {
            RuleList::Deny => decision(
                Verdict::Deny,
                Reason::DeniedByRule { rule: rule.clone() },
                Some(rule),
            ),
            RuleList::Ask => decision(
                Verdict::Ask,
                Reason::AskByRule { rule: rule.clone() },
                Some(rule),
            ),
            // An allow never covers a route nobody could classify.
            RuleList::Allow if !classified => {
                decision(Verdict::Ask, Reason::Unclassified, Some(rule))
            }
            RuleList::Allow if tier == Tier::Destructive => decision(
                Verdict::Ask,
                Reason::DestructiveAlwaysAsks {
                    rule: Some(rule.clone()),
                },
                Some(rule),
            ),
            // A read runs without any rule, so an unacknowledged prefix cannot hold it back.
            RuleList::Allow
                if hit.pattern.is_prefix()
                    && tier != Tier::Read
                    && !is_acknowledged(input, facts.route) =>
            {
                decision(
                    Verdict::Ask,
                    Reason::NeedsAcknowledgement {
                        route: normalize_route(facts.route),
                        rule: rule.clone(),
                    },
                    Some(rule),
                )
            }
            RuleList::Allow => decision(
                Verdict::Allow,
                Reason::AllowedByRule { rule: rule.clone() },
                Some(rule),
            ),
        };
    }

    // 3. No rule: reads run, everything else asks.
    match facts.declared_tier {
        Some(Tier::Read) => decision(Verdict::Allow, Reason::ReadByDefault, None),
        Some(Tier::Act) => decision(Verdict::Ask, Reason::ActAsksByDefault, None),
        Some(Tier::Destructive) => decision(
            Verdict::Ask,
            Reason::DestructiveAlwaysAsks { rule: None },
            None,
        ),
        // Blocked returned above; unclassified asks.
        Some(Tier::Blocked) | None => decision(Verdict::Ask, Reason::Unclassified, None),
    }
}

fn is_acknowledged(input: &PolicyInput<'_>, route: &str) -> bool {
    let route = normalize_route(route);
    input.acknowledged.contains(&route)
        || input
            .acknowledged
            .iter()
            .any(|ack| normalize_route(ack) == route)
}

/// What `archgate policy explain 'ROUTE'` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// The route, normalized.
    pub route: String,
    /// The client the decision was taken for.
    pub client: String,
    /// The tool.
    pub tool: String,
    /// Allow, ask or deny.
    pub decision: Verdict,
    /// The tier the call is treated as.
    pub tier: Tier,
    /// Whether the route has a declared tier.
    pub classified: bool,
    /// The config entry that decided, or `None` for a built-in decision.
    pub rule: Option<String>,
    /// The stable reason code.
    pub reason_code: &'static str,
    /// The reason as one sentence.
    pub reason: String,
}

/// Explains the decision for `facts` (the same decision [`decide`] takes).
pub fn explain(facts: &CallFacts<'_>, input: &PolicyInput<'_>) -> Explanation {
    let d = decide(facts, input);
    Explanation {
        route: normalize_route(facts.route),
        client: facts.client.to_owned(),
        tool: facts.tool.to_owned(),
        decision: d.verdict,
        tier: d.tier,
        classified: d.classified,
        rule: d.rule,
        reason_code: d.reason.code(),
        reason: d.reason.to_string(),
    }
}

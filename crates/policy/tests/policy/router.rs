//! `route_approval`: the issue's order, one line per case.

use std::collections::BTreeSet;

use archgate_policy::{
    ApprovedBy, ArgPattern, CallFacts, Decision, NewRule, PolicyInput, Routing, Rules,
    StandingRule, Tier, decide, new_rule, route_approval,
};
use serde_json::json;

const NOW: u64 = 1_800_000_000;

fn decision(rules: &str, tier: Option<Tier>, argv: &[&str]) -> Decision {
    let rules: Rules = toml::from_str(rules).expect("rules");
    let argv: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    let commands: Vec<Vec<String>> = if argv.is_empty() { vec![] } else { vec![argv] };
    decide(
        &CallFacts {
            client: "local",
            tool: "t",
            route: "r x",
            names: &[],
            declared_tier: tier,
            commands: &commands,
            needs_sudo: false,
            targets_archgate: false,
        },
        &PolicyInput {
            rules: &rules,
            acknowledged: &BTreeSet::new(),
        },
    )
}

fn rule(expires_in: u64) -> StandingRule {
    new_rule(
        NewRule {
            id: "rule-1".into(),
            client: "local".into(),
            tool: "t".into(),
            route: "r x".into(),
            command: "fp".into(),
            args: ArgPattern::exact(json!({})),
            ttl: Some(std::time::Duration::from_secs(expires_in)),
            max_uses_per_day: None,
        },
        NOW - 10,
    )
    .expect("rule")
}

fn dev(on: bool) -> Option<u64> {
    on.then_some(NOW + 60)
}

macro_rules! routing {
    ($($name:ident: $decision:expr, always_ask $aa:expr, dev $dev:expr, rule $rule:expr => $want:pat,)*) => {$(
        #[test]
        fn $name() {
            let d: Decision = $decision;
            let r: Option<StandingRule> = $rule;
            let got = route_approval(&d, $aa, dev($dev), NOW, r.as_ref(), false);
            assert!(matches!(got, $want), "{got:?}");
        }
    )*};
}

const ASK: &str = r#"ask = ["*"]"#;
const DENY: &str = r#"deny = ["*"]"#;
const ALLOW: &str = r#"allow = ["r x"]"#;

routing! {
    blocked_refused_even_in_dev_mode: decision(ALLOW, Some(Tier::Act), &["sudo"]), always_ask false, dev true, rule Some(rule(3600)) => Routing::Refuse(_),
    denied_refused_even_in_dev_mode: decision(DENY, Some(Tier::Act), &[]), always_ask false, dev true, rule Some(rule(3600)) => Routing::Refuse(_),
    allowed_by_policy: decision(ALLOW, Some(Tier::Act), &[]), always_ask false, dev false, rule None => Routing::Approved { by: ApprovedBy::Policy },
    read_default_allowed_by_policy: decision("", Some(Tier::Read), &[]), always_ask false, dev false, rule None => Routing::Approved { by: ApprovedBy::Policy },
    dev_mode_approves_ask: decision(ASK, Some(Tier::Act), &[]), always_ask false, dev true, rule None => Routing::Approved { by: ApprovedBy::DeveloperMode },
    dev_mode_never_approves_destructive: decision("", Some(Tier::Destructive), &[]), always_ask true, dev true, rule None => Routing::AskPerson,
    dev_mode_never_approves_destructive_whatever_always_ask_says: decision("", Some(Tier::Destructive), &[]), always_ask false, dev true, rule Some(rule(3600)) => Routing::AskPerson,
    dev_mode_before_standing_rule: decision(ASK, Some(Tier::Act), &[]), always_ask false, dev true, rule Some(rule(3600)) => Routing::Approved { by: ApprovedBy::DeveloperMode },
    always_ask_skips_standing_rule: decision(ASK, Some(Tier::Act), &[]), always_ask true, dev false, rule Some(rule(3600)) => Routing::AskPerson,
    destructive_skips_standing_rule: decision("", Some(Tier::Destructive), &[]), always_ask false, dev false, rule Some(rule(3600)) => Routing::AskPerson,
    standing_rule_approves: decision(ASK, Some(Tier::Act), &[]), always_ask false, dev false, rule Some(rule(3600)) => Routing::Approved { by: ApprovedBy::StandingRule(_) },
    standing_rule_never_approves_unclassified: decision("", None, &[]), always_ask false, dev false, rule Some(rule(3600)) => Routing::AskPerson,
    dev_mode_never_approves_unclassified: decision("", None, &[]), always_ask false, dev true, rule None => Routing::AskPerson,
    expired_standing_rule_asks: decision(ASK, Some(Tier::Act), &[]), always_ask false, dev false, rule Some(rule(5)) => Routing::AskPerson,
    nothing_matches_asks: decision(ASK, Some(Tier::Act), &[]), always_ask false, dev false, rule None => Routing::AskPerson,
}

#[test]
fn dev_mode_ends_at_its_deadline() {
    let d = decision(ASK, Some(Tier::Act), &[]);
    assert!(matches!(
        route_approval(&d, false, Some(NOW + 1), NOW, None, false),
        Routing::Approved {
            by: ApprovedBy::DeveloperMode
        }
    ));
    assert_eq!(
        route_approval(&d, false, Some(NOW), NOW, None, false),
        Routing::AskPerson
    );
    assert_eq!(
        route_approval(&d, false, Some(NOW - 1), NOW, None, false),
        Routing::AskPerson
    );
}

#[test]
fn standing_rule_approval_carries_its_id() {
    let d = decision(ASK, Some(Tier::Act), &[]);
    let r = rule(3600);
    assert_eq!(
        route_approval(&d, false, None, NOW, Some(&r), false),
        Routing::Approved {
            by: ApprovedBy::StandingRule("rule-1".into())
        }
    );
    let json =
        serde_json::to_value(route_approval(&d, false, None, NOW, Some(&r), false)).expect("json");
    assert_eq!(
        json,
        json!({"outcome": "approved", "by": {"by": "standing_rule", "rule_id": "rule-1"}})
    );
}

#[test]
fn refusal_carries_policy_reason() {
    let d = decision(DENY, Some(Tier::Act), &[]);
    assert_eq!(
        route_approval(&d, false, None, NOW, None, false),
        Routing::Refuse(d.reason.clone())
    );
    let json =
        serde_json::to_value(route_approval(&d, false, None, NOW, None, false)).expect("json");
    assert_eq!(json["outcome"], "refuse");
    assert_eq!(json["code"], "denied_by_rule");
}

fn opted_in(expires_in: u64) -> StandingRule {
    StandingRule {
        after_untrusted: true,
        ..rule(expires_in)
    }
}

/// After untrusted text (the session read it within the window): act and destructive calls
/// are not approved by developer mode, nor by a rule that did not opt in; read calls and
/// policy's allow are unaffected.
macro_rules! after_untrusted {
    ($($name:ident: $decision:expr, dev $dev:expr, rule $rule:expr => $want:pat,)*) => {$(
        #[test]
        fn $name() {
            let d: Decision = $decision;
            let r: Option<StandingRule> = $rule;
            let got = route_approval(&d, false, dev($dev), NOW, r.as_ref(), true);
            assert!(matches!(got, $want), "{got:?}");
        }
    )*};
}

after_untrusted! {
    untrusted_dev_mode_steps_back_for_act: decision(ASK, Some(Tier::Act), &[]), dev true, rule None => Routing::AskPerson,
    untrusted_rule_steps_back_for_act: decision(ASK, Some(Tier::Act), &[]), dev false, rule Some(rule(3600)) => Routing::AskPerson,
    untrusted_dev_mode_and_rule_step_back_together: decision(ASK, Some(Tier::Act), &[]), dev true, rule Some(rule(3600)) => Routing::AskPerson,
    untrusted_dev_mode_steps_back_for_destructive: decision("", Some(Tier::Destructive), &[]), dev true, rule None => Routing::AskPerson,
    untrusted_opted_in_rule_approves: decision(ASK, Some(Tier::Act), &[]), dev false, rule Some(opted_in(3600)) => Routing::Approved { by: ApprovedBy::StandingRule(_) },
    untrusted_opted_in_rule_expired_asks: decision(ASK, Some(Tier::Act), &[]), dev false, rule Some(opted_in(5)) => Routing::AskPerson,
    untrusted_opted_in_rule_never_covers_destructive: decision("", Some(Tier::Destructive), &[]), dev false, rule Some(opted_in(3600)) => Routing::AskPerson,
    untrusted_read_ask_still_dev_mode: decision(ASK, Some(Tier::Read), &[]), dev true, rule None => Routing::Approved { by: ApprovedBy::DeveloperMode },
    untrusted_read_ask_still_rule: decision(ASK, Some(Tier::Read), &[]), dev false, rule Some(rule(3600)) => Routing::Approved { by: ApprovedBy::StandingRule(_) },
    untrusted_policy_allow_stands: decision(ALLOW, Some(Tier::Act), &[]), dev false, rule None => Routing::Approved { by: ApprovedBy::Policy },
    untrusted_blocked_still_refused: decision(ALLOW, Some(Tier::Act), &["sudo"]), dev true, rule Some(opted_in(3600)) => Routing::Refuse(_),
}
/// Some yeses are never automatic: a destructive call reaches the person even when every
/// automatic yes is on at once — a policy allow (which `decide` never gives a destructive call,
/// but the router does not rely on that), developer mode and a usable standing rule.
#[test]
fn a_destructive_call_is_never_approved_automatically() {
    let d = Decision {
        verdict: archgate_policy::Verdict::Allow,
        tier: Tier::Destructive,
        classified: true,
        reason: archgate_policy::Reason::AllowedByRule {
            rule: "allow: \"r x\"".into(),
        },
        rule: Some("allow: \"r x\"".into()),
    };
    let r = rule(3600);
    for always_ask in [false, true] {
        for dev_on in [false, true] {
            for rule in [None, Some(&r)] {
                assert_eq!(
                    route_approval(&d, always_ask, dev(dev_on), NOW, rule, false),
                    Routing::AskPerson,
                    "always_ask {always_ask}, dev {dev_on}, rule {}",
                    rule.is_some()
                );
            }
        }
    }
}

//! Standing rules: creation caps, matching, expiry and the daily cap.

use std::collections::BTreeMap;
use std::time::Duration;

use archgate_policy::{
    ArgPattern, FieldPattern, NewRule, RuleError, StandingRule, find_matching, new_rule,
};
use serde_json::{Value, json};

const NOW: u64 = 1_800_000_000;
const HOUR: u64 = 3600;
const DAY: u64 = 24 * HOUR;

fn spec(id: &str, args: ArgPattern) -> NewRule {
    NewRule {
        id: id.into(),
        client: "local".into(),
        tool: "theme_set".into(),
        route: "theme set".into(),
        command: "fp".into(),
        args,
        ttl: None,
        max_uses_per_day: None,
    }
}

fn exact(args: Value) -> StandingRule {
    new_rule(spec("exact", ArgPattern::exact(args)), NOW).expect("rule")
}

fn fields(list: &[(&str, FieldPattern)]) -> ArgPattern {
    ArgPattern::Fields {
        fields: list
            .iter()
            .map(|(k, p)| (k.to_string(), p.clone()))
            .collect::<BTreeMap<_, _>>(),
    }
}

fn find<'a>(rules: &'a [StandingRule], args: &Value, now: u64) -> Option<&'a str> {
    find_matching(rules, "local", "theme_set", "theme set", "fp", args, now).map(|r| r.id.as_str())
}

#[test]
fn exact_rule_defaults() {
    let r = exact(json!({"name": "tokyo-night"}));
    assert_eq!(r.expires, NOW + DAY, "default expiry 24 h");
    assert_eq!(r.max_uses_per_day, 20, "default 20 uses a day");
    assert!(!r.broad);
    assert!(r.uses.is_empty());
    assert_eq!(r.created, NOW);
}

#[test]
fn broad_rule_defaults_to_sixty_minutes() {
    let r = new_rule(spec("broad", fields(&[("name", FieldPattern::Any)])), NOW).expect("rule");
    assert!(r.broad);
    assert_eq!(r.expires, NOW + HOUR);
}

macro_rules! creation {
    ($($name:ident: $args:expr, ttl $ttl:expr, uses $uses:expr => $want:pat,)*) => {$(
        #[test]
        fn $name() {
            let mut s = spec("r", $args);
            s.ttl = $ttl.map(Duration::from_secs);
            s.max_uses_per_day = $uses;
            let got = new_rule(s, NOW);
            assert!(matches!(got, $want), "{got:?}");
        }
    )*};
}

creation! {
    broad_rule_capped_at_sixty_minutes: fields(&[("name", FieldPattern::Prefix("tokyo".into()))]), ttl Some(HOUR + 1), uses None
        => Err(RuleError::TtlOutOfRange { max_secs: 3600, broad: true, .. }),
    broad_rule_sixty_minutes_ok: fields(&[("name", FieldPattern::Prefix("tokyo".into()))]), ttl Some(HOUR), uses None
        => Ok(StandingRule { broad: true, .. }),
    exact_rule_capped_at_a_day: ArgPattern::exact(json!({})), ttl Some(DAY + 1), uses None
        => Err(RuleError::TtlOutOfRange { max_secs: 86400, broad: false, .. }),
    exact_rule_two_hours_ok: ArgPattern::exact(json!({})), ttl Some(2 * HOUR), uses None
        => Ok(StandingRule { expires: 1_800_007_200, .. }),
    zero_ttl_refused: ArgPattern::exact(json!({})), ttl Some(0), uses None
        => Err(RuleError::TtlOutOfRange { requested_secs: 0, .. }),
    zero_uses_refused: ArgPattern::exact(json!({})), ttl None, uses Some(0)
        => Err(RuleError::UsesOutOfRange { requested: 0, .. }),
    too_many_uses_refused: ArgPattern::exact(json!({})), ttl None, uses Some(100_000)
        => Err(RuleError::UsesOutOfRange { .. }),
    fields_all_exact_is_not_broad: fields(&[("name", FieldPattern::Exact(json!("x")))]), ttl Some(2 * HOUR), uses Some(5)
        => Ok(StandingRule { broad: false, max_uses_per_day: 5, .. }),
}

#[test]
fn empty_identity_refused() {
    let mut s = spec("r", ArgPattern::exact(json!({})));
    s.tool = " ".into();
    assert_eq!(new_rule(s, NOW), Err(RuleError::Empty { field: "tool" }));
}

#[test]
fn exact_args_match_and_different_args_do_not() {
    let rules = [exact(
        json!({"name": "tokyo-night", "opts": {"a": 1, "b": [1, 2]}}),
    )];
    let same_other_order: Value =
        serde_json::from_str(r#"{"opts": {"b": [1, 2], "a": 1}, "name": "tokyo-night"}"#)
            .expect("json");
    assert_eq!(find(&rules, &same_other_order, NOW + 1), Some("exact"));
    for different in [
        json!({"name": "nord", "opts": {"a": 1, "b": [1, 2]}}),
        json!({"name": "tokyo-night", "opts": {"a": 1, "b": [2, 1]}}),
        json!({"name": "tokyo-night", "opts": {"a": 1.0, "b": [1, 2]}}),
        json!({"name": "tokyo-night"}),
        json!({"name": "tokyo-night", "opts": {"a": 1, "b": [1, 2]}, "extra": true}),
        json!(null),
    ] {
        assert_eq!(find(&rules, &different, NOW + 1), None, "{different}");
    }
}

#[test]
fn client_tool_and_route_must_match() {
    let rules = [exact(json!({}))];
    let args = json!({});
    let at = NOW + 1;
    assert!(find_matching(&rules, "local", "theme_set", "theme set", "fp", &args, at).is_some());
    assert!(
        find_matching(
            &rules,
            "local",
            "theme_set",
            " Theme  set ",
            "fp",
            &args,
            at
        )
        .is_some()
    );
    assert!(find_matching(&rules, "other", "theme_set", "theme set", "fp", &args, at).is_none());
    assert!(find_matching(&rules, "local", "theme_next", "theme set", "fp", &args, at).is_none());
    assert!(
        find_matching(
            &rules,
            "local",
            "theme_set",
            "theme remove",
            "fp",
            &args,
            at
        )
        .is_none()
    );
    // Issue 16, attack 2: the same words behind which another command now stands.
    assert!(
        find_matching(
            &rules,
            "local",
            "theme_set",
            "theme set",
            "other-fp",
            &args,
            at
        )
        .is_none()
    );
}

#[test]
fn expiry_is_exclusive() {
    let rules = [exact(json!({}))];
    assert_eq!(find(&rules, &json!({}), NOW + DAY - 1), Some("exact"));
    assert_eq!(find(&rules, &json!({}), NOW + DAY), None);
    assert_eq!(
        find(&rules, &json!({}), NOW - 1),
        None,
        "not before it was made"
    );
}

#[test]
fn daily_cap_then_rolling_reset() {
    let mut s = spec("capped", ArgPattern::exact(json!({})));
    s.max_uses_per_day = Some(3);
    let mut rules = [new_rule(s, NOW).expect("rule")];
    for i in 0..3 {
        let at = NOW + 100 * i;
        assert_eq!(find(&rules, &json!({}), at), Some("capped"), "use {i}");
        rules[0].record_use(at);
    }
    assert_eq!(rules[0].uses_today(NOW + 200), 3);
    assert_eq!(rules[0].remaining_today(NOW + 200), 0);
    assert_eq!(find(&rules, &json!({}), NOW + 300), None, "cap reached");
    // The cap counts a rolling day: a use that has left the window frees a slot.
    rules[0].uses = vec![NOW + 300 - DAY, NOW + 100, NOW + 200];
    assert_eq!(find(&rules, &json!({}), NOW + 300), Some("capped"));
}

#[test]
fn record_use_forgets_uses_older_than_a_day() {
    let mut r = exact(json!({}));
    r.record_use(NOW);
    r.record_use(NOW + 10);
    r.record_use(NOW + DAY + 5);
    assert_eq!(r.uses, vec![NOW + 10, NOW + DAY + 5]);
    assert_eq!(r.uses_today(NOW + DAY + 5), 2);
    assert_eq!(r.uses_today(NOW + DAY + 10), 1);
}

#[test]
fn prefix_field_matches_inside_and_not_outside() {
    let pattern = fields(&[
        ("path", FieldPattern::Prefix("/home/u/Pictures/".into())),
        ("format", FieldPattern::Any),
    ]);
    let rules = [new_rule(spec("pics", pattern), NOW).expect("rule")];
    let at = NOW + 1;
    assert_eq!(
        find(&rules, &json!({"path": "/home/u/Pictures/a.png"}), at),
        Some("pics")
    );
    assert_eq!(
        find(
            &rules,
            &json!({"path": "/home/u/Pictures/a.png", "format": "png"}),
            at
        ),
        Some("pics"),
        "an `any` field may be present"
    );
    for outside in [
        json!({"path": "/home/u/Pictures/../.ssh/id_ed25519"}),
        json!({"path": "/home/u/Pictures/x/.."}),
        json!({"path": "/home/u/Pic"}),
        json!({"path": "/home/u/Documents/a.png"}),
        json!({"path": 7}),
        json!({}),
        json!({"path": "/home/u/Pictures/a.png", "unlisted": 1}),
        json!(["/home/u/Pictures/a.png"]),
    ] {
        assert_eq!(find(&rules, &outside, at), None, "{outside}");
    }
}

#[test]
fn exact_rule_preferred_over_broad() {
    let broad = new_rule(spec("broad", fields(&[("name", FieldPattern::Any)])), NOW).expect("rule");
    let exact = new_rule(
        spec("exact", ArgPattern::exact(json!({"name": "nord"}))),
        NOW,
    )
    .expect("rule");
    let rules = [broad, exact];
    assert_eq!(
        find(&rules, &json!({"name": "nord"}), NOW + 1),
        Some("exact")
    );
    assert_eq!(
        find(&rules, &json!({"name": "gruvbox"}), NOW + 1),
        Some("broad")
    );
}

#[test]
fn hand_edited_overlong_broad_rule_is_not_usable() {
    let mut r = new_rule(spec("broad", fields(&[("name", FieldPattern::Any)])), NOW).expect("rule");
    r.expires = NOW + DAY;
    r.broad = false;
    assert!(!r.is_usable(NOW + 1));
    assert_eq!(find(&[r], &json!({"name": "x"}), NOW + 1), None);
}

#[test]
fn stored_form_round_trips() {
    let mut r = new_rule(
        spec(
            "r1",
            fields(&[
                ("name", FieldPattern::Prefix("tokyo".into())),
                ("mode", FieldPattern::Exact(json!("dark"))),
                ("x", FieldPattern::Any),
            ]),
        ),
        NOW,
    )
    .expect("rule");
    r.record_use(NOW + 5);
    let text = serde_json::to_string(&r).expect("serializes");
    let back: StandingRule = serde_json::from_str(&text).expect("parses");
    assert_eq!(back, r);
    let exact_json = serde_json::to_value(exact(json!({"a": 1}))).expect("json");
    assert_eq!(
        exact_json["args"],
        json!({"kind": "exact", "args": {"a": 1}})
    );
}

/// A rule stored before rules kept the resolved action's fingerprint covers nothing: it was bound
/// to words only, and the command behind those words may have changed since.
#[test]
fn a_rule_without_a_fingerprint_covers_nothing() {
    let mut r = exact(json!({}));
    r.command = None;
    assert!(
        find_matching(
            std::slice::from_ref(&r),
            "local",
            "theme_set",
            "theme set",
            "fp",
            &json!({}),
            NOW + 1
        )
        .is_none()
    );
    let stored = serde_json::to_value(&r).unwrap();
    let mut legacy = stored.as_object().unwrap().clone();
    legacy.remove("command");
    let back: StandingRule =
        serde_json::from_value(serde_json::Value::Object(legacy)).expect("old files still load");
    assert_eq!(back.command, None);
}

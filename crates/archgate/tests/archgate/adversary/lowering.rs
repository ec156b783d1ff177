//! Class: *a change that lowers protection, made through archgate without the person's presence*
//! (issue 31: a standing rule's opt-in, `after_untrusted = true`, lets it keep approving after
//! the session read untrusted text — widening what runs without a question, like "Always…" and
//! developer mode on, which need presence). Every change archgate's own channels make that widens
//! what runs without the person's word goes through `presence::confirm` where
//! `approval.presence` applies, and leaves a record of when presence was asked and how it ended:
//!
//! - `archgate rules after-untrusted ID on` (opting a standing rule in);
//! - `archgate policy ack ROUTE` (an acknowledged route may be granted by an `allow` prefix; it
//!   was written with no presence at all).
//!
//! What this file tries, against the real binary under `presence = "polkit"` (every yes needs
//! presence): each change must leave a `presence`/`presence_refused` record, and the change took
//! effect exactly when the record says presence let it — whatever this machine has installed (in
//! a world without polkit, `polkit` refuses). And under `presence = "off"` the same commands take
//! effect with no question (the person chose no presence). Turning an opt-in off lowers nothing
//! and needs nothing. Hand edits of the rules file are the person's word (SECURITY.md).

use serde_json::{Value, json};

use crate::support::{Env, text};

fn presence_events(env: &Env) -> Vec<Value> {
    env.audit()
        .into_iter()
        .filter(|r| {
            r["event"]
                .as_str()
                .is_some_and(|e| e == "presence" || e == "presence_refused")
        })
        .collect()
}

/// One standing rule, as "Always…" stores it (`standing-rules.json`'s shape), not opted in.
fn with_rule(env: &Env) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let rules = json!([{
        "id": "rule-1", "client": "local", "tool": "omarchy_run", "route": "toggle nightlight",
        "command": "c", "args": {"kind": "exact", "args": {"route": "toggle nightlight"}},
        "created": now, "expires": now + 3600, "max_uses_per_day": 20, "uses": [], "broad": false
    }]);
    std::fs::create_dir_all(env.state_dir()).unwrap();
    std::fs::write(
        env.state_dir().join("standing-rules.json"),
        serde_json::to_vec_pretty(&rules).unwrap(),
    )
    .unwrap();
}

fn opted_in(env: &Env) -> bool {
    let rules: Value = serde_json::from_slice(
        &std::fs::read(env.state_dir().join("standing-rules.json")).unwrap(),
    )
    .unwrap();
    rules[0]["after_untrusted"] == true
}

fn acknowledged(env: &Env, route: &str) -> bool {
    std::fs::read_to_string(env.state_dir().join("acknowledged-routes.json"))
        .is_ok_and(|t| t.contains(route))
}

const POLKIT: &str = "[approval]\npresence = \"polkit\"\npage = false\nnotifications = false\n";
const OFF: &str = "[approval]\npresence = \"off\"\npage = false\nnotifications = false\n";

#[test]
fn opting_a_rule_in_after_untrusted_text_needs_presence_where_it_applies() {
    let env = Env::with_config(POLKIT);
    with_rule(&env);
    let out = env.run(&["rules", "after-untrusted", "rule-1", "on"]);
    let events = presence_events(&env);
    assert_eq!(events.len(), 1, "{events:?}\n{}", text(&out));
    let ev = &events[0];
    assert_eq!(ev["what"], "rule_after_untrusted", "{ev}");
    assert_eq!(ev["action"], "org.archgate.approve-always", "{ev}");
    let on = opted_in(&env);
    assert_eq!(
        on,
        ev["event"] == "presence",
        "the opt-in is {on} but the record says {ev} ({})",
        text(&out)
    );
    assert_eq!(out.status.success(), on, "{}", text(&out));

    // The person chose no presence: the opt-in applies, and off needs nothing either way.
    let env = Env::with_config(OFF);
    with_rule(&env);
    let out = env.run(&["rules", "after-untrusted", "rule-1", "on"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(opted_in(&env));
    let out = env.run(&["rules", "after-untrusted", "rule-1", "off"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!opted_in(&env));
    let set: Vec<Value> = env
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "standing_rule_after_untrusted")
        .collect();
    assert_eq!(set.len(), 2, "each change is recorded: {set:?}");
    // An unknown rule is said, and nothing is written.
    let out = env.run(&["rules", "after-untrusted", "no-such-rule", "on"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no-such-rule"), "{}", text(&out));
}

#[test]
fn acknowledging_a_route_needs_presence_where_it_applies() {
    let env = Env::with_config(POLKIT);
    let route = "omarchy_run toggle nightlight";
    let out = env.run(&["policy", "ack", route]);
    let events = presence_events(&env);
    assert_eq!(
        events.len(),
        1,
        "an acknowledgement widens what an allow grants: {events:?}\n{}",
        text(&out)
    );
    let ev = &events[0];
    assert_eq!(ev["what"], "acknowledge", "{ev}");
    let done = acknowledged(&env, "toggle nightlight");
    assert_eq!(done, ev["event"] == "presence", "{ev} ({})", text(&out));
    assert_eq!(out.status.success(), done, "{}", text(&out));

    let env = Env::with_config(OFF);
    let out = env.run(&["policy", "ack", route]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(acknowledged(&env, "toggle nightlight"));
}

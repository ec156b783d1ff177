//! Class: "a usage archgate cannot read lets flags through" — every usage archgate cannot read
//! passes no flags: an argument starting with `-` reaches a route's script only when a usage
//! archgate read lists it (issue 33: 12 real Omarchy 4 routes with such usages, `reminder`
//! among them, took any leading-`-` argument).
//!
//! What it tries, against the real binary and a fixture Omarchy whose `reminder` route has a
//! usage in the shape of the real one (alternatives at the top level, flags inside them; our own
//! words): the person allows the route, and the agent passes flags to it — long, short, with a
//! value, a lone `-`, a negative number. Each is refused and nothing runs; values alone run.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

#[test]
fn a_route_whose_usage_cannot_be_read_takes_no_flags() {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "reminder",
            args: "[-x|--example] | <minutes> [note] | list [-j|--json] | clear",
        }],
        "[policy]\nallow = [\"omarchy reminder\"]",
    );
    for args in [
        json!(["--json"]),
        json!(["list", "--json"]),
        json!(["-x"]),
        json!(["5", "--exec=/tmp/x"]),
        json!(["-"]),
        json!(["-5"]),
    ] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "reminder", "args": args.clone()}),
        );
        assert_ne!(outcome(&r), "ok", "{args}: {r}");
        assert!(
            r.to_string().contains("passes no flags"),
            "{args}: the refusal must say why: {r}"
        );
        assert!(rig.ran().is_empty(), "{args} reached the script");
    }
    // The honest path: values alone run, exactly as given.
    let (r, _) = rig.env.call(
        "omarchy_run",
        &json!({"route": "reminder", "args": ["5", "tea"]}),
    );
    assert_eq!(outcome(&r), "ok", "{r}");
    assert_eq!(rig.ran(), vec!["omarchy-reminder 5 tea".to_owned()]);
}

//! Class: "a guard that lists the verbs it knows misses the next one" — every plugin route is
//! guarded (it would change the plugin machinery that supervises archgate) unless its verb only
//! reads (issue 33: `plugin clone` was not covered, since `clone` was on no list).
//!
//! What it tries, against the real binary and a fixture Omarchy with plugin routes in Omarchy
//! 4's shape: with every route allowed by the person's policy, the agent clones, edits and
//! rescans plugins through the route and through the bare group with the verb as an argument,
//! and moves a bar widget. Each is refused as blocked and nothing runs; listing plugins runs.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::outcome;

#[test]
fn every_plugin_route_that_is_not_a_read_is_blocked() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "plugin",
                args: "<list|clone|edit|rescan|validate> [...]",
            },
            Entry {
                words: "plugin clone",
                args: "[source-id] [new-id]",
            },
            Entry {
                words: "bar plugin",
                args: "move <id> [placement] | remove <id> [placement]",
            },
        ],
        "[policy]\nallow = [\"omarchy plugin\", \"omarchy plugin clone\", \"omarchy bar plugin\"]",
    );
    for (route, args) in [
        ("plugin clone", json!(["omarchy.clock", "local.clock"])),
        ("plugin clone", json!([])),
        ("plugin", json!(["clone", "omarchy.clock", "local.clock"])),
        ("plugin", json!(["edit", "local.clock"])),
        ("plugin", json!(["rescan"])),
        ("bar plugin", json!(["move", "omarchy.clock"])),
    ] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": route, "args": args.clone()}),
        );
        assert_eq!(outcome(&r), "refused", "{route} {args}: {r}");
        assert!(rig.ran().is_empty(), "{route} {args} ran");
    }
    // The honest path: listing plugins is a read of the same group, and runs.
    let (r, _) = rig
        .env
        .call("omarchy_run", &json!({"route": "plugin", "args": ["list"]}));
    assert_eq!(outcome(&r), "ok", "{r}");
    assert_eq!(rig.ran(), vec!["omarchy-plugin list".to_owned()]);
}

//! Class: *a route judged by its own words while its script forwards its arguments to another
//! route* — `omarchy-bar` hands `plugin …` to `omarchy-bar-plugin` (`exec omarchy-bar-plugin
//! "$@"`), so `bar ["plugin","set","omarchy.clock","exec",CMD]` passed the plugin guard, was
//! `act`, developer mode approved it, and Omarchy's shell then ran CMD every 5 s; the person's
//! `deny = ["omarchy bar plugin"]` did not match either (attack 5a F6). And *a value stored where
//! the desktop later runs it as a command* (`exec`, `onClick`) is never automatic.
//!
//! What it tries, against the real binary and a fixture Omarchy whose `omarchy-bar` dispatches
//! as Omarchy 4's does (our own text in its shape: a `case` on the first argument, `shift`, the
//! `plugin)` arm `exec`s `omarchy-bar-plugin "$@"`): every verb the plugin guard blocks through
//! `bar plugin` is blocked through `bar` + `plugin`, with every route allowed by the person's
//! policy, and nothing runs; the person's deny of `omarchy bar plugin`
//! reaches the forwarded spelling; a route that stores a command-valued key is destructive.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{outcome, text};

fn rig(config: &str) -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "bar",
                args: "use <id> | reset | defaults | position <top|bottom|left|right>",
            },
            Entry {
                words: "bar plugin",
                args: "add <id> | move <id> | remove <id> | set <id> <key> <value> | list",
            },
            Entry {
                words: "bar widget",
                args: "<id> <key> <value>",
            },
        ],
        config,
    );
    rig.set_script(
        "omarchy-bar",
        "command=\"${1:-}\"\n[ $# -gt 0 ] && shift\ncase \"$command\" in\n  use)\n    echo use\n    ;;\n  plugin)\n    exec omarchy-bar-plugin \"$@\"\n    ;;\nesac",
    );
    rig
}

fn explain(rig: &OmarchyRig, route: &str, args: serde_json::Value) -> String {
    let req = json!({"route": route, "args": args}).to_string();
    text(&rig.env.run(&["policy", "explain", "omarchy_run", &req]))
}

#[test]
fn a_route_that_forwards_to_a_plugin_route_is_guarded_as_that_route() {
    let rig = rig("[policy]\nallow = [\"omarchy bar\", \"omarchy bar plugin\"]");
    for args in [
        json!(["plugin", "set", "omarchy.clock", "exec", "touch /tmp/x"]),
        json!(["plugin", "remove", "omarchy.clock"]),
        json!(["plugin", "add", "omarchy.tailscale"]),
    ] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "bar", "args": args.clone()}),
        );
        assert_eq!(outcome(&r), "refused", "{args}: {r}");
        assert!(rig.ran().is_empty(), "{args} ran");
    }
    // The same route's own verbs are judged as before.
    let t = explain(&rig, "bar", json!(["use", "local.neon-bar"]));
    assert!(t.contains("tier:     act"), "{t}");
}

#[test]
fn the_persons_deny_of_the_forwarded_route_reaches_every_spelling() {
    let rig = rig("[policy]\ndeny = [\"omarchy bar plugin\"]");
    let t = explain(&rig, "bar", json!(["plugin", "list"]));
    assert!(t.contains("decision: deny"), "{t}");
    let t = explain(&rig, "bar", json!(["use", "local.neon-bar"]));
    assert!(!t.contains("decision: deny"), "{t}");
}

#[test]
fn a_value_stored_as_a_command_is_never_automatic() {
    let rig = rig("");
    // The key in any spelling or place: alone, in a path, inside a JSON value, as a handler.
    for key in [
        "exec",
        "onClick",
        "onRightClick",
        "onclick",
        "on-scroll-up",
        "settings.exec",
        "widgets/0/Command",
        r#"{"exec": "touch /tmp/x"}"#,
        "script",
    ] {
        let t = explain(
            &rig,
            "bar widget",
            json!(["local.clock", key, "touch /tmp/x"]),
        );
        assert!(t.contains("tier:     destructive"), "{key}: {t}");
    }
    // Keys and values that only look near one stay what the route is.
    for (key, value) in [
        ("format", "HH:mm"),
        ("onlyActive", "true"),
        ("execution-time", "short"),
        ("icon", "clock"),
    ] {
        let t = explain(&rig, "bar widget", json!(["local.clock", key, value]));
        assert!(t.contains("tier:     act"), "{key}: {t}");
    }
}

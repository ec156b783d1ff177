//! Class: *a safety property taken from what a script says about itself* — the tier from the last
//! word of a route's name (`omarchy state` reads like looking; its script touches and deletes
//! files), "needs root" from a `requires-sudo` comment (Omarchy 4's `dns`, `menu timezone`,
//! `restart audio` run `sudo`/`pkexec` without it) (attack 3, F1 and F8).
//!
//! What it tries, against the real binary and a fixture Omarchy whose scripts do what Omarchy 4's
//! do: `state set x` with no rule and no developer mode must ask, not run; a route whose script
//! (or a helper it calls) runs `sudo`, unmarked, must be blocked even under developer mode; a
//! route whose name and script only look still reads without a question.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text};

#[test]
fn a_route_whose_script_writes_is_not_a_read_whatever_its_name() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "state",
                args: "<set|clear> <state-name-or-pattern>",
            },
            Entry {
                words: "theme list",
                args: "",
            },
        ],
        "",
    );
    let marks = rig.env.path("scratch/marks");
    std::fs::create_dir_all(&marks).unwrap();
    rig.set_script(
        "omarchy-state",
        &format!(
            "case \"$1\" in set) touch \"{}/$2\" ;; esac",
            marks.display()
        ),
    );
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    // The control: a route whose name and script only look still reads, no question.
    s.call(1, "omarchy_run", json!({"route": "theme list"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "theme list: {body}");
    assert_eq!(rig.ran(), vec!["omarchy-theme-list ".to_owned()]);

    s.call(
        2,
        "omarchy_run",
        json!({"route": "state", "args": ["set", "x"]}),
    );
    let q = env.one_pending();
    assert_eq!(q["tier"], "act", "{q}");
    assert!(rig.ran().is_empty(), "state set ran without a question");
    let id = q["id"].as_str().unwrap().to_owned();
    let out = env.run(&["deny", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, _) = result_text(&s.response(2));
    assert!(!ok);
    assert!(!marks.join("x").exists(), "the state file was written");
}

#[test]
fn a_script_that_elevates_is_blocked_whatever_its_comment_says() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "dns",
                args: "[provider]",
            },
            Entry {
                words: "restart audio",
                args: "",
            },
        ],
        "",
    );
    // Neither carries `omarchy:requires-sudo=true`; one elevates itself, one through a helper.
    rig.set_script("omarchy-dns", r#"[ -t 0 ] || exec pkexec "$0" "$@""#);
    rig.set_script("omarchy-restart-audio", "omarchy-usb-reset \"$1\"");
    rig.set_script("omarchy-usb-reset", r#"timeout 25s sudo -n usbreset "$1""#);
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    for (i, route) in ["dns", "restart audio"].iter().enumerate() {
        let id = 1 + i as u64;
        s.call(id, "omarchy_run", json!({"route": route}));
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "{route} ran under developer mode: {body}");
        assert!(body.contains("root"), "{route}: {body}");
        assert!(rig.ran().is_empty(), "{route} ran");
    }
}

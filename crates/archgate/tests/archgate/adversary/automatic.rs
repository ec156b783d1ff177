//! Class: "some yeses are never automatic" — a destructive call is approved by the person only,
//! never by developer mode, a standing rule or policy on the person's behalf (issue 33: under
//! developer mode `system reboot` ran at once).
//!
//! What it tries, against the real binary and a fixture Omarchy (`support::omarchy`): with
//! developer mode on, an agent calls a destructive route (`system reboot`) and an act route
//! (`theme set`). The act call is approved by developer mode, as developer mode promises; the
//! destructive one must wait for the person — it parks, and when the person says no nothing ran.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text};

#[test]
fn developer_mode_does_not_approve_a_destructive_route() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "system reboot",
                args: "",
            },
            Entry {
                words: "theme set",
                args: "<theme-name>",
            },
        ],
        "",
    );
    std::fs::create_dir_all(rig.env.path("scratch/omarchy/themes/nord")).unwrap();
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));

    // The act route: developer mode approves it, as it promises.
    s.call(
        1,
        "omarchy_run",
        json!({"route": "theme set", "args": ["nord"]}),
    );
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "theme set under developer mode: {body}");
    assert_eq!(rig.ran(), vec!["omarchy-theme-set nord".to_owned()]);

    // The destructive route: the person is asked, developer mode or not.
    s.call(2, "omarchy_run", json!({"route": "system reboot"}));
    let q = env.one_pending();
    assert_eq!(q["tier"], "destructive", "{q}");
    assert!(
        rig.ran().is_empty(),
        "system reboot ran before the person answered"
    );
    let id = q["id"].as_str().unwrap().to_owned();
    let out = env.run(&["deny", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(2));
    assert!(!ok, "a declined reboot answered as a success: {body}");
    assert!(rig.ran().is_empty(), "system reboot ran after a no");
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "declined", "{rec}");
    assert_eq!(rec["approval"]["channel"], "cli", "{rec}");
}

//! Two members of one class, *a route's argument judged by its slot's name, not by what the
//! script does with it* (issue 29):
//!
//! - Omarchy 4's `menu [toggle|summon|close|refresh|ping] [route]` opens its menu at an item and,
//!   when the item is an action, runs the action's command line at once (`bin/omarchy-menu` hands
//!   the item to the shell's menu plugin; `shell/plugins/menu/Menu.qml`, `openRoute`). With an
//!   item named, `menu` runs code its words do not show: it must park as destructive even under
//!   developer mode, while `menu close` stays as it was.
//! - `share <clipboard|file|folder> [path...]` (`bin/omarchy-menu-share`): the choice word `file`
//!   was read as a file name and failed closed, so `share` never ran. A choice is checked against
//!   its words; the path after it is the file the person saw, resolved and pinned like every
//!   file argument (protected paths refused).
//!
//! Against the real binary and a fixture Omarchy (`support/omarchy.rs`) whose scripts record how
//! they were called.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text};

fn rig() -> OmarchyRig {
    OmarchyRig::new(
        &[
            Entry {
                words: "menu",
                args: "[toggle|summon|close|refresh|ping] [route]",
            },
            Entry {
                words: "share",
                args: "<clipboard|file|folder> [path...]",
            },
        ],
        "",
    )
}

#[test]
fn the_menu_opened_at_an_item_is_judged_as_running_it() {
    let rig = rig();
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    // The control: closing the menu runs under developer mode without a question.
    s.call(
        1,
        "omarchy_run",
        json!({"route": "menu", "args": ["close"]}),
    );
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "menu close: {body}");
    assert_eq!(rig.ran(), vec!["omarchy-menu close".to_owned()]);

    s.call(
        2,
        "omarchy_run",
        json!({"route": "menu", "args": ["summon", "system.reboot"]}),
    );
    let q = env.one_pending();
    assert_eq!(q["tier"], "destructive", "{q}");
    assert!(rig.ran().is_empty(), "menu summon ran without a question");
    let id = q["id"].as_str().unwrap().to_owned();
    let out = env.run(&["deny", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, _) = result_text(&s.response(2));
    assert!(!ok);
    assert!(rig.ran().is_empty());
}

#[test]
fn share_takes_the_file_the_person_saw_and_never_a_protected_one() {
    let rig = rig();
    let env = &rig.env;
    let file = env.path("scratch/notes.txt");
    std::fs::write(&file, "for my phone\n").unwrap();
    let file = file.canonicalize().unwrap();
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    s.call(
        1,
        "omarchy_run",
        json!({"route": "share", "args": ["file", file.display().to_string()]}),
    );
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "share file: {body}");
    assert_eq!(
        rig.ran(),
        vec![format!("omarchy-share file {}", file.display())]
    );
    // archgate's own config is not the person's to share through an agent.
    let config = env.path("config/archgate/config.toml");
    s.call(
        2,
        "omarchy_run",
        json!({"route": "share", "args": ["file", config.display().to_string()]}),
    );
    let (ok, body) = result_text(&s.response(2));
    assert!(!ok, "shared archgate's config: {body}");
    assert!(rig.ran().is_empty());
    // A choice is one of its words.
    s.call(
        3,
        "omarchy_run",
        json!({"route": "share", "args": ["everything"]}),
    );
    let (ok, _) = result_text(&s.response(3));
    assert!(!ok);
    assert!(rig.ran().is_empty());
}

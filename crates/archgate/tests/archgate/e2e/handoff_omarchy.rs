//! Omarchy's routes that need root, as hand-offs (issue 29): the route's own script, pinned,
//! with its arguments checked as `omarchy_run` checks them, runs in the person's terminal after
//! their Enter, and `sudo` inside it asks for their password there. Here, without a desktop (the
//! sandbox has none): the answer names exactly the script and its arguments and nothing runs; a
//! route that needs no root, or whose arguments run as code, is not handed off. The terminal,
//! the password and pacman are `tests/run-handoff.sh`'s (as root).
//!
//! The stand-in script is in the shape of Omarchy 4's `bin/omarchy-pkg-add` (its header lines,
//! then `sudo pacman -S --noconfirm --needed "$@"`), our own text.

use serde_json::{Value, json};

use crate::support::omarchy::{Entry, OmarchyRig};

fn refusal(answer: &Value) -> &Value {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    &answer["result"]["structuredContent"]["error"]
}

fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "pkg add",
                args: "<packages...>",
            },
            Entry {
                words: "toggle nightlight",
                args: "",
            },
            Entry {
                words: "launch tui",
                args: "<command> [args...]",
            },
        ],
        "[policy]\nallow = [\"handoff omarchy pkg add\", \"handoff omarchy toggle nightlight\", \"handoff omarchy launch tui\"]\n",
    );
    rig.set_script(
        "omarchy-pkg-add",
        "# omarchy:args=<packages...>\n# omarchy:requires-sudo=true\nsudo pacman -S --noconfirm --needed \"$@\" || exit 1",
    );
    rig.set_script("omarchy-launch-tui", "sudo -v\nexec \"$@\"");
    rig
}

#[test]
fn a_sudo_route_is_handed_off_as_its_own_script_with_its_checked_arguments() {
    let rig = rig();
    let env = &rig.env;
    let mut s = crate::support::StdioServer::session(env);
    s.call(
        1,
        "handoff",
        json!({"op": "omarchy", "route": "pkg add", "args": ["handoff-hello"], "reason": "the person asked"}),
    );
    let a = s.response(1);
    let e = refusal(&a);
    if !nix::unistd::geteuid().is_root() {
        // A normal user's test rig is that user's own files: a route's script that is not
        // root's alone is never handed off (it runs sudo with the person's password).
        assert_eq!(e["kind"], "refused", "{e}");
        assert!(
            e["message"].as_str().unwrap().contains("not root's alone"),
            "{e}"
        );
        assert!(rig.ran().is_empty(), "the script ran without the person");
        eprintln!("SKIPPED: needs root for the rest (a root-owned script); CI runs it as root");
        return;
    }
    assert_eq!(e["kind"], "not_available", "{e}");
    let command: Vec<String> = serde_json::from_value(e["details"]["command"].clone()).unwrap();
    let script = env.path("scratch/omarchy/bin/omarchy-pkg-add");
    assert_eq!(
        command,
        [script.display().to_string(), "handoff-hello".to_owned()],
        "the route's own script, by its path, with the arguments as given"
    );
    assert!(rig.ran().is_empty(), "the script ran without the person");
    // The agent's shell has no terminal: the helper shows it and runs nothing.
    let id = e["details"]["id"].as_str().unwrap().to_owned();
    let out = env.run(&["handoff", &id]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("Refused; nothing ran"), "{stdout}");
    assert!(stdout.contains("omarchy-pkg-add"), "{stdout}");
    assert!(rig.ran().is_empty(), "the script ran without the person");
}

#[test]
fn a_route_without_root_or_whose_arguments_run_as_code_is_not_handed_off() {
    let rig = rig();
    let env = &rig.env;
    let mut s = crate::support::StdioServer::session(env);
    s.call(
        1,
        "handoff",
        json!({"op": "omarchy", "route": "toggle nightlight", "reason": "r"}),
    );
    let a = s.response(1);
    let e = refusal(&a);
    assert_eq!(e["kind"], "invalid_argument", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("omarchy_run"),
        "{e}"
    );
    // Its arguments are a program to run: what would run is the argument's, never shown whole.
    s.call(
        2,
        "handoff",
        json!({"op": "omarchy", "route": "launch tui", "args": ["pacman", "Syu"], "reason": "r"}),
    );
    let a = s.response(2);
    let e = refusal(&a);
    assert_eq!(e["kind"], "refused", "{e}");
    assert!(e["message"].as_str().unwrap().contains("as code"), "{e}");
    // Arguments are checked as for omarchy_run: a flag the usage does not list never passes.
    s.call(
        3,
        "handoff",
        json!({"op": "omarchy", "route": "pkg add", "args": ["--overwrite=*"], "reason": "r"}),
    );
    let a = s.response(3);
    assert_eq!(refusal(&a)["kind"], "invalid_argument", "{a}");
    // A route takes `route`, an operation `packages`: never the other's.
    s.call(
        4,
        "handoff",
        json!({"op": "install", "packages": ["x"], "route": "pkg add", "reason": "r"}),
    );
    let a = s.response(4);
    assert_eq!(refusal(&a)["kind"], "invalid_argument", "{a}");
    assert!(rig.ran().is_empty());
}

#[test]
fn a_deny_on_the_route_denies_its_hand_off_too() {
    // One capability, two doors: the person who denied `omarchy pkg add` (or its bare words)
    // denied it through `handoff` as well.
    for rule in ["omarchy pkg add", "pkg add"] {
        let rig = OmarchyRig::new(
            &[Entry {
                words: "pkg add",
                args: "<packages...>",
            }],
            &format!("[policy]\ndeny = [\"{rule}\"]\nallow = [\"handoff omarchy pkg add\"]\n"),
        );
        rig.set_script(
            "omarchy-pkg-add",
            "sudo pacman -S --noconfirm --needed \"$@\" || exit 1",
        );
        let mut s = crate::support::StdioServer::session(&rig.env);
        s.call(
            1,
            "handoff",
            json!({"op": "omarchy", "route": "pkg add", "args": ["x"], "reason": "r"}),
        );
        let a = s.response(1);
        let e = refusal(&a);
        assert_eq!(e["kind"], "refused", "{rule}: {e}");
        assert!(
            e["message"].as_str().unwrap().contains("deny"),
            "{rule}: {e}"
        );
        assert!(rig.ran().is_empty());
    }
}

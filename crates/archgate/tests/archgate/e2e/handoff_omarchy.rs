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
    rig.set_script_unrecorded(
        "omarchy-pkg-add",
        "# omarchy:args=<packages...>\n# omarchy:requires-sudo=true\nsudo pacman -S --noconfirm --needed \"$@\" || exit 1",
    );
    rig.set_script("omarchy-launch-tui", "sudo -v\nexec \"$@\"");
    rig
}

fn route_refusal(rig: &OmarchyRig, route: &str) -> Value {
    let env = &rig.env;
    let mut s = crate::support::StdioServer::session(env);
    s.call(
        1,
        "handoff",
        json!({"op": "omarchy", "route": route, "args": ["handoff-hello"], "reason": "the person asked"}),
    );
    let a = s.response(1);
    let e = refusal(&a).clone();
    assert_eq!(e["kind"], "refused", "{e}");
    assert!(
        e["next"]
            .as_str()
            .unwrap()
            .contains("in their own terminal"),
        "{e}"
    );
    assert!(rig.ran().is_empty(), "the script ran");
    assert!(env.pending().is_empty(), "a question was asked");
    e
}

#[test]
fn a_sudo_route_is_refused_where_archgates_asking_sudo_is_not_this_archgate() {
    // Attack 8 F3, F4: a route's script runs the person's own files (hooks, configuration)
    // after its first sudo; it is handed off only with archgate's asking sudo first on its path
    // (`tools/handoff/asking_sudo.rs`), which the package installs as a link to its archgate.
    // This test's archgate is no installed one: refused, with why (the hand-off suite installs
    // it, as root, in a private mount namespace).
    let e = route_refusal(&rig(), "pkg add");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("asking sudo is not usable at /usr/lib/archgate/sudo-asks/sudo"),
        "{e}"
    );
}

#[test]
fn a_route_that_reaches_root_past_a_sudo_found_by_name_is_not_handed_off() {
    // Root's sudo by its path (or pkexec) would not be the asking sudo: it keeps the password.
    let rig = rig();
    for (script, what) in [
        ("/usr/bin/sudo pacman -S --noconfirm \"$@\"", "sudo"),
        ("pkexec pacman -S --noconfirm \"$@\"", "pkexec"),
        (
            "export PATH=\"/usr/bin:$PATH\"\nsudo pacman -S --noconfirm \"$@\"",
            "PATH=/usr/bin",
        ),
    ] {
        rig.set_script_unrecorded(
            "omarchy-pkg-add",
            &format!("# omarchy:args=<packages...>\n# omarchy:requires-sudo=true\n{script}"),
        );
        let e = route_refusal(&rig, "pkg add");
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains("past a sudo found by name") && message.contains(what),
            "{script}: {e}"
        );
    }
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

#[test]
fn a_route_that_prepares_roots_input_as_the_person_or_finds_their_home_is_not_handed_off() {
    // Attack 11 F3: `plymouth set` staged a theme in a `mktemp -d` of the person's and `sudo cp
    // -a`'d it into root's directory — the agent's link there made root write /etc/pam.d/sudo.
    // Attack 11 F2: the script runs with a home that is no one's; one that finds the person's
    // another way would run their files where they type the password.
    let rig = rig();
    for (script, what) in [
        (
            "staging=$(mktemp -d)\nsudo cp -a \"$staging/.\" /usr/share/plymouth/themes/x/",
            "makes or changes files as you (omarchy-pkg-add line 5: mktemp)",
        ),
        (
            "echo \"$1\" > /tmp/list\nsudo pacman -S --noconfirm - < /tmp/list",
            "makes or changes files as you (omarchy-pkg-add line 5: > /tmp/list)",
        ),
        (
            "sudo -u \"$USER\" -H true\nsudo pacman -S --noconfirm \"$@\"",
            "reaches your home past $HOME (omarchy-pkg-add line 5: sudo -u)",
        ),
    ] {
        rig.set_script_unrecorded(
            "omarchy-pkg-add",
            &format!("# omarchy:args=<packages...>\n# omarchy:requires-sudo=true\n{script}"),
        );
        let e = route_refusal(&rig, "pkg add");
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(what), "{script}: {e}");
    }
}

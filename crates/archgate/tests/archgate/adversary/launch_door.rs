//! Class: *a route reached by another door skips the route's judgement* — here the door is
//! `launch {"app": NAME}` (attack 15 F4). Omarchy's `bin/` is a trusted program directory, so
//! every route's script could be started by its file name, or through a desktop entry's `Exec=`
//! (entries in `~/.local/share/applications` are the person's — and the agent's — to write), as
//! an "application" judged `act`: developer mode started `omarchy-system-reboot` at once while
//! `omarchy_run "system reboot"` waits for the person, and a route blocked because its script
//! runs sudo started anyway.
//!
//! What it tries, against the real binary and a fixture Omarchy (`support/omarchy.rs`) whose
//! scripts record how they were called, with developer mode on: a destructive route's script by
//! name and through a desktop entry (behind `env`); a script that elevates; a script of Omarchy's
//! that no route names; power commands by name and through an entry; a route's script handed to
//! a shell, an interpreter or a terminal by an entry. Each must be judged as the
//! route (parked as destructive, blocked) or refused — and a web app (an entry whose `Exec=` is
//! `omarchy-launch-webapp URL`) must still launch, as the `launch webapp` route it is.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text, wait_for};

fn rig() -> OmarchyRig {
    OmarchyRig::new(
        &[
            Entry {
                words: "system reboot",
                args: "",
            },
            Entry {
                words: "launch webapp",
                args: "<url>",
            },
            Entry {
                words: "update system pkgs",
                args: "",
            },
            Entry {
                words: "launch or focus webapp",
                args: "<window-pattern> <url-and-flags...>",
            },
        ],
        "",
    )
}

/// The agent's session, with developer mode on (it approves every `act` call).
fn session(rig: &OmarchyRig) -> StdioServer {
    let s = StdioServer::session(&rig.env);
    let on = rig.env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    s
}

/// A desktop entry the agent could have written, `~/.local/share/applications/ID.desktop`.
fn entry(rig: &OmarchyRig, id: &str, exec: &str) {
    let dir = rig.env.path("scratch/.local/share/applications");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{id}.desktop")),
        format!("[Desktop Entry]\nType=Application\nName={id}\nExec={exec}\n"),
    )
    .unwrap();
}

/// The call parks as the destructive route, whatever developer mode says; a no runs nothing.
fn parks_as_reboot(rig: &OmarchyRig, s: &mut StdioServer, id: u64) {
    let q = rig.env.one_pending();
    assert_eq!(q["tier"], "destructive", "{q}");
    assert!(rig.ran().is_empty(), "the reboot script ran before a yes");
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["deny", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(id));
    assert!(!ok, "a declined launch answered as a success: {body}");
    assert!(rig.ran().is_empty(), "the reboot script ran after a no");
    let rec = rig.env.audit_of(&qid);
    assert_eq!(rec["route"], "omarchy system reboot", "{rec}");
    assert_eq!(rec["tool"], "launch", "{rec}");
}

#[test]
fn a_destructive_route_s_script_launched_by_name_waits_for_the_person() {
    let rig = rig();
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "omarchy-system-reboot"}));
    parks_as_reboot(&rig, &mut s, 1);
}

#[test]
fn a_desktop_entry_that_starts_a_route_s_script_is_that_route() {
    let rig = rig();
    entry(&rig, "tidy", "env TIDY=1 omarchy-system-reboot");
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "tidy.desktop"}));
    parks_as_reboot(&rig, &mut s, 1);
}

#[test]
fn a_route_blocked_for_sudo_is_blocked_through_launch_too() {
    let rig = rig();
    rig.set_script(
        "omarchy-update-system-pkgs",
        "sudo -n pacman -Syu --noconfirm",
    );
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "omarchy-update-system-pkgs"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "a route that runs sudo launched: {body}");
    assert!(body.contains("root"), "{body}");
    assert!(rig.ran().is_empty(), "the sudo script ran");
}

#[test]
fn a_script_of_omarchy_that_no_route_names_is_refused() {
    let rig = rig();
    rig.set_script("omarchy-hyprland-window-close-all", "");
    let mut s = session(&rig);
    s.call(
        1,
        "launch",
        json!({"app": "omarchy-hyprland-window-close-all"}),
    );
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "an unlisted Omarchy script launched: {body}");
    assert!(body.contains("omarchy_run"), "{body}");
    assert!(rig.ran().is_empty(), "the script ran");
}

#[test]
fn power_and_session_commands_are_not_applications() {
    let rig = rig();
    // A file named `poweroff` in a trusted directory, and a link to it under another name:
    // refused by the name asked and by the real file's name alike (archgate runs a `systemctl`
    // of its own — `--user show-environment` — so that name is not planted here).
    rig.set_script("poweroff", "");
    std::os::unix::fs::symlink("poweroff", rig.env.path("scratch/omarchy/bin/tidy-up")).unwrap();
    entry(&rig, "off", "/usr/bin/env systemctl poweroff");
    let mut s = session(&rig);
    for (i, app) in ["reboot", "systemctl", "poweroff", "tidy-up", "off"]
        .iter()
        .enumerate()
    {
        let id = i as u64 + 1;
        s.call(id, "launch", json!({ "app": app }));
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "launch {app}: {body}");
        assert!(body.contains("not an application"), "launch {app}: {body}");
    }
    let ran = rig.ran();
    assert!(ran.is_empty(), "a power command ran: {ran:?}");
}

#[test]
fn an_entry_that_hands_a_route_s_script_to_a_shell_or_a_terminal_is_refused() {
    let rig = rig();
    entry(&rig, "shell", "sh -c 'omarchy-system-reboot'");
    entry(
        &rig,
        "py",
        "python3.13 -c 'import os; os.system(\"omarchy-system-reboot\")'",
    );
    entry(&rig, "term", "alacritty -e omarchy-system-reboot");
    entry(&rig, "termsh", "xdg-terminal-exec --app-id=x -e bash -c x");
    let mut s = session(&rig);
    for (i, app) in ["shell", "py", "term", "termsh"].iter().enumerate() {
        let id = i as u64 + 1;
        s.call(id, "launch", json!({ "app": app }));
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "launch {app}: {body}");
        assert!(body.contains("blocked"), "launch {app}: {body}");
    }
    assert!(rig.ran().is_empty(), "the reboot script ran");
}

#[test]
fn a_web_app_still_launches_as_the_launch_webapp_route() {
    let rig = rig();
    entry(
        &rig,
        "Example",
        "omarchy-launch-webapp https://example.org/",
    );
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "Example"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "the web app under developer mode: {body}");
    // Started detached: wait for its record of the call.
    let ran = wait_for("the web app's script to run", || {
        let r = rig.ran();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(
        ran,
        vec!["omarchy-launch-webapp https://example.org/".to_owned()]
    );
    let rec = wait_for("the launch's record", || {
        rig.env
            .calls()
            .into_iter()
            .find(|r| r["tool"] == "launch" && r["outcome"] == "ok")
    });
    assert_eq!(rec["route"], "omarchy launch webapp", "{rec}");
    assert_eq!(rec["tier"], "act", "{rec}");
}

/// Omarchy's focus-or-launch web app entry (`omarchy-launch-or-focus-webapp PATTERN URL`) hands
/// the address to a script that `eval`s it; launched as an application it is the `launch webapp`
/// route with the address alone, an argument, never code — and it launches.
#[test]
fn a_focus_or_launch_web_app_launches_as_launch_webapp_with_the_address_alone() {
    let rig = rig();
    rig.set_script(
        "omarchy-launch-or-focus-webapp",
        "eval exec \"omarchy-launch-webapp $2\"",
    );
    entry(
        &rig,
        "HEY",
        "omarchy-launch-or-focus-webapp HEY https://app.hey.example/",
    );
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "HEY"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "the web app under developer mode: {body}");
    let ran = wait_for("the web app's script to run", || {
        let r = rig.ran();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(
        ran,
        vec!["omarchy-launch-webapp https://app.hey.example/".to_owned()]
    );
}

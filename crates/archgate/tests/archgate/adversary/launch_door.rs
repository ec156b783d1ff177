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
//! `omarchy-launch-webapp URL`) must still launch, as the `launch webapp` route it is, once the
//! person says yes (its browser is the person's pick: `adversary/picked.rs`).

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

/// The rig with `/usr/bin` trusted too, so bare names of real programs resolve (`nice`,
/// `swaymsg`, `foot`).
fn rig_usr_bin() -> OmarchyRig {
    let rig = rig();
    let bin = rig.env.path("scratch/omarchy/bin");
    rig.env.write_config(&format!(
        "[approval]\npage = false\nnotifications = false\npresence = \"off\"\ntimeout_s = 60\n\
         [exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\nrequire_root_owned = false\n",
        bin.display()
    ));
    rig
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

/// A system desktop entry, `$XDG_DATA_DIRS/applications/ID.desktop` (root's when the test runs
/// as root, as `/usr/share/applications` is); set before the session starts.
fn system_entry(rig: &mut OmarchyRig, id: &str, exec: &str) {
    let share = rig.env.path("scratch/share");
    let dir = share.join("applications");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(format!("{id}.desktop")),
        format!("[Desktop Entry]\nType=Application\nName={id}\nExec={exec}\n"),
    )
    .unwrap();
    if !rig.env.vars.iter().any(|(k, _)| k == "XDG_DATA_DIRS") {
        rig.env
            .vars
            .push(("XDG_DATA_DIRS".into(), share.display().to_string()));
    }
}

/// Each app's launch is refused, saying what the person can do instead.
fn all_refused(s: &mut StdioServer, apps: &[&str], says: &str) {
    for (i, app) in apps.iter().enumerate() {
        let id = i as u64 + 1;
        s.call(id, "launch", json!({ "app": app }));
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "launch {app}: {body}");
        assert!(body.contains(says), "launch {app}: {body}");
    }
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
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED: needs root (a system desktop entry must be root's to launch); CI runs it as root"
        );
        return;
    }
    let mut rig = rig();
    system_entry(&mut rig, "tidy", "omarchy-system-reboot");
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
        // `off` is the person's own entry: refused before its program is looked at.
        let why = if *app == "off" {
            "not root's"
        } else {
            "not an application"
        };
        assert!(body.contains(why), "launch {app}: {body}");
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
    approve_the_pick(&rig);
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "the web app, approved: {body}");
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
    // Its browser is picked from the person's directories first (attack 24 F4): the person's.
    assert_eq!(rec["tier"], "destructive", "{rec}");
}

/// A web app's browser is the person's pick (the script reads their applications directory
/// first, where the agent may write before it runs: attack 24 F4), so developer mode does not
/// approve it; the question says so, and the person approves.
fn approve_the_pick(rig: &OmarchyRig) {
    let q = rig.env.one_pending();
    assert!(q.to_string().contains("none there now"), "{q}");
    assert!(rig.ran().is_empty(), "the web app ran before a yes");
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["approve", &qid]);
    assert!(out.status.success(), "{}", text(&out));
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
    approve_the_pick(&rig);
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "the web app, approved: {body}");
    let ran = wait_for("the web app's script to run", || {
        let r = rig.ran();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(
        ran,
        vec!["omarchy-launch-webapp https://app.hey.example/".to_owned()]
    );
}

/// Attack 18 F1 (class: *a denylist where only an allowlist can hold*): any program that runs
/// its arguments — `nice`, `timeout`, `find -exec`, `script -c`, `gdb -ex shell`, `git -c
/// alias` — in the person's own entry started a destructive route's script as an "application"
/// under developer mode. The person's entries launch only as Omarchy web apps; a bare program
/// name only when a desktop entry root owns declares it (none declares `nice` or `timeout`).
#[test]
fn a_program_that_runs_its_arguments_does_not_carry_a_route_s_script_past_launch() {
    let rig = rig_usr_bin();
    entry(&rig, "viewer", "nice omarchy-system-reboot");
    entry(&rig, "viewer2", "timeout 100 omarchy-system-reboot");
    entry(
        &rig,
        "finder",
        "find / -maxdepth 0 -exec omarchy-system-reboot ;",
    );
    entry(
        &rig,
        "typescript",
        "script -qc omarchy-system-reboot /dev/null",
    );
    entry(
        &rig,
        "gdbx",
        "gdb -batch -ex \"shell omarchy-system-reboot gdb\"",
    );
    entry(&rig, "gitx", "git -c alias.x=!omarchy-system-reboot x");
    let mut s = session(&rig);
    all_refused(
        &mut s,
        &["viewer", "viewer2", "finder", "typescript", "gdbx", "gitx"],
        "launcher",
    );
    // By name: no system entry declares these programs.
    s.call(10, "launch", json!({"app": "nice"}));
    let (ok, body) = result_text(&s.response(10));
    assert!(!ok, "launch nice: {body}");
    assert!(body.contains("declares"), "launch nice: {body}");
    assert!(rig.ran().is_empty(), "the reboot script ran");
}

/// Attack 18 F2 (class: *the environment is code*): `Exec=env PYTHONPATH=DIR python3` ran the
/// agent's `sitecustomize.py`, `Exec=env BASH_ENV=FILE bash` sourced the agent's file — the
/// interpreter judged with no arguments, its code handed over by `env`. An entry of the
/// person's is never passed with `env NAME=VALUE`.
#[test]
fn an_entry_of_the_person_s_never_hands_a_program_its_code_through_the_environment() {
    let rig = rig_usr_bin();
    let mark = rig.env.path("scratch/env-code-ran");
    let py = rig.env.path("scratch/py");
    std::fs::create_dir_all(&py).unwrap();
    std::fs::write(
        py.join("sitecustomize.py"),
        format!(
            "open({:?}, 'a').write('python\\n')\n",
            mark.display().to_string()
        ),
    )
    .unwrap();
    // Writes a mark with a builtin only: nothing it starts could source it again.
    let be = rig.env.path("scratch/be.sh");
    std::fs::write(&be, format!("echo bash >> {}\n", mark.display())).unwrap();
    entry(
        &rig,
        "py",
        &format!("env PYTHONPATH={} python3", py.display()),
    );
    entry(&rig, "be", &format!("env BASH_ENV={} bash", be.display()));
    entry(&rig, "pre", "env LD_PRELOAD=/nonexistent/x.so true");
    let mut s = session(&rig);
    all_refused(&mut s, &["py", "be", "pre"], "launcher");
    assert!(!mark.exists(), "code ran through the environment");
}

/// Attack 18 F3 (class: *power and session judged by the binary's name, not by what it
/// asks*): `Exec=swaymsg exit` ended the session, `busctl … login1 … PowerOff` was judged
/// `act`. Judged here without running anything (`policy explain`) for the entries, and by
/// launching the bare names (harmless without arguments): none is an application a system
/// entry declares.
#[test]
fn session_and_power_requests_are_not_applications_through_any_client() {
    let rig = rig_usr_bin();
    entry(&rig, "endsession", "swaymsg exit");
    entry(
        &rig,
        "off",
        "busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager PowerOff b false",
    );
    entry(
        &rig,
        "off2",
        "dbus-send --system --print-reply --dest=org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager.PowerOff boolean:false",
    );
    entry(&rig, "hypr", "hyprctl dispatch exit");
    for app in ["endsession", "off", "off2", "hypr"] {
        let args = json!({ "app": app }).to_string();
        let out = rig.env.run(&["policy", "explain", "launch", &args]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!text.contains("tier:     act"), "{app}: {text}");
        assert!(text.contains("not root's"), "{app}: {text}");
    }
    let mut s = session(&rig);
    all_refused(&mut s, &["swaymsg", "busctl"], "declares");
}

/// The allowlist's other side, with the machine's real entries: `foot` is declared by
/// `/usr/share/applications/foot.desktop` (root's, `Exec=foot`), so its bare name is an
/// application (judged `act`, not run here).
#[test]
fn a_program_a_system_entry_declares_launches_by_its_name() {
    if !std::path::Path::new("/usr/share/applications/foot.desktop").exists() {
        eprintln!("SKIPPED: foot's desktop entry is not installed here");
        return;
    }
    let rig = rig_usr_bin();
    let out = rig
        .env
        .run(&["policy", "explain", "launch", r#"{"app":"foot"}"#]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tier:     act"), "{text}");
    assert!(text.contains("foot"), "{text}");
}

/// An entry in a system data directory counts as root's only when it is root's all the way
/// from `/`: one in a directory others can write (or the person owns) is the person's, and
/// launches only as a web app.
#[test]
fn an_entry_in_a_system_directory_others_can_write_is_not_root_s() {
    use std::os::unix::fs::PermissionsExt;
    let mut rig = rig();
    system_entry(&mut rig, "planted", "nice omarchy-system-reboot");
    let dir = rig.env.path("scratch/share/applications");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut s = session(&rig);
    all_refused(&mut s, &["planted"], "not root's");
    assert!(rig.ran().is_empty(), "the reboot script ran");
}

/// Attack 33 F9 (class, with F6: *a name a root file declares, resolved through a directory the
/// agent writes*): a daemon without `OMARCHY_PATH` (a bridge started it with no user manager)
/// knew Omarchy's `bin/` only as a search directory, and root's `Exec=foot` started a `foot` the
/// agent dropped there, under developer mode. A bare name resolves in root's directories first;
/// a program a root entry names, found in a directory that is not root's all the way, launches
/// only as the route whose script it is — else refused.
#[test]
fn a_program_a_root_entry_names_is_never_taken_from_a_directory_of_the_persons() {
    let mut rig = rig_usr_bin();
    rig.env.vars.retain(|(k, _)| k != "OMARCHY_PATH");
    system_entry(&mut rig, "foot", "foot");
    let bin = rig.env.path("scratch/omarchy/bin");
    let mark = rig.env.path("scratch/planted-foot-ran");
    let planted = bin.join("foot");
    std::fs::write(&planted, format!("#!/bin/sh\nid -u > {}\n", mark.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    if nix::unistd::geteuid().is_root() {
        // Root's directory when the tests run as root: the person's, as on a desktop.
        nix::unistd::chown(&bin, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    let mut s = session(&rig);
    s.call(1, "launch", json!({"app": "foot"}));
    // Root's `foot` (a bare name resolves in root's directories first: attack 34 F6), or
    // refused where root has none; never the planted one.
    let (_, body) = result_text(&s.response(1));
    assert!(!body.contains(&planted.display().to_string()), "{body}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !mark.exists(),
        "the planted foot ran: {}",
        std::fs::read_to_string(&mark).unwrap_or_default()
    );
}

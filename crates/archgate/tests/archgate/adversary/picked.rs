//! Class: *a route's script picks the program it runs from files the agent can write* (attack 23
//! F5; attack 18 F5's class — a dispatcher configured by files the agent writes — inside Omarchy
//! routes). Omarchy 4's `launch webapp` runs the first word of `Exec=` of
//! `~/.local/share/applications/<default browser>.desktop`, `launch editor` what
//! `~/.local/state/omarchy/defaults/editor` names, `font set` (through `omarchy-hook`) the file
//! `~/.config/omarchy/hooks/font-set`. Judged by the route's name and arguments, developer mode,
//! a standing rule or the person's yes to "launch webapp https://example.org/" ran a destructive
//! route's script named in those files.
//!
//! What it tries, against the real binary and a fixture Omarchy (`support/omarchy.rs`) whose
//! scripts are our own text in the shape of Omarchy 4's (`bin/omarchy-launch-webapp`,
//! `bin/omarchy-launch-editor`, `bin/omarchy-font-set` + `bin/omarchy-hook`; the default-browser
//! query left out: with no browser set Omarchy's script falls back to `chromium.desktop`, as
//! here): with the person's file present the call is never automatic, the question names the
//! file and what it starts, a change of the file after the question refuses the run, and a
//! picked program that is an Omarchy route's script is refused; with no file of the person's,
//! developer mode still launches the web app.

use serde_json::{Value, json};

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text, wait_for};

const URL: &str = "https://example.org/";

/// Our own text in the shape of Omarchy 4's bin/omarchy-launch-webapp.
const WEBAPP_SCRIPT: &str = "browser=chromium.desktop\n\
     exec $(sed -n 's/^Exec=\\([^ ]*\\).*/\\1/p' \"$HOME/.local/share/applications/$browser\" \
     \"$HOME/.nix-profile/share/applications/$browser\" \"/usr/share/applications/$browser\" \
     2>/dev/null | head -1) --app=\"$1\"";

fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
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
                words: "launch editor",
                args: "<path>",
            },
            Entry {
                words: "font set",
                args: "<font-name>",
            },
            Entry {
                words: "launch browser",
                args: "[url]",
            },
            Entry {
                words: "launch terminal",
                args: "",
            },
            Entry {
                words: "capture screenshot",
                args: "",
            },
        ],
        "",
    );
    rig.set_script("omarchy-launch-webapp", WEBAPP_SCRIPT);
    // … of bin/omarchy-launch-editor (the terminal editors' branch left out).
    rig.set_script(
        "omarchy-launch-editor",
        "default_editor=\"$HOME/.local/state/omarchy/defaults/editor\"\n\
         if [ -f \"$default_editor\" ]; then read -r editor < \"$default_editor\"; else editor=nvim; fi\n\
         exec \"$editor\" \"$1\"",
    );
    // … of bin/omarchy-font-set's last step and bin/omarchy-hook.
    rig.set_script("omarchy-font-set", "omarchy-hook font-set \"$1\"");
    rig.set_script(
        "omarchy-hook",
        "HOOK_PATH=\"$HOME/.config/omarchy/hooks/$1\"\nshift\n\
         if [ -f \"$HOOK_PATH\" ]; then bash \"$HOOK_PATH\" \"$@\"; fi",
    );
    // … of bin/omarchy-launch-browser (the private-window probe and systemd-run left out).
    rig.set_script(
        "omarchy-launch-browser",
        "default_browser=chromium.desktop\n\
         browser_exec=$(sed -n 's/^Exec=\\([^ ]*\\).*/\\1/p' \"$HOME/.local/share/applications/$default_browser\" \
         \"/usr/share/applications/$default_browser\" 2>/dev/null | head -1)\n\
         exec \"$browser_exec\" \"$@\"",
    );
    // … of bin/omarchy-launch-terminal (the working-directory probe left out).
    rig.set_script("omarchy-launch-terminal", "exec xdg-terminal-exec");
    // … of bin/omarchy-capture-screenshot's first lines (the capture itself left out).
    rig.set_script(
        "omarchy-capture-screenshot",
        "[ -f ~/.config/user-dirs.dirs ] && . ~/.config/user-dirs.dirs\n\
         echo \"${XDG_PICTURES_DIR:-$HOME/Pictures}\"",
    );
    // A browser and an editor of the person's: programs that only record how they were called.
    rig.set_script("fakebrowser", "");
    rig.set_script("fakeeditor", "");
    rig
}

/// The agent's session; with `dev`, developer mode on (it approves every `act` call).
fn session(rig: &OmarchyRig, dev: bool) -> StdioServer {
    let s = StdioServer::session(&rig.env);
    if dev {
        let on = rig.env.run(&["dev-mode", "on", "--for", "30m"]);
        assert!(on.status.success(), "{}", text(&on));
    }
    s
}

/// A file of the person's (and so of the agent's shell): `rel` under `$HOME`.
fn person_file(rig: &OmarchyRig, rel: &str, body: &str) {
    let path = rig.env.path(&format!("scratch/{rel}"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

fn browser_entry(rig: &OmarchyRig, exec: &str) {
    person_file(
        rig,
        ".local/share/applications/chromium.desktop",
        &format!("[Desktop Entry]\nType=Application\nName=Chromium\nExec={exec} %U\n"),
    );
}

/// Call 1 is refused, naming the person's browser entry, and the reboot route's script never ran.
fn refused_naming_the_entry(rig: &OmarchyRig, s: &mut StdioServer) {
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "the web app ran the reboot route's script: {body}");
    assert!(body.contains("chromium.desktop"), "{body}");
    let ran = rig.ran();
    assert!(
        !ran.iter().any(|r| r.starts_with("omarchy-system-reboot")),
        "the reboot script ran: {ran:?}"
    );
}

fn webapp(s: &mut StdioServer, id: u64) {
    s.call(
        id,
        "omarchy_run",
        json!({"route": "launch webapp", "args": [URL]}),
    );
}

/// The call waits for the person (whatever developer mode or a rule says): the one pending
/// question, which names `names`; nothing ran yet.
fn parked(rig: &OmarchyRig, names: &[&str]) -> Value {
    let q = rig.env.one_pending();
    let shown = q.to_string();
    for n in names {
        assert!(shown.contains(n), "the question does not name {n:?}: {q}");
    }
    assert!(rig.ran().is_empty(), "something ran before a yes");
    q
}

/// The person says no; the call answers as not run and nothing ran.
fn declined(rig: &OmarchyRig, s: &mut StdioServer, q: &Value, id: u64) {
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["deny", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(id));
    assert!(!ok, "a declined call answered as a success: {body}");
    assert!(rig.ran().is_empty(), "something ran after a no");
}

#[test]
fn developer_mode_does_not_run_a_web_app_through_a_person_s_entry_naming_a_route_s_script() {
    let rig = rig();
    browser_entry(&rig, "omarchy-system-reboot");
    let mut s = session(&rig, true);
    webapp(&mut s, 1);
    refused_naming_the_entry(&rig, &mut s);
}

#[test]
fn a_web_app_through_a_person_s_browser_entry_asks_naming_the_file_and_its_program() {
    let rig = rig();
    browser_entry(&rig, "fakebrowser");
    let mut s = session(&rig, true);
    webapp(&mut s, 1);
    let q = parked(
        &rig,
        &[
            ".local/share/applications/chromium.desktop",
            "Exec=fakebrowser",
        ],
    );
    assert_eq!(q["tier"], "destructive", "{q}");
    declined(&rig, &mut s, &q, 1);
}

#[test]
fn a_standing_rule_made_for_a_web_app_does_not_cover_a_person_s_entry_written_after() {
    let rig = rig();
    let mut s = session(&rig, false);
    webapp(&mut s, 1);
    let q = rig.env.one_pending();
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["approve", &qid, "--always"]);
    assert!(out.status.success(), "{}", text(&out));
    let _ = s.response(1);
    let ran = wait_for("the web app's script to run", || {
        let r = rig.ran();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(ran, vec![format!("omarchy-launch-webapp {URL}")]);
    drop(s);
    // The agent's shell writes the person's browser entry; the same call again, from a new
    // session (one that read nothing: the rule alone decides).
    browser_entry(&rig, "fakebrowser");
    let mut s = session(&rig, false);
    webapp(&mut s, 2);
    let q = parked(&rig, &["chromium.desktop", "Exec=fakebrowser"]);
    assert!(q.get("follows").is_none(), "{q}");
    declined(&rig, &mut s, &q, 2);
}

#[test]
fn the_launch_door_s_web_app_through_a_person_s_entry_naming_a_route_s_script_is_refused() {
    let rig = rig();
    person_file(
        &rig,
        ".local/share/applications/HEY.desktop",
        "[Desktop Entry]\nType=Application\nName=HEY\nExec=omarchy-launch-webapp https://app.hey.com/\n",
    );
    browser_entry(&rig, "omarchy-system-reboot");
    let mut s = session(&rig, true);
    s.call(1, "launch", json!({"app": "HEY"}));
    let (ok, body) = result_text(&s.response(1));
    assert!(
        !ok,
        "the web app door ran the reboot route's script: {body}"
    );
    // Started detached when it runs: give a wrong launch the time to show.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let ran = rig.ran();
    assert!(
        ran.is_empty(),
        "the web app door started something: {ran:?}"
    );
}

#[test]
fn a_route_whose_hook_the_person_has_is_never_automatic() {
    let rig = rig();
    let mark = rig.env.path("scratch/hook-ran");
    person_file(
        &rig,
        ".config/omarchy/hooks/font-set",
        &format!("echo hook >> {}\n", mark.display()),
    );
    let mut s = session(&rig, true);
    s.call(
        1,
        "omarchy_run",
        json!({"route": "font set", "args": ["DejaVu Sans Mono"]}),
    );
    let q = parked(&rig, &[".config/omarchy/hooks/font-set"]);
    assert_eq!(q["tier"], "destructive", "{q}");
    declined(&rig, &mut s, &q, 1);
    assert!(!mark.exists(), "the hook ran");
}

#[test]
fn an_editor_named_in_the_person_s_defaults_file_is_never_automatic() {
    let rig = rig();
    person_file(&rig, ".local/state/omarchy/defaults/editor", "fakeeditor\n");
    person_file(&rig, "notes/todo.md", "hi\n");
    let note = rig.env.path("scratch/notes/todo.md");
    let mut s = session(&rig, true);
    s.call(
        1,
        "omarchy_run",
        json!({"route": "launch editor", "args": [note.display().to_string()]}),
    );
    let q = parked(
        &rig,
        &[".local/state/omarchy/defaults/editor", "fakeeditor"],
    );
    declined(&rig, &mut s, &q, 1);
}

#[test]
fn a_person_s_entry_changed_after_the_question_refuses_the_run() {
    let rig = rig();
    browser_entry(&rig, "fakebrowser");
    let mut s = session(&rig, false);
    webapp(&mut s, 1);
    let q = parked(&rig, &["Exec=fakebrowser"]);
    // Between the question and the yes, the agent's shell points the entry elsewhere.
    browser_entry(&rig, "omarchy-system-reboot");
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["approve", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "the changed entry ran: {body}");
    assert!(body.contains("changed"), "{body}");
    let ran = rig.ran();
    assert!(ran.is_empty(), "something ran: {ran:?}");
}

/// Attack 24 F4: with no entry of the person's when archgate looks, the script still reads the
/// person's directory first when it runs — where the agent may write one in between — so even
/// then developer mode does not approve it: the question says so, and the person's yes launches.
#[test]
fn with_no_file_of_the_person_s_the_web_app_still_asks_and_a_yes_launches_it() {
    let rig = rig();
    let mut s = session(&rig, true);
    webapp(&mut s, 1);
    let q = parked(&rig, &["none there now"]);
    let qid = q["id"].as_str().unwrap().to_owned();
    let out = rig.env.run(&["approve", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    let _ = s.response(1);
    let ran = wait_for("the web app's script to run", || {
        let r = rig.ran();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(ran, vec![format!("omarchy-launch-webapp {URL}")]);
    let rec = wait_for("the call's record", || {
        rig.env
            .calls()
            .into_iter()
            .find(|r| r["tool"] == "omarchy_run")
    });
    assert_eq!(rec["approval"]["channel"], "cli", "{rec}");
}

#[test]
fn launch_browser_through_a_person_s_browser_entry_is_never_automatic() {
    let rig = rig();
    browser_entry(&rig, "fakebrowser");
    let mut s = session(&rig, true);
    s.call(
        1,
        "omarchy_run",
        json!({"route": "launch browser", "args": [URL]}),
    );
    let q = parked(&rig, &["chromium.desktop", "Exec=fakebrowser"]);
    declined(&rig, &mut s, &q, 1);
}

#[test]
fn a_terminal_the_person_s_xdg_terminals_list_names_is_never_automatic() {
    let rig = rig();
    // `xdg-terminal-exec` reads `$XDG_CONFIG_HOME/xdg-terminals.list` (the sandbox's config home).
    std::fs::write(
        rig.env.path("config/xdg-terminals.list"),
        "# the person's choice\nfakebrowser.desktop\n",
    )
    .unwrap();
    let mut s = session(&rig, true);
    s.call(1, "omarchy_run", json!({"route": "launch terminal"}));
    let q = parked(&rig, &["xdg-terminals.list", "fakebrowser.desktop"]);
    declined(&rig, &mut s, &q, 1);
}

#[test]
fn a_power_command_picked_by_a_person_s_entry_is_refused() {
    let rig = rig();
    browser_entry(&rig, "reboot");
    let mut s = session(&rig, false);
    webapp(&mut s, 1);
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "{body}");
    assert!(body.contains("power or session command"), "{body}");
    assert!(
        rig.env.pending().is_empty(),
        "the person was asked about it"
    );
    assert!(rig.ran().is_empty(), "something ran");
}

#[test]
fn a_route_that_sources_a_file_of_the_person_s_is_never_automatic() {
    let rig = rig();
    let mark = rig.env.path("scratch/sourced-ran");
    person_file(
        &rig,
        ".config/user-dirs.dirs",
        &format!(
            "XDG_PICTURES_DIR=\"$HOME/Pictures\"\necho sourced >> {}\n",
            mark.display()
        ),
    );
    let mut s = session(&rig, true);
    s.call(1, "omarchy_run", json!({"route": "capture screenshot"}));
    let q = parked(&rig, &[".config/user-dirs.dirs", "sources it"]);
    declined(&rig, &mut s, &q, 1);
    assert!(!mark.exists(), "the sourced file ran");
}

/// Attack 25 F3: a picker reached through a string the script later `eval`s — Omarchy 4's
/// `omarchy-launch-or-focus-webapp` (`LAUNCH_COMMAND="omarchy-launch-webapp $@"`, handed to
/// `omarchy-launch-or-focus`, which `eval`s it) — is seen: the person's entry naming a route's
/// script is refused as for `launch webapp`.
#[test]
fn a_picker_reached_through_a_string_the_script_evals_is_seen() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "system reboot",
                args: "",
            },
            Entry {
                words: "launch or focus webapp",
                args: "<window-pattern> <url-and-flags...>",
            },
        ],
        "",
    );
    rig.set_script("omarchy-launch-webapp", WEBAPP_SCRIPT);
    // Our own text in the shape of Omarchy 4's two scripts.
    rig.set_script(
        "omarchy-launch-or-focus-webapp",
        "WINDOW_PATTERN=\"$1\"\nshift\nLAUNCH_COMMAND=\"omarchy-launch-webapp $@\"\n\
         exec omarchy-launch-or-focus \"$WINDOW_PATTERN\" \"$LAUNCH_COMMAND\"",
    );
    rig.set_script("omarchy-launch-or-focus", "eval exec $2");
    browser_entry(&rig, "omarchy-system-reboot");
    let mut s = session(&rig, true);
    s.call(
        1,
        "omarchy_run",
        json!({"route": "launch or focus webapp", "args": ["Example", URL]}),
    );
    refused_naming_the_entry(&rig, &mut s);
}

/// Attack 25 F1: a route whose script starts a login shell (`bash -lc`, Omarchy 4's
/// `omarchy-system-sleep-monitor`) runs the person's `~/.bash_profile` as its code: never
/// automatic, and the question names the file.
#[test]
fn a_route_that_starts_a_login_shell_is_never_automatic() {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "system sleep monitor",
            args: "",
        }],
        "",
    );
    rig.set_script(
        "omarchy-system-sleep-monitor",
        "exec bash -lc \"echo monitoring\"",
    );
    person_file(&rig, ".bash_profile", "echo agent\n");
    let mut s = session(&rig, true);
    s.call(
        1,
        "omarchy_run",
        json!({"route": "system sleep monitor", "args": []}),
    );
    let q = parked(&rig, &[".bash_profile"]);
    assert_eq!(q["tier"], "destructive", "{q}");
    declined(&rig, &mut s, &q, 1);
}

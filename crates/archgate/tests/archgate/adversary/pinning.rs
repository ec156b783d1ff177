//! What was approved is the file that is used (issue 33, item 9). The attacker acts between the
//! question and the person's yes, against the files the question named:
//!
//! - renames a new script over the approved program's path — the yes must not run the new one;
//! - rewrites the approved script in place — the same;
//! - swaps the image a `background set` question named for a symbolic link to archgate's own
//!   token — the background program must never receive a path that now leads to the token;
//! - does the same to the file a shell IPC method's `path` parameter names (`shell_call`), and
//!   names a private key there outright (which no path argument may reach);
//! - names a hard link to the token, a file outside archgate's directories that is the token.
//!
//! Each refusal is typed (`changed_since_approval`), says which file changed, and nothing of
//! the attacker's runs. The programs are real scripts in a bin directory the test creates (the
//! `[exec] search_dirs`); `omarchy` answers the registry from a fixture in Omarchy 4's
//! `omarchy commands --all --json` shape, with our own routes and summaries.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

struct Rig {
    env: Env,
    bin: PathBuf,
    /// Where the scripts write what they did.
    log: PathBuf,
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn rig() -> Rig {
    let env0 = Env::new();
    let scratch = env0.path("scratch");
    let bin = scratch.join("bin");
    let log = scratch.join("log");
    let omarchy = scratch.join("omarchy");
    let fixtures = scratch.join("fixtures");
    for d in [&bin, &log, &omarchy, &fixtures] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
    std::fs::write(
        fixtures.join("commands.json"),
        r#"{"ok": true, "commands": [
  {"route": "omarchy font list", "binary": "omarchy-font-list", "group": "font", "name": "list", "summary": "List fonts", "requires_sudo": false, "hidden": false, "args": "", "examples": [], "aliases": [], "filename_route": "omarchy font list", "routes": ["omarchy font list"]},
  {"route": "omarchy theme bg set", "binary": "omarchy-theme-bg-set", "group": "theme", "name": "bg set", "summary": "Set the background image", "requires_sudo": false, "hidden": false, "args": "<path-to-image>", "examples": [], "aliases": [], "filename_route": "omarchy theme bg set", "routes": ["omarchy theme bg set"]}
]}"#,
    )
    .unwrap();
    script(
        &bin.join("omarchy"),
        &format!(
            "case \"$1\" in\n  version) echo 4.0.0 ;;\n  commands) cat '{}' ;;\nesac\n",
            fixtures.join("commands.json").display()
        ),
    );
    script(
        &bin.join("omarchy-font-list"),
        &format!("echo approved > '{}/font-list'\n", log.display()),
    );
    // The background program reads the image it is given, as Omarchy's follows it with realpath.
    script(
        &bin.join("omarchy-theme-bg-set"),
        &format!("cat \"$1\" > '{}/bg-read'\n", log.display()),
    );
    // Quickshell's IPC, as `qs ipc show` lists it (our own target), with a method that takes a path.
    script(
        &bin.join("qs"),
        &format!(
            "case \"$1 $2\" in\n  \"ipc show\") printf 'target background\\n  function set(path: string): void\\n' ;;\n  \"ipc call\") for a; do last=$a; done; cat \"$last\" > '{}/qs-read' ;;\nesac\n",
            log.display()
        ),
    );
    env0.write_config(&format!(
        "[approval]\npage = false\nnotifications = false\ntimeout_s = 60\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\ntimeout_s = 10\n\
         [policy]\nask = [\"omarchy_run font list\", \"background\", \"omarchy_run theme bg set\", \"shell_call\"]\n",
        bin.display()
    ));
    let mut env = env0;
    env.vars
        .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
    env.vars
        .push(("WAYLAND_DISPLAY".into(), "wayland-test".into()));
    Rig { env, bin, log }
}

/// Parks `tool` with `args` in a stdio session, lets `attack` act while the question waits,
/// answers yes with `archgate approve`, and returns the call's response and its record.
fn approve_after(
    rig: &Rig,
    tool: &str,
    args: Value,
    attack: impl FnOnce(),
) -> ((bool, String), Value) {
    let mut s = StdioServer::session(&rig.env);
    s.call(1, tool, args);
    let id = rig.env.one_pending()["id"].as_str().unwrap().to_owned();
    attack();
    let out = rig.env.run(&["approve", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let answer = result_text(&s.response(1));
    (answer, rig.env.audit_of(&id))
}

fn refused_as_changed(answer: &(bool, String), rec: &Value, file: &Path) {
    let (ok, body) = answer;
    assert!(!ok, "the changed file was used: {body}");
    assert!(body.contains("changed_since_approval"), "{body}");
    assert!(body.contains(&file.display().to_string()), "{body}");
    assert_eq!(rec["error_kind"], "changed_since_approval", "{rec}");
}

#[test]
fn a_script_renamed_over_the_approved_program_does_not_run_after_the_yes() {
    let rig = rig();
    let prog = rig.bin.join("omarchy-font-list");
    let (answer, rec) = approve_after(&rig, "omarchy_run", json!({"route": "font list"}), || {
        let new = rig.bin.join(".omarchy-font-list.new");
        script(
            &new,
            &format!("echo swapped > '{}/font-list'\n", rig.log.display()),
        );
        std::fs::rename(&new, &prog).unwrap();
    });
    refused_as_changed(&answer, &rec, &prog);
    assert!(
        !rig.log.join("font-list").exists(),
        "a program ran after its file changed"
    );
}

#[test]
fn a_script_rewritten_in_place_does_not_run_after_the_yes() {
    let rig = rig();
    let prog = rig.bin.join("omarchy-font-list");
    let (answer, rec) = approve_after(&rig, "omarchy_run", json!({"route": "font list"}), || {
        // Same inode, same length, another content.
        let old = std::fs::read_to_string(&prog).unwrap();
        let new = old.replace("approved", "swapped!");
        assert_eq!(old.len(), new.len());
        std::fs::write(&prog, new).unwrap();
    });
    refused_as_changed(&answer, &rec, &prog);
    assert!(!rig.log.join("font-list").exists());
}

#[test]
fn an_unchanged_program_still_runs_after_the_yes() {
    let rig = rig();
    let (answer, rec) = approve_after(&rig, "omarchy_run", json!({"route": "font list"}), || {});
    assert!(answer.0, "{}", answer.1);
    assert_eq!(rec["outcome"], "ok", "{rec}");
    assert_eq!(
        std::fs::read_to_string(rig.log.join("font-list")).unwrap(),
        "approved\n"
    );
}

#[test]
fn a_background_image_swapped_for_a_link_to_the_token_is_refused_at_the_yes() {
    let rig = rig();
    let pics = rig.env.path("scratch/Pictures");
    std::fs::create_dir_all(&pics).unwrap();
    let image = pics.join("wall.png");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\nnot really an image").unwrap();
    // The token exists before the question (the stdio session wrote it).
    let (answer, rec) = approve_after(
        &rig,
        "background",
        json!({"action": "set", "path": image.display().to_string()}),
        || {
            let token = rig.env.state_dir().join("token");
            assert!(token.exists());
            std::fs::remove_file(&image).unwrap();
            std::os::unix::fs::symlink(&token, &image).unwrap();
        },
    );
    refused_as_changed(&answer, &rec, &image);
    let read = std::fs::read(rig.log.join("bg-read")).unwrap_or_default();
    assert!(
        read.is_empty(),
        "the background program read {} bytes through the swapped path",
        read.len()
    );
}

#[test]
fn a_background_image_rewritten_after_the_question_is_refused() {
    let rig = rig();
    let image = rig.env.path("scratch/wall.png");
    std::fs::write(&image, b"the image the person saw").unwrap();
    let (answer, rec) = approve_after(
        &rig,
        "background",
        json!({"action": "set", "path": image.display().to_string()}),
        || std::fs::write(&image, b"another image, same name!").unwrap(),
    );
    refused_as_changed(&answer, &rec, &image);
    assert!(!rig.log.join("bg-read").exists());
}

#[test]
fn an_unchanged_background_image_is_set_after_the_yes() {
    let rig = rig();
    let image = rig.env.path("scratch/wall.png");
    std::fs::write(&image, b"the image the person saw").unwrap();
    let (answer, _) = approve_after(
        &rig,
        "background",
        json!({"action": "set", "path": image.display().to_string()}),
        || {},
    );
    assert!(answer.0, "{}", answer.1);
    assert_eq!(
        std::fs::read(rig.log.join("bg-read")).unwrap(),
        b"the image the person saw"
    );
}

#[test]
fn a_shell_call_path_parameter_naming_a_key_is_refused_before_anyone_is_asked() {
    let rig = rig();
    // HOME is the scratch directory: a private key where the person keeps theirs.
    let ssh = rig.env.path("scratch/.ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = ssh.join("id_ed25519");
    std::fs::write(&key, b"not really a key").unwrap();
    let (result, _) = rig.env.call(
        "shell_call",
        &json!({"target": "background", "method": "set", "args": [key.display().to_string()]}),
    );
    let (ok, body) = result_text(&json!({ "result": result }));
    assert!(!ok, "{body}");
    assert!(body.contains("protected_path"), "{body}");
    assert!(rig.env.pending().is_empty());
    assert!(!rig.log.join("qs-read").exists());
}

#[test]
fn a_shell_call_file_swapped_for_a_link_to_the_token_is_refused_at_the_yes() {
    let rig = rig();
    let image = rig.env.path("scratch/wall.png");
    std::fs::write(&image, b"the image the person saw").unwrap();
    let (answer, rec) = approve_after(
        &rig,
        "shell_call",
        json!({"target": "background", "method": "set", "args": [image.display().to_string()]}),
        || {
            std::fs::remove_file(&image).unwrap();
            std::os::unix::fs::symlink(rig.env.state_dir().join("token"), &image).unwrap();
        },
    );
    refused_as_changed(&answer, &rec, &image);
    assert!(!rig.log.join("qs-read").exists());
}

#[test]
fn an_unchanged_shell_call_file_reaches_the_shell_after_the_yes() {
    let rig = rig();
    let image = rig.env.path("scratch/wall.png");
    std::fs::write(&image, b"the image the person saw").unwrap();
    let (answer, _) = approve_after(
        &rig,
        "shell_call",
        json!({"target": "background", "method": "set", "args": [image.display().to_string()]}),
        || {},
    );
    assert!(answer.0, "{}", answer.1);
    assert_eq!(
        std::fs::read(rig.log.join("qs-read")).unwrap(),
        b"the image the person saw"
    );
}

#[test]
fn a_hard_link_to_the_token_is_refused_as_the_token() {
    let rig = rig();
    let mut s = StdioServer::session(&rig.env);
    let token = rig.env.state_dir().join("token");
    assert!(token.exists());
    let image = rig.env.path("scratch/wall.png");
    std::fs::hard_link(&token, &image).unwrap();
    for (id, tool, args) in [
        (
            1,
            "background",
            json!({"action": "set", "path": image.display().to_string()}),
        ),
        (
            2,
            "shell_call",
            json!({"target": "background", "method": "set", "args": [image.display().to_string()]}),
        ),
    ] {
        s.call(id, tool, args);
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "{tool}: {body}");
        assert!(body.contains("protected_path"), "{tool}: {body}");
        assert!(body.contains("hard link"), "{tool}: {body}");
    }
    assert!(rig.env.pending().is_empty());
    assert!(!rig.log.join("bg-read").exists());
    assert!(!rig.log.join("qs-read").exists());
}

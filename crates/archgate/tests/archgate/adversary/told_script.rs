//! Class: *the helper's decision about what runs taken from the same-uid process it stopped
//! trusting* (attack 9 F1). The helper rebuilt the operations of the closed set itself (attack 8
//! F1, F2) but ran a route's `script` as the archgate on the other end sent it: the agent's own
//! archgate (the terminal's ancestor, or one it preloaded) sent `/usr/bin/bash -c …` as a
//! "route script", with its own environment and no program for sudo to be asked about, and it
//! ran after the person's Enter and password.
//!
//! What it tries, against the real binary: a stand-in daemon that is the helper's ancestor (this
//! test process: it binds `control.sock` and starts `archgate handoff-run ID` itself) answers the
//! claim with a route hand-off whose script is `/usr/bin/bash -c 'touch PROOF'`. The helper must
//! refuse before any question, say why, and run nothing.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;

use crate::support::{Env, text};

#[test]
fn a_route_script_told_by_the_other_end_is_judged_by_the_helper_and_bash_never_runs() {
    let env = Env::new();
    let dir = env.runtime_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let proof = env.path("scratch/PROOF");
    let listener = UnixListener::bind(dir.join("control.sock")).unwrap();
    let id = "0123456789abcdef0123456789abcdef";
    let handoff = serde_json::json!({
        "id": id,
        "argv": ["/usr/bin/bash", "-c", format!("touch {}", proof.display())],
        "reason": "the person asked",
        "changes": "installs handoff-hello 1.0-1; nothing is removed",
        "route": "handoff install",
        "client": "local",
        "lock": null,
        "log_file": null,
        "script": {"sha256": "0".repeat(64), "env": [["OMARCHY_PATH", "/usr"]], "files": [],
                   "sudo_programs": []}
    });
    let stand_in = std::thread::spawn(move || {
        let (conn, _) = listener.accept().unwrap();
        let mut w = conn.try_clone().unwrap();
        let mut lines = BufReader::new(conn).lines();
        let mut heard = Vec::new();
        while let Some(Ok(line)) = lines.next() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            let answer = if v["op"] == "handoff_claim" {
                serde_json::json!({"ok": true, "handoff": handoff})
            } else {
                serde_json::json!({"ok": true})
            };
            heard.push(v);
            if writeln!(w, "{answer}").is_err() {
                break;
            }
        }
        heard
    });
    let out = env
        .command(&["handoff-run", id])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let said = text(&out);
    let heard = stand_in.join().unwrap();
    assert!(!out.status.success(), "{said}");
    assert!(!proof.exists(), "bash ran: {said}");
    assert!(said.contains("not an Omarchy script"), "{said}");
    assert!(!said.contains("Press Enter to run"), "asked: {said}");
    // Told how it ended: refused, never started.
    assert!(heard.iter().all(|v| v["op"] != "started"), "{heard:?}");
    let done = heard
        .iter()
        .find(|v| v["op"] == "done")
        .expect("no end told");
    assert_eq!(done["outcome"]["outcome"], "refused", "{done}");
}

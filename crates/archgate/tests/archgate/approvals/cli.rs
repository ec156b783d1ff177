//! `archgate approvals`, `approve`, `deny`, `dev-mode`, `rules` against a parked call.

#![allow(clippy::disallowed_methods)]

use serde_json::json;
use std::process::Command;

use crate::support::{Env, StdioServer, mode, result_text, text, wait_for};

/// `system_status` is a read tool; asking for it makes it park without needing an act tool.
const ASK: &str = "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = false\n";

#[test]
fn approve_runs_the_call_and_deny_refuses_it() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);

    s.call(1, "system_status", json!({}));
    let q = env.one_pending();
    assert_eq!(q["tool"], "system_status");
    assert_eq!(q["client"], "local");
    assert_eq!(q["summary"], "system_status");
    let id = q["id"].as_str().unwrap().to_owned();
    let listed = env.run(&["approvals"]);
    assert!(text(&listed).contains(&id), "{}", text(&listed));

    let out = env.run(&["approve", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "approved call failed: {body}");
    assert!(body.contains("cpus"), "{body}");
    // Answered once: a second answer finds nothing.
    let again = env.run(&["deny", &id]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "ok");
    assert_eq!(rec["approval"]["outcome"], "accepted");
    assert_eq!(rec["approval"]["channel"], "cli");

    s.call(2, "system_status", json!({}));
    let id2 = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert_ne!(id, id2);
    let out = env.run(&["deny", &id2]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(2));
    assert!(!ok);
    assert!(body.starts_with("declined"), "{body}");
    let rec = env.audit_of(&id2);
    assert_eq!(rec["outcome"], "declined");
    assert_eq!(rec["approval"]["channel"], "cli");
    assert!(env.pending().is_empty());
}

#[test]
fn always_creates_a_rule_that_approves_the_identical_call_until_revoked() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let out = env.run(&["approve", &id, "--always"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(result_text(&s.response(1)).0);
    let rule_id = env.audit_of(&id)["approval"]["rule_id"]
        .as_str()
        .expect("rule id in the audit")
        .to_owned();

    let listed = env.run(&["rules", "list"]);
    assert!(text(&listed).contains(&rule_id), "{}", text(&listed));
    // The rule file is the person's: 0600.
    assert_eq!(
        mode(&env.root.path().join("state/archgate/standing-rules.json")),
        0o600
    );

    // The identical call runs without a question, audited with the rule's id.
    s.call(2, "system_status", json!({}));
    assert!(result_text(&s.response(2)).0);
    // The writer thread appends the record a moment after the answer: wait for it.
    let recs = wait_for("the second record", || {
        let recs = env.audit();
        let calls = recs.iter().filter(|r| r["tool"] == "system_status").count();
        (calls >= 2).then_some(recs)
    });
    let last = recs
        .iter()
        .rev()
        .find(|r| r["tool"] == "system_status")
        .unwrap();
    assert_eq!(last["approval"]["channel"], "standing_rule");
    assert_eq!(last["approval"]["rule_id"], rule_id.as_str());

    let out = env.run(&["rules", "revoke-all"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&env.run(&["rules", "list"])).contains("no standing rules"));
    // Revoked: it asks again.
    s.call(3, "system_status", json!({}));
    let id3 = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["deny", &id3]).status.success());
    assert!(!result_text(&s.response(3)).0);
    // The person's changes are audited as events.
    assert!(
        env.audit()
            .iter()
            .any(|e| e["event"] == "standing_rules_revoked_all" && e["channel"] == "cli")
    );
}

#[test]
fn an_answer_after_the_deadline_does_nothing() {
    let env = Env::with_config(
        "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 5\npage_port = 0\nnotifications = false\n",
    );
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok);
    assert!(body.starts_with("timed_out"), "{body}");
    let out = env.run(&["approve", &id]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let recs: Vec<_> = env
        .calls()
        .into_iter()
        .filter(|r| r["id"] == id.as_str())
        .collect();
    assert_eq!(recs.len(), 1, "one record per call: {recs:?}");
    assert_eq!(recs[0]["outcome"], "timed_out");
    assert_eq!(recs[0]["approval"]["outcome"], "timed_out");
}

#[test]
fn a_client_gone_while_parked_is_unreachable_and_nothing_runs() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    s.hang_up();
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "unreachable");
    assert_eq!(rec["approval"]["outcome"], "unreachable");
    // Withdrawn: an approval now finds nothing, and the call never runs.
    let out = env.run(&["approve", &id]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    s.close();
    let recs: Vec<_> = env
        .calls()
        .into_iter()
        .filter(|r| r["id"] == id.as_str())
        .collect();
    assert_eq!(recs.len(), 1, "{recs:?}");
}

#[test]
fn developer_mode_approves_and_is_bounded_to_eight_hours() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    let out = env.run(&["dev-mode", "on", "--for", "9h"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&env.run(&["dev-mode", "status"])).contains("ON"));
    s.call(1, "system_status", json!({}));
    assert!(result_text(&s.response(1)).0);
    let recs = env.audit();
    let rec = recs
        .iter()
        .rev()
        .find(|r| r["tool"] == "system_status")
        .unwrap();
    assert_eq!(rec["dev_mode"], true);
    assert_eq!(rec["approval"]["channel"], "developer_mode");
    assert!(env.run(&["dev-mode", "off"]).status.success());
    assert!(text(&env.run(&["dev-mode", "status"])).contains("off"));
}

#[test]
fn the_control_socket_is_private_and_refuses_another_user() {
    let env = Env::with_config(ASK);
    let _s = StdioServer::session(&env);
    let sock = env.runtime_dir().join("control.sock");
    assert_eq!(mode(&sock), 0o600);
    assert_eq!(mode(&env.runtime_dir()), 0o700);

    // Open the way for `nobody` to reach the socket at all, so that only the peer-credential
    // check stands between it and the answers. Only root can run a client as `nobody`.
    if !nix::unistd::geteuid().is_root() {
        return eprintln!("skipped: needs root (a client as `nobody`); the modes were checked");
    }
    use std::os::unix::fs::PermissionsExt;
    for d in [
        env.root.path().to_path_buf(),
        env.root.path().join("runtime"),
        env.runtime_dir(),
    ] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o666)).unwrap();

    let client = r#"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"op":"pending"}\n')
except BrokenPipeError:
    pass  # refused before the request was read; the refusal is still there to read
print(s.makefile().readline().strip())
"#;
    let ask = |as_nobody: bool| {
        let mut c = if as_nobody {
            let mut c = Command::new("setpriv");
            c.args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "/usr/bin/python3",
            ]);
            c
        } else {
            Command::new("/usr/bin/python3")
        };
        let out = c.args(["-c", client]).arg(&sock).output().expect("python3");
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("a JSON reply")
    };
    let theirs = ask(true);
    assert_eq!(theirs["ok"], false, "{theirs}");
    assert_eq!(theirs["error"], "refused", "{theirs}");
    assert!(theirs.get("pending").is_none());
    let mine = ask(false);
    assert_eq!(mine["ok"], true, "{mine}");
}

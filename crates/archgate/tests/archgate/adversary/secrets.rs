//! Class: "secrets stay out of read-only answers" — an argument that makes a read tool show
//! what may hold another program's secrets turns the call into `act`, so the person is asked
//! (issue 33: `processes {"cmdline": true}` was `read` — every user's command lines, a password
//! given as an argument included, without a question, while `clipboard_read` asks).
//!
//! What it tries, against the real binary: a process holds a secret in its command line; an
//! agent asks `processes` for its command line. The call must park as a question that says
//! command lines will be read; after the person's no the secret is in no answer and no log.
//! Without `cmdline`, the same tool still answers at once (the honest path).

use serde_json::json;
use std::process::Command;

use crate::support::{Env, StdioServer, result_text, text};

#[test]
fn command_lines_are_read_only_after_the_person_says_yes() {
    let secret = "archgate-adversary-secret-5e1d";
    let mut child = Command::new("/bin/sh")
        .args(["-c", "sleep 60", secret])
        .spawn()
        .unwrap();
    let pid = child.id();
    // One archgate per shape of the call: a no makes the nag guard hold the next question back.
    for (n, args) in [
        json!({"pid": pid, "cmdline": true}),
        json!({"limit": 100, "cmdline": true}),
    ]
    .into_iter()
    .enumerate()
    {
        let env = Env::with_config(
            "[approval]\ntimeout_s = 60\npage = false\nnotifications = false\npresence = \"off\"\n",
        );
        let mut s = StdioServer::session(&env);
        if n == 0 {
            // The honest path: the process without its command line answers without a question.
            s.call(1, "processes", json!({"pid": pid}));
            let (ok, body) = result_text(&s.response(1));
            assert!(ok, "{body}");
            assert!(!body.contains(secret), "{body}");
        }
        s.call(2, "processes", args.clone());
        let q = env.one_pending();
        assert_eq!(q["tier"], "act", "{args}: {q}");
        assert!(
            q["summary"]
                .as_str()
                .is_some_and(|t| t.contains("command lines")),
            "the question must say command lines will be read: {q}"
        );
        let qid = q["id"].as_str().unwrap().to_owned();
        let out = env.run(&["deny", &qid]);
        assert!(out.status.success(), "{}", text(&out));
        let (ok, body) = result_text(&s.response(2));
        assert!(!ok, "{args}: a declined call answered: {body}");
        assert!(!body.contains(secret), "{args}: the secret was answered");
        s.close();
        let log = std::fs::read_to_string(env.audit_file()).unwrap();
        assert!(!log.contains(secret), "a command line reached the log");
    }
    let _ = child.kill();
    let _ = child.wait();
}

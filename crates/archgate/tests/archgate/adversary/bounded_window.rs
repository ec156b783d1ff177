//! Absence from a bounded window of evidence read as evidence of absence (attack 10, F2). What
//! it tries, against the real binary: a bridged agent's approved program runs (its `started`
//! line is in the log); more than a MiB of other records is then appended to the log (the agent's
//! own calls do it in seconds, within its budgets; here the lines are appended directly, as any
//! writer of the log could); the daemon is killed. The bridge used to search only the log's last
//! MiB, find no `started` line, and tell the agent the running call "did not run" (so it calls
//! again: the change happens twice), with a bare `unreachable` record. Now the bridge reads
//! everything written since it sent the call (`orphans::read_since`), finds the `started` line,
//! answers **unknown** and writes the call's one record under the daemon's id.

use crate::support::*;
use serde_json::{Value, json};
use std::io::Write;

const CONFIG: &str = "[approval]\npage = false\nnotifications = false\n\
    [policy]\nallow = [\"omarchy_run toggle nightlight\"]\n\
    [exec]\nrequire_root_owned = false\n";

struct Reaper(i32);
impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// About `bytes` of records of other calls, in the shape the log's records have.
fn flood(env: &Env, bytes: usize) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.audit_file())
        .unwrap();
    let filler = "x".repeat(4000);
    let mut written = 0;
    let mut n = 0;
    while written < bytes {
        let line = json!({
            "time": "2026-01-01T00:00:00Z", "id": format!("flood-{n}"), "client": "default",
            "transport": "http", "tool": "no_such_tool", "outcome": "refused",
            "reason": filler, "args_sha256": "0", "duration_ms": 0
        })
        .to_string()
            + "\n";
        f.write_all(line.as_bytes()).unwrap();
        written += line.len();
        n += 1;
    }
}

#[test]
fn a_running_call_pushed_out_of_the_logs_last_mib_is_unknown_not_did_not_run() {
    let mut env = Env::with_config(CONFIG);
    let marks = omarchy_with_route(&mut env, |m| {
        format!("#!/bin/sh\necho $$ > {m}/running\nexec sleep 300\n")
    });
    let mut server = HttpServer::start(&env);
    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.call(2, "omarchy_run", json!({"route": "toggle nightlight"}));
    let pid: i32 = wait_for("the approved program to run", || {
        std::fs::read_to_string(marks.join("running"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    });
    let _reaper = Reaper(pid);
    let started: Vec<Value> = env
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "started")
        .collect();
    assert_eq!(started.len(), 1, "{started:?}");

    flood(&env, 1_200_000);
    assert!(
        !env.audit_file().with_extension("jsonl.1").exists(),
        "not rotated: the started line is only out of the last MiB"
    );
    server.child.kill().unwrap();
    let _ = server.child.wait();

    let answer = c.response(2);
    let text = answer.to_string();
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["kind"], "unknown",
        "the program was running: the agent must not hear `did not run`: {text}"
    );
    assert!(!text.contains("did not run"), "{text}");
    let recs = wait_for("the call's record", || {
        let r: Vec<Value> = env
            .audit()
            .into_iter()
            .filter(|r| r["tool"] == "omarchy_run" && r.get("event").is_none())
            .collect();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["outcome"], "unknown", "{}", recs[0]);
    assert_eq!(recs[0]["id"], started[0]["id"], "under the daemon's id");
    assert!(
        recs[0]["route"]
            .as_str()
            .is_some_and(|r| r.contains("nightlight")),
        "{}",
        recs[0]
    );
}

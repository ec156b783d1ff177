//! Issue 33, item 6 — the class "an outcome archgate did not see is said as unknown". The attack:
//! `kill -9` of the daemon while an approved program runs. Before, the program ran on (its own
//! process group), the agent was told the call "did not run", and the only record was the
//! bridge's `unreachable` without route, decision or approval. Now the gate writes the call's
//! `started` line before the program starts; the bridge answers **unknown** with how to check
//! and writes the call's one record (`unknown`, the daemon's id, route and approval); a daemon
//! started afterwards finds nothing left to record; and an HTTP client's call, which no bridge
//! watches, is recorded `unknown` by the next daemon.

use crate::support::*;
use serde_json::{Value, json};
use std::time::Duration;

const CONFIG: &str = "[approval]\npage = false\nnotifications = false\n\
    [policy]\nallow = [\"omarchy_run toggle nightlight\"]\n\
    [exec]\nrequire_root_owned = false\n";

/// The route's program: says it started (its pid), then runs for five minutes.
fn long_route(env: &mut Env) -> std::path::PathBuf {
    omarchy_with_route(env, |m| {
        format!("#!/bin/sh\necho $$ > {m}/running\nexec sleep 300\n")
    })
}

/// Waits for the route's program and returns its pid; the caller kills it when done.
fn running(marks: &std::path::Path) -> i32 {
    wait_for("the approved program to run", || {
        std::fs::read_to_string(marks.join("running"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    })
}

struct Reaper(i32);
impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

fn records_of(env: &Env, tool: &str) -> Vec<Value> {
    env.audit()
        .into_iter()
        .filter(|r| r["tool"] == tool && r.get("event").is_none())
        .collect()
}

fn started_lines(env: &Env) -> Vec<Value> {
    env.audit()
        .into_iter()
        .filter(|r| r["event"] == "started")
        .collect()
}

#[test]
fn a_daemon_killed_while_an_approved_program_runs_is_unknown_to_the_agent_and_in_the_log() {
    let mut env = Env::with_config(CONFIG);
    let marks = long_route(&mut env);
    let mut server = HttpServer::start(&env);
    let daemon = server.pid();
    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.call(2, "omarchy_run", json!({"route": "toggle nightlight"}));
    let _reaper = Reaper(running(&marks));
    // The start was on disk before the program ran.
    let started = started_lines(&env);
    assert_eq!(started.len(), 1, "{started:?}");
    assert!(
        started[0]["id"]
            .as_str()
            .unwrap()
            .contains(&format!("-{daemon}-")),
        "{}",
        started[0]
    );

    server.child.kill().unwrap();
    let _ = server.child.wait();
    let answer = c.response(2);
    let text = answer.to_string();
    assert_eq!(answer["result"]["isError"], true, "{text}");
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["kind"], "unknown",
        "the program was running: the agent must not hear `did not run`: {text}"
    );
    assert!(!text.contains("did not run"), "{text}");

    let recs = wait_for("the call's record", || {
        let r = records_of(&env, "omarchy_run");
        (!r.is_empty()).then_some(r)
    });
    std::thread::sleep(Duration::from_millis(300));
    let recs_now = records_of(&env, "omarchy_run");
    assert_eq!(recs_now.len(), 1, "{recs_now:?}");
    let r = &recs[0];
    assert_eq!(r["outcome"], "unknown", "{r}");
    assert_eq!(
        r["id"], started[0]["id"],
        "the daemon's call id, not a new one"
    );
    assert!(r["route"].as_str().unwrap().contains("nightlight"), "{r}");
    assert_eq!(r["tier"], "act", "{r}");
    assert_eq!(r["decision"], "allow", "{r}");

    // The next daemon finds the call recorded and writes nothing more.
    let mut again = HttpServer::start(&env);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(records_of(&env, "omarchy_run").len(), 1);
    assert!(again.stop().0.success());
}

#[test]
fn an_http_call_killed_mid_run_is_recorded_unknown_by_the_next_daemon_once() {
    let mut env = Env::with_config(CONFIG);
    let marks = long_route(&mut env);
    let mut server = HttpServer::start(&env);
    let token = env.token();
    let port = server.port;
    let caller = std::thread::spawn(move || {
        // The answer never comes: the daemon is killed under it.
        let _ = std::panic::catch_unwind(|| {
            call_request(
                &token,
                "omarchy_run",
                json!({"route": "toggle nightlight"}),
                1,
            )
            .send(port)
        });
    });
    let _reaper = Reaper(running(&marks));
    server.child.kill().unwrap();
    let _ = server.child.wait();
    let _ = caller.join();
    assert!(
        records_of(&env, "omarchy_run").is_empty(),
        "nobody recorded it yet"
    );
    let id = started_lines(&env)[0]["id"].clone();

    let mut next = HttpServer::start(&env);
    let recs = records_of(&env, "omarchy_run");
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["outcome"], "unknown");
    assert_eq!(recs[0]["id"], id);
    assert!(
        recs[0]["reason"].as_str().unwrap().contains("may have run"),
        "{}",
        recs[0]
    );
    assert!(next.stop().0.success());
    // A third start: still one record.
    let mut third = HttpServer::start(&env);
    assert_eq!(records_of(&env, "omarchy_run").len(), 1);
    assert!(third.stop().0.success());
}

/// The attack (fresh eyes, finding 2a): the agent sends a call whose program runs, then the same
/// call again, which ends `ok`; the daemon is killed. The log names calls by tool and arguments,
/// so the second call's record once made the bridge tell the first "nothing had started" while
/// its program ran on. Now it is told unknown, and its `started` line gets its record.
#[test]
fn an_identical_call_that_ended_does_not_make_a_running_one_did_not_run() {
    let mut env = Env::with_config(CONFIG);
    // The first run keeps running; any later run of the same route ends at once.
    let marks = omarchy_with_route(&mut env, |m| {
        format!(
            "#!/bin/sh
[ -e {m}/running ] && exit 0
echo $$ > {m}/running
exec sleep 300
"
        )
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
    let _reaper = Reaper(running(&marks));
    let again = c.request(
        3,
        "tools/call",
        json!({"name": "omarchy_run", "arguments": {"route": "toggle nightlight"}}),
    );
    assert_ne!(again["result"]["isError"], true, "{again}");
    server.child.kill().unwrap();
    let _ = server.child.wait();
    let answer = c.response(2);
    let text = answer.to_string();
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["kind"], "unknown",
        "its program still runs: {text}"
    );
    let recs = wait_for("the running call's record", || {
        let r = records_of(&env, "omarchy_run");
        (r.len() >= 2).then_some(r)
    });
    assert!(
        recs.iter().any(|r| r["outcome"] == "unknown"),
        "the started call is recorded unknown at once: {recs:?}"
    );
}

//! Class: *work that acts is stopped midway by the agent* (attack 15 F3). `tasks/cancel` lets
//! started act work run to its end; a plain `tools/call` did not: the client's
//! `notifications/cancelled`, or its bridge going away, dropped the call and SIGKILLed the
//! approved program's group wherever the agent chose, leaving a state no approved call makes.
//! Tried here with a route the person allowed whose script marks START, waits, then marks END:
//! once START is written the agent cancels (in-process stdio), leaves (stdin closed) or closes
//! its bridge (daemon);
//! the script still writes END and the call's one record says `ok`, never `unknown`.

use serde_json::{Value, json};
use std::path::PathBuf;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{Env, HttpServer, StdioServer, wait_for};

fn rig() -> (OmarchyRig, PathBuf) {
    rig_sleeping(1)
}

/// The route's script sleeps `secs` between its marks.
fn rig_sleeping(secs: u32) -> (OmarchyRig, PathBuf) {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "toggle nightlight",
            args: "",
        }],
        "[policy]\nallow = [\"omarchy_run toggle nightlight\"]\n",
    );
    let marks = rig.env.path("scratch/marks");
    rig.set_script(
        "omarchy-toggle-nightlight",
        &format!(
            "echo START >> {m}\nsleep {secs}\necho END >> {m}",
            m = marks.display()
        ),
    );
    (rig, marks)
}

fn marks(p: &PathBuf) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn the_record(env: &Env) -> Value {
    wait_for("the call's record", || {
        env.audit()
            .into_iter()
            .find(|r| r["tool"] == "omarchy_run" && r.get("event").is_none())
    })
}

fn init(c: &mut StdioServer) {
    init_with(c, json!({}));
}

fn init_with(c: &mut StdioServer, capabilities: Value) {
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

#[test]
fn a_cancelled_request_does_not_stop_started_act_work_midway() {
    let (rig, m) = rig();
    let mut s = StdioServer::session(&rig.env);
    s.call(5, "omarchy_run", json!({"route": "toggle nightlight"}));
    wait_for("the program to start", || {
        marks(&m).contains("START").then_some(())
    });
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 5, "reason": "the agent chose to stop here"}}),
    );
    wait_for("the program to end", || {
        marks(&m).contains("END").then_some(())
    });
    let rec = the_record(&rig.env);
    assert_eq!(rec["outcome"], "ok", "{rec}");
    drop(s);
}

/// An in-process stdio server whose client leaves (stdin closed) waits for started act work
/// before it exits, rather than ending it with the process.
#[test]
fn an_in_process_stdio_server_whose_client_leaves_lets_started_act_work_end() {
    // Longer than the few seconds rmcp lets a request drain after its client left.
    let (rig, m) = rig_sleeping(8);
    let mut s = StdioServer::session(&rig.env);
    s.call(5, "omarchy_run", json!({"route": "toggle nightlight"}));
    wait_for("the program to start", || {
        marks(&m).contains("START").then_some(())
    });
    let (status, _) = s.close();
    assert!(status.success(), "{status:?}");
    wait_for("the program to end", || {
        marks(&m).contains("END").then_some(())
    });
    let rec = the_record(&rig.env);
    assert_eq!(rec["outcome"], "ok", "{rec}");
    assert_eq!(rec["transport"], "stdio", "{rec}");
}

/// The same for a client that declared MCP tasks, whose call answers inline (it never had to
/// wait): its request's cancel came before any task handle, where the task path used to abort.
#[test]
fn a_cancelled_inline_call_of_a_tasks_client_does_not_stop_started_act_work_midway() {
    let (rig, m) = rig();
    let mut s = StdioServer::start(&rig.env);
    init_with(
        &mut s,
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    s.call(5, "omarchy_run", json!({"route": "toggle nightlight"}));
    wait_for("the program to start", || {
        marks(&m).contains("START").then_some(())
    });
    s.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 5}}),
    );
    wait_for("the program to end", || {
        marks(&m).contains("END").then_some(())
    });
    let rec = the_record(&rig.env);
    assert_eq!(rec["outcome"], "ok", "{rec}");
    drop(s);
}

#[test]
fn a_bridged_client_gone_mid_run_does_not_stop_started_act_work_midway() {
    let (rig, m) = rig();
    let _daemon = HttpServer::start(&rig.env);
    let mut b = StdioServer::start_with(&rig.env, &["serve", "--client", "cursor"]);
    init(&mut b);
    b.call(5, "omarchy_run", json!({"route": "toggle nightlight"}));
    wait_for("the program to start", || {
        marks(&m).contains("START").then_some(())
    });
    b.close();
    wait_for("the program to end", || {
        marks(&m).contains("END").then_some(())
    });
    let rec = the_record(&rig.env);
    assert_eq!(rec["outcome"], "ok", "{rec}");
    assert_eq!(rec["transport"], "bridge", "{rec}");
}

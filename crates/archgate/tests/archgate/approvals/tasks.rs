//! MCP tasks (SEP-2663) with the real daemon over stateless HTTP: a call that waits for the
//! person is a task for a client that declares `io.modelcontextprotocol/tasks`, polled with
//! `tasks/get`, answered with `archgate approve`, withdrawn with `tasks/cancel`; tasks belong
//! to their client and are bounded; a client without tasks waits inline as before.

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};
use std::time::Duration;

use crate::support::{
    Env, HttpServer, MODERN, Request, Response, check_system_status, text, wait_for,
};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `system_status` asks; an inline question waits 5 s, a task's 120 s; a client has at most
/// two tasks open.
pub(super) const CONFIG: &str = "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 5\ntask_timeout_s = 120\nmax_tasks = 2\npage_port = 0\nnotifications = false\n";

/// A stateless-era request, declaring the tasks extension or not; the whole JSON-RPC answer.
pub(super) fn send(port: u16, token: &str, method: &str, params: Value, tasks: bool) -> Value {
    let caps = if tasks {
        json!({ "extensions": { TASKS: {} } })
    } else {
        json!({})
    };
    send_caps(port, token, method, params, caps)
}

/// `send` with these client capabilities.
pub(super) fn send_caps(
    port: u16,
    token: &str,
    method: &str,
    mut params: Value,
    caps: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut r = Request::post("/mcp", body.to_string())
        .header("Authorization", format!("Bearer {token}"))
        .header("MCP-Protocol-Version", MODERN)
        .header("Mcp-Method", method);
    if let Some(n) = name {
        r = r.header("Mcp-Name", n);
    }
    let r: Response = r.send(port);
    let msgs = r.messages();
    msgs.into_iter()
        .find(|m| m["id"] == 1)
        .unwrap_or_else(|| panic!("{method}: no answer in HTTP {} {}", r.status, r.text()))
}

/// A new client of `preset`; its token.
pub(super) fn add_client(env: &Env, name: &str, preset: &str) -> String {
    let out = env.run(&["clients", "add", name, "--preset", preset]);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .expect("a token")
        .to_owned()
}

pub(super) fn result(answer: Value) -> Value {
    assert!(answer.get("error").is_none(), "error answer: {answer}");
    answer["result"].clone()
}

/// `tools/call system_status` declaring tasks: the task handle.
pub(super) fn start_task(d: &HttpServer, token: &str) -> Value {
    let handle = result(send(
        d.port,
        token,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
        true,
    ));
    assert_eq!(handle["resultType"], "task", "{handle}");
    assert_eq!(handle["status"], "working", "{handle}");
    assert!(handle["taskId"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(handle.get("content").is_none(), "{handle}");
    handle
}

pub(super) fn get(d: &HttpServer, token: &str, task: &str) -> Value {
    result(send(
        d.port,
        token,
        "tasks/get",
        json!({"taskId": task}),
        true,
    ))
}

/// Polls `tasks/get` (at the interval the task suggests) until the task ends.
pub(super) fn settled(d: &HttpServer, token: &str, task: &str, poll_ms: u64) -> Value {
    wait_for("the task to end", || {
        let t = get(d, token, task);
        if ["completed", "failed", "cancelled"].contains(&t["status"].as_str().unwrap_or("")) {
            return Some(t);
        }
        std::thread::sleep(Duration::from_millis(poll_ms));
        None
    })
}

#[test]
fn a_waiting_call_is_a_task_that_outlives_the_inline_deadline_and_runs_on_the_persons_yes() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let token = env.token();
    let handle = start_task(&d, &token);
    let task = handle["taskId"].as_str().unwrap();
    // The person's wait, not a run's: the poll hint is the slower one.
    assert_eq!(handle["pollIntervalMs"], 2000, "{handle}");
    assert!(handle["ttlMs"].as_u64().unwrap() >= 120_000, "{handle}");

    // The question is waiting like any call's (`archgate approvals`), under the task's deadline.
    let q = env.one_pending();
    assert_eq!(q["tool"], "system_status");
    assert_eq!(
        q["deadline"].as_u64().unwrap() - q["created"].as_u64().unwrap(),
        120
    );
    let id = q["id"].as_str().unwrap().to_owned();
    let listed = env.run(&["approvals"]);
    assert!(text(&listed).contains(&id), "{}", text(&listed));
    // The bar counts it as any waiting call (state.json, what `archgate status --waybar` reads).
    wait_for("the bar to count the question", || {
        let state =
            std::fs::read_to_string(env.path("runtime").join("archgate/state.json")).ok()?;
        let state: Value = serde_json::from_str(&state).ok()?;
        (state["pending_approvals"] == 1).then_some(())
    });

    // Past the inline deadline (5 s) the question still waits and the task still works.
    std::thread::sleep(Duration::from_secs(6));
    let t = get(&d, &token, task);
    assert_eq!(t["status"], "working", "{t}");
    assert_eq!(t["resultType"], "complete", "{t}");
    assert!(t.get("result").is_none(), "{t}");
    assert_eq!(env.pending().len(), 1);

    let out = env.run(&["approve", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let t = settled(&d, &token, task, handle["pollIntervalMs"].as_u64().unwrap());
    assert_eq!(t["status"], "completed", "{t}");
    check_system_status(&t["result"]);

    // One record, saying it ran as this task.
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "ok");
    assert_eq!(rec["approval"]["outcome"], "accepted");
    assert_eq!(rec["task"], task);
    assert_eq!(
        env.calls()
            .iter()
            .filter(|r| r["tool"] == "system_status")
            .count(),
        1
    );
}

#[test]
fn tasks_cancel_withdraws_the_waiting_question_and_nothing_runs() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let token = env.token();
    let handle = start_task(&d, &token);
    let task = handle["taskId"].as_str().unwrap();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();

    let ack = result(send(
        d.port,
        &token,
        "tasks/cancel",
        json!({"taskId": task}),
        true,
    ));
    assert_eq!(ack, json!({"resultType": "complete"}));
    let t = settled(&d, &token, task, 100);
    assert_eq!(t["status"], "cancelled", "{t}");
    assert!(t.get("result").is_none(), "{t}");
    // Withdrawn from every channel; a late yes finds nothing.
    assert!(env.pending().is_empty());
    let late = env.run(&["approve", &id]);
    assert_eq!(late.status.code(), Some(1), "{}", text(&late));
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "cancelled");
    assert_eq!(rec["approval"]["channel"], "tasks/cancel");
    assert_eq!(rec["task"], task);
    assert!(rec["exit_code"].is_null());
}

#[test]
fn a_client_without_tasks_waits_inline_exactly_as_before() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let token = env.token();
    let (port, t2) = (d.port, token.clone());
    let call = std::thread::spawn(move || {
        send(
            port,
            &t2,
            "tools/call",
            json!({"name": "system_status", "arguments": {}}),
            false,
        )
    });
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["approve", &id]).status.success());
    let answer = result(call.join().unwrap());
    assert!(answer.get("taskId").is_none(), "{answer}");
    assert_ne!(answer["resultType"], "task");
    check_system_status(&answer);
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "ok");
    assert!(rec.get("task").is_none(), "{rec}");
    // The task methods are not theirs: missing required client capability.
    let e = send(d.port, &token, "tasks/get", json!({"taskId": "x"}), false);
    assert_eq!(e["error"]["code"], -32021, "{e}");
}

#[test]
fn a_task_is_its_clients_alone_and_a_client_has_at_most_max_tasks_open() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let mine = env.token();
    let theirs = add_client(&env, "other-agent", "read-only");
    let first = start_task(&d, &mine);
    let task = first["taskId"].as_str().unwrap();
    wait_for("the first question", || {
        (env.pending().len() == 1).then_some(())
    });

    // Another client cannot read, answer or cancel it: to them it does not exist.
    for (method, params) in [
        ("tasks/get", json!({"taskId": task})),
        ("tasks/cancel", json!({"taskId": task})),
        (
            "tasks/update",
            json!({"taskId": task, "inputResponses": {}}),
        ),
    ] {
        let e = send(d.port, &theirs, method, params, true);
        assert_eq!(e["error"]["code"], -32602, "{method}: {e}");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("unknown task"),
            "{e}"
        );
    }
    assert_eq!(get(&d, &mine, task)["status"], "working");

    // The bound is per client: a second task is fine, a third is refused before anything is
    // asked — while the other client still gets its own.
    start_task(&d, &mine);
    wait_for("the second question", || {
        (env.pending().len() == 2).then_some(())
    });
    let over = result(send(
        d.port,
        &mine,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
        true,
    ));
    assert_eq!(over["isError"], true, "{over}");
    assert_eq!(
        over["structuredContent"]["error"]["kind"], "too_many_tasks",
        "{over}"
    );
    assert_eq!(env.pending().len(), 2);
    start_task(&d, &theirs);
    wait_for("their question", || {
        (env.pending().len() == 3).then_some(())
    });
}

#[test]
fn after_a_restart_a_task_from_before_says_what_became_of_it_and_so_does_its_record() {
    let env = Env::with_config(CONFIG);
    let mut d = HttpServer::start(&env);
    let token = env.token();
    let handle = start_task(&d, &token);
    let task = handle["taskId"].as_str().unwrap().to_owned();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    // The client's connection is long gone (each request was its own); the task still waits.
    assert_eq!(get(&d, &token, &task)["status"], "working");
    d.stop();

    // The question was withdrawn with the daemon: nothing ran, and the record names the task.
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "unreachable", "{rec}");
    assert_eq!(rec["approval"]["outcome"], "unreachable", "{rec}");
    assert_eq!(rec["task"], task.as_str());
    let log = text(&env.run(&["log", "--tool", "system_status"]));
    assert!(log.contains(&format!("task={task}")), "{log}");

    // The restarted daemon says what became of the task: failed, its question withdrawn.
    let d = HttpServer::start(&env);
    let t = get(&d, &token, &task);
    assert_eq!(t["status"], "failed", "{t}");
    let message = t["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("restarted")
            && message.contains("archgate log")
            && message.contains("nothing ran"),
        "{message}"
    );
    assert!(env.pending().is_empty());
}

#[test]
fn a_trusted_relay_brings_the_persons_answer_through_tasks_update() {
    let env = Env::with_config(&format!(
        "{CONFIG}[clients.local]\ntrusted_relay = true\n[clients.default]\ntrusted_relay = true\n"
    ));
    let d = HttpServer::start(&env);
    let token = env.token();
    let caps = json!({ "extensions": { TASKS: {} }, "elicitation": {} });
    let handle = result(send_caps(
        d.port,
        &token,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
        caps.clone(),
    ));
    assert_eq!(handle["resultType"], "task", "{handle}");
    let task = handle["taskId"].as_str().unwrap();
    // The question is on the person's channels, and is the task's input request.
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let t = wait_for("input_required", || {
        let t = get(&d, &token, task);
        (t["status"] == "input_required").then_some(t)
    });
    let asked = &t["inputRequests"]["archgate_approval"];
    assert_eq!(asked["method"], "elicitation/create", "{t}");
    let message = asked["params"]["message"].as_str().unwrap();
    assert!(message.contains("system_status"), "{message}");

    let ack = result(send_caps(
        d.port,
        &token,
        "tasks/update",
        json!({"taskId": task, "inputResponses": {"archgate_approval": {
            "action": "accept", "content": {"decision": "allow"}}}}),
        caps,
    ));
    assert_eq!(ack, json!({"resultType": "complete"}));
    let t = settled(&d, &token, task, 100);
    assert_eq!(t["status"], "completed", "{t}");
    check_system_status(&t["result"]);
    let rec = env.audit_of(&id);
    assert_eq!(rec["outcome"], "ok");
    assert_eq!(rec["approval"]["channel"], "client");
    assert_eq!(rec["task"], task);
    assert!(env.pending().is_empty());
}

/// The handshake era (2025-11-25): a session whose client declared the extension at
/// `initialize` gets tasks too — the 2026-07-28 extension, not that revision's experimental
/// `capabilities.tasks` (rmcp has not those; `tasks/list` is no method).
#[test]
fn a_handshake_era_session_that_declared_the_extension_gets_tasks() {
    use crate::support::{McpHttp, PROTOCOL};
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let mut c = McpHttp {
        port: d.port,
        token: env.token(),
        session: None,
    };
    let r = c.post(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": { "extensions": { TASKS: {} } },
            "clientInfo": {"name": "archgate-e2e", "version": "0.0.0"},
        }}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    c.session = r.header("mcp-session-id").map(str::to_owned);
    let init = r.messages().into_iter().find(|m| m["id"] == 0).unwrap();
    assert!(
        init["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "{init}"
    );
    c.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let handle = c.call_tool(1, "system_status", json!({}));
    assert_eq!(handle["resultType"], "task", "{handle}");
    let task = handle["taskId"].as_str().unwrap();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let t = c.request(2, "tasks/get", json!({"taskId": task}));
    assert_eq!(t["status"], "working", "{t}");
    assert!(env.run(&["approve", &id]).status.success());
    let t = wait_for("the task to complete", || {
        let t = c.request(3, "tasks/get", json!({"taskId": task}));
        (t["status"] == "completed").then_some(t)
    });
    check_system_status(&t["result"]);
    let r = c.post(&json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/list", "params": {}}));
    let m = r.messages().into_iter().find(|m| m["id"] == 4).unwrap();
    assert_eq!(m["error"]["code"], -32601, "{m}");
}

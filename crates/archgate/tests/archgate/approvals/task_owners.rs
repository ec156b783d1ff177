//! A task belongs to the client identity that made it — the token itself (a bridged client's
//! own grant) — not to the client's name (attack 4 F2). A name outlives the grant that held it:
//! after a revoke and a re-add, or a rename and an add, a new token of the old name must find
//! the old task unknown, and a renamed client keeps its own tasks. The same for the other thing
//! a client is handed to come back with: a trusted relay's ticket (stateless era).

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};

use super::tasks::{CONFIG, add_client, get, result, send, send_caps, start_task};
use crate::support::{Env, HttpServer, text, wait_for};

/// `tasks/get`, `tasks/cancel` and `tasks/update` of `task` with `token`: each an unknown task.
fn unknown_to(d: &HttpServer, token: &str, task: &str) {
    for (method, params) in [
        ("tasks/get", json!({"taskId": task})),
        ("tasks/cancel", json!({"taskId": task})),
        (
            "tasks/update",
            json!({"taskId": task, "inputResponses": {}}),
        ),
    ] {
        let e = send(d.port, token, method, params, true);
        assert_eq!(e["error"]["code"], -32602, "{method}: {e}");
        let m = e["error"]["message"].as_str().unwrap_or("");
        assert!(m.contains("unknown task"), "{method}: {e}");
    }
}

fn run_ok(env: &Env, args: &[&str]) {
    let out = env.run(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
}

fn task_id(handle: &Value) -> String {
    handle["taskId"].as_str().unwrap().to_owned()
}

#[test]
fn a_renamed_client_keeps_its_tasks_and_a_new_client_of_its_old_name_finds_none() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let first = add_client(&env, "helper", "full");
    let task = task_id(&start_task(&d, &first));
    wait_for("the question", || (env.pending().len() == 1).then_some(()));

    run_ok(&env, &["clients", "rename", "helper", "old-helper"]);
    let newcomer = add_client(&env, "helper", "read-only");
    // The name's new holder cannot read, cancel or answer the task.
    unknown_to(&d, &newcomer, &task);
    // The token that made it still reads it, under its new name.
    let t = get(&d, &first, &task);
    assert!(t["taskId"] == task.as_str(), "{t}");
}

#[test]
fn a_revoked_clients_task_is_unknown_to_a_new_client_given_its_name() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let first = add_client(&env, "helper", "full");
    let task = task_id(&start_task(&d, &first));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    // The person says yes: the task completes with the first client's result.
    run_ok(&env, &["approve", &id]);
    wait_for("the task to complete", || {
        (get(&d, &first, &task)["status"] == "completed").then_some(())
    });

    run_ok(&env, &["clients", "revoke", "helper"]);
    let again = add_client(&env, "helper", "read-only");
    unknown_to(&d, &again, &task);
}

/// A stateless-era `tools/call system_status` of a relaying client (elicitation declared, no
/// tasks), with `requestState` when it comes back.
fn relay_call(d: &HttpServer, token: &str, ticket: Option<&str>) -> Value {
    let mut params = json!({"name": "system_status", "arguments": {}});
    if let Some(t) = ticket {
        params["requestState"] = json!(t);
    }
    result(send_caps(
        d.port,
        token,
        "tools/call",
        params,
        json!({"elicitation": {}}),
    ))
}

#[test]
fn a_relays_ticket_the_person_said_yes_to_is_unknown_to_a_new_client_given_its_name() {
    let env = Env::with_config(&format!("{CONFIG}[clients.helper]\ntrusted_relay = true\n"));
    let d = HttpServer::start(&env);
    let first = add_client(&env, "helper", "full");
    let asked = relay_call(&d, &first, None);
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let ticket = asked["requestState"].as_str().unwrap().to_owned();
    // The person says yes on their own channel; the ticket waits for its client to come back.
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    run_ok(&env, &["approve", &id]);

    run_ok(&env, &["clients", "revoke", "helper"]);
    let again = add_client(&env, "helper", "full");
    let r = relay_call(&d, &again, Some(&ticket));
    assert_eq!(
        r["isError"], true,
        "the person's yes was not given to this token: {r}"
    );
    assert_eq!(
        r["structuredContent"]["error"]["kind"], "ticket_unknown",
        "{r}"
    );
    assert_eq!(
        env.calls()
            .iter()
            .filter(|c| c["tool"] == "system_status" && c["outcome"] == "ok")
            .count(),
        0,
        "nothing ran"
    );
}

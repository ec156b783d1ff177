//! Class: *two callers the log cannot tell apart* (issue 33: "every record names the transport,
//! so two clients of one name stay apart"). A bridged process may use an HTTP client's name
//! (the bridge socket is a same-user door; the name chooses the grant and budget, it proves
//! nothing), and its records said only that name. Tried here: the HTTP client `default` (its
//! token) and a bridged `serve --client default` each call once, then `archgate call` and an
//! in-process stdio client: every record names its transport (`http`, `bridge`, `cli`,
//! `stdio`), next to the same client name. And the budget they share by name, as README
//! promises ("the same budgets as an HTTP client of that name"): the HTTP client's second call
//! after the bridged one is over a budget of two a minute.

use serde_json::{Value, json};

use crate::support::{Env, HttpServer, StdioServer};

fn init(c: &mut StdioServer) {
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

fn status_records(env: &Env) -> Vec<Value> {
    env.audit()
        .into_iter()
        .filter(|r| r["tool"] == "system_status")
        .collect()
}

#[test]
fn every_record_names_its_transport_beside_the_client() {
    let env = Env::hermetic();
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config(&format!(
        "{config}[approval]\npage = false\n[budgets]\nper_minute = 2\n"
    ));
    let server = HttpServer::start(&env);
    let token = env.token();

    let r = server.call(&token, "system_status", json!({}));
    assert_ne!(r["isError"], true, "{r}");
    let mut bridged = StdioServer::start_with(&env, &["serve", "--client", "default"]);
    init(&mut bridged);
    let r = bridged.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    bridged.close();
    server.wait_for_call_frames(2);
    let recs = status_records(&env);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert!(recs.iter().all(|r| r["client"] == "default"), "{recs:?}");
    let mut transports: Vec<&str> = recs
        .iter()
        .map(|r| r["transport"].as_str().unwrap_or(""))
        .collect();
    transports.sort();
    assert_eq!(transports, ["bridge", "http"], "{recs:?}");

    // One budget by name: the bridged call spent the HTTP client's second of two.
    let r = server.call(&token, "system_status", json!({}));
    assert_eq!(r["isError"], true, "{r}");
    server.wait_for_call_frames(3);
    let last = status_records(&env).pop().unwrap();
    assert_eq!(last["outcome"], "budget_exhausted", "{last}");
    assert_eq!(last["transport"], "http", "{last}");
}

#[test]
fn the_cli_and_in_process_stdio_name_theirs() {
    let env = Env::hermetic();
    let (_, out) = env.call("system_status", &json!({}));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = StdioServer::start_with(&env, &["serve", "--in-process"]);
    init(&mut c);
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    c.close();
    let recs = status_records(&env);
    let transports: Vec<&str> = recs
        .iter()
        .map(|r| r["transport"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(transports, ["cli", "stdio"], "{recs:?}");
    // `archgate log` shows the door beside the name.
    let out = env.run(&["log"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("local/cli") && text.contains("local/stdio"),
        "{text}"
    );
}

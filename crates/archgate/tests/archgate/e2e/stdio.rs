//! MCP over stdio: raw JSON-RPC lines in and out; stdout carries nothing else.

use serde_json::json;

use crate::support::{Env, StdioServer};
use crate::support::{PROTOCOL, check_system_status, check_tool_list};

#[test]
fn stdio_initialize_list_tools_and_call_system_status() {
    let env = Env::new();
    let mut s = StdioServer::start(&env);

    let init = s.request(
        1,
        "initialize",
        json!({"protocolVersion": PROTOCOL, "capabilities": {},
               "clientInfo": {"name": "archgate-e2e", "version": "0.0.0"}}),
    );
    let info = &init["result"]["serverInfo"];
    assert_eq!(info["name"], "archgate", "{init}");
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(init["result"]["protocolVersion"], PROTOCOL);
    assert!(init["result"]["capabilities"]["tools"].is_object());
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = s.request(2, "tools/list", json!({}));
    check_tool_list(&list["result"]);

    let call = s.request(
        3,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    check_system_status(&call["result"]);

    // Unknown arguments are refused as a tool result the agent can read.
    let bad = s.request(
        4,
        "tools/call",
        json!({"name": "system_status", "arguments": {"bogus": true}}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");

    let (status, stdout) = s.close();
    assert!(status.success(), "exit after stdin closed: {status}");
    // stdout belongs to the protocol: every line is a JSON-RPC 2.0 message, nothing else.
    assert!(stdout.len() >= 4, "{stdout:?}");
    for line in &stdout {
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        assert_ne!(v["event"], "call", "a frame leaked onto stdio: {line}");
    }
    // One audit record per call: the good one and the refused one.
    let records = env.audit();
    assert_eq!(records.len(), 2, "{records:?}");
    assert!(records.iter().all(|r| r["tool"] == "system_status"));
    assert!(records.iter().all(|r| r["client"] == "local"));
}

#[test]
fn stdio_unknown_tool_is_recorded_once() {
    let env = Env::new();
    let mut s = StdioServer::initialized(&env);
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == true,
        "{r}"
    );
    let (status, _) = s.close();
    assert!(status.success());
    let records = env.audit();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["tool"], "no_such_tool");
}

#[test]
fn a_stdio_client_that_leaves_before_initializing_is_an_ordinary_end() {
    let env = Env::new();
    // Closed at once, without a word.
    let out = env.run(&["serve"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());

    // A stateless-era client that only probed with server/discover, then went away.
    let mut s = StdioServer::start(&env);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let found = s.request(1, "server/discover", json!({"_meta": meta}));
    let versions = found["result"]["supportedVersions"].as_array().unwrap();
    assert!(versions.iter().any(|v| v == "2026-07-28"), "{found}");
    assert!(versions.iter().any(|v| v == "2025-11-25"), "{found}");
    let (status, _) = s.close();
    assert!(
        status.success(),
        "exit after a discover-only session: {status}"
    );
}

#[test]
fn stdio_stateless_era_discover_list_and_call_without_initialize() {
    let env = Env::new();
    let mut s = StdioServer::start(&env);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let found = s.request(1, "server/discover", json!({"_meta": meta}));
    assert!(found.get("error").is_none(), "{found}");
    let list = s.request(2, "tools/list", json!({"_meta": meta}));
    check_tool_list(&list["result"]);
    let call = s.request(
        3,
        "tools/call",
        json!({"name": "system_status", "arguments": {}, "_meta": meta}),
    );
    check_system_status(&call["result"]);
    let (status, stdout) = s.close();
    assert!(status.success());
    assert!(stdout.iter().all(|l| l.contains("\"jsonrpc\":\"2.0\"")));
    assert_eq!(env.audit().len(), 1);
}

/// A stdio server told to stop (SIGTERM) ends at once, with nothing at ERROR on stderr, even
/// while its client keeps stdin open (a read of stdin cannot be cancelled: the runtime must not
/// wait for it).
#[test]
fn sigterm_ends_a_stdio_server_whose_client_keeps_stdin_open() {
    let env = Env::new();
    let mut s = StdioServer::initialized(&env);
    let (status, took) = crate::support::terminate(&mut s.child);
    assert!(status.success(), "{status:?}");
    assert!(
        took < std::time::Duration::from_secs(3),
        "ended {took:?} after SIGTERM"
    );
    s.stderr.wait_eof();
    let errors: Vec<String> = s
        .stderr
        .all()
        .into_iter()
        .filter(|l| l.contains(" ERROR "))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// A call that runs longer than a few seconds (here: waiting for the person) sends progress
/// when the request carries a progressToken, and none when it does not.
#[test]
fn a_waiting_call_with_a_progress_token_hears_progress_every_few_seconds() {
    let env = Env::new();
    env.write_config("[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 7\npage_port = 0\nnotifications = false\n");
    let mut s = StdioServer::initialized(&env);
    let started = std::time::Instant::now();
    let r = s.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}, "_meta": {"progressToken": "p-7"}}),
    );
    assert!(
        started.elapsed() >= std::time::Duration::from_secs(6),
        "{r}"
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let progress: Vec<serde_json::Value> = s
        .stdout
        .all()
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["method"] == "notifications/progress")
        .collect();
    assert_eq!(
        progress.len(),
        1,
        "one tick in 7 s at every 5 s: {progress:?}"
    );
    assert_eq!(progress[0]["params"]["progressToken"], "p-7");
    assert_eq!(progress[0]["params"]["progress"], 1.0);

    let r = s.request(
        3,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    let after = s
        .stdout
        .all()
        .iter()
        .filter(|l| l.contains("notifications/progress"))
        .count();
    assert_eq!(after, 1, "no progress without a token");
}

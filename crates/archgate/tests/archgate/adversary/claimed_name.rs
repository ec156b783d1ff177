//! Class: *an identity the person trusts, claimed by a name* (attack 15 F1). A client of
//! `archgate clients` proves itself with its token: its grant, the person's "Always…" rules for
//! it and `trusted_relay` are the person's trust in that token's holder. A stdio bridge proves
//! nothing (`serve --client NAME` names a label), and any program that can start archgate could
//! take the token client's name: it became the person's relay and answered its own question.
//! Tried here, against the real daemon: a bridge naming a token client is refused with a clear
//! error before it is served; a bridged session whose name the person later gives to an HTTP
//! client is refused from its next call; a bridge named by a client kind is still served.

use serde_json::json;

use super::bounds::add_client;
use crate::support::{Env, HttpServer, StdioServer};

fn init(c: &mut StdioServer) {
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
}

fn relay_config(env: &Env, name: &str) {
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config(&format!(
        "{config}[approval]\npage = false\n[clients.{name}]\npreset = \"full\"\ntrusted_relay = true\n"
    ));
}

#[test]
fn a_bridge_may_not_take_the_name_of_a_token_client() {
    let env = Env::hermetic();
    relay_config(&env, "phone");
    let _server = HttpServer::start(&env);
    add_client(&env, "phone", "read-only");

    let out = env.run(&["serve", "--client", "phone"]);
    assert!(
        !out.status.success(),
        "a bridge took the token client's name"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("token_client") && err.contains("\"phone\"") && err.contains("token"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "stdout belongs to the protocol");

    // Control: a bridge named by a client kind, with the same section, is served.
    relay_config(&env, "cursor");
    let mut kind = StdioServer::start_with(&env, &["serve", "--client", "cursor"]);
    init(&mut kind);
    let r = kind.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert!(r["error"].is_null(), "{r}");
    kind.close();
}

#[test]
fn an_open_bridge_whose_name_becomes_a_token_client_is_refused_from_its_next_call() {
    let env = Env::hermetic();
    let _server = HttpServer::start(&env);
    let mut bridged = StdioServer::start_with(&env, &["serve", "--client", "vscode"]);
    init(&mut bridged);
    let r = bridged.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert!(r["error"].is_null(), "before: {r}");

    add_client(&env, "vscode", "full");
    let r = bridged.request(
        3,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("\"vscode\" is an HTTP client") && msg.contains("token"),
        "{r}"
    );
    bridged.close();
}

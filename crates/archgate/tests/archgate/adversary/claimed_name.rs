//! Class: *an identity the person trusts, claimed by a name* (attack 15 F1). A client of
//! `archgate clients` proves itself with its token: its grant, the person's "Always…" rules for
//! it and `trusted_relay` are the person's trust in that token's holder. A stdio bridge proves
//! nothing (`serve --client NAME` names a label), and any program that can start archgate could
//! take the token client's name: it became the person's relay and answered its own question.
//! Tried here, against the real daemon: a bridge naming a token client is refused with a clear
//! error before it is served; a bridged session whose name the person later gives to an HTTP
//! client is refused from its next call; a bridge named by a client kind is still served.
//!
//! Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6). After
//! `clients revoke phone` (or `rename phone phone2`) the `[clients.phone]` section and the
//! "Always…" rules made through phone's questions stayed, keyed by the bare name; a bridge
//! `serve --client phone` then had them (a call approved `standing_rule`, its own elicitation
//! accepted as relay). Tried here: the rules go with the revoked client and move with the renamed
//! one, the freed name is refused to a bridge, and a rule a bridge was given is not handed to a
//! token client that later takes its name.

use serde_json::json;

use super::bounds::add_client;
use crate::support::{Env, HttpServer, StdioServer, call_request, result_text, text};

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

/// `system_status` asks (a read tool, so nothing runs); `phone`'s section was written for the
/// token client, with the relay trust the README describes.
fn ask_config(env: &Env, name: &str) {
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config(&format!(
        "{config}[policy]\nask = [\"system_status\"]\n[approval]\npage = false\ntimeout_s = 60\n\
         notifications = false\n[clients.{name}]\npreset = \"full\"\ntrusted_relay = true\n"
    ));
}

/// The token client calls `system_status`, the person answers "Always…": the rule's id.
fn always_for_token(env: &Env, server: &HttpServer, token: &str) -> String {
    let port = server.port;
    let token = token.to_owned();
    let call =
        std::thread::spawn(move || call_request(&token, "system_status", json!({}), 1).send(port));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let out = env.run(&["approve", &id, "--always"]);
    assert!(out.status.success(), "{}", text(&out));
    let r = call.join().unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    env.audit_of(&id)["approval"]["rule_id"]
        .as_str()
        .expect("the rule's id")
        .to_owned()
}

fn rules_text(env: &Env) -> String {
    let out = env.run(&["rules", "list"]);
    assert!(out.status.success(), "{}", text(&out));
    text(&out)
}

/// A bridge `serve --client NAME`, initialized without elicitation.
fn bridge(env: &Env, name: &str) -> StdioServer {
    let mut bridged = StdioServer::start_with(env, &["serve", "--client", name]);
    bridged.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    bridged.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    bridged
}

/// A bridge under `name` is refused before it is served, naming the former token client.
fn bridge_refused_as_former(env: &Env, name: &str) {
    let out = env.run(&["serve", "--client", name]);
    assert!(
        !out.status.success(),
        "a bridge took the name {name:?} a token client had"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("former_token_client") && err.contains(&format!("{name:?}")),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "stdout belongs to the protocol");
}

#[test]
fn a_revoked_token_clients_rules_and_relay_trust_never_reach_a_bridge_of_its_name() {
    let env = Env::hermetic();
    ask_config(&env, "phone");
    let server = HttpServer::start(&env);
    let token = add_client(&env, "phone", "full");
    let rule = always_for_token(&env, &server, &token);
    assert!(rules_text(&env).contains(&rule));

    let out = env.run(&["clients", "revoke", "phone"]);
    assert!(out.status.success(), "{}", text(&out));
    // The person's "Always…" went with the client's token.
    assert!(
        !rules_text(&env).contains(&rule),
        "the revoked client's rule stayed: {}",
        rules_text(&env)
    );
    // The section written for it stays in config; the name is still no bridge's.
    bridge_refused_as_former(&env, "phone");
}

#[test]
fn a_renamed_token_clients_rules_move_with_it_and_its_old_name_is_no_bridges() {
    let env = Env::hermetic();
    ask_config(&env, "phone");
    let server = HttpServer::start(&env);
    let token = add_client(&env, "phone", "full");
    let rule = always_for_token(&env, &server, &token);

    let out = env.run(&["clients", "rename", "phone", "phone2"]);
    assert!(out.status.success(), "{}", text(&out));
    bridge_refused_as_former(&env, "phone");

    // The rule is the token holder's, under its new name: its identical call needs no question.
    let r = server.call(&token, "system_status", json!({}));
    assert_ne!(r["isError"], true, "{r}");
    let rec = crate::support::wait_for("the renamed client's record", || {
        env.calls()
            .into_iter()
            .rev()
            .find(|c| c["client"] == "phone2" && c["tool"] == "system_status")
    });
    assert_eq!(rec["approval"]["channel"], "standing_rule", "{rec}");
    assert_eq!(rec["approval"]["rule_id"], rule.as_str(), "{rec}");
}

#[test]
fn a_rule_a_bridge_was_given_is_not_handed_to_a_later_token_client_of_its_name() {
    let env = Env::hermetic();
    ask_config(&env, "tablet");
    let server = HttpServer::start(&env);
    let mut bridged = bridge(&env, "tablet");
    bridged.call(2, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let out = env.run(&["approve", &id, "--always"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(result_text(&bridged.response(2)).0);
    let rule = env.audit_of(&id)["approval"]["rule_id"]
        .as_str()
        .expect("the rule's id")
        .to_owned();
    bridged.close();

    let token = add_client(&env, "tablet", "full");
    assert!(
        !rules_text(&env).contains(&rule),
        "the bridge's rule passed to the token client: {}",
        rules_text(&env)
    );
    // Its first call asks the person (the control: denied, so nothing waits for the timeout).
    let port = server.port;
    let call =
        std::thread::spawn(move || call_request(&token, "system_status", json!({}), 1).send(port));
    let asked = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert_ne!(asked, id);
    let out = env.run(&["deny", &asked]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(call.join().unwrap().status, 200);
    assert_eq!(env.audit_of(&asked)["approval"]["channel"], "cli");
}

/// The same, racing: the bridge's question still waits when the person gives its name to a token
/// client. It is withdrawn then, so an "Always…" on it cannot become the token client's rule.
#[test]
fn a_bridges_waiting_question_is_withdrawn_when_its_name_is_given_to_a_token_client() {
    let env = Env::hermetic();
    ask_config(&env, "tablet");
    let _server = HttpServer::start(&env);
    let mut bridged = bridge(&env, "tablet");
    bridged.call(2, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();

    add_client(&env, "tablet", "full");
    let out = env.run(&["approve", &id, "--always"]);
    assert!(
        !out.status.success(),
        "the bridge's question was still there to answer \"Always\" to: {}",
        text(&out)
    );
    assert!(!result_text(&bridged.response(2)).0);
    assert!(
        !rules_text(&env).contains(&format!("r-{id}")),
        "{}",
        rules_text(&env)
    );
    assert!(env.pending().is_empty());
    bridged.close();
}

//! A question dies with its asker (part of `hostile.rs`): a parked call whose client is revoked,
//! or whose session is deleted, is withdrawn at once — gone from `archgate approvals`, and
//! `archgate approve ID` finds nothing — while another client's question stays answerable.

use super::bounds::{add_client, in_session, initialize, initialized};
use crate::support::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub(super) const ASK: &str = "[approval]\npage = false\nnotifications = false\ntimeout_s = 120\n\
                   [policy]\nask = [\"pacman_conf\"]\n";

pub(super) fn pending(env: &Env) -> Vec<Value> {
    let out = env.run(&["approvals", "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_default()
}

/// Sends a stateless `pacman_conf` call that parks; the connection stays open.
pub(super) fn park(d: &HttpServer, token: &str, id: u64) -> TcpStream {
    let mut s = connect(d.port);
    s.write_all(&call_request(token, "pacman_conf", json!({}), id).bytes(d.port))
        .unwrap();
    s
}

/// Opens a session (initialize, initialized) and parks a `pacman_conf` call with `id` in it; the
/// connection that waits for the answer and the session id.
pub(super) fn park_in_session(d: &HttpServer, token: &str, id: u64) -> (TcpStream, String) {
    let sid = initialize(d.port, token);
    initialized(d.port, token, &sid);
    let mut s = connect(d.port);
    let call = in_session(
        token,
        &sid,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "pacman_conf", "arguments": {}}}),
    );
    s.write_all(&call.bytes(d.port)).unwrap();
    (s, sid)
}

pub(super) fn question_of(env: &Env, client: &str) -> String {
    wait_for("the call to be parked", || {
        pending(env)
            .into_iter()
            .find(|q| q["client"] == client)
            .map(|q| q["id"].as_str().unwrap().to_owned())
    })
}

/// Gone from `archgate approvals` within `within` (rmcp's own drain would take 5 s), and
/// `archgate approve` finds nothing to answer.
fn withdrawn(env: &Env, id: &str, within: Duration) {
    let start = Instant::now();
    wait_for("the question to be withdrawn", || {
        (!pending(env).iter().any(|q| q["id"] == id)).then_some(())
    });
    assert!(
        start.elapsed() < within,
        "withdrawn after {:?}",
        start.elapsed()
    );
    let late = env.run(&["approve", id]);
    assert!(!late.status.success());
    let said =
        String::from_utf8_lossy(&late.stdout).to_string() + &String::from_utf8_lossy(&late.stderr);
    assert!(said.contains("no pending approval"), "{said}");
    let rec = wait_for("the call's record", || {
        env.calls().into_iter().find(|r| r["id"] == id)
    });
    assert_eq!(rec["outcome"], "unreachable", "{rec}");
}

#[test]
fn a_parked_call_of_a_revoked_client_is_withdrawn_and_cannot_be_approved() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let bot = add_client(&env, "bot", "read-only");
    let _theirs = park(&d, &bot, 1);
    let id = question_of(&env, "bot");
    let mut mine = park(&d, &env.token(), 2);
    let kept = question_of(&env, "default");

    let out = env.run(&["clients", "revoke", "bot"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    withdrawn(&env, &id, Duration::from_secs(3));

    // The other client's question is untouched and its yes runs the call.
    assert!(pending(&env).iter().any(|q| q["id"] == kept.as_str()));
    let out = env.run(&["approve", &kept]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let r = read_response(&mut mine);
    assert!(
        r.messages()
            .iter()
            .any(|m| m["id"] == 2 && m["result"]["isError"] != true),
        "{}",
        r.text()
    );
}

/// A stored client named like a kind of bridged client (`claude-code`, the name `setup` gives
/// an HTTP client) is revoked: its waiting question goes too. (The set of names the daemon
/// serves counts every kind name, so a bridged `cursor` keeps its question when another client
/// is added; that must not keep a revoked grant's question.)
#[test]
fn a_revoked_client_named_like_a_bridged_kind_loses_its_question() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let agent = add_client(&env, "claude-code", "read-only");
    let _theirs = park(&d, &agent, 1);
    let id = question_of(&env, "claude-code");
    let out = env.run(&["clients", "revoke", "claude-code"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    withdrawn(&env, &id, Duration::from_secs(3));
}

#[test]
fn a_parked_call_of_a_deleted_session_is_withdrawn_at_once() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let token = env.token();
    let (_waiting, sid) = park_in_session(&d, &token, 5);
    let id = question_of(&env, "default");

    let del = in_session(&token, &sid, Value::Null).send(d.port);
    assert_eq!(del.status, 200, "{}", del.text());
    // Well inside rmcp's 5 s drain: archgate ends the call itself.
    withdrawn(&env, &id, Duration::from_secs(2));

    // The honest path: a new session's parked call is still approvable.
    let (mut s2, _) = park_in_session(&d, &token, 6);
    let id2 = question_of(&env, "default");
    assert_ne!(id, id2);
    assert!(env.run(&["approve", &id2]).status.success());
    let r = read_response(&mut s2);
    assert!(
        r.messages()
            .iter()
            .any(|m| m["id"] == 6 && m["result"].is_object()),
        "{}",
        r.text()
    );
}

#[test]
fn a_parked_call_whose_answer_stream_is_dropped_is_withdrawn_and_its_session_lives_on() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let token = env.token();
    let (s, sid) = park_in_session(&d, &token, 7);
    let id = question_of(&env, "default");
    drop(s); // the client hangs up on the answer
    withdrawn(&env, &id, Duration::from_secs(3));
    // The session itself is not ended by that.
    let r = in_session(
        &token,
        &sid,
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
    )
    .send(d.port);
    assert_eq!(r.status, 200, "{}", r.text());
}

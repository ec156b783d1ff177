//! A question is its token's, not its name's (attack 23 F1; class: *a grant's waiting work keyed
//! by the client's name, while the grant is the token*). When a token stops authenticating while
//! the name stays — `clients revoke default` gives `default` a new token; `clients revoke phone`
//! followed at once by `clients add phone` gives `phone` one — the old token's parked call is
//! withdrawn all the same: gone from `archgate approvals`, `archgate approve` finds nothing, its
//! one record says `unreachable`, and the revoked token's still-open request never gets a result.
//! The session-tracked call (the control) is withdrawn as before.

use super::bounds::add_client;
use super::withdraw::{ASK, park, park_in_session, pending, question_of};
use crate::support::*;
use serde_json::Value;
use std::net::TcpStream;

fn run_ok(env: &Env, args: &[&str]) {
    let out = env.run(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out));
}

/// The question `id` is withdrawn: gone from the list, `approve` finds nothing, and its one
/// record is `unreachable`.
fn withdrawn(env: &Env, id: &str) {
    wait_for("the question to be withdrawn", || {
        (!pending(env).iter().any(|q| q["id"] == id)).then_some(())
    });
    let late = env.run(&["approve", id]);
    assert!(!late.status.success(), "{}", text(&late));
    assert!(
        text(&late).contains("no pending approval"),
        "{}",
        text(&late)
    );
    let rec = wait_for("the call's record", || {
        env.calls().into_iter().find(|r| r["id"] == id)
    });
    assert_eq!(rec["outcome"], "unreachable", "{rec}");
    let records = env.calls().into_iter().filter(|r| r["id"] == id).count();
    assert_eq!(records, 1, "one record per call");
}

/// What the revoked token's open request was answered: never a result of the call.
fn answered_without_a_result(s: &mut TcpStream, id: u64) {
    let r = read_response(s);
    let msgs: Vec<Value> = r.messages().into_iter().filter(|m| m["id"] == id).collect();
    assert!(
        msgs.iter()
            .all(|m| m.get("error").is_some() || m["result"]["isError"] == true),
        "the revoked token got a result: {}",
        r.text()
    );
}

#[test]
fn a_parked_call_of_the_default_token_is_withdrawn_when_default_is_revoked() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let old = env.token();
    let mut theirs = park(&d, &old, 1);
    let id = question_of(&env, "default");

    // The token rotates; the name `default` stays.
    run_ok(&env, &["clients", "revoke", "default"]);
    withdrawn(&env, &id);
    answered_without_a_result(&mut theirs, 1);

    // The new token's question is its own, and the person's yes runs it.
    let new = env.token();
    assert_ne!(new, old);
    let mut mine = park(&d, &new, 2);
    let kept = question_of(&env, "default");
    run_ok(&env, &["approve", &kept]);
    let r = read_response(&mut mine);
    assert!(
        r.messages()
            .iter()
            .any(|m| m["id"] == 2 && m["result"].is_object() && m["result"]["isError"] != true),
        "{}",
        r.text()
    );
}

#[test]
fn a_parked_call_of_a_revoked_token_is_withdrawn_when_its_name_is_added_again() {
    let env = Env::with_config(ASK);
    let d = HttpServer::start(&env);
    let old = add_client(&env, "phone", "read-only");
    let mut theirs = park(&d, &old, 1);
    let id = question_of(&env, "phone");

    // What a person does when a device's token leaked: revoke it and add the name again at once.
    run_ok(&env, &["clients", "revoke", "phone"]);
    let new = add_client(&env, "phone", "read-only");
    assert_ne!(new, old);
    withdrawn(&env, &id);
    answered_without_a_result(&mut theirs, 1);
}

/// The control: a call in a stateful session of the rotated token ends with its session.
#[test]
fn a_session_call_of_the_default_token_is_withdrawn_when_default_is_revoked() {
    let env = Env::with_config(ASK);
    let _d = HttpServer::start(&env);
    let d = &_d;
    let old = env.token();
    let (mut theirs, _sid) = park_in_session(d, &old, 3);
    let id = question_of(&env, "default");
    run_ok(&env, &["clients", "revoke", "default"]);
    withdrawn(&env, &id);
    answered_without_a_result(&mut theirs, 3);
}

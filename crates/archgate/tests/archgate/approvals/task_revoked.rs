//! A task's waiting question is its token's (attack 23 F1): when that token stops
//! authenticating while its name stays (`clients revoke default` rotates the default token), the
//! question is withdrawn — the person's yes can no longer run the revoked token's task, though no
//! connection of it is open — and the call's one record says `unreachable`, naming the task.

#![allow(clippy::disallowed_methods)]

use super::tasks::{CONFIG, start_task};
use crate::support::{Env, HttpServer, text, wait_for};

#[test]
fn a_tasks_question_is_withdrawn_when_its_token_is_rotated() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let old = env.token();
    let handle = start_task(&d, &old);
    let task = handle["taskId"].as_str().unwrap().to_owned();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();

    let out = env.run(&["clients", "revoke", "default"]);
    assert!(out.status.success(), "{}", text(&out));
    wait_for("the task's question to be withdrawn", || {
        env.pending().is_empty().then_some(())
    });
    let late = env.run(&["approve", &id]);
    assert!(!late.status.success(), "{}", text(&late));
    assert!(
        text(&late).contains("no pending approval"),
        "{}",
        text(&late)
    );

    let rec = wait_for("the call's record", || {
        env.calls().into_iter().find(|r| r["id"] == id.as_str())
    });
    assert_eq!(rec["outcome"], "unreachable", "{rec}");
    assert_eq!(rec["task"], task.as_str(), "{rec}");
    assert_eq!(
        env.calls()
            .iter()
            .filter(|r| r["tool"] == "system_status")
            .count(),
        1,
        "one record, and nothing ran"
    );
}

//! Tasks across a daemon's end: a restarted daemon says what became of a task from before
//! (its table is kept in the state directory), and a daemon killed with SIGKILL while a task's
//! question waited leaves that call's one record — written by the next start, once.

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};

use super::tasks::{CONFIG, add_client, get, send, start_task};
use crate::support::{Env, HttpServer};

fn records_of(env: &Env, id: &str) -> Vec<Value> {
    env.calls().into_iter().filter(|r| r["id"] == id).collect()
}

/// The failed task's error message.
fn failure(t: &Value) -> String {
    assert_eq!(t["status"], "failed", "{t}");
    t["error"]["message"].as_str().unwrap_or("").to_owned()
}

#[test]
fn a_sigkilled_daemons_waiting_task_question_is_recorded_once_and_the_task_says_what_became_of_it()
{
    let env = Env::with_config(CONFIG);
    let mut d = HttpServer::start(&env);
    let token = env.token();
    let task = start_task(&d, &token)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert_eq!(get(&d, &token, &task)["status"], "working");

    d.child.kill().unwrap();
    let _ = d.child.wait();
    drop(d);
    // Killed: nothing could write the call's record.
    assert!(records_of(&env, &id).is_empty());

    let d = HttpServer::start(&env);
    let recs = records_of(&env, &id);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["outcome"], "unreachable", "{}", recs[0]);
    assert_eq!(recs[0]["task"], task.as_str(), "{}", recs[0]);
    assert_eq!(recs[0]["tool"], "system_status");
    assert!(env.pending().is_empty());

    // The task's owner hears what happened: the question was withdrawn, nothing ran.
    let message = failure(&get(&d, &token, &task));
    assert!(
        message.contains("withdrawn") && message.contains("nothing ran"),
        "{message}"
    );
    assert!(
        message.contains(&id),
        "names the call for `archgate log`: {message}"
    );
    // To anyone else it is still no task at all.
    let other = add_client(&env, "other-agent", "full");
    let e = send(d.port, &other, "tasks/get", json!({"taskId": task}), true);
    assert_eq!(e["error"]["code"], -32602, "{e}");

    // Another restart: the same answer, and still one record.
    drop(d);
    let d = HttpServer::start(&env);
    assert_eq!(failure(&get(&d, &token, &task)), message);
    assert_eq!(records_of(&env, &id).len(), 1);
}

#[test]
fn after_a_restart_a_task_that_had_ended_says_its_outcome_but_not_its_result() {
    let env = Env::with_config(CONFIG);
    let mut d = HttpServer::start(&env);
    let token = env.token();
    let task = start_task(&d, &token)["taskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["deny", &id]).status.success());
    crate::support::wait_for("the task to end", || {
        (get(&d, &token, &task)["status"] == "completed").then_some(())
    });
    d.stop();
    let d = HttpServer::start(&env);
    let message = failure(&get(&d, &token, &task));
    assert!(
        message.contains("ended before archgate restarted") && message.contains("declined"),
        "{message}"
    );
}

//! The gate end to end inside one process: real config snapshots, a real audit file, real
//! programs through the real executor, tools written for the test.

use archgate_core::approval::{Answer, Broker, Channel, Question};
use archgate_core::audit::{AuditLog, AuditSettings, Entry, Outcome, read_log};
use archgate_core::config::{ConfigHandle, load_str};
use archgate_core::exec::{CommandSpec, Permit};
use archgate_core::gate::Relay;
use archgate_core::gate::{Catalogue, Client, Gate, Kind};
use archgate_core::paths::{PathEnv, PathOverrides, Paths};
use archgate_core::person::PersonState;
use archgate_core::policy::{Grant, Tier};
use archgate_core::tool::{
    CallCx, ErrorKind, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

mod pipeline;
mod preview;
mod relay;
mod resolution;
mod started;
mod tools;
mod unrecorded;
mod untrusted;

use tools::{Echo, FromFile, RouteWord, Secret};

struct Env {
    _dir: tempfile::TempDir,
    gate: Arc<Gate>,
    log: std::path::PathBuf,
}

fn env(config: &str) -> Env {
    env_on(config, Arc::new(archgate_core::clock::SystemClock))
}

/// `env` on a given clock.
fn env_on(config: &str, clock: Arc<dyn archgate_core::clock::Clock>) -> Env {
    let loaded = load_str(config);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    env_with(ConfigHandle::fixed(loaded.config), clock, |_| {})
}

/// A gate on this config handle and clock, with the test tools and any `more`.
fn env_with(
    handle: ConfigHandle,
    clock: Arc<dyn archgate_core::clock::Clock>,
    more: impl FnOnce(&mut Catalogue),
) -> Env {
    env_with_log(handle, clock, more, 1 << 30)
}

/// `env_with`, its activity log rotated past `max_bytes`.
fn env_with_log(
    handle: ConfigHandle,
    clock: Arc<dyn archgate_core::clock::Clock>,
    more: impl FnOnce(&mut Catalogue),
    max_bytes: u64,
) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let penv = PathEnv {
        home: Some(home.clone()),
        uid: nix::unistd::getuid().as_raw(),
        ..Default::default()
    };
    let paths = Paths::resolve(&penv, None, &PathOverrides::default()).unwrap();
    paths.prepare(penv.uid).unwrap();
    let audit = AuditLog::start(AuditSettings {
        path: paths.audit_log(),
        queue: 4096,
        max_bytes,
        keep: 2,
    });
    let person = Arc::new(PersonState::load(
        paths.standing_rules_file(),
        paths.acknowledged_file(),
    ));
    let mut cat = Catalogue::default();
    cat.add(Echo);
    cat.add(Secret);
    cat.add(FromFile(dir.path().join("entry")));
    cat.add(RouteWord);
    more(&mut cat);
    let log = paths.audit_log();
    Env {
        _dir: dir,
        gate: Arc::new(Gate::new(handle, paths, audit, person, cat).with_clock(clock)),
        log,
    }
}

fn client() -> Client {
    Client {
        name: "local".into(),
        grant: Grant::full(),
        agent: None,
        transport: archgate_core::gate::Transport::Stdio,
        token: None,
    }
}

fn records(e: &Env) -> Vec<archgate_core::audit::Record> {
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    let r = read_log(&e.log).unwrap();
    assert_eq!(r.skipped, 0);
    r.entries
        .into_iter()
        .filter_map(|x| match x {
            Entry::Call(c) => Some(*c),
            Entry::Event(_) => None,
        })
        .collect()
}

fn entry(e: &Env, words: &[&str]) {
    std::fs::write(e._dir.path().join("entry"), words.join("\n")).unwrap();
}

async fn parked(e: &Env) -> Question {
    loop {
        if let Some(q) = e.gate.broker().pending().first() {
            break q.clone();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_give_exactly_one_record_each() {
    let e = env("");
    let mut handles = Vec::new();
    for i in 0..40 {
        let g = e.gate.clone();
        handles.push(tokio::spawn(async move {
            g.call(&client(), "echo", json!({"words": [format!("w{i}")]}))
                .await
        }));
    }
    for h in handles {
        let r = h.await.unwrap();
        assert_eq!(r.outcome, Outcome::Ok);
    }
    let recs = records(&e);
    assert_eq!(recs.len(), 40);
    let mut ids: Vec<_> = recs.iter().map(|r| r.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 40);
}

#[tokio::test]
async fn shell_metacharacters_reach_the_program_literally() {
    let e = env("");
    let canary = e._dir.path().join("CANARY");
    let words = vec![
        format!("; touch {}", canary.display()),
        format!("$(touch {})", canary.display()),
        format!("`touch {}`", canary.display()),
        "a\nb".to_owned(),
        "*".to_owned(),
        "'\"".to_owned(),
    ];
    let r = e
        .gate
        .call(&client(), "echo", json!({ "words": words }))
        .await;
    let out = match r.output.unwrap().content.remove(0) {
        archgate_core::tool::Content::Text(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        out,
        words.iter().map(|w| format!("{w}\n")).collect::<String>()
    );
    assert!(!canary.exists());
}

#[tokio::test]
async fn privilege_elevation_is_refused_and_recorded_whatever_the_config() {
    let e = env("[policy]\nallow = [\"*\"]\n");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["hello", "sudo"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Refused);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, Kind::Refused);
    assert!(err.message.contains("sudo"), "{}", err.message);
    let recs = records(&e);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, Outcome::Refused);
    assert_eq!(recs[0].tier.as_deref(), Some("blocked"));
    assert_eq!(recs[0].decision.as_deref(), Some("deny"));
}

#[tokio::test]
async fn denied_routes_and_bad_arguments_are_refused_before_anything_runs() {
    let e = env("[policy]\ndeny = [\"echo\"]\n");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Refused);
    assert!(r.output.unwrap_err().message.contains("echo"));

    let e = env("");
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"], "extra": 1}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    assert!(
        r.output.unwrap_err().message.contains("extra"),
        "the refusal names the field"
    );
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": "x".repeat(70_000)}))
        .await;
    assert_eq!(r.outcome, Outcome::InvalidArguments);
    let r = e.gate.call(&client(), "nope", json!({})).await;
    assert_eq!(r.outcome, Outcome::NotGranted);
    let recs = records(&e);
    assert_eq!(recs.len(), 3, "refusals are recorded too");
}

#[tokio::test]
async fn approval_needed_without_channels_is_unsupported_with_the_command() {
    let e = env("");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "hunter2"}))
        .await;
    assert_eq!(r.outcome, Outcome::Unsupported);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, Kind::Unsupported);
    assert!(err.message.contains("run it themselves"), "{}", err.message);
}

#[tokio::test]
async fn private_arguments_and_outputs_never_reach_the_log() {
    let e = env("[policy]\nallow = [\"secret\"]\n");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "hunter2-very-private"}))
        .await;
    assert_eq!(r.outcome, Outcome::Ok, "{:?}", r.output);
    records(&e);
    let text = std::fs::read_to_string(&e.log).unwrap();
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("[redacted: 20 bytes]"));
}

#[tokio::test]
async fn a_panicking_tool_is_recorded_and_the_gate_keeps_serving() {
    let e = env("[policy]\nallow = [\"secret\"]\n");
    let r = e
        .gate
        .call(&client(), "secret", json!({"text": "x", "panic": true}))
        .await;
    assert_eq!(r.outcome, Outcome::Panicked);
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["still here"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Ok);
    let recs = records(&e);
    assert_eq!(
        recs.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        [Outcome::Panicked, Outcome::Ok]
    );
}

#[tokio::test]
async fn a_client_going_away_while_parked_is_unreachable_and_nothing_runs() {
    let e = env("");
    let _channel = e.gate.broker().register_pull_channel();
    let c = client();
    let fut = e.gate.call(&c, "secret", json!({"text": "x"}));
    tokio::select! {
        _ = fut => panic!("must park"),
        _ = tokio::time::sleep(Duration::from_millis(100)) => {}
    }
    // The future was dropped: the question is withdrawn and the record says unreachable.
    assert!(e.gate.broker().pending().is_empty());
    let recs = records(&e);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].outcome, Outcome::Unreachable);
    assert_eq!(recs[0].approval.as_ref().unwrap().outcome, "unreachable");
}

#[tokio::test]
async fn an_approved_call_runs_once_and_a_declined_one_never() {
    let e = env("");
    let _channel = e.gate.broker().register_pull_channel();
    for (answer, expect) in [
        (archgate_core::approval::Answer::Allow, Outcome::Ok),
        (archgate_core::approval::Answer::Deny, Outcome::Declined),
    ] {
        let g = e.gate.clone();
        let t =
            tokio::spawn(async move { g.call(&client(), "secret", json!({"text": "x"})).await });
        let id = loop {
            if let Some(q) = e.gate.broker().pending().first() {
                break q.id.clone();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        let q = e.gate.broker().pending().remove(0);
        assert_eq!(q.tool, "secret");
        // Issue 16, attack 6: the person approves what they see, private text included; the
        // audit record (below) keeps its redaction.
        assert_eq!(
            q.args["text"], "x",
            "the question shows the private text whole"
        );
        e.gate.broker().answer(&id, answer, "cli").unwrap();
        assert_eq!(t.await.unwrap().outcome, expect);
    }
    let recs = records(&e);
    assert_eq!(
        recs[0].approval.as_ref().unwrap().channel.as_deref(),
        Some("cli")
    );
    assert_eq!(recs[1].approval.as_ref().unwrap().outcome, "declined");
    assert!(
        !serde_json::to_string(&recs).unwrap().contains("\"x\""),
        "the log never has it"
    );
}

/// Issue 16, attack 7: an unknown tool is charged to the client's budget like any call.
#[tokio::test]
async fn unknown_tools_are_charged() {
    let e = env("[budgets]\nper_minute = 3\n");
    for i in 0..3 {
        let r = e.gate.call(&client(), &format!("nope{i}"), json!({})).await;
        assert_eq!(r.output.unwrap_err().kind, Kind::UnknownTool);
    }
    let r = e
        .gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(r.output.unwrap_err().kind, Kind::BudgetExhausted);
}

/// The budget's minute turns on the gate's clock, not the wall's: three calls at 59 s, the fourth
/// refused (saying when it resets), one second later a new minute runs again — and the record
/// carries the clock's time. No sleeping to a minute boundary.
#[tokio::test]
async fn the_budget_minute_turns_on_the_gates_clock() {
    let start = 1_790_000_000 - 1_790_000_000 % 60 + 59;
    let clock = archgate_core::clock::ManualClock::at(start);
    let e = env_on("[budgets]\nper_minute = 3\n", clock.clone());
    let echo = || json!({"words": ["x"]});
    for i in 0..3 {
        let r = e.gate.call(&client(), "echo", echo()).await;
        assert_eq!(r.outcome, Outcome::Ok, "call {i}: {:?}", r.output);
    }
    let r = e.gate.call(&client(), "echo", echo()).await;
    assert_eq!(r.outcome, Outcome::BudgetExhausted);
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, Kind::BudgetExhausted);
    assert!(err.message.contains("reset"), "{}", err.message);
    clock.advance(1);
    let r = e.gate.call(&client(), "echo", echo()).await;
    assert_eq!(r.outcome, Outcome::Ok, "a new minute: {:?}", r.output);
    let recs = records(&e);
    assert_eq!(recs.len(), 5);
    let want = time::OffsetDateTime::from_unix_timestamp(start + 1)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    assert_eq!(recs[4].time, want, "the record's time is the clock's");
}

/// Issue 16, attack 5: route words that would draw on the person's terminal are refused at
/// admission; nothing is resolved or asked.
#[tokio::test]
async fn route_words_that_draw_on_the_terminal_are_refused() {
    let e = env("");
    let _channel = e.gate.broker().register_pull_channel();
    for bad in ["x\u{1b}[1A\u{1b}[2K\rsu", "xdg\u{202e}nepo", "a\u{200b}b"] {
        entry(&e, &["printf", "never"]);
        let r = e
            .gate
            .call(&client(), "secret_route", json!({ "word": bad }))
            .await;
        assert_eq!(
            r.outcome,
            Outcome::InvalidArguments,
            "{bad:?}: {:?}",
            r.output
        );
        assert_eq!(r.output.unwrap_err().kind, Kind::InvalidRoute);
    }
    assert!(e.gate.broker().pending().is_empty());
}

/// Issue 16, attack 7: a flood of refused calls is charged and summarised. Past the budget,
/// the first refusal of the minute is recorded and the rest counted in one `refused_flood`
/// event, so the log keeps the person's history; the client's next other call closes the count.
#[tokio::test]
async fn a_refused_flood_is_summarised_not_recorded_call_by_call() {
    let e = env("[budgets]\nper_minute = 3\n");
    for i in 0..20 {
        e.gate
            .call(&client(), &format!("flood{i}"), json!({}))
            .await;
    }
    e.gate.summarise_floods();
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    let log = read_log(&e.log).unwrap();
    let calls: Vec<_> = log
        .entries
        .iter()
        .filter_map(|x| match x {
            Entry::Call(c) => Some(c.outcome),
            Entry::Event(_) => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            Outcome::NotGranted,
            Outcome::NotGranted,
            Outcome::NotGranted,
            Outcome::BudgetExhausted
        ]
    );
    let events: Vec<&serde_json::Value> = log
        .entries
        .iter()
        .filter_map(|x| match x {
            Entry::Event(v) => Some(v),
            Entry::Call(_) => None,
        })
        .collect();
    let (summaries, counts): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) =
        events.iter().partition(|v| v["event"] == "refused_flood");
    assert_eq!(summaries.len(), 1, "{events:?}");
    assert_eq!(summaries[0]["folded"], 16);
    assert_eq!(summaries[0]["client"], "local");
    // Issue 33: the count is on disk as it grows (a daemon killed mid-flood keeps it), in a
    // line per doubling — not one per refusal.
    let so_far: Vec<u64> = counts
        .iter()
        .inspect(|v| assert_eq!(v["event"], "refused_flood_count", "{v}"))
        .map(|v| v["folded_so_far"].as_u64().unwrap())
        .collect();
    assert_eq!(so_far, vec![1, 2, 4, 8, 16], "{events:?}");
}

/// Issue 16, attack 7: a 4 MiB unknown tool name leaves a record of bounded size that still
/// identifies it (its digest), and the refusal does not echo it whole.
#[tokio::test]
async fn a_huge_unknown_name_leaves_a_small_record() {
    let e = env("");
    let name = "x".repeat(4 << 20);
    let r = e.gate.call(&client(), &name, json!({})).await;
    let err = r.output.unwrap_err();
    assert_eq!(err.kind, Kind::UnknownTool);
    assert!(err.message.len() < 1024, "{} bytes", err.message.len());
    let recs = records(&e);
    let line = serde_json::to_string(&recs[0]).unwrap();
    assert!(line.len() < 2048, "{} bytes", line.len());
    use sha2::Digest;
    let digest = hex::encode(sha2::Sha256::digest(name.as_bytes()));
    assert!(recs[0].tool.contains(&digest));
}

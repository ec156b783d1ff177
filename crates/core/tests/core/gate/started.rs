//! Issue 33, item 6 — unknown is said as unknown. An act or destructive call's `started` line is
//! in the log before its work begins, and a call that loses its caller after that line is
//! recorded `unknown` (it may have run), never `unreachable` ("did not run"). Reads write no
//! such line.

use super::*;

/// An act tool that looks at the activity log from inside its own work (to see whether its
/// `started` line is already there), then waits `hold_ms`.
/// The log's path is set once the sandbox exists.
struct Watcher(Arc<std::sync::OnceLock<std::path::PathBuf>>);
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WatcherArgs {
    /// How long the work lasts, in milliseconds.
    hold_ms: u64,
}
static WATCHER: ToolSpec = ToolSpec {
    long_running: false,
    name: "watcher",
    title: "Watcher",
    description: "acts, after reading the activity log",
    tier: Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
    provenance: archgate_core::provenance::Provenance::ArchgateOnly,
    says: archgate_core::sentence::Phrase::READS,
};
impl Tool for Watcher {
    type Args = WatcherArgs;
    type Run = WatcherArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &WATCHER
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        _p: Permit,
        a: WatcherArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let log =
                std::fs::read_to_string(self.0.get().expect("the log's path")).unwrap_or_default();
            let seen = log.lines().any(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
                v["event"] == "started" && v["id"] == cx.id.as_str()
            });
            tokio::time::sleep(Duration::from_millis(a.hold_ms)).await;
            Ok(ToolOutput::text(format!("started line seen: {seen}")))
        })
    }
}

pub(super) fn watcher_env() -> Env {
    watcher_env_on("[policy]\nallow = [\"watcher\"]\n")
}

fn watcher_env_on(config: &str) -> Env {
    let loaded = load_str(config);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let path = Arc::new(std::sync::OnceLock::new());
    let p = path.clone();
    let e = env_with(
        ConfigHandle::fixed(loaded.config),
        Arc::new(archgate_core::clock::SystemClock),
        move |c| c.add(Watcher(p)),
    );
    path.set(e.log.clone()).unwrap();
    e
}

fn started_lines(e: &Env) -> Vec<serde_json::Value> {
    assert!(e.gate.audit().flush(Duration::from_secs(5)));
    read_log(&e.log)
        .unwrap()
        .entries
        .into_iter()
        .filter_map(|x| match x {
            Entry::Event(v) if v["event"] == "started" => Some(v),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_act_calls_start_is_on_disk_before_its_work_and_its_record_after() {
    let e = watcher_env();
    let r = e
        .gate
        .call(&client(), "watcher", json!({"hold_ms": 0}))
        .await;
    let out = match r.output.expect("the call ran").content.remove(0) {
        archgate_core::tool::Content::Text(t) => t,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        out, "started line seen: true",
        "the work began before its start was in the log"
    );
    let started = started_lines(&e);
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["id"], r.id.as_str());
    assert_eq!(started[0]["tier"], "act");
    assert_eq!(started[0]["route"], "watcher");
    assert_eq!(started[0]["decision"], "allow");
    assert_eq!(
        started[0]["pid"].as_u64(),
        Some(u64::from(std::process::id()))
    );
    let recs = records(&e);
    assert_eq!(
        recs.len(),
        1,
        "one record per call, the started line is no record"
    );
    assert_eq!(recs[0].id, r.id);
    assert_eq!(recs[0].outcome, Outcome::Ok);
    // A read writes no started line (the hot path stays one write a call).
    e.gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(started_lines(&e).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_after_its_start_is_recorded_unknown_not_unreachable() {
    let e = watcher_env();
    let gate = e.gate.clone();
    let task = tokio::spawn(async move {
        gate.call(&client(), "watcher", json!({"hold_ms": 60_000}))
            .await
    });
    // Its work is under way once its started line is in the log.
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while started_lines(&e).is_empty() {
        assert!(std::time::Instant::now() < until, "the call never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    task.abort();
    let _ = task.await;
    let recs = records(&e);
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(
        recs[0].outcome,
        Outcome::Unknown,
        "a call whose work had begun may have run: it is not `unreachable`"
    );
    assert_eq!(recs[0].id, started_lines(&e)[0]["id"].as_str().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_started_line_says_who_approved_and_comes_only_after_the_yes() {
    let e = watcher_env_on("");
    let _channel = e.gate.broker().register_pull_channel();
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "watcher", json!({"hold_ms": 0})).await });
    let q = parked(&e).await;
    // Asked and not yet answered: nothing started.
    assert!(started_lines(&e).is_empty());
    e.gate.broker().answer(&q.id, Answer::Allow, "cli").unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    let started = started_lines(&e);
    assert_eq!(started.len(), 1);
    assert_eq!(started[0]["approval"]["outcome"], "accepted");
    assert_eq!(started[0]["approval"]["channel"], "cli");
}

/// The transport's task hook (`gate::task::Waits`) as the MCP tasks machinery uses it.
struct Hook {
    refuse: bool,
    task: std::sync::Mutex<Option<String>>,
}

impl archgate_core::gate::task::Waits for Hook {
    fn must_wait(&self, _call_id: &str) -> Result<Option<Duration>, String> {
        if self.refuse {
            return Err("too many tasks open".into());
        }
        *self.task.lock().unwrap() = Some("task-1".into());
        Ok(Some(Duration::from_secs(900)))
    }
    fn task_id(&self) -> Option<String> {
        self.task.lock().unwrap().clone()
    }
}

/// A call that may become a task: asked, it becomes one — its question waits the task's
/// deadline, its `started` line and its one record name the task; refused a task (its client's
/// bound), it is refused `too_many_tasks` before anyone is asked and nothing starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_becomes_a_task_waits_the_tasks_deadline_and_its_record_names_the_task() {
    use archgate_core::gate::task::{WAITS, Waits};
    let e = watcher_env_on("");
    let _channel = e.gate.broker().register_pull_channel();
    let hook: Arc<dyn Waits> = Arc::new(Hook {
        refuse: false,
        task: Default::default(),
    });
    let g = e.gate.clone();
    let t = tokio::spawn(WAITS.scope(hook, async move {
        g.call(&client(), "watcher", json!({"hold_ms": 0})).await
    }));
    let q = parked(&e).await;
    assert_eq!(
        q.deadline - q.created,
        900,
        "the question waits the task's deadline"
    );
    e.gate.broker().answer(&q.id, Answer::Allow, "cli").unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    assert_eq!(started_lines(&e)[0]["task"], "task-1");
    let recs = records(&e);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].task.as_deref(), Some("task-1"));

    let refusing: Arc<dyn Waits> = Arc::new(Hook {
        refuse: true,
        task: Default::default(),
    });
    let g = e.gate.clone();
    let r = WAITS
        .scope(refusing, async move {
            g.call(&client(), "watcher", json!({"hold_ms": 0})).await
        })
        .await;
    let refusal = r.output.expect_err("refused");
    assert_eq!(refusal.kind, Kind::TooManyTasks);
    assert!(e.gate.broker().pending().is_empty());
    assert_eq!(started_lines(&e).len(), 1, "nothing started");
    let recs = records(&e);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1].error_kind.as_deref(), Some("too_many_tasks"));
    assert_eq!(recs[1].task, None);
}

/// Attack 6 F4: a read-tier task the person approved, running when the daemon was killed, was
/// recorded "withdrawn before anyone answered … nothing ran" (only its `asking` line was on
/// disk). A call the person was asked about writes its `started` line after the yes, whatever
/// its tier, so the next start says `unknown`; a read nobody was asked about still writes none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_asked_read_has_a_started_line_after_the_yes_and_an_unasked_read_none() {
    let e = watcher_env_on("[policy]\nask = [\"echo\"]\n");
    let _channel = e.gate.broker().register_pull_channel();
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "echo", json!({"words": ["hi"]})).await });
    let q = parked(&e).await;
    assert!(
        started_lines(&e).is_empty(),
        "nothing starts before the yes"
    );
    e.gate.broker().answer(&q.id, Answer::Allow, "cli").unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    let started = started_lines(&e);
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["tier"], "read");
    assert_eq!(started[0]["approval"]["channel"], "cli");

    let plain = watcher_env_on("");
    let r = plain
        .gate
        .call(&client(), "echo", json!({"words": ["x"]}))
        .await;
    assert_eq!(r.outcome, Outcome::Ok);
    assert!(
        started_lines(&plain).is_empty(),
        "an unasked read writes no line"
    );
}

//! One `tools/call` from a client that declared the tasks extension: the call runs detached from
//! its request, and the request answers with whichever comes first — the call's own answer
//! (inline, as for any client), or a task handle, the moment the call must wait.
//!
//! A call must wait when the gate is about to ask the person (`Waits::must_wait`, the question
//! then waits `approval.task_timeout_s`), when the call needs its client's input (a trusted
//! relay's question, `relay.rs`; a fixture's), or when a `long_running` tool is still running
//! after [`INLINE_MOMENT`]. Until the handle is sent the request's cancellation ends the call as
//! it ends any call (never act work that started: `server/apart.rs`); after, only `tasks/cancel`
//! or the deadline does — a dropped connection does not.
//!
//! `tasks/cancel` is honest about what it did (`drive`): a question still waiting is withdrawn
//! (answered "cancelled" on the channel `tasks/cancel`, nothing runs, the task ends `cancelled`);
//! a read still running is stopped (`cancelled`); work that acts and has started is not stopped
//! midway — the task ends `completed` with what the work did, and its status message says the
//! cancel came too late.

use archgate_core::approval::{Answer, Broker};
use archgate_core::gate::task::{WAITS, Waits};
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, InputRequest};
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::{
    KEEP_AFTER_DEADLINE_MS, POLL_LONG_RUN_MS, POLL_QUESTION_MS, POLL_RUN_MS, TaskStore, lock,
};
use crate::app::task_table::Entry;

/// How long a `long_running` tool runs before it becomes a task: a call that answers sooner
/// (one package's files, not every package's) answers inline.
pub const INLINE_MOMENT: Duration = Duration::from_millis(500);

/// The channel a question withdrawn by `tasks/cancel` is answered on, in its record.
pub const CANCEL_CHANNEL: &str = "tasks/cancel";

/// What the call is, as far as a task is concerned.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape {
    /// `ToolSpec::long_running`.
    pub long_running: bool,
    /// `ToolSpec::read_only`: stopping it midway changes nothing.
    pub read_only: bool,
}

/// The call's side of its task, shared by the request, the running call and the task.
pub(crate) struct Slot {
    store: Arc<TaskStore>,
    /// The identity that makes the task (`super::owner`), and its client's name.
    owner: String,
    client: String,
    /// The question deadline of a call that is a task (`approval.task_timeout_s`).
    timeout: Duration,
    max: u32,
    state: Mutex<State>,
    /// Fires once the call claimed its task: the request sends the handle.
    claimed: Notify,
    /// The task's context, once it exists (for input requests).
    context: watch::Sender<Option<TaskContext>>,
    /// The poll interval the task suggests now (`super::POLL_*`), shared with the store.
    poll: Arc<AtomicU64>,
    /// `ToolSpec::long_running`: its work, once it runs, takes minutes.
    long_running: bool,
}

#[derive(Default)]
struct State {
    claimed: bool,
    released: bool,
    /// The gate's question, by call id, once one is out.
    question: Option<String>,
    task_id: Option<String>,
}

tokio::task_local! {
    static SLOT: Arc<Slot>;
}

impl Slot {
    /// Makes the call a task (once): counted against the client's bound, and the request told.
    fn claim(&self) -> Result<(), String> {
        let mut s = lock(&self.state);
        if s.claimed {
            return Ok(());
        }
        self.store.claim(&self.owner, &self.client, self.max)?;
        s.claimed = true;
        drop(s);
        self.claimed.notify_one();
        Ok(())
    }

    fn is_claimed(&self) -> bool {
        lock(&self.state).claimed
    }

    /// The call's work runs now (no question out): the hint its work fits.
    fn running(&self) {
        let ms = if self.long_running {
            POLL_LONG_RUN_MS
        } else {
            POLL_RUN_MS
        };
        self.poll.store(ms, Ordering::Relaxed);
    }

    /// The claim is over: the task ended, or the call answered inline after all.
    fn release(&self) {
        let mut s = lock(&self.state);
        if s.claimed && !s.released {
            s.released = true;
            self.store.release(&self.owner);
            if let Some(id) = &s.task_id {
                self.store.table.ended(id);
            }
        }
    }

    /// Settles the task's pending input request `key` (the question was decided elsewhere),
    /// so the task no longer reports `input_required` for it.
    pub(super) fn settle_input(&self, key: &str, with: serde_json::Value) {
        let task = lock(&self.state).task_id.clone();
        if let Some(task) = task {
            let _ = self
                .store
                .manager
                .update_task(&task, [(key.to_owned(), with)]);
        }
    }

    /// The task's context, waiting for it to exist.
    pub(super) async fn context(&self) -> Option<TaskContext> {
        let mut rx = self.context.subscribe();
        let c = rx.wait_for(Option::is_some).await.ok()?;
        c.clone()
    }
}

impl Waits for Slot {
    fn must_wait(&self, call_id: &str) -> Result<Option<Duration>, String> {
        self.claim()?;
        lock(&self.state).question = Some(call_id.to_owned());
        self.poll.store(POLL_QUESTION_MS, Ordering::Relaxed);
        Ok(Some(self.timeout))
    }

    fn answered(&self) {
        self.running();
    }

    fn task_id(&self) -> Option<String> {
        lock(&self.state).task_id.clone()
    }
}

/// The slot of the call being polled, if it may become a task.
pub(super) fn slot() -> Option<Arc<Slot>> {
    SLOT.try_with(Arc::clone).ok()
}

/// Inside a call that may become a task: make it one now (a tool whose answer will take a
/// while, such as a fixture that escalates to a task). `false` outside such a call, or when
/// its client's tasks are at their bound (it then answers inline).
pub fn become_task() -> bool {
    SLOT.try_with(Arc::clone)
        .ok()
        .is_some_and(|s| s.claim().is_ok())
}

/// Inside a call that may become a task: ask its client for input — the task reports
/// `input_required` with `request` under `key` until `tasks/update` answers it. `None` outside
/// such a call, when the client's tasks are at their bound, or when the task was cancelled or
/// ended meanwhile.
pub async fn request_input(key: &str, request: InputRequest) -> Option<serde_json::Value> {
    let slot = SLOT.try_with(Arc::clone).ok()?;
    slot.claim().ok()?;
    let cx = slot.context().await?;
    cx.request_input(key, request).await.ok()
}

/// Everything a declared call needs besides itself.
pub struct Declared {
    pub store: Arc<TaskStore>,
    pub broker: Broker,
    /// The identity the task will belong to (`super::owner`).
    pub owner: String,
    pub client: String,
    pub tool: String,
    pub shape: Shape,
    pub task_timeout: Duration,
    pub max_tasks: u32,
}

/// Runs `run` (the call, as it runs for any client) detached, and answers inline or with a
/// task handle. `cancelled` is the request's own end (the client's `notifications/cancelled`,
/// its session ending): before a handle is sent it ends the call as it ends any — a waiting
/// question withdrawn, a read stopped, act work that started left to run to its end.
pub async fn call(
    d: Declared,
    run: impl Future<Output = Result<CallToolResponse, McpError>> + Send + 'static,
    cancelled: impl Future<Output = ()>,
) -> Result<CallToolResponse, McpError> {
    let (context, _) = watch::channel(None);
    // A call that becomes a task by asking (the gate's question, its client's input) waits for
    // someone first; one that outlasts the inline moment is already running.
    let poll = Arc::new(AtomicU64::new(POLL_QUESTION_MS));
    let slot = Arc::new(Slot {
        store: d.store.clone(),
        owner: d.owner.clone(),
        client: d.client.clone(),
        timeout: d.task_timeout,
        max: d.max_tasks,
        state: Mutex::default(),
        claimed: Notify::new(),
        context,
        poll: poll.clone(),
        long_running: d.shape.long_running,
    });
    let waits: Arc<dyn Waits> = slot.clone();
    // Before a handle is sent, the request's end stops the call only while its act work has
    // not started (`archgate_core::gate::ON_START`; attack 15 F3): started work runs to its end.
    let latch = archgate_core::gate::StartLatch::new();
    let run = archgate_core::gate::ON_START.scope(latch.clone(), run);
    let mut handle = tokio::spawn(WAITS.scope(waits, SLOT.scope(slot.clone(), run)));
    let moment = tokio::time::sleep(INLINE_MOMENT);
    tokio::pin!(moment, cancelled);
    let mut moment_passed = !d.shape.long_running;
    loop {
        tokio::select! {
            joined = &mut handle => {
                // Answered before it became a task (or in the instant it claimed one).
                slot.release();
                return joined.unwrap_or_else(|e| {
                    Err(McpError::internal_error(format!("the call ended abnormally: {e}"), None))
                });
            }
            () = slot.claimed.notified() => break,
            () = &mut moment, if !moment_passed => {
                moment_passed = true;
                // Past its bound the call, already running, answers inline as before.
                if slot.claim().is_ok() {
                    slot.running();
                    break;
                }
            }
            () = &mut cancelled => {
                if latch.abandon() {
                    handle.abort();
                }
                slot.release();
                return Err(McpError::internal_error("the request was cancelled", None));
            }
        }
    }
    debug_assert!(slot.is_claimed());
    let ttl = d.task_timeout.as_millis() as u64 + KEEP_AFTER_DEADLINE_MS;
    let options = TaskOptions::new()
        .with_ttl_ms(ttl)
        .with_poll_interval_ms(poll.load(Ordering::Relaxed));
    let for_task = slot.clone();
    let broker = d.broker.clone();
    let read_only = d.shape.read_only;
    let task = d.store.manager.spawn(options, move |cx| {
        lock(&for_task.state).task_id = Some(cx.task_id().to_owned());
        for_task.context.send_replace(Some(cx.clone()));
        Box::pin(drive(cx, handle, for_task, broker, read_only))
    });
    d.store.own(Entry {
        id: task.task_id.clone(),
        owner: d.owner.clone(),
        client: d.client.clone(),
        tool: d.tool.clone(),
        call: lock(&slot.state).question.clone(),
        created: task.created_at.clone(),
        until: archgate_core::person::now_secs() + ttl / 1000 * 2,
        ended: false,
        after_restart: None,
        pid: 0,
        pid_start: 0,
    });
    d.store.hint(&task.task_id, poll);
    // A task that ended in the instant before it was in the table.
    if lock(&slot.state).released {
        d.store.table.ended(&task.task_id);
    }
    Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
}

/// Releases the client's claim when the task ends, however it ends.
struct Release(Arc<Slot>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// The task: the call's answer, or what `tasks/cancel` did to it.
async fn drive(
    cx: TaskContext,
    mut handle: JoinHandle<Result<CallToolResponse, McpError>>,
    slot: Arc<Slot>,
    broker: Broker,
    read_only: bool,
) -> Result<CallToolResult, TaskExit> {
    let _release = Release(slot.clone());
    let joined = tokio::select! {
        joined = &mut handle => joined,
        () = cx.cancelled() => {
            let question = lock(&slot.state).question.clone();
            // A question still waiting is withdrawn: nothing runs.
            if let Some(id) = question
                && broker.answer(&id, Answer::Cancel, CANCEL_CHANNEL).is_ok()
            {
                let _ = handle.await;
                return Err(TaskExit::Cancelled);
            }
            if read_only {
                handle.abort();
                let _ = handle.await;
                return Err(TaskExit::Cancelled);
            }
            cx.set_status_message(
                "tasks/cancel came after this call's work had started; archgate does not stop work that acts midway, so it ran to its end and the result says what it did",
            );
            handle.await
        }
    };
    match joined {
        Ok(Ok(CallToolResponse::Complete(r))) => Ok(r),
        Ok(Ok(_)) => Err(TaskExit::Error(McpError::internal_error(
            "the call answered with neither a result nor an error",
            None,
        ))),
        Ok(Err(e)) => Err(TaskExit::Error(e)),
        Err(e) => Err(TaskExit::Error(McpError::internal_error(
            format!("the call ended abnormally: {e}"),
            None,
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ContentBlock, TaskStatus};

    fn declared(store: &Arc<TaskStore>, long_running: bool, read_only: bool) -> Declared {
        Declared {
            store: store.clone(),
            broker: Broker::new(),
            owner: "c0de".into(),
            client: "coder".into(),
            tool: "theme".into(),
            shape: Shape {
                long_running,
                read_only,
            },
            task_timeout: Duration::from_secs(60),
            max_tasks: 1,
        }
    }

    fn done(text: &str) -> Result<CallToolResponse, McpError> {
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    async fn settled(store: &TaskStore, id: &str) -> rmcp::model::DetailedTask {
        loop {
            let t = store.get("c0de", id).unwrap();
            if t.status().is_terminal() {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn task_id(r: Result<CallToolResponse, McpError>) -> String {
        match r.unwrap() {
            CallToolResponse::Task(t) => t.task.task_id,
            other => panic!("not a task: {other:?}"),
        }
    }

    /// A long-running tool that answers within the moment answers inline; one still running
    /// after it is a task, counted against its client's bound until it ends.
    #[tokio::test]
    async fn a_long_running_call_is_a_task_only_once_it_outlasts_the_inline_moment() {
        let store = Arc::new(TaskStore::default());
        let quick = call(
            declared(&store, true, true),
            async { done("quick") },
            std::future::pending(),
        )
        .await;
        assert!(
            matches!(quick, Ok(CallToolResponse::Complete(_))),
            "{quick:?}"
        );
        let slow = async {
            tokio::time::sleep(INLINE_MOMENT * 3).await;
            done("slow")
        };
        let id = task_id(call(declared(&store, true, true), slow, std::future::pending()).await);
        assert_eq!(
            store.get("c0de", &id).unwrap().status(),
            TaskStatus::Working
        );
        // At its bound (1), the next slow call answers inline, as any call did before tasks.
        let second = async {
            tokio::time::sleep(INLINE_MOMENT * 2).await;
            done("inline after all")
        };
        let r = call(declared(&store, true, true), second, std::future::pending()).await;
        assert!(matches!(r, Ok(CallToolResponse::Complete(_))), "{r:?}");
        assert_eq!(settled(&store, &id).await.status(), TaskStatus::Completed);
        // The ended task released its place.
        let third = async {
            tokio::time::sleep(INLINE_MOMENT * 3).await;
            done("a task again")
        };
        task_id(call(declared(&store, true, true), third, std::future::pending()).await);
        // Someone else's id is no task of theirs.
        assert!(store.get("5e1f", &id).is_err());
    }

    fn poll_of(store: &TaskStore, id: &str) -> u64 {
        store
            .get("c0de", id)
            .unwrap()
            .task
            .poll_interval_ms
            .unwrap()
    }

    /// The poll hint follows the task: the person's pace while its question waits, the work's
    /// once the answer came — a long_running tool's minutes, another tool's second.
    #[tokio::test]
    async fn the_poll_hint_follows_the_task_from_the_persons_wait_to_its_work() {
        for (long_running, running_ms) in [(false, POLL_RUN_MS), (true, POLL_LONG_RUN_MS)] {
            let store = Arc::new(TaskStore::default());
            let (answer_tx, answer_rx) = tokio::sync::oneshot::channel::<()>();
            let (ran_tx, ran_rx) = tokio::sync::oneshot::channel::<()>();
            let (end_tx, end_rx) = tokio::sync::oneshot::channel::<()>();
            let run = async move {
                let w = archgate_core::gate::task::WAITS.with(Arc::clone);
                w.must_wait("q-1").unwrap();
                let _ = answer_rx.await;
                w.answered();
                let _ = ran_tx.send(());
                let _ = end_rx.await;
                done("ran")
            };
            let id = task_id(
                call(
                    declared(&store, long_running, false),
                    run,
                    std::future::pending(),
                )
                .await,
            );
            assert_eq!(poll_of(&store, &id), POLL_QUESTION_MS);
            answer_tx.send(()).unwrap();
            ran_rx.await.unwrap();
            assert_eq!(
                poll_of(&store, &id),
                running_ms,
                "long_running {long_running}"
            );
            end_tx.send(()).unwrap();
            assert_eq!(settled(&store, &id).await.status(), TaskStatus::Completed);
        }
        // A long_running call that outlasts the inline moment is running from the start.
        let store = Arc::new(TaskStore::default());
        let slow = async {
            tokio::time::sleep(INLINE_MOMENT * 4).await;
            done("slow")
        };
        let id = task_id(call(declared(&store, true, true), slow, std::future::pending()).await);
        assert_eq!(poll_of(&store, &id), POLL_LONG_RUN_MS);
    }

    /// tasks/cancel stops a read midway (`cancelled`); work that acts and has started runs to
    /// its end, and the task says so instead of pretending it was undone.
    #[tokio::test]
    async fn cancel_stops_a_read_but_never_pretends_started_work_was_undone() {
        let store = Arc::new(TaskStore::default());
        let read = async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            done("never")
        };
        let id = task_id(call(declared(&store, true, true), read, std::future::pending()).await);
        store.cancel("c0de", &id).unwrap();
        assert_eq!(settled(&store, &id).await.status(), TaskStatus::Cancelled);

        let act = async {
            become_task();
            tokio::time::sleep(Duration::from_millis(300)).await;
            done("changed the theme")
        };
        let id = task_id(call(declared(&store, false, false), act, std::future::pending()).await);
        store.cancel("c0de", &id).unwrap();
        let t = settled(&store, &id).await;
        assert_eq!(t.status(), TaskStatus::Completed);
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(
            v["result"]["content"][0]["text"], "changed the theme",
            "{v}"
        );
        assert!(
            v["statusMessage"]
                .as_str()
                .unwrap()
                .contains("ran to its end"),
            "{v}"
        );
    }
}

//! MCP tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension of the 2026-07-28
//! revision): a call that must wait is answered with a task handle at once, and the client polls
//! `tasks/get` instead of holding a request open.
//!
//! Only for a request that declares the extension (in its `_meta` client capabilities, or at
//! `initialize` on the handshake era); every other request is answered inline exactly as before.
//! A declared call runs detached from its request (`call.rs`) and becomes a task when it must
//! wait: the gate routes its question to the person (`archgate_core::gate::task`), a trusted
//! relay is to bring the answer (then the question is the task's `input_required`, answered
//! through `tasks/update`, `relay.rs`), or a `long_running` tool is still running after
//! [`call::INLINE_MOMENT`]. Calls that finish sooner answer inline.
//!
//! Tasks live in [`TaskStore`]: rmcp's `TaskManager` runs and reports them; here each belongs to
//! the client that made it (another client's `tasks/get` finds no such task), and a client has at
//! most `approval.max_tasks` open. A dropped connection does not end a task: it runs, or its
//! question waits, until its deadline. Tasks are not kept across a restart of the daemon: a task
//! from before answers "unknown task", and its call's one audit record — `unreachable` for a
//! question that was waiting, `unknown` (from its `started` line) for a run that was under way —
//! names the task in its `task` field.

pub mod call;
pub mod relay;

pub use crate::app::tasks::TaskStore;

pub use call::{become_task, request_input};

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The poll interval a task suggests while a question waits for the person: people answer in
/// seconds, not milliseconds.
pub const POLL_QUESTION_MS: u64 = 2_000;
/// The poll interval a task suggests while its work runs.
pub const POLL_RUN_MS: u64 = 1_000;
/// How long a task stays readable after its deadline (rmcp keeps a finished task one more such
/// window, so a client that polls late still reads the outcome).
pub const KEEP_AFTER_DEADLINE_MS: u64 = 3_600_000;

/// Whether this request declared the tasks extension (in its `_meta`, or at `initialize`).
pub fn declared(cx: &rmcp::service::RequestContext<rmcp::service::RoleServer>) -> bool {
    cx.client_capabilities().is_some_and(|c| c.supports_tasks())
}

/// What a declared call of `tool` by `client` needs, from the catalogue and live config.
pub fn declared_call(app: &crate::app::App, client: &str, tool: &str) -> call::Declared {
    let config = app.gate.config().current();
    let shape = app
        .gate
        .catalogue()
        .get(tool)
        .map(|t| {
            let s = t.spec();
            call::Shape {
                long_running: s.long_running,
                read_only: s.read_only,
            }
        })
        .unwrap_or_default();
    call::Declared {
        store: app.tasks.clone(),
        broker: app.gate.broker().clone(),
        client: client.to_owned(),
        shape,
        task_timeout: config.approval.task_timeout,
        max_tasks: config.approval.max_tasks,
    }
}

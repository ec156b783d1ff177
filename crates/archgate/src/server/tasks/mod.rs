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

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputResponses};
use rmcp::task_manager::TaskManager;
use std::collections::HashMap;
use std::sync::Mutex;

pub use call::{become_task, request_input};

/// The poll interval a task suggests while a question waits for the person: people answer in
/// seconds, not milliseconds.
pub const POLL_QUESTION_MS: u64 = 2_000;
/// The poll interval a task suggests while its work runs.
pub const POLL_RUN_MS: u64 = 1_000;
/// How long a task stays readable after its deadline (rmcp keeps a finished task one more such
/// window, so a client that polls late still reads the outcome).
pub const KEEP_AFTER_DEADLINE_MS: u64 = 3_600_000;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every task of this process, each with its owner.
#[derive(Default)]
pub struct TaskStore {
    manager: TaskManager,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Task id → the client that made it.
    owners: HashMap<String, String>,
    /// Client → tasks it has open (and calls that just claimed one).
    open: HashMap<String, u32>,
}

/// The answer to a task id the client does not own: the same as to one that never existed.
fn unknown(task_id: &str) -> McpError {
    McpError::invalid_params(
        format!(
            "unknown task {task_id}: not one of this client's, past its retention, or from before archgate restarted (the call's record in `archgate log` names the task)"
        ),
        None,
    )
}

impl TaskStore {
    /// Counts one more open task for `client`, unless it has `max` already.
    fn claim(&self, client: &str, max: u32) -> Result<(), String> {
        let mut inner = lock(&self.inner);
        let n = inner.open.entry(client.to_owned()).or_default();
        if *n >= max {
            return Err(format!(
                "this call would wait as a task, and {client} already has {n} tasks open (approval.max_tasks = {max}); nothing was asked and nothing ran"
            ));
        }
        *n += 1;
        Ok(())
    }

    /// One of `client`'s open tasks ended (or a claim was not used).
    fn release(&self, client: &str) {
        let mut inner = lock(&self.inner);
        if let Some(n) = inner.open.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inner.open.remove(client);
            }
        }
    }

    /// Records `task_id` as `client`'s, forgetting tasks rmcp no longer keeps.
    fn own(&self, task_id: &str, client: &str) {
        let mut inner = lock(&self.inner);
        inner
            .owners
            .retain(|id, _| self.manager.get_task(id).is_ok());
        inner.owners.insert(task_id.to_owned(), client.to_owned());
    }

    /// `task_id`, if `client` made it.
    fn owned(&self, client: &str, task_id: &str) -> Result<(), McpError> {
        let inner = lock(&self.inner);
        match inner.owners.get(task_id) {
            Some(owner) if owner == client => Ok(()),
            _ => Err(unknown(task_id)),
        }
    }

    /// `tasks/get`.
    pub fn get(&self, client: &str, task_id: &str) -> Result<DetailedTask, McpError> {
        self.owned(client, task_id)?;
        self.manager.get_task(task_id).map_err(|_| {
            lock(&self.inner).owners.remove(task_id);
            unknown(task_id)
        })
    }

    /// `tasks/update`: the client's answers to the task's input requests.
    pub fn update(
        &self,
        client: &str,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<(), McpError> {
        self.owned(client, task_id)?;
        self.manager
            .update_task(task_id, responses)
            .map_err(|_| unknown(task_id))
    }

    /// `tasks/cancel`: what it does is the task's own (`call::drive`): a waiting question is
    /// withdrawn, a read stopped, a run that acts finishes and says what it did.
    pub fn cancel(&self, client: &str, task_id: &str) -> Result<(), McpError> {
        self.owned(client, task_id)?;
        self.manager
            .cancel_task(task_id)
            .map_err(|_| unknown(task_id))
    }
}

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

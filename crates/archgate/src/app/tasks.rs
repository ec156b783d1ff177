//! The MCP tasks of this process (SEP-2663), each with the identity that made it: rmcp's
//! `TaskManager` runs and reports them; here a task is found only by its owner — the token
//! itself, or a bridged client's own grant (`server::tasks::owner`), never the client's name,
//! which outlives the grant that held it (attack 4 F2): to anyone else its id answers "unknown
//! task", as an id that never existed does. An owner has at most `approval.max_tasks` open. How
//! a call becomes a task is `server/tasks`.
//!
//! Each task is in the table on disk too (`task_table.rs`): a restarted daemon answers
//! `tasks/get` of a task from before with `failed` and what became of it.

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputResponses, Task, TaskPayload, TaskStatus};
use rmcp::task_manager::TaskManager;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::task_table::{Entry, Table};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every task of this process, each with its owner, and the table of tasks from before.
#[derive(Default)]
pub struct TaskStore {
    pub(crate) manager: TaskManager,
    inner: Mutex<Inner>,
    pub(crate) table: Table,
}

#[derive(Default)]
struct Inner {
    /// Task id → the identity that made it.
    owners: HashMap<String, String>,
    /// Owner → tasks it has open (and calls that just claimed one).
    open: HashMap<String, u32>,
    /// Task id → the poll interval it suggests now (it follows the task's work).
    poll: HashMap<String, Arc<AtomicU64>>,
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

/// A task from before a restart: `failed`, with what became of it.
fn from_before(e: &Entry) -> DetailedTask {
    let mut error = serde_json::Map::new();
    error.insert("code".into(), (-32603).into());
    error.insert(
        "message".into(),
        e.after_restart.clone().unwrap_or_default().into(),
    );
    let mut task = Task::new(
        e.id.clone(),
        TaskStatus::Failed,
        e.created.clone(),
        rmcp::task_manager::current_timestamp(),
    );
    task.status_message = e.after_restart.clone();
    DetailedTask::new(task, TaskPayload::Failed { error })
}

/// The answer to `tasks/update` or `tasks/cancel` of a task from before a restart: it has
/// ended, and what became of it.
fn ended_before(e: &Entry) -> McpError {
    McpError::invalid_params(
        format!(
            "task {} has ended: {}",
            e.id,
            e.after_restart.as_deref().unwrap_or_default()
        ),
        None,
    )
}

impl TaskStore {
    /// The store whose table is kept in `path` (`state/tasks/`).
    pub fn open(path: std::path::PathBuf) -> TaskStore {
        TaskStore {
            table: Table::open(path),
            ..TaskStore::default()
        }
    }

    /// Counts one more open task for `owner` (`client` is its name), unless it has `max`.
    pub(crate) fn claim(&self, owner: &str, client: &str, max: u32) -> Result<(), String> {
        let mut inner = lock(&self.inner);
        let n = inner.open.entry(owner.to_owned()).or_default();
        if *n >= max {
            return Err(format!(
                "this call would wait as a task, and {client} already has {n} tasks open (approval.max_tasks = {max}); nothing was asked and nothing ran"
            ));
        }
        *n += 1;
        Ok(())
    }

    /// One of `owner`'s open tasks ended (or a claim was not used).
    pub(crate) fn release(&self, owner: &str) {
        let mut inner = lock(&self.inner);
        if let Some(n) = inner.open.get_mut(owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inner.open.remove(owner);
            }
        }
    }

    /// Records `entry`'s task as its owner's (here and in the table), forgetting tasks rmcp no
    /// longer keeps.
    pub(crate) fn own(&self, entry: Entry) {
        let mut inner = lock(&self.inner);
        let manager = &self.manager;
        inner.owners.retain(|id, _| manager.get_task(id).is_ok());
        let Inner { owners, poll, .. } = &mut *inner;
        poll.retain(|id, _| owners.contains_key(id));
        inner.owners.insert(entry.id.clone(), entry.owner.clone());
        drop(inner);
        self.table.add(entry);
    }

    /// `task_id`, if `owner` made it: `Ok(None)` for a task of this process, `Ok(Some)` for one
    /// from before a restart.
    fn owned(&self, owner: &str, task_id: &str) -> Result<Option<Entry>, McpError> {
        let inner = lock(&self.inner);
        match inner.owners.get(task_id) {
            Some(o) if o == owner => Ok(None),
            Some(_) => Err(unknown(task_id)),
            None => self
                .table
                .before_restart(owner, task_id)
                .map(Some)
                .ok_or_else(|| unknown(task_id)),
        }
    }

    /// The poll interval task `task_id` suggests, as it changes.
    pub(crate) fn hint(&self, task_id: &str, poll: Arc<AtomicU64>) {
        lock(&self.inner).poll.insert(task_id.to_owned(), poll);
    }

    /// `tasks/get`: with the poll interval that fits what the task does now.
    pub fn get(&self, owner: &str, task_id: &str) -> Result<DetailedTask, McpError> {
        if let Some(e) = self.owned(owner, task_id)? {
            return Ok(from_before(&e));
        }
        let mut t = self.manager.get_task(task_id).map_err(|_| {
            let mut inner = lock(&self.inner);
            inner.owners.remove(task_id);
            inner.poll.remove(task_id);
            unknown(task_id)
        })?;
        if !t.status().is_terminal()
            && let Some(p) = lock(&self.inner).poll.get(task_id)
        {
            t.task.poll_interval_ms = Some(p.load(Ordering::Relaxed));
        }
        Ok(t)
    }

    /// `tasks/update`: the client's answers to the task's input requests.
    pub fn update(
        &self,
        owner: &str,
        task_id: &str,
        responses: InputResponses,
    ) -> Result<(), McpError> {
        if let Some(e) = self.owned(owner, task_id)? {
            return Err(ended_before(&e));
        }
        self.manager
            .update_task(task_id, responses)
            .map_err(|_| unknown(task_id))
    }

    /// `tasks/cancel`: what it does is the task's own (`call::drive`): a waiting question is
    /// withdrawn, a read stopped, a run that acts finishes and says what it did.
    pub fn cancel(&self, owner: &str, task_id: &str) -> Result<(), McpError> {
        if let Some(e) = self.owned(owner, task_id)? {
            return Err(ended_before(&e));
        }
        self.manager
            .cancel_task(task_id)
            .map_err(|_| unknown(task_id))
    }
}

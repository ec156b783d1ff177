//! The MCP tasks of this process (SEP-2663), each with the client that made it: rmcp's
//! `TaskManager` runs and reports them; here a task is found only by its own client (another
//! client's `tasks/get` answers "unknown task", as for an id that never existed), and a client
//! has at most `approval.max_tasks` open. How a call becomes a task is `server/tasks`.

use rmcp::ErrorData as McpError;
use rmcp::model::{DetailedTask, InputResponses};
use rmcp::task_manager::TaskManager;
use std::collections::HashMap;
use std::sync::Mutex;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every task of this process, each with its owner.
#[derive(Default)]
pub struct TaskStore {
    pub(crate) manager: TaskManager,
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
    pub(crate) fn claim(&self, client: &str, max: u32) -> Result<(), String> {
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
    pub(crate) fn release(&self, client: &str) {
        let mut inner = lock(&self.inner);
        if let Some(n) = inner.open.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                inner.open.remove(client);
            }
        }
    }

    /// Records `task_id` as `client`'s, forgetting tasks rmcp no longer keeps.
    pub(crate) fn own(&self, task_id: &str, client: &str) {
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

//! A call that may become a task: the transport's side of MCP's tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`), as the gate sees it.
//!
//! The gate does not know about MCP. A transport that can answer a call with a task handle runs
//! the call inside [`WAITS`]; when the call is about to wait for the person, the gate asks it
//! ([`Waits::must_wait`]) whether the call is a task now — then the question waits the task's
//! deadline instead of the inline one, since no request is held open — or is refused (the client
//! has as many tasks open as it may). Without [`WAITS`] (every other call) nothing changes.
//!
//! The call's one record says which it was: `task` names the task it ran as, absent inline.

use std::sync::Arc;
use std::time::Duration;

/// What a transport lets a call become while it waits.
pub trait Waits: Send + Sync {
    /// The call `call_id` is about to wait for the person's answer.
    ///
    /// `Ok(Some(d))`: it is a task (now, or already was), and its question waits `d`.
    /// `Ok(None)`: it is not, and waits inline as any call does.
    /// `Err(message)`: it may not become one (the client's open tasks are at their bound); the
    /// call is refused before anything is asked or run.
    fn must_wait(&self, call_id: &str) -> Result<Option<Duration>, String>;

    /// The task the call became, by id, for its record; `None` while it is answered inline.
    fn task_id(&self) -> Option<String>;

    /// The call's question was settled (answered, withdrawn, past its deadline): what follows
    /// is the call's own work, not the person's (a task's poll hint follows it).
    fn answered(&self) {}
}

tokio::task_local! {
    /// Set by the transport around a call that may become a task.
    pub static WAITS: Arc<dyn Waits>;
}

/// The hook of the call being polled, if its transport set one.
pub(crate) fn current() -> Option<Arc<dyn Waits>> {
    WAITS.try_with(Arc::clone).ok()
}

//! A plain `tools/call` runs apart from its request (class: *work that acts is stopped midway
//! by the agent*, attack 15 F3; the latch: `archgate_core::gate::detach`). When the request
//! ends first — the client's `notifications/cancelled`, a closed connection, a bridged client
//! gone — the call is stopped only while its act work has not started (a waiting question is
//! withdrawn, nothing ran); started work runs to its end or its timeout and its one record says
//! what it did, as a task's does after `tasks/cancel`.

use archgate_core::gate::{CallResult, Client, Gate, ON_START, Relay, StartLatch};
use serde_json::Value;
use std::sync::Arc;
use tokio::task::JoinHandle;

/// The call, spawned; and what the request holds while it waits for it.
pub fn spawn(
    gate: Arc<Gate>,
    client: Client,
    session: Option<String>,
    tool: String,
    args: Value,
    relay: Relay,
) -> (JoinHandle<CallResult>, StopUnlessStarted) {
    let latch = StartLatch::new();
    let work = tokio::spawn(ON_START.scope(latch.clone(), async move {
        gate.call_in_session(&client, session.as_deref(), &tool, args, &relay)
            .await
    }));
    let stop = StopUnlessStarted {
        latch,
        work: work.abort_handle(),
    };
    (work, stop)
}

/// Held by the request while its call runs apart from it: dropped (the request answered or
/// ended), it stops the call only if no act work has started.
pub struct StopUnlessStarted {
    latch: Arc<StartLatch>,
    work: tokio::task::AbortHandle,
}

impl Drop for StopUnlessStarted {
    fn drop(&mut self) {
        if self.latch.abandon() {
            self.work.abort();
        }
    }
}

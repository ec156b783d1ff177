//! A trusted relay inside a task: the person's question is the task's `input_required` (an
//! `elicitation/create` under `archgate_approval`), and the client's `tasks/update` brings the
//! answer — one more channel of the broker, as the handshake era's live elicitation is
//! (`server/relay.rs`). Whether the client may relay at all stays the gate's decision
//! (`trusted_relay`, `gate::ask`); the first answer from any channel wins.

use archgate_core::approval::{Broker, Channel, Question};
use archgate_core::gate::Relay;
use rmcp::service::{RequestContext, RoleServer};
use std::sync::Arc;

use super::call::{Slot, slot};
use crate::server::relay::{INPUT_KEY, answer_in_result, can_elicit, question_request};

/// The relay for a call that may become a task, when its client can be asked: `None` outside
/// such a call (then `server::relay::for_request` decides as for any call).
pub fn for_task(cx: &RequestContext<RoleServer>) -> Option<Relay> {
    let slot = slot()?;
    can_elicit(cx).then(|| Relay::Live(Arc::new(TaskInput { slot })))
}

struct TaskInput {
    slot: Arc<Slot>,
}

impl Channel for TaskInput {
    fn name(&self) -> &'static str {
        "client"
    }

    fn ask(&self, q: &Question, broker: Broker) {
        let request = question_request(q);
        let (slot, id) = (self.slot.clone(), q.id.clone());
        // The task exists by now (the gate made the call one before asking); its end drops
        // the pending request, and a question decided elsewhere leaves this answer nothing to do.
        tokio::spawn(async move {
            let Some(cx) = slot.context().await else {
                return;
            };
            if let Ok(v) = cx.request_input(INPUT_KEY, request).await {
                let _ = broker.answer(&id, answer_in_result(&v), "client");
            }
        });
    }

    fn withdraw(&self, _id: &str) {}
}

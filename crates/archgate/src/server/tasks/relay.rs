//! A trusted relay inside a task: the person's question is the task's `input_required` (an
//! `elicitation/create` under `archgate_approval`), and the client's `tasks/update` brings the
//! answer — one more channel of the broker, as the handshake era's live elicitation is
//! (`server/relay.rs`). Whether the client may relay at all stays the gate's decision
//! (`trusted_relay`, `gate::ask`); the first answer from any channel wins.

use archgate_core::approval::{Broker, Channel, Question};
use archgate_core::gate::Relay;
use rmcp::service::{RequestContext, RoleServer};
use serde_json::json;
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

    /// Decided on another channel (or past its deadline): the task stops asking its client.
    fn withdraw(&self, _id: &str) {
        self.slot
            .settle_input(INPUT_KEY, json!({ "action": "cancel" }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::tasks::TaskStore;
    use crate::server::tasks::call::{Declared, Shape, call};
    use archgate_core::approval::{Answer, Broker};
    use rmcp::model::{CallToolResult, ContentBlock, TaskStatus};
    use std::time::Duration;

    fn question(id: &str) -> Question {
        Question {
            id: id.into(),
            client: "coder".into(),
            token: None,
            tool: "handoff".into(),
            route: "handoff".into(),
            summary: "pacman -Syu".into(),
            sentence: archgate_core::sentence::Sentence {
                parts: Vec::new(),
                replaces: None,
            },
            picture: None,
            tier: archgate_core::policy::Tier::Act,
            args: json!({}),
            created: 0,
            deadline: 600,
            rule_allowed: false,
            follows: None,
            agent: None,
        }
    }

    /// The relay's question is the task's `input_required`; answered on the person's own
    /// channel instead, the task stops asking its client while the work that follows runs.
    #[tokio::test]
    async fn a_question_decided_elsewhere_leaves_the_tasks_input_required() {
        let store = Arc::new(TaskStore::default());
        let broker = Broker::new();
        let _page = broker.register_pull_channel();
        let d = Declared {
            store: store.clone(),
            broker: broker.clone(),
            owner: "c0de".into(),
            client: "coder".into(),
            tool: "handoff".into(),
            shape: Shape::default(),
            task_timeout: Duration::from_secs(600),
            max_tasks: 4,
        };
        let b = broker.clone();
        let run = async move {
            let relay: Arc<dyn Channel> = Arc::new(TaskInput {
                slot: super::super::call::slot().expect("inside a declared call"),
            });
            super::super::become_task();
            let outcome = b
                .ask_via(question("q-1"), Duration::from_secs(600), Some(relay))
                .await;
            // The work the yes allowed, taking a while.
            tokio::time::sleep(Duration::from_millis(800)).await;
            Ok(CallToolResult::success(vec![ContentBlock::text(outcome.name())]).into())
        };
        let r = call(d, run, std::future::pending()).await.unwrap();
        let rmcp::model::CallToolResponse::Task(t) = r else {
            panic!("not a task");
        };
        let id = t.task.task_id;
        let status = || store.get("c0de", &id).unwrap().status();
        while status() != TaskStatus::InputRequired {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        broker.answer("q-1", Answer::Allow, "cli").unwrap();
        while status() == TaskStatus::InputRequired {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Still running the work, no longer asking.
        assert_eq!(status(), TaskStatus::Working);
        while !status().is_terminal() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let v = serde_json::to_value(store.get("c0de", &id).unwrap()).unwrap();
        assert_eq!(v["result"]["content"][0]["text"], "accepted", "{v}");
    }
}

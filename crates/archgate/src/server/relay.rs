//! The calling client as a channel to the person (`trusted_relay = true` in its `[clients.NAME]`
//! section — only the person can write that; a client's own word counts for nothing).
//!
//! A client that declares elicitation is asked the question the page shows, with Allow and Deny:
//! - on the handshake era, while the call waits: an `elicitation/create` request to the client
//!   (`Elicit`, one more channel of the broker for this question; withdrawn with the others);
//! - on the stateless era (2026-07-28), where a request cannot wait on its client: the call ends
//!   with an `InputRequiredResult` whose `requestState` is the gate's ticket, and the client's
//!   retry carries the person's answer under `archgate_approval`.
//!
//! Either way the first answer from any channel wins, the deadline still decides, and a relay
//! never creates a standing rule (`gate::ask`).

use archgate_core::approval::{Answer, Broker, Channel, Question};
use archgate_core::config::Config;
use archgate_core::gate::{CallResult, Client, Relay};
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, ElicitRequestParams, ElicitationAction, InputRequiredResult,
    InputResponses,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::AbortHandle;

/// The key of the approval question among an `InputRequiredResult`'s requests.
pub const INPUT_KEY: &str = "archgate_approval";

/// The relay this request's client offers, if the person trusts it and it can be asked. The trust
/// check here only spares building a channel nobody may use; the gate decides again under the
/// call's own config snapshot (`gate::ask`).
pub fn for_request(
    config: &Config,
    client: &Client,
    request: &CallToolRequestParams,
    cx: &RequestContext<RoleServer>,
) -> Relay {
    let trusted = config
        .clients
        .get(&client.name)
        .is_some_and(|c| c.trusted_relay);
    let can_elicit = cx
        .client_capabilities()
        .and_then(|c| c.elicitation)
        // An empty capability object means form mode (the only one used here).
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if !trusted || !can_elicit {
        return Relay::None;
    }
    // Eras without the initialize handshake are stateless: a request cannot wait on its client.
    let stateless = cx.protocol_version().is_some_and(|v| !v.has_initialize());
    if stateless {
        Relay::Resume {
            ticket: request.request_state.clone(),
            answer: request.input_responses.as_ref().and_then(answer_in),
        }
    } else {
        Relay::Live(Arc::new(Elicit {
            peer: cx.peer.clone(),
            asking: Mutex::default(),
        }))
    }
}

/// The person's answer among a retry's input responses (an `ElicitResult` under `INPUT_KEY`).
fn answer_in(responses: &InputResponses) -> Option<Answer> {
    let r = responses.get(INPUT_KEY)?;
    let action: ElicitationAction = serde_json::from_value(r.get("action")?.clone()).ok()?;
    Some(answer_of(action, r.get("content")))
}

/// What an elicitation answer means: only an accepted form saying "allow" is a yes.
fn answer_of(action: ElicitationAction, content: Option<&Value>) -> Answer {
    match action {
        ElicitationAction::Accept => {
            match content
                .and_then(|c| c.get("decision"))
                .and_then(Value::as_str)
            {
                Some("allow") => Answer::Allow,
                Some("deny") => Answer::Deny,
                // Accepted without a choice: no yes, and no no either.
                _ => Answer::Cancel,
            }
        }
        ElicitationAction::Decline => Answer::Deny,
        // Cancel, and any action a later protocol adds: not a yes.
        _ => Answer::Cancel,
    }
}

/// The question as the client shows it to the person.
fn elicitation(q: &QuestionView<'_>) -> Value {
    let message = format!(
        "archgate: may {} run this {} call?\n\n{}\n\nTool: {}. Unanswered by {} it is refused.",
        q.client,
        q.tier,
        q.command,
        q.tool,
        clock(q.deadline)
    );
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {
                    "type": "string",
                    "title": "Decision",
                    "description": "allow runs exactly the call shown, once; deny refuses it",
                    "enum": ["allow", "deny"],
                },
            },
            "required": ["decision"],
        },
    })
}

struct QuestionView<'a> {
    client: &'a str,
    tool: &'a str,
    command: &'a str,
    tier: &'a str,
    deadline: u64,
}

/// `HH:MM:SS` UTC of a Unix time.
fn clock(unix: u64) -> String {
    let s = unix % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}

/// The handshake-era relay: asks the client with `elicitation/create` while the call waits.
struct Elicit {
    peer: Peer<RoleServer>,
    /// Elicitations in flight, by question; aborted when the question is decided elsewhere.
    asking: Mutex<HashMap<String, AbortHandle>>,
}

impl Channel for Elicit {
    fn name(&self) -> &'static str {
        "client"
    }

    fn ask(&self, q: &Question, broker: Broker) {
        let tier = q.tier.to_string();
        let view = QuestionView {
            client: &q.client,
            tool: &q.tool,
            command: &q.summary,
            tier: &tier,
            deadline: q.deadline,
        };
        let params: ElicitRequestParams = match serde_json::from_value(elicitation(&view)) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("the approval elicitation did not build: {e}");
                return;
            }
        };
        let (peer, id) = (self.peer.clone(), q.id.clone());
        let task = tokio::spawn(async move {
            match peer.create_elicitation(params).await {
                Ok(r) => {
                    let answer = answer_of(r.action, r.content.as_ref());
                    // Decided elsewhere already, or too late: then that stands.
                    let _ = broker.answer(&id, answer, "client");
                }
                Err(e) => tracing::info!(
                    question = %id,
                    "the client could not relay the question ({e}); the other channels still can"
                ),
            }
        });
        self.asking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(q.id.clone(), task.abort_handle());
    }

    fn withdraw(&self, id: &str) {
        if let Some(t) = self
            .asking
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
        {
            t.abort();
        }
    }
}

/// A call that ended `input_required` becomes the protocol's `InputRequiredResult`: the question
/// as an elicitation, and the ticket as `requestState`.
pub fn input_required(r: &CallResult) -> Option<Result<InputRequiredResult, McpError>> {
    let asked = r.output.as_ref().err()?.input_required()?;
    let tier = asked.tier.to_string();
    let view = QuestionView {
        client: &asked.client,
        tool: &asked.tool,
        command: &asked.command,
        tier: &tier,
        deadline: asked.deadline,
    };
    let ticket = &asked.ticket;
    let result = json!({
        "resultType": "input_required",
        "inputRequests": { INPUT_KEY: { "method": "elicitation/create", "params": elicitation(&view) } },
        "requestState": ticket,
    });
    Some(serde_json::from_value(result).map_err(|e| {
        McpError::internal_error(
            format!("the input-required answer did not build: {e}"),
            None,
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_accepted_allow_is_a_yes() {
        let c = |d: &str| json!({ "decision": d });
        assert_eq!(
            answer_of(ElicitationAction::Accept, Some(&c("allow"))),
            Answer::Allow
        );
        assert_eq!(
            answer_of(ElicitationAction::Accept, Some(&c("deny"))),
            Answer::Deny
        );
        assert_eq!(
            answer_of(ElicitationAction::Accept, Some(&c("yes"))),
            Answer::Cancel
        );
        assert_eq!(answer_of(ElicitationAction::Accept, None), Answer::Cancel);
        assert_eq!(
            answer_of(ElicitationAction::Decline, Some(&c("allow"))),
            Answer::Deny
        );
        assert_eq!(
            answer_of(ElicitationAction::Cancel, Some(&c("allow"))),
            Answer::Cancel
        );
    }

    #[test]
    fn the_question_is_a_valid_form_elicitation_showing_the_command() {
        let v = elicitation(&QuestionView {
            client: "coder",
            tool: "theme",
            command: "omarchy-theme-set nord",
            tier: "act",
            deadline: 3_600 + 61,
        });
        let p: ElicitRequestParams = serde_json::from_value(v.clone()).unwrap();
        let back = serde_json::to_value(&p).unwrap();
        let msg = back["message"].as_str().unwrap();
        assert!(
            msg.contains("omarchy-theme-set nord") && msg.contains("coder"),
            "{msg}"
        );
        assert!(msg.contains("01:01:01 UTC"), "{msg}");
        assert_eq!(
            back["requestedSchema"]["properties"]["decision"]["enum"],
            json!(["allow", "deny"])
        );
    }
}

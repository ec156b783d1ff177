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
use archgate_core::gate::{CallResult, Relay};
use rmcp::model::{
    CallToolRequestParams, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::AbortHandle;

/// The key of the approval question among an `InputRequiredResult`'s requests.
pub const INPUT_KEY: &str = "archgate_approval";

/// The relay this request's client offers, if it can be asked. Whether it may is the person's
/// word (`trusted_relay`), decided once, by the gate, under the call's own config snapshot
/// (`gate::ask`): an untrusted client's relay is never used.
pub fn for_request(request: &CallToolRequestParams, cx: &RequestContext<RoleServer>) -> Relay {
    if !can_elicit(cx) {
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

/// Whether this request's client can be asked a question (form elicitation).
pub(crate) fn can_elicit(cx: &RequestContext<RoleServer>) -> bool {
    cx.client_capabilities()
        .and_then(|c| c.elicitation)
        // An empty capability object means form mode (the only one used here).
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The question as an input request (an MCP task's `inputRequests`, `server/tasks/relay.rs`).
pub(crate) fn question_request(q: &Question) -> InputRequest {
    let tier = q.tier.to_string();
    let view = QuestionView {
        client: &q.client,
        tool: &q.tool,
        command: &q.summary,
        tier: &tier,
        deadline: q.deadline,
        follows: q.follows.as_ref().map(|f| f.sentence.as_str()),
    };
    InputRequest::Elicitation(ElicitRequest::new(elicitation(&view)))
}

/// The person's answer in one elicitation result (`{action, content}`); anything else is no
/// yes.
pub(crate) fn answer_in_result(r: &Value) -> Answer {
    match r
        .get("action")
        .and_then(|a| serde_json::from_value::<ElicitationAction>(a.clone()).ok())
    {
        Some(action) => answer_of(action, r.get("content")),
        None => Answer::Cancel,
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

/// The form the person answers: allow or deny. Our own constant, parsed once.
static DECISION_FORM: std::sync::LazyLock<ElicitationSchema> = std::sync::LazyLock::new(|| {
    ElicitationSchema::from_json_schema(
        json!({
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
        })
        .as_object()
        .cloned()
        .unwrap_or_default(),
    )
    .expect("the decision form is a valid elicitation schema")
});

/// The question as the client shows it to the person.
fn elicitation(q: &QuestionView<'_>) -> ElicitRequestParams {
    let mut message = format!(
        "archgate: may {} run this {} call?\n\n{}\n\nTool: {}. Unanswered by {} it is refused.",
        q.client,
        q.tier,
        q.command,
        q.tool,
        clock(q.deadline)
    );
    // What the agent read just before: the person decides knowing it (issue 31).
    if let Some(f) = q.follows {
        message.push_str(&format!("\n\nAfter untrusted text: {f}."));
    }
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: DECISION_FORM.clone(),
    }
}

struct QuestionView<'a> {
    client: &'a str,
    tool: &'a str,
    command: &'a str,
    tier: &'a str,
    deadline: u64,
    follows: Option<&'a str>,
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
            follows: q.follows.as_ref().map(|f| f.sentence.as_str()),
        };
        let params = elicitation(&view);
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
/// as an elicitation, and the ticket as `requestState` — typed from the gate's typed refusal to
/// rmcp's typed result.
pub fn input_required(r: &CallResult) -> Option<InputRequiredResult> {
    let asked = r.output.as_ref().err()?.input_required()?;
    let tier = asked.tier.to_string();
    let view = QuestionView {
        client: &asked.client,
        tool: &asked.tool,
        command: &asked.command,
        tier: &tier,
        deadline: asked.deadline,
        follows: asked.follows.as_deref(),
    };
    let request = InputRequest::Elicitation(ElicitRequest::new(elicitation(&view)));
    Some(InputRequiredResult::new(
        Some(InputRequests::from([(INPUT_KEY.to_owned(), request)])),
        Some(asked.ticket.clone()),
    ))
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
            follows: None,
        });
        let back = serde_json::to_value(&v).unwrap();
        let msg = back["message"].as_str().unwrap();
        assert!(
            msg.contains("omarchy-theme-set nord") && msg.contains("coder"),
            "{msg}"
        );
        assert!(msg.contains("01:01:01 UTC"), "{msg}");
        assert!(!msg.contains("untrusted"), "{msg}");
        let after = elicitation(&QuestionView {
            client: "coder",
            tool: "theme",
            command: "omarchy-theme-set nord",
            tier: "act",
            deadline: 0,
            follows: Some(
                "this follows text from AUR package x's PKGBUILD and files, read 3 s ago",
            ),
        });
        let msg = serde_json::to_value(&after).unwrap()["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            msg.contains("After untrusted text: this follows text from AUR package x's PKGBUILD"),
            "{msg}"
        );
        assert_eq!(
            back["requestedSchema"]["properties"]["decision"]["enum"],
            json!(["allow", "deny"])
        );
    }

    /// The typed answer is byte for byte what the JSON-built one was: the old construction,
    /// parsed as rmcp parses it, against the new.
    #[test]
    fn an_input_required_answer_is_built_typed_and_reads_as_before() {
        use archgate_core::audit::Outcome;
        use archgate_core::gate::{Details, InputRequired, Kind, Refusal};
        let asked = InputRequired {
            ticket: "t-1".into(),
            client: "coder".into(),
            tool: "theme".into(),
            command: "omarchy-theme-set nord".into(),
            tier: archgate_core::policy::Tier::Act,
            deadline: 3_661,
            follows: None,
        };
        let r = CallResult {
            id: "1".into(),
            outcome: Outcome::InputRequired,
            output: Err(
                Refusal::new(Outcome::InputRequired, Kind::InputRequired, "ask")
                    .details(Details::Ticket(asked)),
            ),
        };
        let typed = serde_json::to_value(input_required(&r).unwrap()).unwrap();
        let message = "archgate: may coder run this act call?\n\nomarchy-theme-set nord\n\n\
                       Tool: theme. Unanswered by 01:01:01 UTC it is refused.";
        let before = json!({
            "resultType": "input_required",
            "inputRequests": { INPUT_KEY: { "method": "elicitation/create", "params": {
                "mode": "form",
                "message": message,
                "requestedSchema": {
                    "type": "object",
                    "properties": { "decision": {
                        "type": "string",
                        "title": "Decision",
                        "description": "allow runs exactly the call shown, once; deny refuses it",
                        "enum": ["allow", "deny"],
                    }},
                    "required": ["decision"],
                },
            }}},
            "requestState": "t-1",
        });
        let before: InputRequiredResult = serde_json::from_value(before).unwrap();
        assert_eq!(typed, serde_json::to_value(before).unwrap());
        // Any other refusal is no question.
        let other = CallResult {
            id: "2".into(),
            outcome: Outcome::Refused,
            output: Err(Refusal::new(Outcome::Refused, Kind::Refused, "no")),
        };
        assert!(input_required(&other).is_none());
    }
}

//! The input-required fixtures (SEP-2322, protocol 2026-07-28): a tool answers "I need this
//! first", the client gathers the answers and calls again with them and the echoed `requestState`.
//!
//! `requestState` comes back from the client, so it is untrusted: it is sealed with HMAC-SHA256
//! under a key drawn at start, bound to the tool that issued it, and refused (a JSON-RPC error)
//! when the seal does not hold.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::ErrorData as McpError;
use rmcp::model::InputRequiredResult;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::sync::LazyLock;
use subtle::ConstantTimeEq;

use super::FixtureRequest;
use super::tools::{Answer, Answered, from_json};

/// The sealing key: fresh random bytes per process (`None` if the OS would not give any, and
/// then no state is issued).
static KEY: LazyLock<Option<[u8; 32]>> = LazyLock::new(|| {
    let mut k = [0u8; 32];
    getrandom::fill(&mut k).ok().map(|()| k)
});

fn hmac(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut ipad = [0x36u8; BLOCK];
    let mut opad = [0x5cu8; BLOCK];
    for (i, b) in key.iter().enumerate() {
        ipad[i] ^= b;
        opad[i] ^= b;
    }
    let mut inner = Sha256::new();
    inner.update(ipad);
    for p in parts {
        inner.update((p.len() as u64).to_be_bytes());
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(opad);
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// `payload` sealed for `tool`: `base64url(json) "." base64url(tag)`.
pub(super) fn seal(tool: &str, payload: &Value) -> Result<String, McpError> {
    let key = KEY.as_ref().ok_or_else(|| {
        McpError::internal_error("no sealing key: the OS gave no random bytes", None)
    })?;
    let body = URL_SAFE_NO_PAD.encode(payload.to_string());
    let tag = hmac(key, &[tool.as_bytes(), body.as_bytes()]);
    Ok(format!("{body}.{}", URL_SAFE_NO_PAD.encode(tag)))
}

/// The payload of a state sealed for `tool`, or `None` when it was not (forged, altered, another
/// tool's, or malformed).
pub(super) fn open(tool: &str, sealed: &str) -> Option<Value> {
    let key = KEY.as_ref()?;
    let (body, tag) = sealed.split_once('.')?;
    let tag = URL_SAFE_NO_PAD.decode(tag).ok()?;
    let expected = hmac(key, &[tool.as_bytes(), body.as_bytes()]);
    if !bool::from(expected.as_slice().ct_eq(&tag)) {
        return None;
    }
    serde_json::from_slice(&URL_SAFE_NO_PAD.decode(body).ok()?).ok()
}

fn tampered() -> McpError {
    McpError::invalid_params("requestState failed its integrity check", None)
}

pub(super) fn elicitation(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { field: { "type": kind } },
                "required": [field],
            },
        },
    })
}

fn sampling(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": max_tokens,
        },
    })
}

fn roots() -> Value {
    json!({ "method": "roots/list", "params": {} })
}

/// An `InputRequiredResult` asking for `requests`, with `state` if given.
pub(super) fn ask(requests: Value, state: Option<String>) -> Result<InputRequiredResult, McpError> {
    let mut v = json!({ "resultType": "input_required", "inputRequests": requests });
    if let Some(s) = state {
        v["requestState"] = Value::String(s);
    }
    from_json(v)
}

/// A usable answer under `key`: a JSON object (an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`). Anything else counts as missing, and the fixture asks again.
pub(super) fn response<'a>(
    responses: Option<&'a rmcp::model::InputResponses>,
    key: &str,
) -> Option<&'a Map<String, Value>> {
    responses?.get(key)?.as_object()
}

/// `content.<field>` of an elicitation answer.
pub(super) fn elicited<'a>(r: &'a Map<String, Value>, field: &str) -> Option<&'a str> {
    r.get("content")?.get(field)?.as_str()
}

fn done(text: impl Into<String>) -> Answered {
    Ok(rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)]).into())
}

pub(super) fn run(name: &str, req: &FixtureRequest) -> Answered {
    let responses = req.input_responses.as_ref();
    let state = req.request_state.as_deref();
    let needed = |r: InputRequiredResult| Ok(Answer::InputRequired(r));
    match name {
        "test_streaming_elicitation" => needed(ask(
            json!({ "streaming_elicitation": elicitation("Provide a value", "value", "string") }),
            None,
        )?),
        "test_input_required_result_elicitation" => match response(responses, "user_name") {
            Some(r) => done(format!(
                "Hello, {}!",
                elicited(r, "name").unwrap_or("friend")
            )),
            None => needed(ask(
                json!({ "user_name": elicitation("What is your name?", "name", "string") }),
                None,
            )?),
        },
        "test_input_required_result_sampling" => match response(responses, "capital_question") {
            Some(r) => {
                let said = r
                    .get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("(no text)");
                done(format!("Sampling response: {said}"))
            }
            None => needed(ask(
                json!({ "capital_question": sampling("What is the capital of France?", 100) }),
                None,
            )?),
        },
        "test_input_required_result_list_roots" => match response(responses, "client_roots") {
            Some(r) => {
                let uris: Vec<&str> = r
                    .get("roots")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|root| root.get("uri").and_then(Value::as_str))
                    .collect();
                done(format!("Client roots: [{}]", uris.join(", ")))
            }
            None => needed(ask(json!({ "client_roots": roots() }), None)?),
        },
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => match state {
            None => needed(ask(
                json!({ "confirm": elicitation("Please confirm", "ok", "boolean") }),
                Some(seal(name, &json!({ "stage": "confirm" }))?),
            )?),
            Some(s) => {
                open(name, s).ok_or_else(tampered)?;
                if response(responses, "confirm").is_none() {
                    return needed(ask(
                        json!({ "confirm": elicitation("Please confirm", "ok", "boolean") }),
                        Some(seal(name, &json!({ "stage": "confirm" }))?),
                    )?);
                }
                done("Confirmed: state-ok")
            }
        },
        "test_input_required_result_multiple_inputs" => {
            if let Some(s) = state {
                open(name, s).ok_or_else(tampered)?;
            }
            let all = ["user_name", "greeting", "client_roots"]
                .iter()
                .all(|k| response(responses, k).is_some());
            if all && state.is_some() {
                return done("All inputs received");
            }
            needed(ask(
                json!({
                    "user_name": elicitation("What is your name?", "name", "string"),
                    "greeting": sampling("Generate a greeting", 50),
                    "client_roots": roots(),
                }),
                Some(seal(name, &json!({ "stage": "gather" }))?),
            )?)
        }
        "test_input_required_result_multi_round" => {
            let round = match state {
                None => 0,
                Some(s) => open(name, s)
                    .ok_or_else(tampered)?
                    .get("round")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            };
            match round {
                0 => needed(ask(
                    json!({ "step1": elicitation("Step 1: What is your name?", "name", "string") }),
                    Some(seal(name, &json!({ "round": 1 }))?),
                )?),
                1 if response(responses, "step1").is_some() => needed(ask(
                    json!({ "step2": elicitation("Step 2: What is your favorite color?", "color", "string") }),
                    Some(seal(name, &json!({ "round": 2 }))?),
                )?),
                1 => needed(ask(
                    json!({ "step1": elicitation("Step 1: What is your name?", "name", "string") }),
                    Some(seal(name, &json!({ "round": 1 }))?),
                )?),
                _ if response(responses, "step2").is_some() => done("Multi-round flow complete"),
                _ => needed(ask(
                    json!({ "step2": elicitation("Step 2: What is your favorite color?", "color", "string") }),
                    Some(seal(name, &json!({ "round": 2 }))?),
                )?),
            }
        }
        "test_input_required_result_capabilities" => {
            if responses.is_some_and(|r| !r.is_empty()) {
                return done("Capability-aware flow complete");
            }
            // Only what the request itself declared (SEP-2322).
            let declared = req.cx.meta.client_capabilities().unwrap_or_default();
            let mut requests = Map::new();
            if declared.elicitation.is_some() {
                requests.insert(
                    "user_name".into(),
                    elicitation("What is your name?", "name", "string"),
                );
            }
            if declared.sampling.is_some() {
                requests.insert("greeting".into(), sampling("Generate a greeting", 50));
            }
            if declared.roots.is_some() {
                requests.insert("client_roots".into(), roots());
            }
            if requests.is_empty() {
                return done("The client declared no capability to ask through");
            }
            needed(ask(Value::Object(requests), None)?)
        }
        other => Err(McpError::invalid_params(
            format!("no fixture named {other:?}"),
            None,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_state_opens_only_for_its_tool_and_unaltered() {
        let s = seal("a", &json!({"round": 1})).unwrap();
        assert_eq!(open("a", &s), Some(json!({"round": 1})));
        assert_eq!(open("b", &s), None);
        let (body, tag) = s.split_once('.').unwrap();
        let forged_body = URL_SAFE_NO_PAD.encode(json!({"round": 2}).to_string());
        assert_eq!(open("a", &format!("{forged_body}.{tag}")), None);
        assert_eq!(open("a", &format!("{body}.AAAA")), None);
        assert_eq!(open("a", "garbage"), None);
    }

    #[test]
    fn input_requests_are_valid_protocol_messages() {
        let r = ask(
            json!({ "a": elicitation("m", "name", "string"), "b": sampling("p", 10), "c": roots() }),
            Some("s".into()),
        )
        .unwrap();
        assert_eq!(r.input_requests.map(|m| m.len()), Some(3));
    }
}

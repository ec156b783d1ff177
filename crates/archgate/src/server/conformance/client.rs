//! Fixtures that talk back to the client while they run (handshake era): log messages, progress,
//! sampling and elicitation requests, and the capability probe.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolResult, ClientCapabilities, ContentBlock, CreateMessageRequestParams,
    ElicitRequestParams, LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam,
};
use serde_json::{Map, Value, json};
use std::time::Duration;

use super::FixtureRequest;
use super::tools::{Answered, from_json, text};

/// Fixtures that talk back to the client while they run.
pub(super) async fn run(name: &str, args: &Map<String, Value>, req: &FixtureRequest) -> Answered {
    let peer = &req.cx.peer;
    match name {
        "test_tool_with_logging" => {
            for (i, msg) in ["Tool execution started", "Tool processing data", "Tool execution completed"]
                .into_iter()
                .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if super::log_enabled(LoggingLevel::Info) {
                    let _ = peer
                        .notify_logging_message(
                            LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(msg))
                                .with_logger("archgate-conformance"),
                        )
                        .await;
                }
            }
            text("Logging test completed")
        }
        "test_logging_tool" => {
            if let Some(level) = req.cx.meta.log_level() {
                let _ = peer
                    .notify_logging_message(
                        LoggingMessageNotificationParam::new(level, json!("logLevel was requested"))
                            .with_logger("archgate-conformance"),
                    )
                    .await;
            }
            text("Logging tool completed")
        }
        "test_tool_with_progress" => {
            let token = req.cx.meta.get_progress_token();
            for (i, (progress, message)) in [(0.0, "Starting"), (50.0, "Halfway"), (100.0, "Complete")]
                .into_iter()
                .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                if let Some(t) = &token {
                    let _ = peer
                        .notify_progress(
                            ProgressNotificationParam::new(t.clone(), progress)
                                .with_total(100.0)
                                .with_message(message),
                        )
                        .await;
                }
            }
            text("Progress test completed")
        }
        "test_missing_capability" => {
            let declared = req.cx.client_capabilities().unwrap_or_default();
            if declared.sampling.is_none() {
                return Err(McpError::missing_required_client_capability(
                    ClientCapabilities::builder().enable_sampling().build(),
                ));
            }
            text("Required capability declared")
        }
        "test_sampling" => {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
            let params: CreateMessageRequestParams = from_json(json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
                "maxTokens": 100,
            }))?;
            match peer.create_message(params).await {
                Ok(r) => {
                    let said = serde_json::to_value(&r.message.content)
                        .ok()
                        .and_then(|c| first_text(&c))
                        .unwrap_or_else(|| "(no text)".into());
                    text(format!("LLM response: {said}"))
                }
                Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "Sampling error: {e}"
                ))])
                .into()),
            }
        }
        "test_elicitation" => {
            let message = args.get("message").and_then(Value::as_str).unwrap_or_default();
            elicit("User response", message, json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" },
                },
                "required": ["username", "email"],
            }), req)
            .await
        }
        "test_elicitation_sep1034_defaults" => {
            elicit("Elicitation completed", "Please review these values (all have defaults)", json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "User's name", "default": "John Doe" },
                    "age": { "type": "integer", "description": "User's age", "default": 30 },
                    "score": { "type": "number", "description": "User's score", "default": 95.5 },
                    "status": { "type": "string", "description": "User's status",
                                "enum": ["active", "inactive", "pending"], "default": "active" },
                    "verified": { "type": "boolean", "description": "Whether the user is verified", "default": true },
                },
            }), req)
            .await
        }
        "test_elicitation_sep1330_enums" => {
            elicit("Elicitation completed", "Choose from each kind of list", json!({
                "type": "object",
                "properties": {
                    "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
                    "titledSingle": { "type": "string", "oneOf": [
                        { "const": "value1", "title": "First Option" },
                        { "const": "value2", "title": "Second Option" },
                        { "const": "value3", "title": "Third Option" } ] },
                    "legacyEnum": { "type": "string", "enum": ["opt1", "opt2", "opt3"],
                                    "enumNames": ["Option One", "Option Two", "Option Three"] },
                    "untitledMulti": { "type": "array",
                                       "items": { "type": "string", "enum": ["option1", "option2", "option3"] } },
                    "titledMulti": { "type": "array", "items": { "anyOf": [
                        { "const": "value1", "title": "First Choice" },
                        { "const": "value2", "title": "Second Choice" },
                        { "const": "value3", "title": "Third Choice" } ] } },
                },
            }), req)
            .await
        }
        other => Err(McpError::invalid_params(format!("no fixture named {other:?}"), None)),
    }
}

/// Asks the client (elicitation, handshake era) and reports what the user did.
async fn elicit(label: &str, message: &str, schema: Value, req: &FixtureRequest) -> Answered {
    let params: ElicitRequestParams =
        from_json(json!({ "mode": "form", "message": message, "requestedSchema": schema }))?;
    match req.cx.peer.create_elicitation(params).await {
        Ok(r) => {
            let action = serde_json::to_value(&r.action).unwrap_or(Value::Null);
            let content = r.content.unwrap_or(Value::Null);
            text(format!(
                "{label}: action={}, content={content}",
                action.as_str().unwrap_or("unknown")
            ))
        }
        Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
            "Elicitation error: {e}"
        ))])
        .into()),
    }
}

/// The text of the first text block in a content value (one block or a list).
fn first_text(c: &Value) -> Option<String> {
    match c {
        Value::Array(items) => items.iter().find_map(first_text),
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("text") => {
            m.get("text").and_then(Value::as_str).map(str::to_owned)
        }
        _ => None,
    }
}

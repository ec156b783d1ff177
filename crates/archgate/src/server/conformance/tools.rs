//! The fixture tools, declared as a table and served as catalogue tools of tier `read`.
//!
//! A fixture's schema is the suite's own JSON (kept verbatim: `json_schema_2020_12_tool` checks
//! that `$schema`, `$defs` and the composition keywords survive tools/list), so fixtures implement
//! `DynTool` directly instead of deriving a schema from an argument type. Each answer is an MCP
//! result serialized into the tool output; `answer_of` turns it back.

use archgate_core::exec::Permit;
use archgate_core::gate::Catalogue;
use archgate_core::policy::Tier;
use archgate_core::tool::{ArgsError, CallCx, DynTool, Plan, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use super::{FixtureRequest, PNG_1X1, PROTOCOL_ERROR, REQUEST, input_required};

/// A WAV header with no samples (the suite asks for "a minimal test audio file").
const WAV_SILENCE: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

const NO_ARGS: &str = r#"{"type":"object","properties":{}}"#;

/// What a fixture answers: its MCP result, carried through the gate as JSON.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "answer", content = "result", rename_all = "snake_case")]
pub(super) enum Answer {
    Complete(CallToolResult),
    InputRequired(InputRequiredResult),
}

impl From<CallToolResult> for Answer {
    fn from(r: CallToolResult) -> Answer {
        Answer::Complete(r)
    }
}

pub(super) type Answered = Result<Answer, McpError>;

struct Fixture {
    spec: ToolSpec,
    schema: &'static str,
}

const fn fixture(name: &'static str, description: &'static str, schema: &'static str) -> Fixture {
    Fixture {
        spec: ToolSpec {
            name,
            title: name,
            description,
            tier: Tier::Read,
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
            private_args: &[],
        },
        schema,
    }
}

static FIXTURES: &[Fixture] = &[
    fixture(
        "test_simple_text",
        "Conformance fixture: returns one text block.",
        NO_ARGS,
    ),
    fixture(
        "test_image_content",
        "Conformance fixture: returns a PNG image.",
        NO_ARGS,
    ),
    fixture(
        "test_audio_content",
        "Conformance fixture: returns WAV audio.",
        NO_ARGS,
    ),
    fixture(
        "test_embedded_resource",
        "Conformance fixture: returns an embedded text resource.",
        NO_ARGS,
    ),
    fixture(
        "test_multiple_content_types",
        "Conformance fixture: returns text, an image and a resource.",
        NO_ARGS,
    ),
    fixture(
        "test_error_handling",
        "Conformance fixture: always answers with a tool error.",
        NO_ARGS,
    ),
    fixture(
        "test_tool_with_logging",
        "Conformance fixture: sends three log messages while it runs.",
        NO_ARGS,
    ),
    fixture(
        "test_tool_with_progress",
        "Conformance fixture: reports progress 0, 50 and 100 of 100.",
        NO_ARGS,
    ),
    fixture(
        "test_logging_tool",
        "Conformance fixture: logs only when the request's _meta asks for a log level.",
        NO_ARGS,
    ),
    fixture(
        "test_sampling",
        "Conformance fixture: asks the client's model to answer a prompt (sampling).",
        r#"{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send"}},"required":["prompt"]}"#,
    ),
    fixture(
        "test_elicitation",
        "Conformance fixture: asks the user for a username and email (elicitation).",
        r#"{"type":"object","properties":{"message":{"type":"string","description":"The message to show"}},"required":["message"]}"#,
    ),
    fixture(
        "test_elicitation_sep1034_defaults",
        "Conformance fixture: elicitation whose fields all have defaults (SEP-1034).",
        NO_ARGS,
    ),
    fixture(
        "test_elicitation_sep1330_enums",
        "Conformance fixture: elicitation with every enum form (SEP-1330).",
        NO_ARGS,
    ),
    fixture(
        "test_missing_capability",
        "Conformance fixture: needs the client's sampling capability.",
        NO_ARGS,
    ),
    fixture(
        "test_trigger_tool_change",
        "Conformance fixture: announces a tool list change to listening clients.",
        NO_ARGS,
    ),
    fixture(
        "test_trigger_prompt_change",
        "Conformance fixture: announces a prompt list change to listening clients.",
        NO_ARGS,
    ),
    fixture(
        "test_reconnection",
        "Conformance fixture: answers after a short pause.",
        NO_ARGS,
    ),
    fixture(
        "test_custom_header",
        "Conformance fixture: echoes a value that is also sent as an Mcp-Param header (SEP-2243).",
        r#"{"type":"object","properties":{"value":{"type":"string","x-mcp-header":"Value"}},"required":["value"]}"#,
    ),
    fixture(
        "json_schema_2020_12_tool",
        "Conformance fixture: an input schema using JSON Schema 2020-12 keywords.",
        r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
            "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
            "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},
              "contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
            "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
            "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
            "then":{"required":["phone"]},"else":{"required":["email"]},
            "additionalProperties":false}"##,
    ),
    fixture(
        "test_streaming_elicitation",
        "Conformance fixture: answers with an input-required elicitation.",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_elicitation",
        "Conformance fixture: needs the user's name (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_sampling",
        "Conformance fixture: needs a sampled answer (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_list_roots",
        "Conformance fixture: needs the client's roots (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_request_state",
        "Conformance fixture: round-trips a sealed requestState (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_multiple_inputs",
        "Conformance fixture: needs elicitation, sampling and roots at once (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_multi_round",
        "Conformance fixture: two rounds of input with evolving state (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_tampered_state",
        "Conformance fixture: refuses a requestState that fails its seal (SEP-2322).",
        NO_ARGS,
    ),
    fixture(
        "test_input_required_result_capabilities",
        "Conformance fixture: asks only for what the client declared (SEP-2322).",
        NO_ARGS,
    ),
];

pub(super) fn add_all(catalogue: &mut Catalogue) {
    for f in FIXTURES {
        catalogue.add(FixtureTool(f));
    }
}

pub(super) fn is_fixture(name: &str) -> bool {
    FIXTURES.iter().any(|f| f.spec.name == name)
}

struct FixtureTool(&'static Fixture);

fn schema_of(f: &Fixture) -> Map<String, Value> {
    match serde_json::from_str::<Value>(f.schema) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

impl DynTool for FixtureTool {
    fn spec(&self) -> &'static ToolSpec {
        &self.0.spec
    }

    fn input_schema(&self) -> Arc<Map<String, Value>> {
        Arc::new(schema_of(self.0))
    }

    /// An object with the schema's required keys; fixtures read what they need from it.
    fn parse(&self, args: Value) -> Result<Box<dyn Any + Send + Sync>, ArgsError> {
        let args = match args {
            Value::Null => Map::new(),
            Value::Object(m) => m,
            other => {
                return Err(ArgsError(format!(
                    "arguments must be an object, not {other}"
                )));
            }
        };
        let schema = schema_of(self.0);
        let required = schema.get("required").and_then(Value::as_array);
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if !args.contains_key(key) {
                return Err(ArgsError(format!("missing field `{key}`")));
            }
        }
        Ok(Box::new(args))
    }

    fn plan(&self, _args: &(dyn Any + Send + Sync)) -> Plan {
        Plan::simple(&self.0.spec)
    }

    fn resolve<'a>(
        &'a self,
        _cx: &'a CallCx,
        _probe: &'a archgate_core::tool::Probe,
        plan: &'a Plan,
        args: Box<dyn Any + Send + Sync>,
    ) -> BoxFuture<'a, Result<(archgate_core::tool::Action, Box<dyn Any + Send + Sync>), ToolError>>
    {
        Box::pin(async move { Ok((archgate_core::tool::Action::from_plan(plan), args)) })
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        _permit: Permit,
        args: Box<dyn Any + Send + Sync>,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = args
                .downcast::<Map<String, Value>>()
                .map(|b| *b)
                .unwrap_or_default();
            // Outside an MCP request (`archgate call`) there is no client to talk back to.
            let request = REQUEST.try_with(Arc::clone).ok();
            match run(self.0.spec.name, &args, request.as_deref()).await {
                Ok(answer) => Ok(ToolOutput::json(answer)),
                Err(e) => Err(ToolError::new(PROTOCOL_ERROR, e.message.to_string())
                    .details(serde_json::to_value(&e).unwrap_or(Value::Null))),
            }
        })
    }
}

/// The protocol answer of a fixture's output.
pub(super) fn answer_of(out: &ToolOutput) -> Result<CallToolResponse, McpError> {
    let answer = out
        .structured
        .clone()
        .map(serde_json::from_value::<Answer>)
        .transpose()
        .map_err(|e| McpError::internal_error(format!("fixture answer unreadable: {e}"), None))?
        .ok_or_else(|| McpError::internal_error("fixture gave no answer", None))?;
    Ok(match answer {
        Answer::Complete(r) => r.into(),
        Answer::InputRequired(r) => r.into(),
    })
}

pub(super) fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, McpError> {
    serde_json::from_value(v).map_err(|e| {
        McpError::internal_error(format!("fixture built an invalid message: {e}"), None)
    })
}

pub(super) fn text(t: impl Into<String>) -> Answered {
    Ok(CallToolResult::success(vec![rmcp::model::ContentBlock::text(t)]).into())
}

fn content(blocks: Value) -> Answered {
    from_json::<CallToolResult>(json!({ "resultType": "complete", "content": blocks }))
        .map(Answer::from)
}

fn needs_client(name: &str) -> McpError {
    McpError::invalid_request(format!("{name} needs an MCP client to talk back to"), None)
}

async fn run(name: &str, args: &Map<String, Value>, req: Option<&FixtureRequest>) -> Answered {
    match name {
        "test_simple_text" => text("This is a simple text response for testing."),
        "test_image_content" => {
            content(json!([{ "type": "image", "data": PNG_1X1, "mimeType": "image/png" }]))
        }
        "test_audio_content" => {
            content(json!([{ "type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav" }]))
        }
        "test_embedded_resource" => content(json!([{ "type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content." } }])),
        "test_multiple_content_types" => content(json!([
            { "type": "text", "text": "Multiple content types test:" },
            { "type": "image", "data": PNG_1X1, "mimeType": "image/png" },
            { "type": "resource", "resource": { "uri": "test://mixed-content-resource",
              "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}" } },
        ])),
        "test_error_handling" => Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
        .into()),
        "test_reconnection" => {
            tokio::time::sleep(Duration::from_millis(100)).await;
            text("Reconnection test completed")
        }
        "test_custom_header" => match args.get("value").and_then(Value::as_str) {
            Some(v) => text(v),
            None => Err(McpError::invalid_params("value must be a string", None)),
        },
        "json_schema_2020_12_tool" => {
            let who = args.get("name").and_then(Value::as_str).unwrap_or("world");
            text(format!("Hello, {who}!"))
        }
        "test_trigger_tool_change" => {
            for l in super::listeners() {
                let _ = l.notify_tool_list_changed().await;
            }
            text("Tool list change announced")
        }
        "test_trigger_prompt_change" => {
            for l in super::listeners() {
                let _ = l.notify_prompt_list_changed().await;
            }
            text("Prompt list change announced")
        }
        _ => {
            let req = req.ok_or_else(|| needs_client(name))?;
            if name.starts_with("test_input_required_result_")
                || name == "test_streaming_elicitation"
            {
                return input_required::run(name, req);
            }
            super::client::run(name, args, req).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixture_schema_is_an_object_schema() {
        for f in FIXTURES {
            let s = schema_of(f);
            assert_eq!(s.get("type"), Some(&json!("object")), "{}", f.spec.name);
        }
    }

    #[test]
    fn the_2020_12_schema_keeps_its_keywords() {
        let f = FIXTURES
            .iter()
            .find(|f| f.spec.name == "json_schema_2020_12_tool")
            .unwrap();
        let s = FixtureTool(f).input_schema();
        for k in [
            "$schema",
            "$defs",
            "allOf",
            "if",
            "then",
            "else",
            "additionalProperties",
        ] {
            assert!(s.contains_key(k), "{k} lost");
        }
    }

    #[test]
    fn required_arguments_are_checked() {
        let f = FIXTURES
            .iter()
            .find(|f| f.spec.name == "test_sampling")
            .unwrap();
        assert!(FixtureTool(f).parse(json!({})).is_err());
        assert!(FixtureTool(f).parse(json!({"prompt": "hi"})).is_ok());
        assert!(FixtureTool(f).parse(json!("hi")).is_err());
    }

    #[tokio::test]
    async fn content_fixtures_answer_without_a_client() {
        let a = run("test_multiple_content_types", &Map::new(), None)
            .await
            .unwrap();
        let v = serde_json::to_value(&a).unwrap();
        let kinds: Vec<_> = v["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(kinds, ["text", "image", "resource"]);
        assert!(run("test_sampling", &Map::new(), None).await.is_err());
    }
}

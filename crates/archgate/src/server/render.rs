//! A tool and a gate's result as MCP shows them: the tool's definition (`tools/list`), and a
//! call's answer — tool failures and refusals as `isError` results the agent can read, and only
//! the gate's own unknown tool as a protocol error.

use archgate_core::gate::{CallResult, Kind, Refusal};
use archgate_core::tool::{Content, DynTool};
use base64::Engine;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, Tool, ToolAnnotations};

pub fn to_mcp_tool(t: &dyn DynTool) -> Tool {
    let s = t.spec();
    // Hints are sent only where they differ from MCP's defaults (readOnly false, destructive
    // true, idempotent false, openWorld true) and mean something: destructive and idempotent are
    // meaningful only when readOnly is false. The same meaning in fewer tokens.
    let annotations = ToolAnnotations::from_raw(
        None,
        s.read_only.then_some(true),
        (!s.read_only && !s.destructive).then_some(false),
        (!s.read_only && s.idempotent).then_some(true),
        (!s.open_world).then_some(false),
    );
    Tool::new(s.name, s.description, t.input_schema())
        .with_title(s.title)
        .with_annotations(annotations)
}

/// Renders a gate result as MCP: tool failures and refusals are `isError` results the agent can
/// read, never protocol errors.
pub fn to_call_result(r: CallResult) -> CallToolResult {
    match r.output {
        Ok(out) => {
            let mut content: Vec<ContentBlock> = out
                .content
                .into_iter()
                .map(|c| match c {
                    Content::Text(t) => ContentBlock::text(t),
                    Content::Image { data, mime } => ContentBlock::image(
                        base64::engine::general_purpose::STANDARD.encode(data),
                        mime,
                    ),
                })
                .collect();
            match out.structured {
                // `CallToolResult::structured`, with the text the gate already rendered.
                Some(v) => {
                    let text = out.structured_text.unwrap_or_else(|| v.to_string());
                    content.insert(0, ContentBlock::text(text));
                    let mut res = CallToolResult::success(content);
                    res.structured_content = Some(v);
                    res
                }
                None => CallToolResult::success(content),
            }
        }
        Err(e) => {
            let text = render_error(&e);
            let mut res = CallToolResult::error(vec![ContentBlock::text(text)]);
            res.structured_content =
                Some(serde_json::json!({ "error": e, "outcome": r.outcome.as_str() }));
            res
        }
    }
}

/// The answer to a `tools/call`, from the gate's one typed result: an unknown tool is the
/// protocol's `invalid params` (the gate looked it up, charged and recorded it), a question for
/// a relaying client is an `InputRequiredResult`, anything else a tool result.
pub fn to_response(r: CallResult) -> Result<CallToolResponse, McpError> {
    if let Err(e) = &r.output
        && e.kind == Kind::UnknownTool
    {
        return Err(McpError::invalid_params(e.message.clone(), None));
    }
    if let Some(asked) = super::relay::input_required(&r) {
        return Ok(asked.into());
    }
    Ok(to_call_result(r).into())
}

fn render_error(e: &Refusal) -> String {
    let mut s = format!("{}: {}", e.kind, e.message);
    if let Some(n) = &e.next {
        s.push_str("\nNext: ");
        s.push_str(n);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use archgate_core::audit::Outcome;
    use archgate_core::tool::ErrorKind;

    fn refused(outcome: Outcome, kind: Kind) -> CallResult {
        CallResult {
            id: "1".into(),
            outcome,
            output: Err(Refusal::new(outcome, kind, "no tool named \"nope\"")),
        }
    }

    /// The gate's one look-up decides: its typed `unknown_tool` is the protocol's invalid
    /// params; every other refusal, a tool's own kind among them, is a result the agent reads.
    #[test]
    fn only_the_gates_unknown_tool_is_a_protocol_error() {
        let e = to_response(refused(Outcome::NotGranted, Kind::UnknownTool)).unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(e.message, "no tool named \"nope\"");
        for kind in [
            Kind::NotGranted,
            Kind::Tool(ErrorKind::NotFound),
            Kind::Refused,
        ] {
            let rmcp::model::CallToolResponse::Complete(r) =
                to_response(refused(Outcome::Refused, kind)).unwrap()
            else {
                panic!("{kind}: not a tool result");
            };
            let v = serde_json::to_value(&r).unwrap();
            assert_eq!(v["isError"], true, "{kind}: {v}");
            assert_eq!(v["structuredContent"]["error"]["kind"], kind.as_str());
        }
    }
}

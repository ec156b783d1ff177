//! The fixture prompts and completions.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, ListPromptsResult, Reference,
};
use serde_json::{Map, Value, json};

use super::input_required::{ask, elicitation, elicited, response};
use super::tools::from_json;
use super::{PNG_1X1, resources};

pub fn list_prompts() -> Result<ListPromptsResult, McpError> {
    from_json(json!({ "resultType": "complete", "prompts": [
        { "name": "test_simple_prompt", "description": "A prompt with no arguments" },
        { "name": "test_prompt_with_arguments", "description": "A prompt built from two arguments",
          "arguments": [
            { "name": "arg1", "description": "First test argument", "required": true },
            { "name": "arg2", "description": "Second test argument", "required": true } ] },
        { "name": "test_prompt_with_embedded_resource", "description": "A prompt that embeds a resource",
          "arguments": [
            { "name": "resourceUri", "description": "URI of the resource to embed", "required": true } ] },
        { "name": "test_prompt_with_image", "description": "A prompt that carries an image" },
        { "name": "test_input_required_result_prompt",
          "description": "A prompt that first asks the user for context (SEP-2322)" },
    ]}))
}

fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Result<&'a str, McpError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("argument `{name}` is required"), None))
}

fn user(content: Value) -> Value {
    json!({ "role": "user", "content": content })
}

fn text(t: &str) -> Value {
    json!({ "type": "text", "text": t })
}

pub fn get_prompt(request: GetPromptRequestParams) -> Result<GetPromptResponse, McpError> {
    let args = request.arguments.unwrap_or_default();
    let messages = match request.name.as_str() {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => {
            let (a, b) = (arg(&args, "arg1")?, arg(&args, "arg2")?);
            vec![user(text(&format!(
                "Prompt with arguments: arg1='{a}', arg2='{b}'"
            )))]
        }
        "test_prompt_with_embedded_resource" => {
            let uri = arg(&args, "resourceUri")?;
            vec![
                user(
                    json!({ "type": "resource", "resource": { "uri": uri, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing." } }),
                ),
                user(text("Please process the embedded resource above.")),
            ]
        }
        "test_prompt_with_image" => vec![
            user(json!({ "type": "image", "data": PNG_1X1, "mimeType": "image/png" })),
            user(text("Please analyze the image above.")),
        ],
        "test_input_required_result_prompt" => {
            match response(request.input_responses.as_ref(), "user_context") {
                Some(r) => {
                    let context = elicited(r, "context").unwrap_or("(none given)");
                    vec![user(text(&format!(
                        "Prompt with elicited context: {context}"
                    )))]
                }
                None => {
                    return ask(
                        json!({ "user_context": elicitation(
                            "What context should the prompt use?", "context", "string") }),
                        None,
                    )
                    .map(Into::into);
                }
            }
        }
        other => {
            return Err(McpError::invalid_params(
                format!("no prompt named {other:?}"),
                None,
            ));
        }
    };
    from_json::<GetPromptResult>(json!({ "resultType": "complete", "messages": messages }))
        .map(Into::into)
}

/// Completion candidates for prompt arguments and the resource template's `id`, by prefix.
pub fn complete(request: CompleteRequestParams) -> Result<CompleteResult, McpError> {
    let prefix = request.argument.value.as_str();
    let values: Vec<String> = match &request.r#ref {
        Reference::Resource(r)
            if resources::is_template(&r.uri) && request.argument.name == "id" =>
        {
            resources::complete_id(prefix)
        }
        Reference::Prompt(_) => ["paris", "park", "party", "hello", "world"]
            .into_iter()
            .filter(|v| v.starts_with(prefix))
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    from_json(
        json!({ "resultType": "complete", "completion": { "values": values, "total": values.len(), "hasMore": false } }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ArgumentInfo;

    #[test]
    fn prompt_arguments_are_substituted_and_required() {
        let mut p = GetPromptRequestParams::new("test_prompt_with_arguments");
        let mut args = Map::new();
        args.insert("arg1".into(), json!("hello"));
        p.arguments = Some(args.clone());
        assert!(get_prompt(p.clone()).is_err());
        args.insert("arg2".into(), json!("world"));
        p.arguments = Some(args);
        let GetPromptResponse::Complete(r) = get_prompt(p).unwrap() else {
            panic!("complete expected")
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v["messages"][0]["content"]["text"],
            "Prompt with arguments: arg1='hello', arg2='world'"
        );
    }

    #[test]
    fn completion_filters_by_prefix() {
        let r = complete(CompleteRequestParams::new(
            Reference::for_prompt("test_prompt_with_arguments"),
            ArgumentInfo::new("arg1", "par"),
        ))
        .unwrap();
        assert_eq!(r.completion.values, ["paris", "park", "party"]);
    }
}

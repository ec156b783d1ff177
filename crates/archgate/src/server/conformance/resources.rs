//! The fixture resources: two static ones, one the suite subscribes to, and the template
//! `test://template/{id}/data`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult,
};
use serde_json::json;

use super::PNG_1X1;
use super::tools::from_json;

const TEMPLATE: &str = "test://template/{id}/data";

pub fn list_resources() -> Result<ListResourcesResult, McpError> {
    from_json(json!({ "resultType": "complete", "resources": [
        { "uri": "test://static-text", "name": "static-text", "title": "Static text",
          "description": "A fixed text resource", "mimeType": "text/plain" },
        { "uri": "test://static-binary", "name": "static-binary", "title": "Static binary",
          "description": "A fixed PNG image", "mimeType": "image/png" },
        { "uri": "test://watched-resource", "name": "watched-resource", "title": "Watched",
          "description": "A resource clients may subscribe to", "mimeType": "text/plain" },
    ]}))
}

pub fn list_resource_templates() -> Result<ListResourceTemplatesResult, McpError> {
    from_json(json!({ "resultType": "complete", "resourceTemplates": [
        { "uriTemplate": TEMPLATE, "name": "template-data", "title": "Data by id",
          "description": "JSON data for the id in the URI", "mimeType": "application/json" },
    ]}))
}

/// The id in a URI of the template, if it is one.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri
        .strip_prefix("test://template/")?
        .strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

pub fn read_resource(request: ReadResourceRequestParams) -> Result<ReadResourceResponse, McpError> {
    let uri = request.uri.as_str();
    let contents = match uri {
        "test://static-text" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "This is the content of the static text resource." }),
        "test://static-binary" => json!({ "uri": uri, "mimeType": "image/png", "blob": PNG_1X1 }),
        "test://watched-resource" => json!({ "uri": uri, "mimeType": "text/plain",
            "text": "This resource is watched." }),
        _ => match template_id(uri) {
            Some(id) => {
                let data =
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                json!({ "uri": uri, "mimeType": "application/json", "text": data.to_string() })
            }
            None => {
                return Err(McpError::resource_not_found(
                    "Resource not found",
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    from_json::<ReadResourceResult>(json!({ "resultType": "complete", "contents": [contents] }))
        .map(Into::into)
}

/// Completion values for the template's `id`.
pub(super) fn complete_id(prefix: &str) -> Vec<String> {
    ["1", "2", "3", "123"]
        .into_iter()
        .filter(|v| v.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

pub(super) fn is_template(uri: &str) -> bool {
    uri == TEMPLATE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_ids_are_one_path_segment() {
        assert_eq!(template_id("test://template/123/data"), Some("123"));
        assert_eq!(template_id("test://template//data"), None);
        assert_eq!(template_id("test://template/a/b/data"), None);
        assert_eq!(template_id("test://static-text"), None);
    }

    #[test]
    fn unknown_uris_are_an_error_naming_the_uri() {
        let e = read_resource(ReadResourceRequestParams::new("test://nope")).unwrap_err();
        assert_eq!(e.data, Some(json!({ "uri": "test://nope" })));
    }
}

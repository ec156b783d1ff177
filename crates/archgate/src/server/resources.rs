//! MCP resources: each URI maps to a read-tier tool call, so reading a resource passes the gate
//! and leaves an audit record exactly like a tool call.

use archgate_core::gate::{Client, Gate, Kind};
use archgate_core::tool::{Content, ErrorKind};
// Percent-decoding for the template variables (titles have spaces and slashes).
use archgate_desktop::url_check::percent_decode as decode;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

const STATIC: [(&str, &str, &str); 4] = [
    (
        "archgate://policy",
        "policy",
        "The policy in force, explained: rules and what they decide for each tool.",
    ),
    (
        "archgate://activity/recent",
        "recent activity",
        "This client's last 50 audit records.",
    ),
    (
        "omarchy://commands",
        "Omarchy commands",
        "Omarchy's command registry.",
    ),
    (
        "omarchy://shell/targets",
        "shell IPC targets",
        "The desktop shell's IPC targets and signatures.",
    ),
];

const TEMPLATES: [(&str, &str, &str); 6] = [
    (
        "archwiki://page/{title}",
        "ArchWiki page",
        "An ArchWiki page as Markdown.",
    ),
    (
        "aur://package/{name}/pkgbuild",
        "AUR PKGBUILD",
        "An AUR package's PKGBUILD, .SRCINFO and install scripts.",
    ),
    (
        "pacman://package/{name}",
        "package",
        "An official package's details from pacman's databases.",
    ),
    (
        "omarchy://command/{route}",
        "Omarchy command",
        "One route of Omarchy's command registry.",
    ),
    (
        "systemd://unit/{name}",
        "systemd unit",
        "A system unit's status, unit file, drop-ins and last journal lines.",
    ),
    (
        "journal://boot/{n}",
        "boot journal",
        "Boot n's warnings and worse, newest 200 (0 the current boot, -1 the one before).",
    ),
];

pub fn list() -> ListResourcesResult {
    ListResourcesResult::with_all_items(
        STATIC
            .iter()
            .map(|(uri, name, desc)| {
                Resource::new(*uri, *name)
                    .with_description(*desc)
                    .with_mime_type("application/json")
            })
            .collect(),
    )
}

pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(
        TEMPLATES
            .iter()
            .map(|(uri, name, desc)| ResourceTemplate::new(*uri, *name).with_description(*desc))
            .collect(),
    )
}

/// The tool and arguments behind a resource URI.
pub fn route(uri: &str) -> Option<(&'static str, Value)> {
    match uri {
        "archgate://policy" => return Some(("archgate_policy", json!({}))),
        "archgate://activity/recent" => return Some(("archgate_activity", json!({}))),
        "omarchy://commands" => return Some(("omarchy_search", json!({"query": "", "limit": 50}))),
        "omarchy://shell/targets" => return Some(("shell_targets", json!({}))),
        _ => {}
    }
    if let Some(t) = uri.strip_prefix("archwiki://page/") {
        return (!t.is_empty()).then(|| ("wiki_page", json!({"title": decode(t)})));
    }
    if let Some(rest) = uri.strip_prefix("aur://package/") {
        let name = rest.strip_suffix("/pkgbuild")?;
        return (!name.is_empty() && !name.contains('/'))
            .then(|| ("aur_pkgbuild", json!({"name": decode(name)})));
    }
    if let Some(name) = uri.strip_prefix("pacman://package/") {
        return (!name.is_empty()).then(|| ("pkg_info", json!({"name": decode(name)})));
    }
    if let Some(name) = uri.strip_prefix("systemd://unit/") {
        return (!name.is_empty()).then(|| ("units", json!({"unit": decode(name)})));
    }
    if let Some(n) = uri.strip_prefix("journal://boot/") {
        let n: i64 = decode(n).parse().ok()?;
        return Some((
            "journal",
            json!({"boot": n, "priority": "warning", "limit": 200}),
        ));
    }
    if let Some(r) = uri.strip_prefix("omarchy://command/") {
        return (!r.is_empty())
            .then(|| ("omarchy_search", json!({"query": decode(r), "limit": 1})));
    }
    None
}

/// Reads `uri` as `client` in `session` (its reads count for the session's act calls).
pub async fn read(
    gate: &Gate,
    client: &Client,
    session: Option<&str>,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let Some((tool, args)) = route(uri) else {
        return Err(McpError::resource_not_found(
            format!("no resource {uri}"),
            Some(json!({ "uri": uri })),
        ));
    };
    let r = gate
        .call_in_session(client, session, tool, args, &Default::default())
        .await;
    match r.output {
        Ok(out) => {
            let mut contents = Vec::new();
            // Wiki pages read best as Markdown; everything else as JSON.
            let markdown = out
                .structured
                .as_ref()
                .and_then(|v| v.get("markdown"))
                .and_then(Value::as_str)
                .map(str::to_owned);
            match (markdown, out.structured) {
                (Some(md), _) => contents.push(ResourceContents::TextResourceContents {
                    uri: uri.to_owned(),
                    mime_type: Some("text/markdown".into()),
                    text: md,
                    meta: None,
                }),
                (None, Some(v)) => contents.push(ResourceContents::TextResourceContents {
                    uri: uri.to_owned(),
                    mime_type: Some("application/json".into()),
                    text: serde_json::to_string_pretty(&v).unwrap_or_default(),
                    meta: None,
                }),
                (None, None) => {}
            }
            for c in out.content {
                if let Content::Text(t) = c {
                    contents.push(ResourceContents::TextResourceContents {
                        uri: uri.to_owned(),
                        mime_type: Some("text/plain".into()),
                        text: t,
                        meta: None,
                    });
                }
            }
            Ok(ReadResourceResult::new(contents))
        }
        Err(e) if e.kind == Kind::Tool(ErrorKind::NotFound) => Err(McpError::resource_not_found(
            e.message,
            Some(json!({ "uri": uri })),
        )),
        Err(e) => Err(McpError::internal_error(
            format!("{}: {}", e.kind, e.message),
            Some(json!({ "uri": uri, "kind": e.kind, "next": e.next })),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_map_to_tools() {
        assert_eq!(
            route("pacman://package/linux").unwrap(),
            ("pkg_info", json!({"name": "linux"}))
        );
        assert_eq!(
            route("archwiki://page/Power%20management").unwrap(),
            ("wiki_page", json!({"title": "Power management"}))
        );
        assert_eq!(
            route("aur://package/yay/pkgbuild").unwrap(),
            ("aur_pkgbuild", json!({"name": "yay"}))
        );
        assert!(route("aur://package/yay").is_none());
        assert!(route("aur://package/a/b/pkgbuild").is_none());
        assert!(route("file:///etc/passwd").is_none());
        assert_eq!(
            route("systemd://unit/getty%40tty1.service").unwrap(),
            ("units", json!({"unit": "getty@tty1.service"}))
        );
        assert_eq!(
            route("journal://boot/-1").unwrap(),
            (
                "journal",
                json!({"boot": -1, "priority": "warning", "limit": 200})
            )
        );
        assert!(route("journal://boot/last").is_none());
        assert!(route("systemd://unit/").is_none());
        assert_eq!(route("archgate://policy").unwrap().0, "archgate_policy");
        for (uri, _, _) in STATIC {
            assert!(route(uri).is_some(), "{uri}");
        }
    }
}

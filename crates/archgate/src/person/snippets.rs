//! The exact configuration a person pastes into an MCP client to connect it to archgate: over
//! stdio (the client starts `archgate serve --client NAME`) or over HTTP (a URL and a bearer token).
//!
//! One definition behind `archgate client-config`, `archgate clients add` and the approval
//! page's "add client", so the three never disagree.

use serde_json::json;

use crate::cli::ClientKind;

/// How the client reaches archgate.
pub enum Connect<'a> {
    /// The client starts this executable with `serve`.
    Stdio { exe: &'a str },
    /// The client connects to `url` (`http://127.0.0.1:PORT/mcp`) with this bearer token.
    Http { url: &'a str, token: &'a str },
}

/// The name each connection is added under: different for stdio and HTTP, so a client can have
/// both (`claude mcp add` refuses a name twice).
pub const STDIO_NAME: &str = "archgate";
pub const HTTP_NAME: &str = "archgate-http";

/// The port the running HTTP archgate of this runtime dir listens on (its `state.json`, while
/// its process lives), else `configured`: `serve --http --port N` may differ from config.
pub fn served_port(paths: &archgate_core::paths::Paths, configured: u16) -> u16 {
    crate::server::state_file::read(&paths.state_json())
        .filter(|s| s.live_daemon())
        .and_then(|s| s.port)
        .filter(|p| *p != 0)
        .unwrap_or(configured)
}

/// The MCP URL of an HTTP server on this port.
pub fn mcp_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}/mcp")
}

/// The snippet: a command line (Claude Code) or a JSON config block (the others).
pub fn snippet(kind: ClientKind, connect: &Connect<'_>) -> String {
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).unwrap_or_default();
    match connect {
        // The client's own name: the daemon serves it under `[clients.NAME]`, with its budget.
        Connect::Stdio { exe } => match kind {
            ClientKind::ClaudeCode => format!(
                "claude mcp add {STDIO_NAME} -- {exe} serve --client {}",
                kind.names().0
            ),
            ClientKind::ClaudeDesktop | ClientKind::Cursor => pretty(
                json!({"mcpServers": {STDIO_NAME: {"command": exe, "args": ["serve", "--client", kind.names().0]}}}),
            ),
            ClientKind::Vscode => pretty(
                json!({"servers": {STDIO_NAME: {"type": "stdio", "command": exe, "args": ["serve", "--client", kind.names().0]}}}),
            ),
        },
        Connect::Http { url, token } => {
            let auth = format!("Bearer {token}");
            match kind {
                ClientKind::ClaudeCode => format!(
                    "claude mcp add --transport http {HTTP_NAME} {url} --header \"Authorization: {auth}\""
                ),
                ClientKind::ClaudeDesktop => pretty(json!({"mcpServers": {HTTP_NAME: {
                    "command": "npx",
                    "args": ["-y", "mcp-remote", url, "--header", format!("Authorization:{auth}")]
                }}})),
                ClientKind::Cursor => pretty(
                    json!({"mcpServers": {HTTP_NAME: {"url": url, "headers": {"Authorization": auth}}}}),
                ),
                ClientKind::Vscode => pretty(
                    json!({"servers": {HTTP_NAME: {"type": "http", "url": url, "headers": {"Authorization": auth}}}}),
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_snippets_carry_the_url_and_token_and_json_ones_parse() {
        let c = Connect::Http {
            url: "http://127.0.0.1:9/mcp",
            token: "abc",
        };
        for kind in ClientKind::ALL {
            let s = snippet(kind, &c);
            assert!(s.contains("http://127.0.0.1:9/mcp"), "{s}");
            assert!(s.contains("Bearer abc"), "{s}");
            if !matches!(kind, ClientKind::ClaudeCode) {
                serde_json::from_str::<serde_json::Value>(&s).expect("JSON");
            }
        }
        assert_eq!(
            snippet(ClientKind::ClaudeCode, &c),
            "claude mcp add --transport http archgate-http http://127.0.0.1:9/mcp --header \"Authorization: Bearer abc\""
        );
        // Both connections can be added to one client: their names differ, in every kind.
        let stdio = Connect::Stdio {
            exe: "/usr/bin/archgate",
        };
        for kind in ClientKind::ALL {
            let (a, b) = (snippet(kind, &stdio), snippet(kind, &c));
            assert!(a.contains(STDIO_NAME) && !a.contains(HTTP_NAME), "{a}");
            assert!(b.contains(HTTP_NAME), "{b}");
        }
        for kind in ClientKind::ALL {
            let clap_name = clap::ValueEnum::to_possible_value(&kind).unwrap();
            assert_eq!(
                kind.names().0,
                clap_name.get_name(),
                "the spelling clap accepts"
            );
        }
    }
}

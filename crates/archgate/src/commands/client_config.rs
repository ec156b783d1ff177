//! `archgate client-config claude-code|claude-desktop|cursor|vscode [--http]`: the exact snippet.

use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::ClientKind;

pub fn run(config: Option<PathBuf>, client: ClientKind, http: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "archgate".into());
    let (url, token) = if http {
        let app = App::open(config, None)?;
        let port = app.gate.config.current().server.port;
        let t = app.clients.default_token();
        app.shutdown();
        (format!("http://127.0.0.1:{port}/mcp"), t)
    } else {
        (String::new(), String::new())
    };
    let auth = format!("Bearer {token}");
    match (client, http) {
        (ClientKind::ClaudeCode, false) => out(format!("claude mcp add archgate -- {exe} serve")),
        (ClientKind::ClaudeCode, true) => out(format!(
            "claude mcp add --transport http archgate {url} --header \"Authorization: {auth}\""
        )),
        (ClientKind::ClaudeDesktop | ClientKind::Cursor, false) => {
            out(serde_json::to_string_pretty(
                &json!({"mcpServers": {"archgate": {"command": exe, "args": ["serve"]}}}),
            )?)
        }
        (ClientKind::ClaudeDesktop, true) => out(serde_json::to_string_pretty(
            &json!({"mcpServers": {"archgate": {
            "command": "npx", "args": ["-y", "mcp-remote", url, "--header", format!("Authorization:{auth}")]}}}),
        )?),
        (ClientKind::Cursor, true) => out(serde_json::to_string_pretty(
            &json!({"mcpServers": {"archgate": {"url": url, "headers": {"Authorization": auth}}}}),
        )?),
        (ClientKind::Vscode, false) => out(serde_json::to_string_pretty(
            &json!({"servers": {"archgate": {"type": "stdio", "command": exe, "args": ["serve"]}}}),
        )?),
        (ClientKind::Vscode, true) => out(serde_json::to_string_pretty(
            &json!({"servers": {"archgate": {"type": "http", "url": url, "headers": {"Authorization": auth}}}}),
        )?),
    }
    Ok(ExitCode::SUCCESS)
}

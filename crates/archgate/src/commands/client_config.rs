//! `archgate client-config claude-code|claude-desktop|cursor|vscode [--http]`: the exact snippet,
//! over HTTP for the port the running server listens on (its state in the runtime dir).

use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::ClientKind;
use crate::person::snippets::{self, Connect, Token};

pub fn run(config: Option<PathBuf>, client: ClientKind, http: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "archgate".into());
    if http {
        let app = App::open_without_calls(config)?;
        // The port the running server really listens on (`serve --http --port N`), else config's.
        let port = snippets::served_port(&app.paths, app.gate.config().current().server.port);
        let url = snippets::mcp_url(port);
        let token = app.clients.default_token();
        let file = app.paths.token_file();
        app.shutdown();
        // The token file, read by the client when it runs where it can (never the token in a
        // command the person pastes: `person/snippets.rs`).
        out(snippets::snippet(
            client,
            &Connect::Http {
                url: &url,
                token: Token::File {
                    path: &file,
                    token: &token,
                },
            },
        ));
    } else {
        out(snippets::snippet(client, &Connect::Stdio { exe: &exe }));
    }
    Ok(ExitCode::SUCCESS)
}

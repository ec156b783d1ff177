//! The page's client management: add (the token shown once, with the snippets to paste), revoke
//! and rename, through `person::clients` exactly as `archgate clients` does. The list itself is
//! part of the page's state view (`api::view`).
//!
//! The add answer is the only place a token leaves archgate after the first run, and it goes
//! only to the logged-in page (session cookie, CSRF token, own Origin — see `auth`), with
//! `Cache-Control: no-store`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Shared, refuse};
use crate::person::clients::{self, ClientActionError};
use crate::person::snippets::{self, Connect, Token};

/// Presence for the page is confirmed for the daemon itself (it runs in the person's session).
fn me() -> Result<crate::person::presence::Subject, String> {
    crate::person::presence::Subject::this_process().map_err(|e| e.to_string())
}

fn refused(e: &ClientActionError) -> Response {
    let status = StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST);
    refuse(status, e.kind(), &e.to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AddBody {
    name: String,
    preset: String,
    #[serde(default)]
    tools: Option<Vec<String>>,
}

#[derive(Serialize)]
struct Snippet {
    /// `claude-code`, `claude-desktop`, `cursor`, `vscode` (as `archgate client-config` spells it).
    client: &'static str,
    label: &'static str,
    text: String,
}

pub(crate) async fn add(State(s): State<Shared>, Json(b): Json<AddBody>) -> Response {
    match clients::add(&s.app, &b.name, &b.preset, b.tools, "page", me()).await {
        Ok(added) => {
            // The port this process serves MCP on; a stdio instance names the configured one,
            // as `archgate clients add` does.
            let port = s
                .app
                .http_port
                .get()
                .copied()
                .unwrap_or_else(|| s.app.gate.config().current().server.port);
            let url = snippets::mcp_url(port);
            // Config blocks only: no snippet is a command carrying the token.
            let connect = Connect::Http {
                url: &url,
                token: Token::Shown(&added.token),
            };
            let list: Vec<Snippet> = crate::cli::ClientKind::ALL
                .iter()
                .map(|k| {
                    let (client, label) = k.names();
                    Snippet {
                        client,
                        label,
                        text: snippets::snippet(*k, &connect),
                    }
                })
                .collect();
            Json(json!({
                "ok": true,
                "name": added.name,
                "preset": added.preset,
                "token": added.token,
                "url": url,
                "snippets": list,
            }))
            .into_response()
        }
        Err(e) => refused(&e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevokeBody {
    name: String,
}

pub(crate) async fn revoke(State(s): State<Shared>, Json(b): Json<RevokeBody>) -> Response {
    match clients::revoke(&s.app, &b.name, "page", me()).await {
        Ok(()) => Json(json!({"ok": true})).into_response(),
        Err(e) => refused(&e),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RenameBody {
    from: String,
    to: String,
}

pub(crate) async fn rename(State(s): State<Shared>, Json(b): Json<RenameBody>) -> Response {
    match clients::rename(&s.app, &b.from, &b.to, "page", me()).await {
        Ok(()) => Json(json!({"ok": true})).into_response(),
        Err(e) => refused(&e),
    }
}

//! The client a connection names itself as (the in-process stdio server's `local`, a bridge's
//! hello): no token proves it, so a name that carries the person's trust — a client of
//! `archgate clients`, whose grant, standing rules and `trusted_relay` belong to its token — is
//! never one (class: *an identity the person trusts, claimed by a name*, attack 15 F1) — nor a
//! name that was one (class: *trust keyed by a name outlives the token that owned it*, attack 18
//! F6: revoked or renamed away, see `archgate_core::clients` `retired.rs`).

use archgate_core::gate::Client;
use rmcp::ErrorData as McpError;
use std::sync::Arc;

use crate::app::App;

/// Whether `name` is a client of `archgate clients` now (the store re-read if it changed; whoever
/// notices a change refreshes the live sessions, as `App::sync_clients` does).
pub fn is_token_client(app: &Arc<App>, name: &str) -> bool {
    if app.clients.reload_if_changed() {
        let app = app.clone();
        tokio::spawn(async move { app.refresh_sessions().await });
    }
    app.clients.list().iter().any(|c| c.name == name)
}

/// Whether `name` was a client of `archgate clients` once (revoked, or renamed away): the
/// `[clients.NAME]` section written for it and the rules made for it were the person's trust in
/// its token's holder, so no bridge takes the name (class: *trust keyed by a name outlives the
/// token that owned it*, attack 18 F6).
pub fn was_token_client(app: &App, name: &str) -> bool {
    app.clients.was_token_client(name)
}

/// A named connection's client for this call: its grant from live config. A bridged session
/// whose name the person gave to an HTTP client since it opened is refused.
pub fn for_call(app: &Arc<App>, c: &Client) -> Result<Client, McpError> {
    if is_token_client(app, &c.name) {
        return Err(McpError::invalid_request(
            format!(
                "{:?} is an HTTP client of `archgate clients` now: its grant, standing rules and \
                 relay trust belong to its token, and a stdio client's name proves nothing. \
                 Restart this stdio client under a name of its own",
                c.name
            ),
            None,
        ));
    }
    if was_token_client(app, &c.name) {
        return Err(McpError::invalid_request(
            format!(
                "{:?} was an HTTP client of `archgate clients` (revoked or renamed): the grant, \
                 standing rules and relay trust the person gave it were its token's, and a stdio \
                 client's name proves nothing. Restart this stdio client under a name of its own",
                c.name
            ),
            None,
        ));
    }
    let config = app.gate.config().current();
    Ok(Client {
        name: c.name.clone(),
        grant: archgate_core::clients::grant_for(&c.name, None, &config),
        agent: None,
        transport: c.transport,
        token: None,
    })
}

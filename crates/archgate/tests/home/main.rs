//! archgate at home on the desktop, with the real binary: `archgate status --waybar` against a
//! real `serve --http` (golden JSON), `state.json` for bars, the systemd user unit (golden file,
//! `systemd-analyze verify`), `archgate setup`, and the Omarchy plugin's contract with the daemon
//! (qmllint, every command, frame, /health field and state field the QML uses exists; the plugin
//! never writes inside its own directory; the manifest is what `omarchy plugin add` accepts).

// These tests start the archgate binary and real tools (qmllint, systemd-analyze); that is their
// point, so the rule that only crates/exec spawns processes does not apply to them.
#![allow(clippy::disallowed_methods)]

// The e2e harness: private XDG directories, the HTTP server and its frames, MCP over HTTP.
#[allow(dead_code)]
#[path = "../e2e/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "../e2e/mcp_http.rs"]
mod mcp_http;
#[allow(dead_code)]
#[path = "../e2e/wire.rs"]
mod wire;

mod client_config;
mod doctor;
mod plugin;
mod service;
mod setup;
mod status;
mod support;

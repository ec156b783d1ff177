//! Frames: in HTTP mode, one JSON line on stdout per state change and per call, never with
//! arguments. Supervisors (the Omarchy plugin) read them. stdout carries nothing else.

use std::io::Write;

#[allow(clippy::print_stdout)]
pub fn emit(v: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    // A closed stdout (supervisor gone) must not stop the server.
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

pub fn call_frame(r: &archgate_core::audit::Record) {
    emit(
        &serde_json::json!({"event": "call", "tool": r.tool, "client": r.client, "outcome": r.outcome.as_str()}),
    );
}

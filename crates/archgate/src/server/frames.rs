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

/// The same line as `emit(&json!({"event": "call", "tool", "client", "outcome"}))`, serialized
/// straight from the record's fields (no `Value` built per call) and handed to stdout in one write.
#[allow(clippy::print_stdout)]
pub fn call_frame(r: &archgate_core::audit::Record) {
    #[derive(serde::Serialize)]
    struct Frame<'a> {
        event: &'static str,
        tool: &'a str,
        client: &'a str,
        outcome: &'static str,
    }
    let frame = Frame {
        event: "call",
        tool: &r.tool,
        client: &r.client,
        outcome: r.outcome.as_str(),
    };
    let Ok(mut line) = serde_json::to_vec(&frame) else {
        return;
    };
    line.push(b'\n');
    let mut out = std::io::stdout().lock();
    // A closed stdout (supervisor gone) must not stop the server.
    let _ = out.write_all(&line);
    let _ = out.flush();
}

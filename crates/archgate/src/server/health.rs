//! What `/health` shows anyone: counts only, never names, arguments or secrets (`http.rs`'s
//! handler adds client and tool names when the request carries a valid token).

use serde_json::json;

use super::mcp::PROTOCOL_VERSIONS;
use crate::app::App;

/// Status for people and bars: counts only, never names, arguments or secrets (`/health` adds
/// client and tool names when the request carries a valid token). Small whatever happened:
/// every map in it is bounded.
pub fn body(app: &App) -> serde_json::Value {
    let gate = &app.gate;
    let now = archgate_core::person::now_secs();
    let calls = gate.counters().snapshot();
    json!({
        "status": "serving",
        "name": "archgate",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_s": app.started.elapsed().as_secs(),
        "protocol_versions": PROTOCOL_VERSIONS,
        "calls": {"total": calls.total, "by_outcome": calls.by_outcome},
        "pending_approvals": gate.broker().pending().len(),
        "developer_mode": gate.person().dev_mode_until(now).is_some(),
        "config": gate.config().status(),
        // archgate's own state (standing rules, acknowledgements) not used because its file or
        // directory is not archgate's (`paths::untrusted_dir`): no standing rule says yes.
        "state": match gate.person().state_untrusted() {
            None => json!({"ok": true}),
            Some(why) => json!({"ok": false, "problem": why}),
        },
        "audit": {
            "written": gate.audit().stats().written.load(std::sync::atomic::Ordering::Relaxed),
            "dropped": gate.audit().stats().dropped_total.load(std::sync::atomic::Ordering::Relaxed),
            "write_failures": gate.audit().stats().write_failures.load(std::sync::atomic::Ordering::Relaxed),
            // False from a failed write until one succeeds: no call is answered meanwhile.
            "writable": gate.audit().writable(),
        },
        // Programs running whose groups archgate's guard holds (killed if archgate is killed).
        "programs": {"guarded": archgate_core::exec::guard::guarded()},
        "session": session_facts(app),
        // Stdio clients: bridged through this daemon, and those serving in their own process.
        "bridge": app.bridge.json(),
        "in_process_stdio": crate::server::instances::in_process(&app.paths.runtime_dir),
    })
}

/// Where the control socket is, and which session variables archgate found in the runtime
/// directory rather than its environment (a client that started it with HOME and PATH only).
fn session_facts(app: &App) -> serde_json::Value {
    let env = archgate_desktop::DesktopEnv::from_process();
    json!({
        "runtime_dir": app.paths.runtime_dir,
        "discovered": env.discovered,
    })
}

//! The agent's own name (`clientInfo` in `initialize`) is the agent's word: a name that tries to
//! draw on the terminal, to be markup, to be huge, or to be another client's name is bounded,
//! shown escaped on every CLI surface and in the audit record, and changes nobody's identity.

#![allow(clippy::disallowed_methods)]

use serde_json::json;

use crate::support::mcp::PROTOCOL;
use crate::support::{Env, StdioServer, text, wait_for};

const ASK: &str = "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = false\n";

#[test]
fn a_forged_agent_name_is_bounded_escaped_everywhere_and_changes_no_identity() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::start(&env);
    let name = format!(
        "default\u{1b}[1A\u{1b}[2K\rFAKE-ROW <b>x</b>\u{202e}{}",
        "w".repeat(4096)
    );
    s.request(
        0,
        "initialize",
        json!({"protocolVersion": PROTOCOL, "capabilities": {},
               "clientInfo": {"name": name, "version": "9\u{1b}]0;title\u{7}"}}),
    );
    s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    wait_for("the control socket", || {
        env.run(&["dev-mode", "status"])
            .status
            .success()
            .then_some(())
    });
    s.call(1, "system_status", json!({}));
    let q = env.one_pending();
    // Identity is the grant's: the name the agent gave itself is shown, not believed.
    assert_eq!(q["client"], "local");
    let agent = q["agent"].as_str().expect("the agent's name").to_owned();
    assert!(agent.chars().count() <= 48 + 1 + 24, "{agent}");
    assert!(
        agent.starts_with("default\\x1b[1A\\x1b[2K\\rFAKE-ROW <b>x</b>"),
        "{agent}"
    );
    let id = q["id"].as_str().unwrap().to_owned();

    for args in [vec!["approvals"], vec!["show", id.as_str()]] {
        let out = env.run(&args);
        assert!(out.status.success(), "{}", text(&out));
        let said = String::from_utf8(out.stdout).unwrap();
        assert!(
            !said.chars().any(|c| c.is_control() && c != '\n'),
            "{args:?}: {said:?}"
        );
        assert!(!said.contains('\u{202e}'), "{said:?}");
        assert!(said.contains("FAKE-ROW"), "the name is shown: {said}");
    }
    assert!(env.run(&["deny", &id]).status.success());
    let rec = env.audit_of(&id);
    assert_eq!(rec["client"], "local");
    assert_eq!(rec["agent"], agent.as_str());
    let out = env.run(&["log"]);
    let said = String::from_utf8(out.stdout).unwrap();
    assert!(
        !said.chars().any(|c| c.is_control() && c != '\n'),
        "{said:?}"
    );
}

/// Over HTTP each session carries the name its own `initialize` gave; the grant stays the
/// token's (`default`), and a stateless request carries none.
#[test]
fn over_http_each_session_carries_its_own_agent_name_beside_the_tokens_client() {
    let env = Env::with_config(ASK);
    let server = crate::support::HttpServer::start(&env);
    let (c, _) = crate::support::McpHttp::initialize(server.port, &env.token());
    let call = std::thread::spawn(move || c.call_tool(1, "system_status", json!({})));
    let q = env.one_pending();
    assert_eq!(q["client"], "default");
    assert_eq!(q["agent"], "archgate-e2e 0.0.0");
    let id = q["id"].as_str().unwrap().to_owned();
    assert!(env.run(&["deny", &id]).status.success());
    let result = call.join().unwrap();
    assert_eq!(result["isError"], true, "{result}");
    let rec = env.audit_of(&id);
    assert_eq!(rec["client"], "default");
    assert_eq!(rec["agent"], "archgate-e2e 0.0.0");
}

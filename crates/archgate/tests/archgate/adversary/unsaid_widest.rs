//! Class: *a missing value means the widest* (attack 15 F2). A `[clients.NAME]` section without
//! `preset` read as `full` and replaced the grant `archgate clients add --preset read-only`
//! stored: writing only `trusted_relay = true` there (as the README says to) silently gave the
//! client every tool. Tried here, against the real daemon: the section that only marks a relay
//! leaves the stored read-only grant in force (`clients list`, and an act tool refused
//! `not_granted` to the client's token); a section for a client nobody added, saying no preset,
//! is the narrowest (the bridged client sees no act tool).

use serde_json::json;

use super::bounds::add_client;
use crate::support::{Env, HttpServer, StdioServer, text};

fn with_section(env: &Env, section: &str) {
    let config = std::fs::read_to_string(env.config_file()).unwrap();
    env.write_config(&format!("{config}[approval]\npage = false\n{section}"));
}

#[test]
fn a_section_that_only_marks_a_relay_keeps_the_stored_read_only_grant() {
    let env = Env::hermetic();
    with_section(&env, "[clients.phone]\ntrusted_relay = true\n");
    let phone = add_client(&env, "phone", "read-only");
    let server = HttpServer::start(&env);

    let list = env.run(&["clients", "list"]);
    let shown = text(&list);
    let line = shown
        .lines()
        .find(|l| l.starts_with("phone "))
        .unwrap_or_else(|| panic!("no phone in {shown}"));
    assert!(
        line.contains("read-only") && !line.contains("full"),
        "{line}"
    );

    let r = server.call(&phone, "clipboard_write", json!({"text": "x"}));
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["error"]["kind"], "not_granted",
        "{r}"
    );
}

#[test]
fn a_section_without_a_preset_and_nothing_stored_is_the_narrowest() {
    let env = Env::hermetic();
    with_section(&env, "[clients.cursor]\ntrusted_relay = true\n");
    let _server = HttpServer::start(&env);
    let mut c = StdioServer::start_with(&env, &["serve", "--client", "cursor"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = c.request(2, "tools/list", json!({}));
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"pkg_search"), "{names:?}");
    assert!(
        !names.contains(&"clipboard_write") && !names.contains(&"omarchy_run"),
        "a section that said no preset granted act tools: {names:?}"
    );
    c.close();
}

//! Fail-closed config (part of `hostile.rs`): a config that does not parse at start, one that is
//! writable by group, one owned by another user — none may lift the person's deny rules or
//! bring back a tool they disabled. archgate runs on the last config that applied, says so on
//! stderr, `/health` and the bar state, and refuses to start when it has none.

use crate::support::*;
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

/// The person's config: `system_status` denied, `pacman_conf` disabled.
const PERSON: &str = "[approval]\npage = false\nnotifications = false\n\
                      [policy]\ndeny = [\"system_status\"]\n[tools]\ndisabled = [\"pacman_conf\"]\n";

fn tool_names(d: &HttpServer, token: &str) -> Vec<String> {
    let mut r = call_request(token, "system_status", json!({}), 3);
    r.body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
    .into_bytes();
    r.headers.retain(|(k, _)| *k != "Mcp-Name");
    for h in r.headers.iter_mut() {
        if h.0 == "Mcp-Method" {
            h.1 = "tools/list".into();
        }
    }
    let resp = send(d.port, &r);
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.messages()
        .iter()
        .find(|m| m["id"] == 3)
        .and_then(|m| m["result"]["tools"].as_array().cloned())
        .unwrap_or_else(|| panic!("no tools in {}", resp.text()))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The person's rules hold: the denied tool is refused, the disabled one hidden and refused,
/// and the honest path (another tool) works.
fn rules_hold(env: &Env, d: &HttpServer) {
    let token = env.token();
    assert_eq!(
        outcome(&d.call(&token, "system_status", json!({}))),
        "refused"
    );
    let names = tool_names(d, &token);
    assert!(!names.iter().any(|n| n == "pacman_conf"), "{names:?}");
    assert!(names.iter().any(|n| n == "pkg_search"), "{names:?}");
    assert_ne!(outcome(&d.call(&token, "pacman_conf", json!({}))), "ok");
    let (r, _) = env.call("system_status", &json!({}));
    assert_eq!(outcome(&r), "refused", "the CLI path too: {r}");
}

/// Starts once with the person's config so a last good copy exists, then stops.
fn with_last_good(env: &Env) {
    let mut d = HttpServer::start(env);
    rules_hold(env, &d);
    assert!(d.stop().0.success());
}

/// The copy kept of the last config that applied: exactly the person's file, private.
fn kept_is(env: &Env, text: &str) {
    let kept = env.path("state/archgate/config.last-good.toml");
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), text);
    let mode = std::fs::metadata(&kept).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

fn says_last_good(env: &Env, d: &HttpServer, why: &str) {
    let h = d.health();
    assert_eq!(h["config"]["ok"], false, "{h}");
    assert!(
        h["config"]["using"]
            .as_str()
            .unwrap()
            .starts_with("last good from "),
        "{h}"
    );
    assert!(
        h["config"]["error"].as_str().unwrap_or("").contains(why),
        "{h}"
    );
    assert!(
        d.log().contains("using the last config that applied"),
        "{}",
        d.log()
    );
    let bar: Value = wait_for("the bar state", || {
        std::fs::read(env.path("runtime/archgate/state.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
    });
    assert_eq!(bar["config_ok"], false, "{bar}");
    assert!(
        bar["config_problem"]
            .as_str()
            .unwrap_or("")
            .contains("last good from"),
        "{bar}"
    );
}

#[test]
fn a_config_that_does_not_parse_at_start_keeps_the_last_good_deny_rules() {
    let env = Env::with_config(PERSON);
    with_last_good(&env);
    env.write_config("[policy\ndeny = []\n");
    let d = HttpServer::start(&env);
    rules_hold(&env, &d);
    says_last_good(&env, &d, "line 1");
    kept_is(&env, PERSON);
    // Fixed: the file applies again, and becomes the new last good copy.
    let fixed = PERSON.replace("deny = [\"system_status\"]", "deny = []");
    env.write_config(&fixed);
    wait_for("the fixed file to apply", || {
        (d.health()["config"]["ok"] == true).then_some(())
    });
    assert_eq!(
        outcome(&d.call(&env.token(), "system_status", json!({}))),
        "ok"
    );
    kept_is(&env, &fixed);
}

#[test]
fn without_a_last_good_config_a_broken_file_refuses_to_start() {
    let env = Env::with_config("[policy\ndeny = []\n");
    let out = env.run(&["serve", "--http", "--port", "0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no last good config"), "{err}");
    assert!(err.contains("does not run on defaults"), "{err}");
    // And no tool runs on defaults through the CLI either.
    let out = env.run(&["call", "system_status", "{}"]);
    assert!(!out.status.success());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("cpus"));
}

#[test]
fn a_group_writable_config_is_refused() {
    let env = Env::with_config(PERSON);
    with_last_good(&env);
    // The same person's rules lifted in a file the group can write.
    env.write_config("[approval]\npage = false\nnotifications = false\n");
    let f = env.config_file();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
    let d = HttpServer::start(&env);
    rules_hold(&env, &d);
    says_last_good(&env, &d, "writable by group or others");
    let check = env.run(&["config", "check"]);
    assert_eq!(check.status.code(), Some(1));
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(said.contains("writable by group or others"), "{said}");
    // Its directory writable by others is refused the same way.
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    let dir = f.parent().unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    drop(d);
    let d = HttpServer::start(&env);
    rules_hold(&env, &d);
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Mode fixed while running: applied on the next poll.
    wait_for("the fixed file to apply", || {
        (d.health()["config"]["ok"] == true).then_some(())
    });
    assert_eq!(
        outcome(&d.call(&env.token(), "system_status", json!({}))),
        "ok"
    );
}

#[test]
fn another_users_config_is_refused_at_start_and_on_reload() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("SKIPPED: needs root (it gives the config to `nobody`); CI runs it as root");
        return;
    }
    let env = Env::with_config(PERSON);
    with_last_good(&env);
    let nobody = nix::unistd::User::from_name("nobody").unwrap().unwrap();
    let f = env.config_file();
    env.write_config("[approval]\npage = false\nnotifications = false\n");
    std::os::unix::fs::chown(&f, Some(nobody.uid.as_raw()), None).unwrap();
    let d = HttpServer::start(&env);
    rules_hold(&env, &d);
    says_last_good(&env, &d, "owned by uid");
    drop(d);
    // A good start, then another user's edit while serving: not applied.
    std::os::unix::fs::chown(&f, Some(nix::unistd::getuid().as_raw()), None).unwrap();
    env.write_config(PERSON);
    let d = HttpServer::start(&env);
    assert_eq!(d.health()["config"]["ok"], true);
    env.write_config("[approval]\npage = false\nnotifications = false\n");
    std::os::unix::fs::chown(&f, Some(nobody.uid.as_raw()), None).unwrap();
    wait_for("the foreign file to be refused", || {
        (d.health()["config"]["ok"] == false).then_some(())
    });
    rules_hold(&env, &d);
}

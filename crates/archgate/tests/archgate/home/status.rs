//! `archgate status [--waybar]` and `state.json` against a real `archgate serve --http`.

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;

use super::golden;
use crate::support::McpHttp;
use crate::support::{Env, HttpServer};
use crate::support::{stdout, text, wait_for};

/// `system_status` parks for the person's answer; no page port or notifications to collide on.
fn config(port: u16) -> String {
    format!(
        "[server]\nport = {port}\n[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = false\n"
    )
}

/// A port nothing listens on (bound and released), for `server.port` in config: the machine's
/// 8765 may belong to something else.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn env() -> Env {
    let env = Env::new();
    env.write_config(&config(free_port()));
    env
}

fn state(env: &Env) -> Value {
    let text = std::fs::read_to_string(env.path("runtime").join("archgate/state.json"))
        .expect("state.json");
    serde_json::from_str(&text).expect("state.json is JSON")
}

/// The Waybar JSON with what differs between runs replaced: the port, the version and the
/// minutes left in developer mode.
fn waybar(env: &Env, port: Option<u16>) -> (Value, String) {
    let out = env.run(&["status", "--waybar"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let raw = stdout(&out);
    assert_eq!(raw.lines().count(), 1, "one JSON line for Waybar: {raw}");
    let v: Value = serde_json::from_str(&raw).expect("Waybar JSON");
    let mut norm = serde_json::to_string_pretty(&v).unwrap();
    if let Some(p) = port {
        norm = norm.replace(&format!("127.0.0.1:{p}"), "127.0.0.1:{port}");
    }
    norm = norm.replace(env!("CARGO_PKG_VERSION"), "{version}");
    if let Some(i) = norm.find("(about ") {
        let j = norm[i..].find(" min left)").expect("minutes") + i;
        norm.replace_range(i + "(about ".len()..j, "{minutes}");
    }
    (v, norm + "\n")
}

fn approvals(env: &Env) -> Vec<Value> {
    let out = env.run(&["approvals", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    v.as_array()
        .cloned()
        .or_else(|| v["pending"].as_array().cloned())
        .unwrap_or_default()
}

#[test]
fn waybar_json_for_serving_pending_dev_mode_and_stopped_matches_the_golden_files() {
    let env = env();
    let mut server = HttpServer::start(&env);
    let port = server.port;

    // state.json: written by the daemon at once, private.
    let s = state(&env);
    assert_eq!(s["status"], "serving");
    assert_eq!(s["writer"], "archgate");
    assert_eq!(s["port"], port);
    assert_eq!(s["pid"], server.child.id());
    assert_eq!(s["pending_approvals"], 0);
    let mode = std::fs::metadata(env.path("runtime").join("archgate/state.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let (_, serving) = waybar(&env, Some(port));
    golden("waybar-serving.json", &serving);
    let human = env.run(&["status"]);
    assert_eq!(human.status.code(), Some(0), "{}", text(&human));
    assert!(
        stdout(&human).contains(&format!("serving at http://127.0.0.1:{port}/mcp")),
        "{}",
        text(&human)
    );

    // A call waits for the person: the bar says so, state.json too.
    let token = env.token();
    let caller = std::thread::spawn(move || {
        let (c, _) = McpHttp::initialize(port, &token);
        c.call_tool(1, "system_status", json!({}))
    });
    let id = wait_for("a pending approval", || {
        approvals(&env)
            .first()
            .and_then(|q| q["id"].as_str().map(str::to_owned))
    });
    wait_for("state.json to count it", || {
        (state(&env)["pending_approvals"] == 1).then_some(())
    });
    let (v, pending) = waybar(&env, Some(port));
    assert_eq!(v["alt"], "pending");
    golden("waybar-pending.json", &pending);
    let denied = env.run(&["deny", &id]);
    assert!(denied.status.success(), "{}", text(&denied));
    let result = caller.join().expect("the caller");
    assert_eq!(result["isError"], true, "a denied call is an error result");
    wait_for("state.json to drop it", || {
        (state(&env)["pending_approvals"] == 0).then_some(())
    });

    // Developer mode, from the CLI to the bar.
    let on = env.run(&["dev-mode", "on", "--for", "1h"]);
    assert!(on.status.success(), "{}", text(&on));
    wait_for("state.json to show developer mode", || {
        (state(&env)["developer_mode"] == true).then_some(())
    });
    assert!(state(&env)["developer_mode_until"].as_u64().is_some());
    let (v, dev) = waybar(&env, Some(port));
    assert_eq!(v["alt"], "dev-mode");
    golden("waybar-dev-mode.json", &dev);
    let off = env.run(&["dev-mode", "off"]);
    assert!(off.status.success(), "{}", text(&off));

    // A clean stop: the daemon marks its file stopped on the way out.
    let (status, _) = server.stop();
    assert!(status.success(), "{status:?}");
    assert_eq!(state(&env)["status"], "stopped");
    let (_, stopped) = waybar(&env, None);
    golden("waybar-stopped.json", &stopped);
    let human = env.run(&["status"]);
    assert_eq!(human.status.code(), Some(3), "{}", text(&human));
    assert!(
        stdout(&human).contains("archgate is not running"),
        "{}",
        text(&human)
    );
}

#[test]
fn a_daemon_that_stops_answering_is_unresponsive_not_serving() {
    let env = env();
    let server = HttpServer::start(&env);
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let (v, _) = waybar(&env, Some(server.port));
    let json = env.run(&["status", "--json"]);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGCONT).unwrap();
    assert_eq!(v["alt"], "unresponsive", "{v}");
    assert_eq!(v["class"], json!(["unresponsive"]));
    assert!(
        v["tooltip"]
            .as_str()
            .unwrap()
            .contains(&format!("pid {}", server.child.id())),
        "{v}"
    );
    assert_eq!(json.status.code(), Some(3), "{}", text(&json));
    // Running again, it serves again.
    let (v, _) = waybar(&env, Some(server.port));
    assert_eq!(v["alt"], "serving", "{v}");
}

#[test]
fn a_killed_daemon_reads_as_stopped() {
    let env = env();
    let mut server = HttpServer::start(&env);
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // SIGKILL leaves no chance to mark the file; its pid is gone, so readers know better.
    assert_eq!(state(&env)["status"], "serving");
    let (v, _) = waybar(&env, Some(server.port));
    assert_eq!(v["alt"], "stopped", "{v}");
    assert!(v["tooltip"].as_str().unwrap().contains("has ended"), "{v}");
}

#[test]
fn a_second_daemon_that_cannot_bind_leaves_the_first_ones_state_alone() {
    let env = env();
    let first = HttpServer::start(&env);
    let port = first.port.to_string();
    let out = env.run(&["serve", "--http", "--port", &port]);
    assert!(!out.status.success());
    let frame: Value = serde_json::from_str(stdout(&out).lines().next().unwrap_or("")).unwrap();
    assert_eq!(frame["event"], "failed");
    let s = state(&env);
    assert_eq!(s["status"], "serving");
    assert_eq!(s["pid"], first.child.id());
}

#[test]
fn a_daemon_that_cannot_bind_records_why() {
    let env = env();
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port().to_string();
    let out = env.run(&["serve", "--http", "--port", &port]);
    assert!(!out.status.success());
    let s = state(&env);
    assert_eq!(s["status"], "failed");
    assert!(
        s["reason"].as_str().unwrap().contains("cannot listen"),
        "{s}"
    );
    let (v, _) = waybar(&env, None);
    assert_eq!(v["alt"], "failed");
    assert!(
        v["tooltip"].as_str().unwrap().contains("cannot listen"),
        "{v}"
    );
}

#[test]
fn what_the_plugin_writes_is_what_the_bar_shows() {
    let env = env();
    let dir = env.path("runtime").join("archgate");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    // The shape Service.qml's writeState() writes when `archgate` is not on PATH.
    std::fs::write(
        dir.join("state.json"),
        r#"{"status": "missing", "writer": "plugin", "pid": null, "port": null, "version": null,
            "pending_approvals": 0, "developer_mode": false, "config_ok": true,
            "reason": "`archgate` is not on PATH. Install the archgate package (it puts archgate in /usr/bin), then: omarchy-shell archgate.mcp start",
            "updated_at": 1}"#,
    )
    .unwrap();
    let (_, missing) = waybar(&env, None);
    golden("waybar-missing.json", &missing);
}

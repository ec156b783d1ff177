//! The binary's start-up refusals and its CLI for people: symlinked state, a broken config,
//! `config check`, and `archgate call` on the same gate as MCP.

use serde_json::{Value, json};

use crate::support::{Env, HttpServer};
use crate::support::{McpHttp, check_system_status};

#[test]
fn a_symlinked_state_directory_is_refused_at_start() {
    let env = Env::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), env.state_dir()).unwrap();

    // HTTP: a failed frame with the reason, then a non-zero exit.
    let (frame, status, stderr) = match HttpServer::try_start(&env) {
        Ok(_) => panic!("archgate served with a symlinked state directory"),
        Err(e) => e,
    };
    assert_eq!(frame["event"], "failed", "{frame}");
    let reason = frame["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("symbolic link"), "{reason}");
    assert!(
        reason.contains(&env.state_dir().display().to_string()),
        "{reason}"
    );
    assert!(!status.expect("exited").success());
    assert!(stderr.contains("symbolic link"), "{stderr}");

    // stdio and the CLI refuse it the same way.
    let out = env.run(&["serve"]);
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "stdout in stdio mode is protocol only"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"));
    let out = env.run(&["call", "system_status", "{}"]);
    assert!(!out.status.success());
    // Nothing was written through the link.
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
}

#[test]
fn a_broken_config_serves_on_the_last_good_one_and_config_check_names_the_line() {
    let env = Env::new();
    // Never on defaults: with no config that parsed before, a broken file refuses the start.
    env.write_config("# archgate\n[server]\nport = \"not a number\n");
    let out = env.run(&["serve", "--http", "--port", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no last good config"));
    // Once a config has parsed, a broken file at start gives that one.
    env.write_config("# archgate\n[server]\nport = 8765\n");
    drop(HttpServer::start(&env));
    env.write_config("# archgate\n[server]\nport = \"not a number\n");
    let server = HttpServer::start(&env);
    let (mcp, _) = McpHttp::initialize(server.port, &env.token());
    check_system_status(&mcp.call_tool(1, "system_status", json!({})));
    let health = crate::support::Request::get("/health")
        .send(server.port)
        .json();
    assert_eq!(health["config"]["ok"], false, "{health}");
    assert!(
        health["config"]["using"]
            .as_str()
            .unwrap()
            .starts_with("last good from"),
        "{health}"
    );
    drop(server);

    let out = env.run(&["config", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("line 3"), "config check output: {text}");
    assert!(
        text.contains(&env.config_file().display().to_string()),
        "{text}"
    );

    // An unknown key is reported with its line but is not fatal.
    env.write_config("[server]\nport = 9000\nfavourite_colour = \"green\"\n");
    let out = env.run(&["config", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("line 3"), "{text}");
    assert!(text.contains("favourite_colour"), "{text}");

    // Every problem, not only the first: two syntax errors, a wrong type and a value out of
    // range, each with its line.
    env.write_config(
        "[server]\nport = \"eighty\"\n[approval\ntimeout_s = 30\n[policy]\nask = [1,\n[audit]\nmax_files = 0\n",
    );
    let out = env.run(&["config", "check"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let file = env.config_file().display().to_string();
    for line in [2, 3] {
        assert!(
            text.contains(&format!("{file}:line {line}:")),
            "line {line}: {text}"
        );
    }
    assert!(
        text.lines().filter(|l| l.starts_with(&file)).count() >= 3,
        "at least three problems: {text}"
    );

    // A good file passes.
    env.write_config("[server]\nport = 9000\n");
    let out = env.run(&["config", "check"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn archgate_call_runs_the_tool_through_the_gate_and_sets_the_exit_status() {
    let env = Env::new();
    let out = env.run(&["call", "system_status", "{}"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("call prints JSON");
    check_system_status(&v);

    let out = env.run(&["call", "no_such_tool", "{}"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("an error is JSON too");
    assert_eq!(v["isError"], true);

    let out = env.run(&["call", "system_status", r#"{"bogus": 1}"#]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["isError"], true);

    // Same audit as MCP: one record per call, the refused ones included.
    let records = env.audit();
    let tools: Vec<&str> = records
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["system_status", "no_such_tool", "system_status"]);
    assert_eq!(records[0]["outcome"], "ok");
    assert!(records[1..].iter().all(|r| r["outcome"] != "ok"));
}

/// A command that makes no call leaves no activity log behind on a fresh state dir (it did run
/// there: the token it made is in the state dir); what writes creates the log: an event
/// (`clients add`), a call (`archgate call`), and a serving daemon as it starts, before any call.
#[test]
fn only_what_records_creates_the_activity_log() {
    let env = Env::new();
    for args in [
        &["tools"][..],
        &["tools", "--json"],
        &["policy", "explain", "system_status", "{}"],
        &["client-config", "claude-code", "--http"],
        &["clients", "list"],
    ] {
        let out = env.run(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !env.audit_file().exists(),
            "{args:?} left an activity log behind"
        );
    }
    assert!(
        env.state_dir().join("token").exists(),
        "ran on this state dir"
    );
    // The log opened at the first write still gets it, whole.
    let out = env.run(&["clients", "add", "bot", "--preset", "read-only"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The client change, and the presence check it needed (how it ended, on this machine).
    let events: Vec<Value> = env.audit();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.len(), events.len(), "{events:?}");
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k != "presence")
            .collect::<Vec<_>>(),
        vec![&"client_added"],
        "{events:?}"
    );

    let env = Env::new();
    let out = env.run(&["call", "system_status", "{}"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.audit().len(), 1);

    let env = Env::new();
    let mut server = HttpServer::start(&env);
    assert!(
        env.audit_file().exists(),
        "a serving daemon opens its log as it starts"
    );
    server.stop();
}

/// On a machine without pacman and offline, each answer names the local fact and the next
/// step, as an agent receives it (`archgate call` renders the MCP result): no pacman.conf or no
/// sync databases, no offline wiki index and `archgate wiki index`, no repository configured.
#[test]
fn offline_answers_name_the_local_fact_and_the_next_step() {
    let env = Env::new();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let none = env.root.path().join("no-pacman/pacman.conf");
    env.write_config(&format!(
        "[arch]\npacman_conf = \"{}\"\npackages_url = \"http://127.0.0.1:{closed}\"\nhttp_timeout_s = 5\n[wiki]\nurl = \"http://127.0.0.1:{closed}\"\n",
        none.display()
    ));
    let error = |tool: &str, args: &str| -> Value {
        let out = env.run(&["call", tool, args]);
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(v["isError"], true, "{tool}: {v}");
        v["structuredContent"]["error"].clone()
    };
    let e = error("pkg_search", r#"{"query":"ripgrep"}"#);
    assert_eq!(e["kind"], "could_not_reach", "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!(
            "this machine has no pacman.conf ({})",
            none.display()
        )),
        "{e}"
    );
    assert!(e["next"].as_str().unwrap().contains("pacman -Sy"), "{e}");

    let e = error("wiki_search", r#"{"query":"systemd"}"#);
    let msg = e["message"].as_str().unwrap();
    assert!(msg.contains("archgate wiki index"), "{e}");
    assert_eq!(
        msg.matches(&format!("127.0.0.1:{closed}")).count(),
        1,
        "the URL once: {e}"
    );
    assert!(
        e["next"].as_str().unwrap().contains("archgate wiki index"),
        "{e}"
    );

    // A pacman.conf with no repository: pkg_updates says so, never "up to date".
    std::fs::create_dir_all(none.parent().unwrap().join("db/local")).unwrap();
    std::fs::write(
        &none,
        format!(
            "[options]\nDBPath = {}/db/\nArchitecture = x86_64\n",
            none.parent().unwrap().display()
        ),
    )
    .unwrap();
    let e = error("pkg_updates", "{}");
    assert_eq!(e["kind"], "not_available", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("configures no repository"),
        "{e}"
    );
    let e = error("pkg_search", r#"{"query":"ripgrep"}"#);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("this machine has no pacman sync databases (DBPath"),
        "{e}"
    );
}

/// `policy explain` says, for an act call that would be asked, what happens after the calling
/// session read untrusted text, under the person's window; for a read call it says nothing of
/// it (issue 31).
#[test]
fn policy_explain_says_when_rules_and_developer_mode_step_back() {
    let env = Env::new();
    env.write_config("[approval]\nuntrusted_window_s = 45\n");
    let out = env.run(&["policy", "explain", "osd", r#"{"message":"hello world"}"#]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("after untrusted text: within 45 s after the calling session read text"),
        "{text}"
    );
    let out = env.run(&["policy", "explain", "system_status", "{}"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(!text.contains("untrusted"), "{text}");
}

//! Hostile input against the real binary, each kind a table: DNS-rebinding-shaped requests,
//! token guessing, path traversal toward archgate's own files, an agent reaching for the
//! person's secrets or powers, and argument injection into every tool that runs a program.
//! Zero successes: no file created, no refusal missing, no crash.

use crate::support::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const QUIET: &str = "[approval]\npage = false\nnotifications = false\n[budgets]\nper_minute = 100000\nper_day = 10000000\n";

// ---------------------------------------------------------------------------------------------
// DNS rebinding
// ---------------------------------------------------------------------------------------------

#[test]
fn dns_rebinding_shaped_hosts_and_origins_are_refused_before_anything_runs() {
    let env = Env::with_config(QUIET);
    let d = HttpServer::start(&env);
    let token = env.token();
    let p = d.port;
    let hosts: Vec<String> = [
        "evil.com",
        "evil.com:{p}",
        "localhost.evil.com",
        "localhost.evil.com:{p}",
        "127.0.0.1.nip.io",
        "127.0.0.1.nip.io:{p}",
        "LOCALHOST.EVIL.COM:{p}",
        "localhost.:{p}",
        "localhost.",
        "127.0.0.1.:{p}",
        "127.0.0.1:{p}.",
        "127.0.0.1:1",
        "localhost:1",
        "127.1:{p}",
        "127.0.0.2:{p}",
        "0.0.0.0:{p}",
        "2130706433:{p}",
        "0x7f000001:{p}",
        "0177.0.0.1:{p}",
        "[::ffff:127.0.0.1]:{p}",
        "[0:0:0:0:0:0:0:1]:{p}",
        "[::1].evil.com:{p}",
        "::1:{p}",
        "[::1]:1",
        "localhost:{p}@evil.com",
        "evil.com@localhost:{p}",
        "localhost:{p}.evil.com",
        "localhost%00.evil.com:{p}",
        "localhost:{p} evil.com",
        "127.0.0.1:{p},evil.com",
        "xn--localhost-evil.com:{p}",
        "",
    ]
    .iter()
    .map(|h| h.replace("{p}", &p.to_string()))
    .collect();
    let mut seen = 0;
    for host in &hosts {
        let mut req = call_request(&token, "system_status", json!({}), 1);
        req.headers.push(("Host", host.clone()));
        let r = send(p, &req);
        assert!(
            r.status == 421 || r.status == 400,
            "Host {host:?} got HTTP {}: {}",
            r.status,
            r.text()
        );
        seen += 1;
    }
    let origins: Vec<String> = [
        "http://evil.com",
        "https://evil.com",
        "http://localhost.evil.com:{p}",
        "http://127.0.0.1.nip.io:{p}",
        "http://127.0.0.1:{p}.evil.com",
        "http://localhost:{p}@evil.com",
        "https://127.0.0.1:{p}",
        "https://localhost:{p}",
        "http://127.0.0.1:1",
        "http://127.0.0.1",
        "http://localhost",
        "http://[::1]",
        "http://[::ffff:127.0.0.1]:{p}",
        "http://localhost.:{p}",
        "http://127.0.0.1:{p}/",
        "http://127.0.0.1:{p}/mcp",
        "null",
        "file://",
        "chrome-extension://abcdefghijklmnop",
        "http://0.0.0.0:{p}",
        "ws://127.0.0.1:{p}",
        "http://127.0.0.1:{p} http://evil.com",
        "",
    ]
    .iter()
    .map(|o| o.replace("{p}", &p.to_string()))
    .collect();
    for origin in &origins {
        let mut req = call_request(&token, "system_status", json!({}), 1);
        req.headers.push(("Origin", origin.clone()));
        let r = send(p, &req);
        assert_eq!(r.status, 403, "Origin {origin:?}: {}", r.text());
        assert_eq!(r.json()["error"], "foreign_origin");
        seen += 1;
    }
    assert!(seen >= 50);
    // The page's own origin, in any case, passes; so does no Origin at all (not a browser).
    for origin in [
        format!("http://127.0.0.1:{p}"),
        format!("http://LOCALHOST:{p}"),
        format!("http://[::1]:{p}"),
    ] {
        let mut req = call_request(&token, "system_status", json!({}), 1);
        req.headers.push(("Origin", origin.clone()));
        assert_eq!(send(p, &req).status, 200, "{origin}");
    }
    // The log is written behind the answers: wait for the three, then make sure no more come.
    wait_for("the 3 allowed calls' records", || {
        (env.calls().len() >= 3).then_some(())
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(
        env.calls().len(),
        3,
        "no refused request reached the gate: only the 3 allowed calls are recorded"
    );
}

// ---------------------------------------------------------------------------------------------
// Token guessing
// ---------------------------------------------------------------------------------------------

#[test]
fn token_guessing_is_refused_every_time_and_slows_down() {
    // The comparison is constant-time in code: `subtle` over the token's hash.
    let clients = include_str!("../../../core/src/clients.rs");
    assert!(
        clients.contains("ct_eq"),
        "client tokens are compared with subtle's constant-time ct_eq"
    );

    let env = Env::with_config(QUIET);
    let d = HttpServer::start(&env);
    let token = env.token();
    let mut flip = token.clone().into_bytes();
    flip[0] = if flip[0] == b'a' { b'b' } else { b'a' };
    let flip = String::from_utf8(flip).unwrap();
    let guesses: Vec<String> = vec![
        flip,
        token[..token.len() - 1].to_owned(),
        format!("{token}0"),
        token.to_uppercase(),
        format!(" {}", &token[1..]),
        "0".repeat(token.len()),
        "x".into(),
        format!("{token}\u{0}"),
        token.chars().rev().collect(),
        "a".repeat(4096),
    ];
    let mut took = Vec::new();
    for (i, g) in guesses.iter().chain(guesses.iter()).enumerate() {
        let mut req = call_request(g, "system_status", json!({}), i as u64);
        if g.contains('\u{0}') {
            // A NUL cannot travel in a header; send the raw bytes instead.
            req.headers[0].1 = format!("Bearer {}", g.replace('\u{0}', "%00"));
        }
        let start = Instant::now();
        let r = send(d.port, &req);
        took.push(start.elapsed());
        assert_eq!(r.status, 401, "guess {i} got {}: {}", r.status, r.text());
    }
    // Backoff, measured loosely: after 20 failures each answer waits seconds, the first did not.
    let first = took[..3].iter().max().unwrap();
    let last = took[took.len() - 3..].iter().min().unwrap();
    assert!(
        *last >= *first + Duration::from_millis(1500),
        "answers slow down after repeated failures: first {first:?}, last {last:?}"
    );
    // The right token still works, and no guess reached the gate.
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    assert_eq!(env.calls().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Path traversal
// ---------------------------------------------------------------------------------------------

fn private_targets(env: &Env) -> Vec<String> {
    let state = env.state_dir();
    let config = env.config_file();
    let runtime = env.path("runtime/archgate");
    let s = state.display().to_string();
    let scratch = env.path("scratch");
    // Links from an ordinary place into archgate's own directories.
    std::os::unix::fs::symlink(state.join("token"), scratch.join("token-link")).unwrap();
    std::os::unix::fs::symlink(&state, scratch.join("state-link")).unwrap();
    std::os::unix::fs::symlink(&config, scratch.join("config-link.png")).unwrap();
    std::os::unix::fs::symlink(scratch.join("token-link"), scratch.join("link-to-link")).unwrap();
    let rel = |p: &Path| p.strip_prefix("/").unwrap().display().to_string();
    vec![
        format!("{s}/token"),
        format!("{s}/clients.json"),
        format!("{s}/activity.jsonl"),
        format!("{s}/./token"),
        format!("{s}//token"),
        format!("/{s}/token"),
        format!("{s}/../archgate/token"),
        format!("{}/../state/archgate/token", env.path("scratch").display()),
        format!("/proc/self/root{s}/token"),
        format!(
            "/proc/self/cwd/../../../../../../../../{}",
            rel(&state.join("token"))
        ),
        format!("/proc/{}/root{s}/token", std::process::id()),
        format!("/../../../{}", rel(&state.join("token"))),
        format!("{}", scratch.join("token-link").display()),
        format!("{}", scratch.join("link-to-link").display()),
        format!("{}/token", scratch.join("state-link").display()),
        format!("{}", scratch.join("config-link.png").display()),
        config.display().to_string(),
        format!(
            "{}/../archgate/config.toml",
            config.parent().unwrap().display()
        ),
        runtime.join("control.sock").display().to_string(),
        runtime.display().to_string(),
        s.clone(),
        format!("{s}/"),
        format!("{s}/token/"),
        format!("{s}/token\u{0}.png"),
        format!("{s}/to%6Ben"),
        format!("file://{s}/token"),
    ]
}

#[test]
fn paths_into_archgates_own_files_are_refused_through_every_tool_that_takes_a_path() {
    let env = Env::with_config(&format!("{QUIET}[policy]\nallow = [\"background set\"]\n"));
    // Start once so the state, config and runtime files exist.
    let d = HttpServer::start(&env);
    let token = env.token();
    drop(d);
    let secret_tokens: Vec<String> = vec![token.clone()];
    let targets = private_targets(&env);
    let mut calls = 0;
    for t in &targets {
        // background set: resolution must refuse before anyone is asked or anything runs.
        let (r, out) = env.call("background", &json!({"action": "set", "path": t}));
        calls += 1;
        let o = outcome(&r);
        assert!(
            o == "unresolved" || o == "invalid_arguments",
            "background set {t:?}: {o}: {r}; {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // pkg_owner only reads pacman's database; whatever it says, never the file's contents.
        let (r, _) = env.call("pkg_owner", &json!({"path": t}));
        calls += 1;
        for secret in &secret_tokens {
            assert!(!r.to_string().contains(secret.as_str()), "{t}: {r}");
        }
        // launch a file:// URL of it: refused (only http(s) and mailto: open).
        let (r, _) = env.call("launch", &json!({"url": format!("file://{t}")}));
        calls += 1;
        assert_ne!(outcome(&r), "ok", "launch file://{t}: {r}");
    }
    assert!(targets.len() >= 25);
    assert_eq!(env.calls().len(), calls, "every call recorded once");
    assert!(
        env.calls()
            .iter()
            .filter(|r| r["tool"] == "background")
            .all(|r| r["approval"].is_null()),
        "no path question ever reached the person"
    );
}

// ---------------------------------------------------------------------------------------------
// Reaching for the person's secrets and powers
// ---------------------------------------------------------------------------------------------

/// Every file under the private directories with its bytes (the activity log excluded).
fn snapshot(env: &Env) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for dir in ["config", "state", "runtime"] {
        walk(&env.path(dir), &mut out);
    }
    out.retain(|p, _| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        !name.starts_with("activity.jsonl") && name != "state.json"
    });
    out
}

fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            walk(&p, out);
        } else if ft.is_file() {
            out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
        } else {
            out.insert(p, b"(special)".to_vec());
        }
    }
}

/// Arguments for `tool` that aim every string at archgate's own files and powers.
fn reaching_args(tool: &str, schema: &Value, aims: &[String]) -> Vec<Value> {
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut out = Vec::new();
    for aim in aims {
        let mut args = serde_json::Map::new();
        for (k, p) in &props {
            let ty = p["type"].clone();
            let is = |t: &str| ty == t || ty.as_array().is_some_and(|a| a.iter().any(|x| x == t));
            let v = if p.get("$ref").is_some() || p.get("anyOf").is_some() {
                continue; // enums: left to their defaults, or the tool's own verbs below
            } else if is("string") {
                json!(aim)
            } else if is("array") {
                json!([aim, "--config", aim])
            } else {
                continue;
            };
            args.insert(k.clone(), v);
        }
        // Verbs that write, for the tools that have them.
        match tool {
            "theme" => {
                args.insert("action".into(), json!("set"));
            }
            "background" => {
                args.insert("action".into(), json!("set"));
            }
            "audio" => {
                args.insert("action".into(), json!("switch"));
            }
            "screenshot" | "screen_text" => {
                args.insert("target".into(), json!({"kind": "window", "id": aim}));
            }
            _ => {}
        }
        out.push(Value::Object(args));
    }
    out
}

#[test]
fn no_tool_or_resource_reaches_approval_secrets_or_changes_policy_rules_grants_or_config() {
    let env = Env::with_config(&format!(
        "{QUIET}[policy]\nallow = [\"clipboard_write\", \"notify\", \"osd\", \"launch url\", \"background set\", \"theme set\", \"audio switch\"]\n"
    ));
    let d = HttpServer::start(&env);
    let token = env.token();
    let aims: Vec<String> = vec![
        env.config_file().display().to_string(),
        env.state_dir().join("token").display().to_string(),
        env.state_dir().join("clients.json").display().to_string(),
        env.state_dir().join("rules.json").display().to_string(),
        env.path("runtime/archgate/control.sock")
            .display()
            .to_string(),
        "archgate".into(),
        "archgate approve --always".into(),
        "archgate dev-mode on --for 8h".into(),
        "archgate clients add evil --preset full".into(),
        "systemctl --user stop archgate".into(),
        format!("--output={}", env.config_file().display()),
        format!("> {}", env.config_file().display()),
    ];
    let before = snapshot(&env);
    // The person, in the next room, says yes to everything asked (the nag guard lets at most a
    // dozen questions through): even approved, no call may touch archgate's own files.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let person = {
        let stop = stop.clone();
        let cmd = |args: &[&str]| env.command(args);
        let list = cmd(&["approvals", "--json"]);
        let (list_prog, list_env): (
            PathBuf,
            Vec<(std::ffi::OsString, Option<std::ffi::OsString>)>,
        ) = (
            PathBuf::from(list.get_program()),
            list.get_envs()
                .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
                .collect(),
        );
        std::thread::spawn(move || {
            let run = |args: &[&str]| {
                let mut c = std::process::Command::new(&list_prog);
                c.args(args).stdin(std::process::Stdio::null());
                for (k, v) in &list_env {
                    match v {
                        Some(v) => c.env(k, v),
                        None => c.env_remove(k),
                    };
                }
                c.output().ok()
            };
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some(out) = run(&["approvals", "--json"]) {
                    let pending: Vec<Value> =
                        serde_json::from_slice(&out.stdout).unwrap_or_default();
                    for q in pending {
                        if let Some(id) = q["id"].as_str() {
                            run(&["approve", id]);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    let tools: Vec<Value> = serde_json::from_slice(&env.run(&["tools", "--json"]).stdout).unwrap();
    assert!(tools.len() >= 30, "{}", tools.len());
    let secret = token.clone();
    let mut n = 0;
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let schema = t
            .get("input_schema")
            .or_else(|| t.get("inputSchema"))
            .or_else(|| t.get("schema"))
            .cloned()
            .unwrap_or(Value::Null);
        for args in reaching_args(name, &schema, &aims) {
            let r = d.call(&token, name, args.clone());
            n += 1;
            assert!(
                !r.to_string().contains(&secret),
                "{name} {args} answered with the token"
            );
        }
    }
    // Routes and shell calls that name archgate are blocked by policy, whatever the config says.
    for (tool, args) in [
        (
            "omarchy_run",
            json!({"route": "plugin remove", "args": ["archgate"]}),
        ),
        ("omarchy_run", json!({"route": "restart archgate"})),
        (
            "omarchy_run",
            json!({"route": "plugin disable", "args": ["archgate-omarchy"]}),
        ),
        (
            "shell_call",
            json!({"target": "archgate", "method": "stop"}),
        ),
        (
            "shell_call",
            json!({"target": "plugins", "method": "disable", "args": ["archgate"]}),
        ),
    ] {
        let r = d.call(&token, tool, args.clone());
        n += 1;
        assert_eq!(outcome(&r), "refused", "{tool} {args}: {r}");
    }
    // Resources: none gives the token, the page's login link or the socket's secret.
    let list = send(d.port, &rpc(&token, "resources/list", json!({})));
    let list = list.messages().into_iter().find(|m| m["id"] == 1).unwrap();
    let resources = list["result"]["resources"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for res in &resources {
        let uri = res["uri"].as_str().unwrap();
        let r = send(d.port, &rpc(&token, "resources/read", json!({"uri": uri})));
        assert!(
            !r.text().contains(&secret),
            "resource {uri} shows the token"
        );
        assert!(
            !r.text().contains("/login?"),
            "resource {uri} shows a login link"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    person.join().unwrap();
    drop(d);
    let after = snapshot(&env);
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(p, b)| before.get(*p) != Some(b))
        .map(|(p, _)| p)
        .chain(before.keys().filter(|p| !after.contains_key(*p)))
        .collect();
    assert!(
        changed.is_empty(),
        "{n} calls changed archgate's own files: {changed:?}"
    );
    assert!(n >= 300, "{n}");
}

fn rpc(token: &str, method: &str, params: Value) -> Request<'static> {
    let mut params = params;
    let uri = params.get("uri").and_then(Value::as_str).map(str::to_owned);
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": MODERN,
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut r = Request::post("/mcp", body.to_string());
    r.headers = vec![
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", MODERN.into()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(uri) = uri {
        r.headers.push(("Mcp-Name", uri));
    }
    r
}

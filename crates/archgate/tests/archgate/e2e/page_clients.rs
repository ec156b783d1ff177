//! Managing clients from the approval page, over the page's own HTTP API (logged in by the
//! one-time link from the control socket, with the session cookie, the CSRF token and the
//! page's Origin) against a real `serve --http`: add → the token works with its preset's tools;
//! rename → the same session carries on under the new name; revoke → refused at once and the
//! session is closed by the time the page has answered. (The page itself, in Chromium:
//! tests/page/clients.test.mjs.)

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use crate::support::McpHttp;
use crate::support::{Env, HttpServer, PATIENCE, POLL, wait_for};
use crate::support::{Request, Response};

const CONFIG: &str = "[approval]\npage_port = 0\nnotifications = false\n";

fn control(env: &Env, req: &Value) -> Value {
    let path = env.path("runtime").join("archgate").join("control.sock");
    let mut s = wait_for("the control socket", || UnixStream::connect(&path).ok());
    writeln!(s, "{req}").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap()
}

/// A logged-in page session: its port, cookie and CSRF token.
struct PageSession {
    port: u16,
    cookie: String,
    csrf: String,
}

impl PageSession {
    fn login(env: &Env) -> PageSession {
        let hello = control(env, &json!({"op": "hello"}));
        let url = hello["page_url"].as_str().expect("page url").to_owned();
        let port: u16 = url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let link = control(env, &json!({"op": "login_link"}));
        let link = link["link"].as_str().expect("login link");
        let path = &link[link.find("/login").unwrap()..];
        let r = Request::get(path).send(port);
        assert_eq!(r.status, 303, "{}", r.text());
        let cookie = r
            .header("set-cookie")
            .and_then(|c| c.split(';').next())
            .expect("a session cookie")
            .to_owned();
        let page = Request::get("/")
            .header("Cookie", cookie.clone())
            .send(port);
        assert_eq!(page.status, 200);
        let html = page.text();
        let at = html
            .find("name=\"csrf-token\" content=\"")
            .expect("csrf meta")
            + 27;
        let csrf = html[at..at + 64].to_owned();
        PageSession { port, cookie, csrf }
    }

    fn post(&self, path: &str, body: Value) -> Response {
        Request::post(path, body.to_string())
            .header("Content-Type", "application/json")
            .header("Cookie", self.cookie.clone())
            .header("X-CSRF-Token", self.csrf.clone())
            .header("Origin", format!("http://127.0.0.1:{}", self.port))
            .send(self.port)
    }

    fn clients(&self) -> Vec<Value> {
        let r = Request::get("/api/state")
            .header("Cookie", self.cookie.clone())
            .send(self.port);
        assert_eq!(r.status, 200);
        r.json()["clients"].as_array().unwrap().clone()
    }
}

fn tool_names(c: &McpHttp, id: u64) -> Vec<String> {
    let mut v: Vec<String> = c.request(id, "tools/list", json!({}))["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

/// `archgate tools --json`: the enabled tools of these tiers.
fn preset_tools(env: &Env, tiers: &[&str]) -> Vec<String> {
    let out = env.run(&["tools", "--json"]);
    assert!(out.status.success());
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut v: Vec<String> = list
        .iter()
        .filter(|t| t["enabled"] == true && tiers.contains(&t["tier"].as_str().unwrap()))
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

fn wait_for_record(env: &Env, client: &str) -> Value {
    wait_for(&format!("a record from {client}"), || {
        env.audit()
            .into_iter()
            .find(|r| r["client"] == client && r.get("tool").is_some())
    })
}

#[test]
fn a_client_added_renamed_and_revoked_on_the_page() {
    let env = Env::new();
    env.write_config(CONFIG);
    let mut server = HttpServer::start(&env);
    let page = PageSession::login(&env);

    // Typed errors from the store, with their codes.
    let r = page.post(
        "/api/clients/add",
        json!({"name": "no spaces", "preset": "full"}),
    );
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (400, json!("invalid_name"))
    );
    let r = page.post("/api/clients/add", json!({"name": "x", "preset": "root"}));
    assert_eq!(r.json()["error"], "invalid_preset");
    let r = page.post(
        "/api/clients/add",
        json!({"name": "default", "preset": "full"}),
    );
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (409, json!("exists"))
    );

    // Add: the token works and sees exactly the read-only preset's tools.
    let r = page.post(
        "/api/clients/add",
        json!({"name": "bot", "preset": "read-only"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let added = r.json();
    let token = added["token"].as_str().unwrap().to_owned();
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    assert_eq!(added["url"], url.as_str());
    // Config blocks, never a command carrying the token (shell history, process arguments).
    let claude: Value =
        serde_json::from_str(added["snippets"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        claude["mcpServers"]["archgate-http"],
        json!({"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {token}")}})
    );
    for s in added["snippets"].as_array().unwrap() {
        let v: Value = serde_json::from_str(s["text"].as_str().unwrap()).unwrap();
        let server = &v.get("mcpServers").or_else(|| v.get("servers")).unwrap()["archgate-http"];
        assert!(!server["args"].to_string().contains(&token), "{s}");
    }
    let (bot, _) = McpHttp::initialize(server.port, &token);
    assert_eq!(tool_names(&bot, 1), preset_tools(&env, &["read"]));
    let listed = page.clients();
    let row = listed.iter().find(|c| c["name"] == "bot").expect("listed");
    assert_eq!(row["preset"], "read-only");
    assert_eq!(row["live_sessions"], 1);
    assert!(row["last_request"].is_u64());
    assert_eq!(row["budget"]["per_minute"], 120);
    assert!(
        !listed.iter().any(|c| c.to_string().contains(&token)),
        "the list never carries a token"
    );

    // Rename: the same session carries on, recorded under the new name.
    let r = page.post("/api/clients/rename", json!({"from": "bot", "to": "bot2"}));
    assert_eq!(r.status, 200, "{}", r.text());
    let res = bot.call_tool(2, "system_status", json!({}));
    assert_ne!(res["isError"], true, "{res}");
    assert_eq!(wait_for_record(&env, "bot2")["outcome"], "ok");

    // A session belongs to the token that opened it: another client's valid token cannot use it.
    let borrowed = McpHttp {
        port: server.port,
        token: env.token(),
        session: bot.session.clone(),
    };
    let r = borrowed.post(&json!({"jsonrpc": "2.0", "id": 30, "method": "tools/list"}));
    assert_eq!(r.status, 404, "{}", r.text());
    // Revoke: by the time the page has answered, the token is refused and the session is gone.
    let before = live_sessions(server.port, &env.token());
    let r = page.post("/api/clients/revoke", json!({"name": "bot2"}));
    assert_eq!(r.status, 200, "{}", r.text());
    let refused = bot.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(refused.status, 401, "{}", refused.text());
    assert_eq!(
        live_sessions(server.port, &env.token()),
        before - 1,
        "the revoked client's session is closed"
    );
    let r = page.post("/api/clients/revoke", json!({"name": "bot2"}));
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (404, json!("not_found"))
    );
    let r = page.post("/api/clients/revoke", json!({"name": "local"}));
    assert_eq!(r.json()["error"], "not_allowed");

    // Audited, by the page, without the token (read after the stop has flushed the log).
    server.stop();
    let stopped = &server;
    let events: Vec<Value> = env
        .audit()
        .into_iter()
        .filter(|e| e["channel"] == "page")
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["event"].as_str())
        .filter(|k| *k != "presence")
        .collect();
    assert_eq!(kinds, ["client_added", "client_renamed", "client_revoked"]);
    // Each change asked presence first, and the record says when and how it ended.
    for e in events.iter().filter(|e| e["event"] == "presence") {
        assert!(e["asked_at"].is_string() && e["ended"].is_string(), "{e}");
        assert_eq!(e["action"], "org.archgate.clients", "{e}");
    }
    let log = std::fs::read_to_string(env.state_dir().join("activity.jsonl")).unwrap();
    assert!(!log.contains(&token));
    assert!(!stopped.stderr.joined().contains(&token), "not in the log");
    assert!(!stopped.frames.joined().contains(&token), "not in a frame");
}

/// A revocation written by another process (the CLI) ends the client's sessions even when some
/// request notices the changed clients file before the server's poll does.
#[test]
fn a_revocation_from_the_cli_ends_sessions_whoever_notices_it_first() {
    let env = Env::new();
    env.write_config(CONFIG);
    let out = env.run(&["clients", "add", "cli-bot", "--preset", "read-only"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let token = text
        .split_whitespace()
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .unwrap()
        .to_owned();
    let mut server = HttpServer::start(&env);
    let (bot, _) = McpHttp::initialize(server.port, &token);
    let (other, _) = McpHttp::initialize(server.port, &env.token());
    let tools_list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    assert_eq!(bot.post(&tools_list(1)).status, 200);
    let before = live_sessions(server.port, &env.token());

    assert!(env.run(&["clients", "revoke", "cli-bot"]).status.success());
    // Another client's request right away: it is what reads the changed file first.
    assert_eq!(other.post(&tools_list(2)).status, 200);
    assert_eq!(bot.post(&tools_list(3)).status, 401);
    let start = Instant::now();
    let mut id = 10;
    loop {
        id += 1;
        assert_eq!(other.post(&tools_list(id)).status, 200);
        if live_sessions(server.port, &env.token()) == before - 1 {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the revoked client's session stays open"
        );
        std::thread::sleep(POLL);
    }
    let events: Vec<Value> = env
        .audit()
        .into_iter()
        .filter(|e| e["event"] == "client_revoked")
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0]["client"].clone(), events[0]["channel"].clone()),
        (json!("cli-bot"), json!("cli"))
    );
    server.stop();
}

/// Stateful sessions the server holds, from `/health` (any valid token).
fn live_sessions(port: u16, token: &str) -> u64 {
    let h = Request::get("/health")
        .header("Authorization", format!("Bearer {token}"))
        .send(port)
        .json();
    h["sessions"]["live"]
        .as_u64()
        .unwrap_or_else(|| panic!("{h}"))
}

//! Bounded resources (part of `hostile.rs`): half-open connections, a connection flood past the
//! descriptor limit, a session flood from one client, 10,000 unknown tool names — each against
//! the real binary, each with the honest client's call and `/health` still answered. Also the
//! first contact of a client without the right token (RFC 6750 challenge, OAuth probes 404) and
//! `DELETE /mcp` as the spec's clients expect it (200 for a live session, 404 for an unknown).

use crate::support::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Quiet daemon, the page on a free port; `[server]` keys in `extra` (header timeout 2 s unless
/// it names one).
fn config(extra: &str) -> String {
    let timeout = if extra.contains("header_timeout_s") {
        ""
    } else {
        "header_timeout_s = 2\n"
    };
    format!(
        "[approval]\npage = true\npage_port = 0\nnotifications = false\n\
         [budgets]\nper_minute = 100000\nper_day = 10000000\n[server]\n{timeout}{extra}"
    )
}

/// Half a request header, then silence.
fn half_open(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let _ = s.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le");
    s
}

/// Whether the server closed `s` within `within` (EOF or reset; any answer read past).
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 512];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        s.set_read_timeout(Some(left)).unwrap();
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// How many of `held` the server has closed (EOF or reset), looking without waiting.
fn count_closed(held: &[TcpStream]) -> usize {
    let mut buf = [0u8; 512];
    held.iter()
        .filter(|&s| {
            s.set_nonblocking(true).unwrap();
            let closed = loop {
                match (&mut &*s).read(&mut buf) {
                    Ok(0) => break true,
                    Ok(_) => continue,
                    Err(e) => break e.kind() != std::io::ErrorKind::WouldBlock,
                }
            };
            s.set_nonblocking(false).unwrap();
            closed
        })
        .count()
}

fn page_port(env: &Env, pid: i32) -> u16 {
    let url = wait_for("the page's URL file", || {
        std::fs::read_to_string(env.path(&format!("runtime/archgate/page-{pid}.url"))).ok()
    });
    url.trim()
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

fn authed_health(port: u16, token: &str) -> Value {
    let r = Request::get("/health")
        .header("Authorization", format!("Bearer {token}"))
        .send(port);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

#[test]
fn two_hundred_half_open_connections_stop_no_honest_client_and_are_closed_after_the_timeout() {
    let env = Env::with_config(&config("header_timeout_s = 4\n"));
    let d = HttpServer::start(&env);
    let token = env.token();
    let page = page_port(&env, d.pid());
    let mut held: Vec<TcpStream> = (0..200).map(|_| half_open(d.port)).collect();
    let mut held_page: Vec<TcpStream> = (0..50).map(|_| half_open(page)).collect();

    // The honest client: a tool call, /health and the page answer while all 250 are held open
    // (not after the header timeout has closed them; no clock in this, so no load can flake it).
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    let h = d.health();
    assert_eq!(h["status"], "serving");
    let p = Request::get("/").send(page);
    assert_eq!(p.status, 401, "the page answers (no session): {}", p.text());
    assert!(h["connections"]["open"].as_u64().unwrap() >= 200, "{h}");
    assert_eq!(
        count_closed(&held),
        0,
        "answered only once the timeout closed them"
    );
    assert_eq!(
        count_closed(&held_page),
        0,
        "answered only once the timeout closed them"
    );

    // Every half-open connection is closed after the 4 s header timeout (with slack), not held.
    let t = Instant::now();
    for (i, s) in held.iter_mut().chain(held_page.iter_mut()).enumerate() {
        assert!(
            closed_within(s, Duration::from_secs(12)),
            "half-open connection {i} still open after {:?}",
            t.elapsed()
        );
    }
    let open = wait_for("the server to count them closed", || {
        let n = d.health()["connections"]["open"].as_u64().unwrap();
        (n <= 1).then_some(n)
    });
    assert!(open <= 1);
    // A kept-alive connection that goes quiet between requests is closed the same way.
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.write_all(format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n", d.port).as_bytes())
        .unwrap();
    assert!(
        closed_within(&mut s, Duration::from_secs(8)),
        "an idle kept-alive connection stays open"
    );
}

#[test]
fn past_the_per_peer_cap_the_quietest_connection_is_closed_at_once_and_the_honest_one_gets_in() {
    let env = Env::with_config(&config(
        "header_timeout_s = 30\nmax_connections_per_peer = 16\n",
    ));
    let d = HttpServer::start(&env);
    let token = env.token();
    let held: Vec<TcpStream> = (0..200).map(|_| half_open(d.port)).collect();
    // With a 30 s header timeout, only the cap can close a connection within 10 s: 184 of them
    // (which 184 depends on when each one's bytes were read: the quietest goes), and no more.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut closed = 0;
    while closed < 184 && Instant::now() < deadline {
        closed = count_closed(&held);
    }
    assert_eq!(closed, 184, "closed by the cap within 10 s");
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(count_closed(&held), 184, "the 16 left stay open");
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    let h = d.health();
    assert!(
        h["connections"]["open"].as_u64().unwrap() <= 16,
        "at most the cap is open: {h}"
    );
    assert!(h["connections"]["evicted"].as_u64().unwrap() >= 184, "{h}");
}

#[test]
fn a_connection_flood_past_the_descriptor_limit_leaves_mcp_the_page_and_the_control_socket_up() {
    // RLIMIT_NOFILE 256 for the daemon: each listener may hold at most (256 - 128) / 2.
    let env = Env::with_config(&config("header_timeout_s = 20\n"));
    let inner = env.command(&["serve", "--http", "--port", "0"]);
    let mut cmd = std::process::Command::new("prlimit");
    cmd.arg("--nofile=256:256")
        .arg("--")
        .arg(inner.get_program())
        .args(inner.get_args())
        .stdin(std::process::Stdio::null());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let d = HttpServer::spawn(cmd);
    let token = env.token();
    let page = page_port(&env, d.pid());
    let _mcp: Vec<TcpStream> = (0..600).map(|_| half_open(d.port)).collect();
    let _page: Vec<TcpStream> = (0..300).map(|_| half_open(page)).collect();
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    let h = d.health();
    assert!(
        h["connections"]["open"].as_u64().unwrap() <= 64,
        "the cap fits the descriptor limit: {h}"
    );
    assert_eq!(Request::get("/").send(page).status, 401, "the page answers");
    let out = env.run(&["approvals", "--json"]);
    assert!(
        out.status.success(),
        "the control socket answers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fds = std::fs::read_dir(format!("/proc/{}/fd", d.pid()))
        .unwrap()
        .count();
    assert!(fds < 256, "{fds} descriptors open");
    assert!(!d.log().contains("Too many open files"), "{}", d.log());
}

#[test]
fn a_stalled_body_is_closed_by_its_deadline_and_a_call_waiting_for_the_person_is_not() {
    let env = Env::with_config(&config(
        "idle_timeout_s = 20\n[policy]\nask = [\"pacman_conf\"]\n",
    ));
    let d = HttpServer::start(&env);
    let token = env.token();
    // Headers whole, then 10 of 1,000 body bytes, then silence.
    let mut stalled = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    stalled
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
                 Content-Length: 1000\r\n\r\n{{\"jsonrpc\"",
                d.port
            )
            .as_bytes(),
        )
        .unwrap();
    // A call that waits for the person longer than the idle timeout.
    let mut parked = connect(d.port);
    parked
        .write_all(&call_request(&token, "pacman_conf", json!({}), 9).bytes(d.port))
        .unwrap();
    let id = wait_for("the call to be parked", || {
        let out = env.run(&["approvals", "--json"]);
        let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v.first().map(|q| q["id"].as_str().unwrap().to_owned())
    });
    let start = Instant::now();
    // The body's deadline (the header's 2 s, a total) closes it, well before the idle timeout.
    assert!(
        closed_within(&mut stalled, Duration::from_secs(16)),
        "a stalled body held its connection for {:?}",
        start.elapsed()
    );
    assert_eq!(d.health()["connections"]["body_timeout"], 1);
    std::thread::sleep(Duration::from_secs(22).saturating_sub(start.elapsed()));
    assert!(env.run(&["approve", &id]).status.success());
    let r = read_response(&mut parked);
    assert!(
        r.messages()
            .iter()
            .any(|m| m["id"] == 9 && m["result"].is_object()),
        "the parked call's answer: {}",
        r.text()
    );
}

#[test]
fn a_half_sent_control_line_is_closed_after_the_timeout_and_the_cli_still_answers() {
    use std::os::unix::net::UnixStream;
    let env = Env::with_config(&config(""));
    let d = HttpServer::start(&env);
    let sock = env.path("runtime/archgate/control.sock");
    let mut held: Vec<UnixStream> = (0..40)
        .map(|_| {
            let mut s = UnixStream::connect(&sock).expect("connect the control socket");
            let _ = s.write_all(b"{\"op\": \"pend");
            s
        })
        .collect();
    // Past the connection cap the new ones are closed, and the CLI still gets its answer.
    let out = env.run(&["approvals", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = Instant::now();
    for s in held.iter_mut() {
        s.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
        let mut buf = [0u8; 64];
        let closed =
            matches!(s.read(&mut buf), Ok(0) | Err(_)) && start.elapsed() < Duration::from_secs(8);
        assert!(
            closed,
            "a half-sent line held the control socket for {:?}",
            start.elapsed()
        );
    }
    drop(d);
}

// ---------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------

pub const LEGACY: &str = "2025-06-18";

/// `initialize` in the handshake era; the session id the answer carries.
pub fn initialize(port: u16, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"}}});
    let r = Request::post("/mcp", body.to_string())
        .header("Authorization", format!("Bearer {token}"))
        .send(port);
    assert_eq!(r.status, 200, "initialize: {}", r.text());
    r.header("mcp-session-id").expect("a session id").to_owned()
}

/// A request inside a session.
pub fn in_session(token: &str, sid: &str, body: Value) -> Request<'static> {
    let method = if body.is_null() { "DELETE" } else { "POST" };
    let mut r = Request::post(
        "/mcp",
        if body.is_null() {
            String::new()
        } else {
            body.to_string()
        },
    )
    .header("Authorization", format!("Bearer {token}"))
    .header("Mcp-Session-Id", sid.to_owned())
    .header("MCP-Protocol-Version", LEGACY);
    r.method = method;
    r
}

pub fn initialized(port: u16, token: &str, sid: &str) {
    let r = in_session(
        token,
        sid,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .send(port);
    assert_eq!(r.status, 202, "{}", r.text());
}

fn tools_list(port: u16, token: &str, sid: &str) -> crate::support::Response {
    in_session(
        token,
        sid,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    )
    .send(port)
}

fn rss_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

pub fn add_client(env: &Env, name: &str, preset: &str) -> String {
    let out = env.run(&["clients", "add", name, "--preset", preset]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .find(|w| w.len() == 64 && w.chars().all(|c| c.is_ascii_hexdigit()))
        .expect("a token")
        .to_owned()
}

#[test]
fn one_client_opening_a_thousand_sessions_keeps_at_most_the_cap_alive() {
    let env = Env::with_config(&config(""));
    let d = HttpServer::start(&env);
    let reader = add_client(&env, "reader", "read-only");
    let owner = env.token();
    let first = initialize(d.port, &reader);
    initialized(d.port, &reader, &first);
    let before = rss_kib(d.pid());
    let mut last = String::new();
    for _ in 0..1000 {
        last = initialize(d.port, &reader);
    }
    initialized(d.port, &reader, &last);
    let after = rss_kib(d.pid());
    eprintln!("RSS before the flood {before} KiB, after 1,000 sessions {after} KiB");
    let h = authed_health(d.port, &owner);
    let live = h["sessions"]["live"].as_u64().unwrap();
    assert!(live <= 32, "{live} sessions live: {h}");
    assert!(
        h["sessions"]["by_client"]["reader"].as_u64().unwrap() <= 32,
        "{h}"
    );
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "memory grew {} KiB",
        after - before
    );
    // The newest session works; the oldest was closed and says so.
    let ok = tools_list(d.port, &reader, &last);
    assert_eq!(ok.status, 200, "{}", ok.text());
    assert!(
        ok.messages()
            .iter()
            .any(|m| m["result"]["tools"].is_array())
    );
    assert_eq!(tools_list(d.port, &reader, &first).status, 404);
    // A session belongs to the token that opened it.
    assert_eq!(tools_list(d.port, &owner, &last).status, 404);
    // Another client is not limited by this one's flood.
    let mine = initialize(d.port, &owner);
    initialized(d.port, &owner, &mine);
    assert_eq!(tools_list(d.port, &owner, &mine).status, 200);
}

// ---------------------------------------------------------------------------------------------
// Counters and /health
// ---------------------------------------------------------------------------------------------

#[test]
fn ten_thousand_unknown_tool_names_keep_health_and_the_counters_small() {
    let env = Env::with_config(&config(""));
    let d = HttpServer::start(&env);
    let token = env.token();
    let pad = "x".repeat(200);
    for i in 0..10_000 {
        let r = send(
            d.port,
            &call_request(&token, &format!("nope-{i}-{pad}"), json!({}), 1),
        );
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    let public = send(d.port, &Request::get("/health"));
    let h = public.json();
    assert!(
        public.body.len() < 4096,
        "{} bytes: {}",
        public.body.len(),
        public.text()
    );
    assert!(h["calls"]["total"].as_u64().unwrap() >= 10_001, "{h}");
    assert!(
        h["calls"].get("by_client").is_none(),
        "no client names without a token: {h}"
    );
    assert!(h.get("budgets").is_none(), "{h}");
    let full = Request::get("/health")
        .header("Authorization", format!("Bearer {token}"))
        .send(d.port);
    assert!(full.body.len() < 64 * 1024, "{} bytes", full.body.len());
    eprintln!(
        "/health after 10,000 unknown names: {} bytes without a token, {} with",
        public.body.len(),
        full.body.len()
    );
    let h = full.json();
    let by_tool = h["calls"]["by_tool"].as_object().unwrap();
    assert!(
        by_tool.len() <= 32 + 2,
        "{} tool names counted",
        by_tool.len()
    );
    assert!(
        by_tool["other"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum::<u64>()
            >= 9_968
    );
    assert_eq!(by_tool["system_status"]["ok"], 1);
    assert!(h["calls"]["by_client"]["default"].is_object(), "{h}");
    // A wrong token is refused, not answered with the details.
    let wrong = Request::get("/health")
        .header("Authorization", "Bearer nope")
        .send(d.port);
    assert_eq!(wrong.status, 401);
}

// ---------------------------------------------------------------------------------------------
// First contact: the token, OAuth probes, DELETE
// ---------------------------------------------------------------------------------------------

#[test]
fn a_missing_or_wrong_token_gets_an_rfc_6750_challenge_and_oauth_probes_get_404() {
    let env = Env::with_config(&config(""));
    let d = HttpServer::start(&env);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let none = send(d.port, &Request::post("/mcp", body.clone()));
    assert_eq!(none.status, 401);
    assert_eq!(
        none.header("www-authenticate"),
        Some("Bearer realm=\"archgate\"")
    );
    let wrong = send(
        d.port,
        &Request::post("/mcp", body).header("Authorization", "Bearer wrong"),
    );
    assert_eq!(wrong.status, 401);
    let challenge = wrong.header("www-authenticate").unwrap_or("");
    assert!(
        challenge.starts_with("Bearer realm=\"archgate\"")
            && challenge.contains("error=\"invalid_token\""),
        "{challenge}"
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/mcp/.well-known/openid-configuration",
        "/register",
    ] {
        let r = send(d.port, &Request::get(path));
        assert_eq!(r.status, 404, "GET {path}: {}", r.text());
        let r = send(d.port, &Request::post(path, "{}"));
        assert_eq!(r.status, 404, "POST {path}: {}", r.text());
    }
    // The right token still works.
    assert_eq!(
        outcome(&d.call(&env.token(), "system_status", json!({}))),
        "ok"
    );
}

#[test]
fn delete_answers_200_for_a_live_session_and_404_for_an_unknown_one() {
    let env = Env::with_config(&config(""));
    let d = HttpServer::start(&env);
    let token = env.token();
    let sid = initialize(d.port, &token);
    initialized(d.port, &token, &sid);
    assert_eq!(tools_list(d.port, &token, &sid).status, 200);
    let del = in_session(&token, &sid, Value::Null).send(d.port);
    assert_eq!(del.status, 200, "{}", del.text());
    assert_eq!(tools_list(d.port, &token, &sid).status, 404, "gone");
    assert_eq!(
        in_session(&token, &sid, Value::Null).send(d.port).status,
        404
    );
    assert_eq!(
        in_session(&token, "no-such-session", Value::Null)
            .send(d.port)
            .status,
        404
    );
    assert_eq!(authed_health(d.port, &token)["sessions"]["live"], 0);
}

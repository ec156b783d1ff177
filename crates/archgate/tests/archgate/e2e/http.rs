//! MCP over loopback HTTP: the call path, the guards, frames, audit, files and SIGTERM.

use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

use crate::support::{Env, HttpServer, mode};
use crate::support::{McpHttp, check_system_status, check_tool_list};
use crate::support::{Request, connect, read_response};

/// Arguments no frame, health answer or log line may ever show.
const MARKER: &str = "zq-marker-8f3e1c";

#[test]
fn http_initialize_list_call_frames_health_audit_and_sigterm() {
    let env = Env::new();
    let mut server = HttpServer::start(&env);
    let token = env.token();

    let (mcp, init) = McpHttp::initialize(server.port, &token);
    assert_eq!(init["serverInfo"]["name"], "archgate", "{init}");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    check_tool_list(&mcp.request(1, "tools/list", json!({})));
    check_system_status(&mcp.call_tool(2, "system_status", json!({})));
    let refused = mcp.call_tool(3, "system_status", json!({"note": MARKER}));
    assert_eq!(refused["isError"], true, "{refused}");

    // One call frame per call, naming tool and outcome, never the arguments.
    let calls = server.wait_for_call_frames(2);
    assert_eq!(calls.len(), 2, "{}", server.frames.joined());
    for f in &calls {
        assert_eq!(f["tool"], "system_status");
        assert!(f["outcome"].is_string(), "{f}");
        assert!(
            f.get("args").is_none() && f.get("arguments").is_none(),
            "{f}"
        );
    }
    assert_eq!(calls[0]["outcome"], "ok");
    assert_ne!(calls[1]["outcome"], "ok");
    assert!(!server.frames.joined().contains(MARKER));
    for line in server.frames.all() {
        let v: Value = serde_json::from_str(&line).expect("frames are JSON lines");
        assert!(v["event"].is_string(), "{line}");
    }

    // /health: no token needed, counts only.
    let h = Request::get("/health").send(server.port);
    assert_eq!(h.status, 200);
    let body = h.json();
    assert_eq!(body["status"], "serving");
    assert_eq!(body["version"], env!("CARGO_PKG_VERSION"));
    assert!(
        body["protocol_versions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v == "2026-07-28")
    );
    assert!(!h.text().contains(&token), "health leaks the token");
    assert!(!h.text().contains(MARKER), "health leaks arguments");

    // SIGTERM stops it cleanly and promptly (the bound is 3 s).
    let (status, took) = server.stop();
    assert!(status.success(), "exit status after SIGTERM: {status}");
    assert!(
        took < Duration::from_secs(3),
        "took {took:?} to stop after SIGTERM"
    );
    assert!(
        !server.stderr.joined().contains(&token),
        "the log shows the token"
    );

    // Exactly one audit record per call, flushed before exit.
    let records = env.audit();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[0]["tool"], "system_status");
}

#[test]
fn concurrent_http_calls_each_leave_exactly_one_audit_record() {
    const CLIENTS: usize = 16;
    const EACH: usize = 3;
    let env = Env::new();
    let mut server = HttpServer::start(&env);
    let token = env.token();
    let (mcp, _) = McpHttp::initialize(server.port, &token);
    let session = mcp.session.clone();

    std::thread::scope(|scope| {
        for c in 0..CLIENTS {
            let (token, session) = (token.clone(), session.clone());
            let port = server.port;
            scope.spawn(move || {
                let mcp = McpHttp {
                    port,
                    token,
                    session,
                };
                for i in 0..EACH {
                    let id = 100 + (c * EACH + i) as u64;
                    let r = mcp.call_tool(id, "system_status", json!({}));
                    assert_ne!(r["isError"], true, "{r}");
                }
            });
        }
    });
    let n = CLIENTS * EACH;
    let calls = server.wait_for_call_frames(n);
    assert_eq!(calls.len(), n);
    let (status, _) = server.stop();
    assert!(status.success());

    let records = env.audit();
    assert_eq!(records.len(), n, "one record per call");
    let ids: HashSet<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), n, "record ids are distinct");
    assert!(records.iter().all(|r| r["outcome"] == "ok"));
}

/// Call frames are written in batches off the call's path (`server/frames.rs`): a stop right
/// after a run of calls still puts every call's frame on stdout, in order, before the state
/// frames that follow, and the process ends.
#[test]
fn every_call_frame_is_out_before_the_daemon_stops() {
    const N: usize = 40;
    let env = Env::new();
    let mut server = HttpServer::start(&env);
    let token = env.token();
    for _ in 0..N {
        let r = server.call(&token, "system_status", json!({}));
        assert_ne!(r["isError"], true, "{r}");
    }
    // No waiting for the frames: SIGTERM at once, then read stdout to its end.
    let (status, _) = server.stop();
    assert!(status.success(), "{status}");
    let frames: Vec<Value> = server
        .frames
        .all()
        .iter()
        .map(|l| serde_json::from_str(l).expect("frames are JSON lines"))
        .collect();
    let calls = frames.iter().filter(|f| f["event"] == "call").count();
    assert_eq!(calls, N, "{}", server.frames.joined());
    assert_eq!(
        frames[0]["event"],
        "listening",
        "{}",
        server.frames.joined()
    );
    assert_eq!(env.audit().len(), N, "one record per call");
}

#[test]
fn http_guards_answer_with_the_right_status_and_a_json_reason() {
    let env = Env::new();
    let server = HttpServer::start(&env);
    let port = server.port;
    let token = env.token();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "archgate-e2e", "version": "0.0.0"}}})
    .to_string();
    let mcp_post = |body: Vec<u8>| {
        Request::post("/mcp", body)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
    };
    let reason = |r: &crate::support::Response| {
        let v = r.json();
        assert!(
            v["reason"].as_str().is_some_and(|s| !s.is_empty()),
            "no reason in {v}"
        );
        v["error"].as_str().unwrap_or_default().to_owned()
    };

    // No token, a wrong token.
    let r = mcp_post(init.clone().into()).send(port);
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(reason(&r), "missing_token");
    let r = mcp_post(init.clone().into())
        .header("Authorization", "Bearer 0000000000000000")
        .send(port);
    assert_eq!(r.status, 401, "{}", r.text());
    assert_eq!(reason(&r), "wrong_token");

    // The right token, but a page from another origin.
    let r = mcp_post(init.clone().into())
        .header("Authorization", format!("Bearer {token}"))
        .header("Origin", "http://evil.example")
        .send(port);
    assert_eq!(r.status, 403, "{}", r.text());
    reason(&r);
    // The same origin as the server is fine.
    let r = mcp_post(init.clone().into())
        .header("Authorization", format!("Bearer {token}"))
        .header("Origin", format!("http://127.0.0.1:{port}"))
        .send(port);
    assert_eq!(r.status, 200, "{}", r.text());

    // A foreign Host (DNS rebinding).
    let r = mcp_post(init.clone().into())
        .header("Authorization", format!("Bearer {token}"))
        .header("Host", format!("evil.example:{port}"))
        .send(port);
    assert_eq!(r.status, 421, "{}", r.text());
    reason(&r);
    let r = Request::get("/health")
        .header("Host", "evil.example")
        .send(port);
    assert_eq!(r.status, 421);

    // A body over 4 MiB, declared up front.
    let big = vec![b' '; 4 * 1024 * 1024 + 1];
    let r = mcp_post(big)
        .header("Authorization", format!("Bearer {token}"))
        .send(port);
    assert_eq!(r.status, 413, "{}", r.text());
    reason(&r);

    // A body over 4 MiB, chunked (no length up front).
    let r = chunked_post(port, &token, 5 * 1024 * 1024);
    assert_eq!(r.status, 413, "{}", r.text());

    // /health needs no token, and a body exactly at the limit is not refused as too large.
    let r = Request::get("/health").send(port);
    assert_eq!(r.status, 200);
    assert!(!r.text().contains(&token));
    drop(server);
}

fn chunked_post(port: u16, token: &str, total: usize) -> crate::support::Response {
    use std::io::Write;
    let mut s = connect(port);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut writer = s.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let chunk = vec![b' '; 64 * 1024];
        let mut sent = 0;
        while sent < total {
            let frame = format!("{:x}\r\n", chunk.len());
            if writer.write_all(frame.as_bytes()).is_err()
                || writer.write_all(&chunk).is_err()
                || writer.write_all(b"\r\n").is_err()
            {
                return;
            }
            sent += chunk.len();
        }
        let _ = writer.write_all(b"0\r\n\r\n");
    });
    let r = read_response(&mut s);
    let _ = s.shutdown(std::net::Shutdown::Both);
    let _ = sender.join();
    r
}

#[test]
fn token_file_is_0600_in_a_0700_directory_and_created_once() {
    let env = Env::new();
    let mut server = HttpServer::start(&env);
    let first = env.token();
    assert_eq!(first.len(), 64, "256 bits, hex");
    assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(mode(&env.state_dir().join("token")), 0o600);
    assert_eq!(mode(&env.state_dir()), 0o700);
    assert_eq!(mode(&env.path("runtime").join("archgate")), 0o700);
    assert_eq!(mode(&env.path("cache").join("archgate")), 0o700);
    let (status, _) = server.stop();
    assert!(status.success());
    // A second start keeps the token.
    let server = HttpServer::start(&env);
    assert_eq!(env.token(), first);
    drop(server);
}

/// pacman.conf(5)'s shape, our own words: `[options]` and the repositories named.
fn pacman_conf_with(root: &std::path::Path, repos: &[&str]) -> String {
    let mut s = format!(
        "[options]\nRootDir = {0}/arch\nDBPath = {0}/arch/db/\nArchitecture = x86_64\n",
        root.display()
    );
    for r in repos {
        s.push_str(&format!(
            "\n[{r}]\nServer = https://mirror.example/$repo/os/$arch\n"
        ));
    }
    s
}

/// `pacman_conf`'s answer is kept while pacman.conf is unchanged (issue 34) and follows an
/// edit at once; the text sent is the structured answer's own rendering, before and after.
#[test]
fn pacman_conf_answers_an_edited_pacman_conf_at_once_with_its_text_matching() {
    let env = Env::new();
    let conf = env.root.path().join("pacman.conf");
    std::fs::write(&conf, pacman_conf_with(env.root.path(), &["core"])).unwrap();
    env.write_config(&format!("[arch]\npacman_conf = \"{}\"\n", conf.display()));
    let server = HttpServer::start(&env);
    let token = env.token();
    let repos = |r: &Value| -> Vec<String> {
        assert_ne!(r["isError"], true, "{r}");
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, r["structuredContent"], "the text is the answer's own");
        r["structuredContent"]["repos"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap().to_owned())
            .collect()
    };
    for _ in 0..2 {
        assert_eq!(
            repos(&server.call(&token, "pacman_conf", json!({}))),
            ["core"]
        );
    }
    std::fs::write(
        &conf,
        pacman_conf_with(env.root.path(), &["core", "extra", "multilib"]),
    )
    .unwrap();
    assert_eq!(
        repos(&server.call(&token, "pacman_conf", json!({}))),
        ["core", "extra", "multilib"]
    );
}

//! The conformance binary supplies the suite's token without weakening archgate's check: it runs
//! only in a fresh sandbox, its front adds the token of a client it added there, and a request
//! that brings its own wrong token is still refused by archgate.

// These tests run the real binary.
#![allow(clippy::disallowed_methods)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn conformance(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_archgate-conformance"));
    c.env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("HOME", dir)
        .stdin(Stdio::null());
    c
}

/// A running archgate-conformance and its port; killed on drop.
struct Served {
    child: Child,
    port: u16,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Served {
    let mut child = conformance(dir)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("archgate-conformance");
    let mut frames = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let port = loop {
        line.clear();
        assert!(
            frames.read_line(&mut line).unwrap() > 0,
            "archgate-conformance ended before listening"
        );
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["event"] == "listening" {
            break v["port"].as_u64().unwrap() as u16;
        }
        assert_ne!(v["event"], "failed", "{line}");
    };
    // The rest of the frames are not read: drain them so the server never blocks on stdout.
    std::thread::spawn(move || std::io::copy(&mut frames, &mut std::io::sink()));
    Served { child, port }
}

/// One POST of an `initialize` to /mcp: the status and the body.
fn initialize(port: u16, authorization: Option<&str>) -> (u16, String) {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "front-test", "version": "0.0.0"}}})
    .to_string();
    let auth = authorization
        .map(|a| format!("Authorization: {a}\r\n"))
        .unwrap_or_default();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{auth}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

#[test]
fn the_front_supplies_the_token_and_archgate_still_checks_every_token() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve(dir.path());
    // The suite sends no token: the front adds the sandbox client's, and archgate accepts it.
    let (status, answer) = initialize(served.port, None);
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("archgate"), "{answer}");
    // A wrong token is not replaced by the front's: archgate's check refuses it.
    let (status, answer) = initialize(served.port, Some("Bearer 0000000000000000"));
    assert_eq!(status, 401, "{answer}");
    assert!(answer.contains("wrong_token"), "{answer}");
    // The token is an ordinary client's, stored (as its hash) in the sandbox only.
    let clients = std::fs::read_to_string(dir.path().join("state/archgate/clients.json")).unwrap();
    let clients: serde_json::Value = serde_json::from_str(&clients).unwrap();
    assert_eq!(clients[0]["name"], "conformance", "{clients}");
    assert_eq!(clients[0]["preset"], "full", "{clients}");
}

#[test]
fn directories_archgate_has_used_are_refused() {
    for used in ["token", "clients.json"] {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state/archgate");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join(used), "someone's\n").unwrap();
        let out = conformance(dir.path())
            .args(["--port", "0"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{used}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("fresh sandbox"), "{used}: {err}");
        assert!(out.stdout.is_empty(), "{used}: it served");
        // Nothing was added to the person's files.
        assert_eq!(
            std::fs::read_to_string(state.join(used)).unwrap(),
            "someone's\n"
        );
        assert!(
            !state
                .join(if used == "token" {
                    "clients.json"
                } else {
                    "token"
                })
                .exists()
        );
    }
}

//! The daemon's bridge socket: who may connect, what a hello may be, and who is counted (a
//! stdio client reaching, starting or losing the daemon, one daemon per runtime directory:
//! `bridge_daemon.rs`).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::Request;
use crate::support::{Env, HttpServer, PATIENCE, mode, wait_for};

pub(super) fn socket(env: &Env) -> PathBuf {
    env.path("runtime").join("archgate/bridge.sock")
}

pub(super) fn health(server: &HttpServer) -> Value {
    Request::get("/health").send(server.port).json()
}

/// Sends `bytes` on a new connection and reads what the daemon answers until it closes.
fn exchange(env: &Env, bytes: &[u8], then_close: bool) -> String {
    let mut s = UnixStream::connect(socket(env)).expect("connect to bridge.sock");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(bytes).unwrap();
    if then_close {
        s.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

fn refusal(answer: &str) -> Value {
    let v: Value = serde_json::from_str(answer.lines().next().unwrap_or(""))
        .unwrap_or_else(|e| panic!("the answer is not one JSON line ({e}): {answer:?}"));
    assert_eq!(v["ok"], false, "{v}");
    v
}

#[test]
fn the_bridge_socket_is_private() {
    let env = Env::new();
    let server = HttpServer::start(&env);
    assert_eq!(mode(&env.path("runtime").join("archgate")), 0o700);
    assert_eq!(mode(&socket(&env)), 0o600);
    assert_eq!(health(&server)["bridge"]["socket"], json!(socket(&env)));
}

/// Another uid is refused before a byte is read, and counted. Needs root to be another user;
/// the socket's own 0600 would stop that user first, so it is opened up for the test.
#[test]
fn another_user_is_refused_by_its_peer_uid_and_counted() {
    if !nix_is_root() {
        eprintln!("skipped: not root, so no other uid to connect as");
        return;
    }
    let env = Env::new();
    let server = HttpServer::start(&env);
    use std::os::unix::fs::PermissionsExt;
    for p in [
        env.root.path().to_owned(),
        env.path("runtime"),
        env.path("runtime").join("archgate"),
    ] {
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::set_permissions(socket(&env), std::fs::Permissions::from_mode(0o666)).unwrap();
    let script = format!(
        "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect({:?})\ns.settimeout(20)\ntry:\n  s.sendall(b'{{\"archgate_bridge\":1}}\\n')\n  r=s.recv(4096)\nexcept (BrokenPipeError, ConnectionResetError):\n  r=b''\nprint(repr(r))",
        socket(&env).display().to_string()
    );
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            &script,
        ])
        .output()
        .expect("setpriv");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.trim(), "b''", "another user got an answer: {said}");
    let h = health(&server);
    assert_eq!(h["bridge"]["refused_peer"], 1, "{h}");
    assert_eq!(h["bridge"]["accepted"], 0, "{h}");
}

pub(super) fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// Forty same-user connections that never say hello cannot keep a bridge out: past the 32 in
/// their hello, the one waiting longest is closed to make room (they were all kept, and the
/// bridge's connection closed at once).
#[test]
fn silent_connections_do_not_keep_a_bridge_out() {
    let env = Env::new();
    let server = HttpServer::start(&env);
    let silent: Vec<UnixStream> = (0..40)
        .map(|_| UnixStream::connect(socket(&env)).expect("connect"))
        .collect();
    let mut s = UnixStream::connect(socket(&env)).expect("connect");
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(b"{\"archgate_bridge\":1,\"client\":\"local\"}\n")
        .unwrap();
    let mut line = String::new();
    BufReader::new(&s).read_line(&mut line).unwrap();
    let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    assert_eq!(v["ok"], true, "{v}");
    // The ones closed to make room were told so and counted; the rest are still waiting.
    let h = wait_for("the evicted hellos to be counted", || {
        let h = health(&server);
        (h["bridge"]["refused_hello"].as_u64() >= Some(9)).then_some(h)
    });
    assert_eq!(h["bridge"]["accepted"], 1, "{h}");
    drop(silent);
}

#[test]
fn hostile_hellos_are_refused_with_their_reason() {
    let env = Env::new();
    env.write_config("[server]\nheader_timeout_s = 2\n");
    let server = HttpServer::start(&env);
    let huge = vec![b'x'; 5000];
    let v = refusal(&exchange(&env, &huge, false));
    assert_eq!(v["error"], "too_large", "{v}");
    let v = refusal(&exchange(
        &env,
        br#"{"archgate_bridge":1,"client":"local"}"#,
        true,
    ));
    assert_eq!(v["error"], "unfinished", "no newline: {v}");
    let started = Instant::now();
    let v = refusal(&exchange(&env, br#"{"archgate_bridge":1"#, false));
    assert_eq!(v["error"], "unfinished", "a half line, then silence: {v}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "held past header_timeout_s"
    );
    for (hello, kind) in [
        (&b"not json\n"[..], "malformed"),
        (
            br#"{"archgate_bridge":2,"client":"local"}"#.as_slice(),
            "malformed",
        ),
        (
            br#"{"archgate_bridge":1,"client":"local","token":"x"}"#,
            "malformed",
        ),
        (br#"{"archgate_bridge":1,"client":7}"#, "malformed"),
        (
            br#"{"archgate_bridge":1,"client":"no such client"}"#,
            "invalid_name",
        ),
        (
            br#"{"archgate_bridge":1,"client":"\u001b[2Jfake"}"#,
            "invalid_name",
        ),
        (
            br#"{"archgate_bridge":1,"client":"nosuch"}"#,
            "unknown_client",
        ),
    ] {
        let mut line = hello.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let v = refusal(&exchange(&env, &line, false));
        assert_eq!(v["error"], kind, "{}: {v}", String::from_utf8_lossy(hello));
        assert!(
            v["reason"]
                .as_str()
                .is_some_and(|r| !r.is_empty() && !r.contains('\u{1b}')),
            "{v}"
        );
    }
    let h = health(&server);
    assert_eq!(h["bridge"]["refused_hello"], 10, "{h}");
    // The daemon still takes a good hello, and serves MCP on the same stream after its answer.
    let mut s = UnixStream::connect(socket(&env)).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(b"{\"archgate_bridge\":1,\"client\":\"cursor\"}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n").unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let ok: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(ok["ok"], true, "{ok}");
    assert_eq!(ok["client"], "cursor");
    line.clear();
    r.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(init["result"]["serverInfo"]["name"], "archgate", "{init}");
}

#[test]
fn a_stdio_client_with_an_unknown_name_is_refused_with_a_clear_error() {
    let env = Env::new();
    let _server = HttpServer::start(&env);
    let out = env.run(&["serve", "--client", "nosuch"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown_client") && err.contains("nosuch"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "stdout belongs to the protocol");
}

//! Issue 33, the weaker items of item 8's class (*the daemon is the session's*): how a stdio
//! bridge finds its daemon, and what it does when the daemon will not take it.
//!
//! What it tries:
//! - a same-user process writes `daemon.json` into archgate's state directory, naming its own
//!   socket, and waits for a client started without `XDG_RUNTIME_DIR` to follow it there (it
//!   would receive the agent's calls and could answer a forged "approved");
//! - 32 connections to the daemon's bridge socket that never say hello, so a new bridge cannot
//!   get a hello slot; it must wait and then fail with the reason, never serve in-process with
//!   its own budgets and pending list beside the live daemon.

use serde_json::json;
use std::io::Write;
use std::os::unix::net::UnixListener;
use std::process::Stdio;

use crate::support::*;

fn initialize_line() -> String {
    format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params":
            {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "t", "version": "1"}}})
    )
}

/// Runs `archgate serve` with `env`'s sandbox less `XDG_RUNTIME_DIR`, writes one initialize line
/// and closes stdin; returns its output.
fn serve_once(env: &Env, without_runtime_dir: bool) -> std::process::Output {
    let mut c = env.command(&["serve"]);
    if without_runtime_dir {
        c.env_remove("XDG_RUNTIME_DIR");
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(initialize_line().as_bytes())
        .unwrap();
    let status = wait_bounded(&mut child);
    if status.is_none() {
        let _ = child.kill();
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_client_without_a_runtime_directory_never_follows_a_pointer_file() {
    let env = Env::new();
    let runtime = env.path("runtime/archgate");
    env.write_config(&format!(
        "[paths]\nruntime_dir = \"{}\"\n[approval]\npage = false\n",
        runtime.display()
    ));
    // The same-user fake daemon and its pointer, where earlier versions looked for one.
    let fake = env.path("scratch/fake.sock");
    let listener = UnixListener::bind(&fake).unwrap();
    listener.set_nonblocking(true).unwrap();
    let state = env.state_dir();
    std::fs::create_dir_all(&state).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        state.join("daemon.json"),
        json!({"pid": std::process::id(), "since": "2026-01-01T00:00:00Z",
               "runtime_dir": env.path("scratch"), "socket": fake, "spawned": false})
        .to_string(),
    )
    .unwrap();

    let out = serve_once(&env, true);
    let reached = listener.accept();
    assert!(
        reached.is_err(),
        "the bridge connected to the socket a pointer file named: {}",
        text(&out)
    );
    // It was served (in-process: no daemon, no session here), not left without an answer.
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(answer.contains("\"serverInfo\""), "{}", text(&out));
}

#[test]
fn a_bridge_never_serves_in_process_beside_a_busy_daemon() {
    // A daemon that listens and does not answer: stopped (SIGSTOP), its socket still accepts
    // into the kernel's backlog. (Connections that never say hello no longer keep a bridge out:
    // the daemon closes the one waiting longest, `e2e::bridge::silent_connections_do_not_keep_a_bridge_out`.)
    let env = Env::with_config("[approval]\npage = false\n");
    let daemon = HttpServer::start(&env);
    let pid = nix::unistd::Pid::from_raw(daemon.pid());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGSTOP).unwrap();
    struct Resume(nix::unistd::Pid);
    impl Drop for Resume {
        fn drop(&mut self) {
            let _ = nix::sys::signal::kill(self.0, nix::sys::signal::Signal::SIGCONT);
        }
    }
    let resume = Resume(pid);

    let out = serve_once(&env, false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("serving in-process"),
        "a bridge served in-process beside the live daemon: {err}"
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(err.contains("busy"), "the reason is not given: {err}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("serverInfo"),
        "{}",
        text(&out)
    );
    drop(resume);
    drop(daemon);
}

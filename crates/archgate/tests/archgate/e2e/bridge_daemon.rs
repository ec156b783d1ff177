//! A stdio client and the daemon through the bridge: one daemon per runtime directory; a bridged call is the daemon's call under
//! the client's name; a client starts a detached daemon where a session exists (or serves in
//! process, saying so); a socket-activated daemon starts on its first connection; and a client
//! or daemon gone mid-call leaves one record that says so.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::bridge::{health, nix_is_root, socket};
use crate::support::{Env, HttpServer, PATIENCE, POLL, StdioServer, wait_for};

#[test]
fn a_second_daemon_on_the_same_runtime_dir_refuses_and_names_the_first() {
    let env = Env::new();
    let first = HttpServer::start(&env);
    let out = env.run(&["serve", "--http", "--port", "0"]);
    assert!(!out.status.success());
    let frame: Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap_or_default())
            .expect("a failed frame");
    assert_eq!(frame["event"], "failed");
    let reason = frame["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("pid {}", first.child.id())) && reason.contains("since"),
        "{reason}"
    );
    // The first still serves its bridge.
    let mut c = bridged(&env, &[]);
    let init = c.request(1, "initialize", init_params());
    assert_eq!(init["result"]["serverInfo"]["name"], "archgate");
}

fn init_params() -> Value {
    json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
}

/// `archgate serve` with extra arguments, through the harness's stdio client.
fn bridged(env: &Env, extra: &[&str]) -> StdioServer {
    let mut args = vec!["serve"];
    args.extend_from_slice(extra);
    StdioServer::start_with(env, &args)
}

#[test]
fn a_bridged_call_is_the_daemons_call_under_the_clients_name() {
    let env = Env::new();
    let server = HttpServer::start(&env);
    let mut c = bridged(&env, &["--client", "claude-code"]);
    c.request(1, "initialize", init_params());
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let frames = server.wait_for_call_frames(1);
    assert_eq!(frames[0]["tool"], "system_status");
    let rec = wait_for_records(&env, 1);
    let rec: Vec<&Value> = rec
        .iter()
        .filter(|r| r["tool"] == "system_status")
        .collect();
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0]["client"], "claude-code");
    // The bridged client's own `clientInfo` (issue 32), beside the name its hello gave.
    assert_eq!(rec[0]["agent"], "t 1", "{}", rec[0]);
    // The call id is the daemon's.
    let pid = server.child.id().to_string();
    assert!(
        rec[0]["id"].as_str().unwrap().contains(&format!("-{pid}-")),
        "{}",
        rec[0]
    );
}

/// With a session (here: a session bus socket in the runtime directory) and no daemon, the
/// first stdio client starts one, detached, and is served by it.
#[test]
fn a_stdio_client_starts_a_detached_daemon_when_a_session_exists() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n"
    ));
    let _session = env.session();
    let mut c = bridged(&env, &[]);
    c.request(1, "initialize", init_params());
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(env.path("runtime").join("archgate/daemon.json")).unwrap(),
    )
    .unwrap();
    let daemon = info["pid"].as_u64().unwrap() as i32;
    let _stop = KillOnDrop(daemon);
    assert_eq!(info["spawned"], true, "{info}");
    assert_ne!(daemon as u32, c.child.id());
    let rec = wait_for_records(&env, 1);
    assert!(
        rec.iter().any(|r| r["tool"] == "system_status"
            && r["id"].as_str().unwrap().contains(&format!("-{daemon}-"))),
        "{rec:?}"
    );
    // Its own session and process group, its log in the state directory.
    let stat = std::fs::read_to_string(format!("/proc/{daemon}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    // (after the name: state, ppid, process group, session)
    assert_eq!(fields[2], daemon.to_string(), "process group: {stat}");
    assert_eq!(fields[3], daemon.to_string(), "session: {stat}");
    assert!(env.state_dir().join("daemon.log").exists());
    // The client going away does not take the daemon with it.
    let (status, _) = c.close();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(300));
    assert!(std::path::Path::new(&format!("/proc/{daemon}")).exists());
}

/// Ends a process this test started (by its pid) when the test ends, however it ends.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.0.to_string()])
            .status();
        let until = Instant::now() + PATIENCE;
        while Instant::now() < until && std::path::Path::new(&format!("/proc/{}", self.0)).exists()
        {
            std::thread::sleep(POLL);
        }
    }
}

#[test]
fn without_a_daemon_or_a_session_stdio_serves_in_process_and_says_so() {
    let env = Env::new();
    let mut c = bridged(&env, &[]);
    let init = c.request(1, "initialize", init_params());
    assert_eq!(init["result"]["serverInfo"]["name"], "archgate");
    assert!(!env.path("runtime").join("archgate/daemon.json").exists());
    c.close();
    // A client that closes at once: its log says it served in-process, and why.
    let out = env
        .command(&["serve"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("serving in-process") && err.contains("no desktop session"),
        "{err}"
    );
}

/// The activity log once it holds at least `n` records (the writer is a moment behind).
fn wait_for_records(env: &Env, n: usize) -> Vec<Value> {
    let until = Instant::now() + PATIENCE;
    loop {
        // Call records: a call's `asking` or `started` line is an event, not its record.
        let r = env.calls();
        if r.len() >= n || Instant::now() > until {
            return r;
        }
        std::thread::sleep(POLL);
    }
}

#[test]
fn doctor_says_whether_the_daemon_runs() {
    let env = Env::new();
    let line = |env: &Env| -> String {
        let out = env.run(&["doctor"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains("archgate daemon"))
            .unwrap_or_default()
            .to_owned()
    };
    let none = line(&env);
    assert!(
        none.contains("MISSING") && none.contains("serve in-process"),
        "{none}"
    );
    let server = HttpServer::start(&env);
    let running = line(&env);
    assert!(running.trim_start().starts_with("ok"), "{running}");
    assert!(
        running.contains(&format!("pid {}", server.child.id())),
        "{running}"
    );
    assert!(running.contains("bridge.sock"), "{running}");
}

/// A bridged client that goes away mid-approval: the daemon withdraws its parked call at once
/// and records it once, as an in-process stdio server does.
#[test]
fn a_bridged_client_gone_mid_approval_leaves_one_unreachable_record() {
    let env = Env::new();
    env.write_config("[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n");
    let server = HttpServer::start(&env);
    let mut c = bridged(&env, &["--client", "cursor"]);
    c.request(1, "initialize", init_params());
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "clipboard_write", "arguments": {"text": "x"}}}));
    wait_for("the call to park", || {
        (health(&server)["pending_approvals"] == 1).then_some(())
    });
    let started = Instant::now();
    let (status, _) = c.close();
    assert!(status.success());
    while health(&server)["pending_approvals"] != 0 {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "still parked after the client left"
        );
        std::thread::sleep(POLL);
    }
    let recs: Vec<Value> = wait_for_records(&env, 1)
        .into_iter()
        .filter(|r| r["tool"] == "clipboard_write")
        .collect();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["outcome"], "unreachable", "{}", recs[0]);
    assert_eq!(recs[0]["client"], "cursor");
}

/// A daemon stopped (SIGTERM) while a bridged call is parked records and answers the call
/// itself before its socket goes, so the bridge writes nothing: still exactly one record.
#[test]
fn a_daemon_stopped_mid_call_answers_and_records_it_once() {
    let env = Env::new();
    env.write_config("[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n");
    let mut server = HttpServer::start(&env);
    let mut c = bridged(&env, &[]);
    c.request(1, "initialize", init_params());
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "clipboard_write", "arguments": {"text": "y"}}}));
    wait_for("the call to park", || {
        (health(&server)["pending_approvals"] == 1).then_some(())
    });
    let daemon = server.child.id();
    let (status, _) = server.stop();
    assert!(status.success(), "{status:?}");
    let answer = c.response(2);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let recs: Vec<Value> = wait_for_records(&env, 1)
        .into_iter()
        .filter(|r| r["tool"] == "clipboard_write")
        .collect();
    // A moment more, in case a second record were on its way.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(
        env.calls()
            .iter()
            .filter(|r| r["tool"] == "clipboard_write")
            .count(),
        1
    );
    assert_eq!(recs[0]["outcome"], "unreachable");
    // The daemon's own record (its call id), not the bridge's last resort.
    assert!(
        recs[0]["id"]
            .as_str()
            .unwrap()
            .contains(&format!("-{daemon}-")),
        "{}",
        recs[0]
    );
}

/// A bridged client named by its kind (`cursor`: no stored client, no config section) is a
/// client of this daemon: a change to the stored clients (a revoke or an add of another) does
/// not withdraw its waiting question as one "of a client that no longer exists".
#[test]
fn a_bridged_kind_clients_question_outlives_a_change_to_other_clients() {
    let env = Env::new();
    env.write_config("[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n");
    let server = HttpServer::start(&env);
    let mut c = bridged(&env, &["--client", "cursor"]);
    c.request(1, "initialize", init_params());
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "clipboard_write", "arguments": {"text": "k"}}}));
    wait_for("the call to park", || {
        (health(&server)["pending_approvals"] == 1).then_some(())
    });
    let out = env.run(&["clients", "add", "someone-else", "--preset", "read-only"]);
    assert!(out.status.success(), "{}", crate::support::text(&out));
    // The daemon notices the clients file within half a second and refreshes its sessions;
    // its own request path notices it at once.
    let token = env.token();
    server.call(&token, "system_status", json!({}));
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(health(&server)["pending_approvals"], 1);
    assert!(
        !env.calls().iter().any(|r| r["tool"] == "clipboard_write"),
        "{:?}",
        env.calls()
    );
    c.close();
}

/// A daemon killed (SIGKILL) while a bridged call's question waits can record nothing: the
/// bridge writes the call's one record, `unreachable` under the daemon's own call id (from the
/// call's `asking` line), and the next daemon's start finds it recorded and adds none.
#[test]
fn a_daemon_killed_while_a_bridged_question_waits_leaves_one_unreachable_record() {
    let env = Env::new();
    env.write_config("[approval]\ntimeout_s = 60\npage = false\nnotifications = false\n");
    let mut server = HttpServer::start(&env);
    let mut c = bridged(&env, &[]);
    c.request(1, "initialize", init_params());
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "clipboard_write", "arguments": {"text": "z"}}}));
    wait_for("the call to park", || {
        (health(&server)["pending_approvals"] == 1).then_some(())
    });
    let daemon = server.child.id();
    server.child.kill().unwrap();
    let _ = server.child.wait();
    let answer = c.response(2);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let recs: Vec<Value> = wait_for_records(&env, 1)
        .into_iter()
        .filter(|r| r["tool"] == "clipboard_write")
        .collect();
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_eq!(recs[0]["outcome"], "unreachable", "{}", recs[0]);
    assert_eq!(recs[0]["approval"]["outcome"], "unreachable", "{}", recs[0]);
    assert!(
        recs[0]["id"]
            .as_str()
            .unwrap()
            .contains(&format!("-{daemon}-")),
        "the daemon's call id: {}",
        recs[0]
    );
    c.close();
    let _again = HttpServer::start(&env);
    assert_eq!(
        env.calls()
            .iter()
            .filter(|r| r["tool"] == "clipboard_write")
            .count(),
        1
    );
}

/// Socket activation as `archgate.socket` does it (systemd-socket-activate: the socket is bound
/// first, the daemon started on the first connection with it as `LISTEN_FDS`): a stdio client's
/// first connection starts the daemon, which serves it on the socket it was given.
#[test]
fn the_first_connection_to_an_activated_socket_starts_the_daemon() {
    let env = Env::new();
    env.write_config("[approval]\npage = false\nnotifications = false\n");
    let dir = env.path("runtime").join("archgate");
    std::fs::create_dir(&dir).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut activator = std::process::Command::new("systemd-socket-activate");
    activator.arg(format!("--listen={}", socket(&env).display()));
    for k in [
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
        "XDG_CACHE_HOME",
    ] {
        let d = match k {
            "XDG_CONFIG_HOME" => "config",
            "XDG_STATE_HOME" => "state",
            "XDG_RUNTIME_DIR" => "runtime",
            _ => "cache",
        };
        activator.arg(format!("--setenv={k}={}", env.path(d).display()));
    }
    // The tests' world: no polkit, whatever the machine runs (`support::world`).
    activator.arg(format!(
        "--setenv=LD_PRELOAD={}",
        crate::support::world::no_polkit().display()
    ));
    let activator = activator
        .args([crate::support::BIN, "serve", "--http", "--port", "0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("systemd-socket-activate (package systemd)");
    // Ended when the test ends, however it ends: an activator left behind serves for ever.
    let activator = crate::support::Reap(activator);
    wait_for("the activator to bind the socket", || {
        socket(&env).exists().then_some(())
    });
    // Nothing runs yet: no daemon.json until someone connects.
    assert!(!dir.join("daemon.json").exists());
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(socket(&env)).unwrap().ino();
    let mut c = bridged(&env, &[]);
    let init = c.request(1, "initialize", init_params());
    assert_eq!(init["result"]["serverInfo"]["name"], "archgate", "{init}");
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let info: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("daemon.json")).unwrap()).unwrap();
    // systemd-socket-activate execs the daemon in its own process, which serves the socket it
    // was given (not one bound again) and served this call itself.
    assert_eq!(info["pid"], activator.id(), "{info}");
    assert_eq!(std::fs::metadata(socket(&env)).unwrap().ino(), inode);
    let recs = wait_for_records(&env, 1);
    assert!(
        recs.iter().any(|r| r["tool"] == "system_status"
            && r["id"]
                .as_str()
                .unwrap()
                .contains(&format!("-{}-", activator.id()))),
        "{recs:?}"
    );
    c.close();
}

/// Class: "the first client's environment chooses the daemon" (attack 3 F7). A client whose
/// `--config` / `ARCHGATE_CONFIG` (a project's `.mcp.json` env block) names a file other than the
/// person's own started the desktop's daemon under it, and every later client was served with
/// that file's policy. Now: such a client starts no shared daemon (it is served in its own
/// process), and a running daemon refuses it rather than serve it under another policy — while
/// the person's own clients keep the person's config.
#[test]
fn a_bridge_naming_another_config_is_refused_and_starts_no_daemon() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n[policy]\ndeny = [\"system_status\"]\n"
    ));
    let project = env.path("scratch/project.toml");
    std::fs::write(&project, "[approval]\npage = false\n").unwrap();
    let project = project.display().to_string();
    let _session = env.session();

    // No daemon, a session: the project's client is served, but starts no daemon.
    let mut a = bridged(&env, &["--config", &project]);
    a.request(1, "initialize", init_params());
    let r = a.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(
        r["result"]["isError"], true,
        "its own config allows it: {r}"
    );
    assert!(
        !env.path("runtime").join("archgate/daemon.json").exists(),
        "a daemon was started under the project's config"
    );
    a.close();

    // The person's daemon runs: the project's client is refused, saying why.
    let _server = HttpServer::start(&env);
    let out = env
        .command(&["--config", &project, "serve"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "served under another config: {err}");
    assert!(err.contains("other_config"), "{err}");
    // The person's own client is served by it, under the person's deny.
    let mut c = bridged(&env, &[]);
    c.request(1, "initialize", init_params());
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true, "the person's deny: {r}");
}

/// Class: "an unavailable resource replaced by another without telling" (attack 3 F12). Another
/// uid listening on archgate's configured port made a bridge start the daemon on a random port,
/// silently: the person's HTTP clients, configured for that port, sent their token and calls to
/// the stranger. Now no daemon moves away from a port another uid holds: none is started, and the
/// bridge's log says who holds it. A port the person holds (another daemon of theirs, for
/// another runtime directory) is still left for a free one.
#[test]
fn a_port_held_by_another_user_is_said_not_moved_from() {
    if !nix_is_root() {
        eprintln!("skipped: not root, so no other uid to hold the port");
        return;
    }
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n"
    ));
    let script = format!(
        "import socket,sys,time\ns=socket.socket()\ns.bind(('127.0.0.1',{port}))\ns.listen()\nprint('ready',flush=True)\ntime.sleep(60)"
    );
    let mut squatter = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("setpriv");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(squatter.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
    let _session = env.session();
    let out = env
        .command(&["serve"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let _ = squatter.kill();
    let _ = squatter.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !env.path("runtime").join("archgate/daemon.json").exists(),
        "a daemon was started on another port: {err}"
    );
    assert!(
        err.contains(&format!("127.0.0.1:{port}")) && err.contains("held by uid 65534"),
        "{err}"
    );
    // The person's own program on the port: the daemon starts, on a free port.
    let _mine = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let mut c = bridged(&env, &[]);
    c.request(1, "initialize", init_params());
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(env.path("runtime").join("archgate/daemon.json")).unwrap(),
    )
    .unwrap();
    let _stop = KillOnDrop(info["pid"].as_u64().unwrap() as i32);
    assert_ne!(info["port"], port, "{info}");
    c.close();
}

/// Attack 33 F8 (class: *the daemon found by a variable the client sets*): a client started
/// with another `XDG_RUNTIME_DIR` (a project's `.mcp.json` can set one) found no daemon there and
/// served in its own process — on the person's config, state and log, with budgets and a pending
/// list of its own (three calls a minute became three plus three). One daemon serves one
/// person's files: the bridge serves nothing beside it, and no second daemon starts for them.
#[test]
fn a_client_with_another_runtime_directory_gets_no_second_gate_beside_the_daemon() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let _server = HttpServer::start(&env);
    // The daemon's lock is a file of its own: the state directory's flock stays the orphan
    // finders', free while the daemon runs (attack 35 F8: held, every `archgate call` waited 5 s
    // for it and went on without it).
    let dir = std::fs::File::open(env.state_dir()).unwrap();
    let held = nix::fcntl::Flock::lock(dir, nix::fcntl::FlockArg::LockExclusiveNonblock);
    assert!(
        held.is_ok(),
        "the daemon holds the state directory's own lock"
    );
    drop(held);
    let other = env.path("runtime2");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = env
        .command(&["serve"])
        .env("XDG_RUNTIME_DIR", &other)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "served beside the daemon: {err}");
    assert!(err.contains("serves these files"), "{err}");
    let out = env
        .command(&["serve", "--http", "--port", "0"])
        .env("XDG_RUNTIME_DIR", &other)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a second daemon started: {said}");
    assert!(said.contains("state directory"), "{said}");
}

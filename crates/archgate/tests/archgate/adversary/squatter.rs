//! Class: *another uid answering on archgate's port is taken for archgate* (attack 3 F12's
//! remaining part). Another uid listening on archgate's configured port receives the person's
//! HTTP clients' token and calls; `archgate status` asked it for `/health` and, when it answered
//! like archgate, said "serving"; `doctor` said nothing. Tried here (as root, `nobody` plays the
//! other user): a squatter answering `/health` with archgate's name on the configured port.
//! `status` (text and `--json`) and `doctor` say loudly that the port is held by uid 65534, and
//! `status` does not call the squatter archgate.

use std::io::BufRead;
use std::process::Stdio;

use serde_json::Value;

use crate::support::Env;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// Another uid (`nobody`) listening on `127.0.0.1:port`, answering every request with a
/// `/health` that names archgate (and so also a page look-alike's bookmark); ready when returned.
fn squat(port: &str) -> std::process::Child {
    squat_with(port, false)
}

/// [`squat`], or with `reset` a squatter that closes every connection at once with a reset (as
/// archgate's own acceptor does to another uid), before its owner can be read (attack 33 F4).
fn squat_with(port: &str, reset: bool) -> std::process::Child {
    if reset {
        let script = format!(
            "import socket,struct\n\
             s=socket.socket()\n\
             s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
             s.bind(('127.0.0.1',{port}))\n\
             s.listen()\n\
             print('ready',flush=True)\n\
             while True:\n\
             \x20   c,_=s.accept()\n\
             \x20   c.setsockopt(socket.SOL_SOCKET,socket.SO_LINGER,struct.pack('ii',1,0))\n\
             \x20   c.close()\n"
        );
        return as_nobody(&script);
    }
    let script = format!(
        "import socket,time\n\
         s=socket.socket()\n\
         s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n\
         s.bind(('127.0.0.1',{port}))\n\
         s.listen()\n\
         print('ready',flush=True)\n\
         body=b'{{\"name\":\"archgate\",\"version\":\"9.9.9\",\"status\":\"ok\"}}'\n\
         while True:\n\
         \x20   c,_=s.accept()\n\
         \x20   c.settimeout(2)\n\
         \x20   try: c.recv(65536)\n\
         \x20   except Exception: pass\n\
         \x20   c.sendall(b'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: '+str(len(body)).encode()+b'\\r\\nConnection: close\\r\\n\\r\\n'+body)\n\
         \x20   c.close()\n"
    );
    as_nobody(&script)
}

/// `python3 -c script` as `nobody`; ready when it printed `ready`.
fn as_nobody(script: &str) -> std::process::Child {
    let mut squatter = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            script,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("setpriv");
    let mut line = String::new();
    std::io::BufReader::new(squatter.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    squatter
}

/// The MCP port a hermetic sandbox's config names.
fn configured_port(env: &Env) -> String {
    std::fs::read_to_string(env.config_file())
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("port = ").map(|p| p.trim().to_owned()))
        .unwrap()
}

#[test]
fn a_port_held_by_another_user_is_said_by_status_and_doctor() {
    if !is_root() {
        eprintln!("skipped: not root, so no other uid to hold the port");
        return;
    }
    let env = Env::hermetic();
    let port = configured_port(&env);
    let mut squatter = squat(&port);

    let status = env.run(&["status"]);
    let json = env.run(&["status", "--json"]);
    let doctor = env.run(&["doctor"]);
    let _ = squatter.kill();
    let _ = squatter.wait();

    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        !text.contains("serving at"),
        "the squatter was taken for archgate: {text}"
    );
    assert!(
        text.contains(&format!("127.0.0.1:{port}")) && text.contains("held by uid 65534"),
        "{text}"
    );
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_ne!(v["status"], "serving", "{v}");
    assert!(
        v["port_warning"]
            .as_str()
            .is_some_and(|w| w.contains("held by uid 65534")),
        "{v}"
    );
    let d = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        d.lines()
            .any(|l| l.contains("MISSING") && l.contains("port")),
        "{d}"
    );
    assert!(d.contains("held by uid 65534"), "{d}");
}

/// Attack 5a F1, the class's second member: the approval page's configured port held by another
/// uid. The page starts on a free port (so `archgate ui` still reaches it), and the daemon's log,
/// `status` (text and `--json`) and `doctor` say loudly who holds the configured one.
#[test]
fn a_page_port_held_by_another_user_is_said_by_the_daemon_status_and_doctor() {
    if !is_root() {
        eprintln!("SKIPPED: needs root (another uid must hold the port); CI runs it as root");
        return;
    }
    let (server_port, page_port) = (free_port(), free_port());
    let env = Env::with_config(&format!(
        "[server]\nport = {server_port}\n[approval]\npage = true\npage_port = {page_port}\nnotifications = false\n"
    ));
    let mut squatter = squat(&page_port.to_string());
    let daemon = crate::support::HttpServer::start(&env);
    let moved_to = crate::support::page_port(&env);
    let status = env.run(&["status"]);
    let json = env.run(&["status", "--json"]);
    let doctor = env.run(&["doctor"]);
    let log = daemon.log();
    drop(daemon);
    let _ = squatter.kill();
    let _ = squatter.wait();

    assert_ne!(
        moved_to, page_port,
        "the page did not move off the held port"
    );
    let said =
        format!("127.0.0.1:{page_port}, archgate's approval page port, is held by uid 65534");
    assert!(log.contains(&said) && log.contains("WARN"), "{log}");
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains(&said), "{text}");
    let v: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(
        v["page_port_warning"]
            .as_str()
            .is_some_and(|w| w.contains(&said)),
        "{v}"
    );
    let d = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        d.lines()
            .any(|l| l.contains("MISSING") && l.contains("approval page port")),
        "{d}"
    );
}

/// Attack 33 F4 (class: *a failure to name the holder read as the holder's absence*): a squatter
/// of another uid that resets every connection at once, so the kernel's table often no longer
/// holds the probe's connection when asked. `doctor` said "free or yours" 11 times in 20. Now a
/// listener archgate cannot name is said as held, every time.
#[test]
fn a_squatter_that_resets_the_probe_is_said_every_time() {
    if !is_root() {
        eprintln!("SKIPPED: needs root (another uid must hold the port); CI runs it as root");
        return;
    }
    let env = Env::hermetic();
    let port = configured_port(&env);
    let mut squatter = squat_with(&port, true);
    let doctors: Vec<String> = (0..6)
        .map(|_| String::from_utf8_lossy(&env.run(&["doctor"]).stdout).into_owned())
        .collect();
    let _ = squatter.kill();
    let _ = squatter.wait();
    for d in &doctors {
        let line = d
            .lines()
            .find(|l| l.contains("archgate port"))
            .unwrap_or_default();
        assert!(line.contains("MISSING"), "{d}");
        assert!(
            d.contains("held by uid 65534") || d.contains("cannot name"),
            "{d}"
        );
    }
}

/// A port free on `127.0.0.1` now (the kernel's pick).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Whether this machine has an IPv6 loopback to listen on.
fn has_v6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

/// Attack 34 F5 (class: *another uid answering on archgate's port is taken for archgate*, its
/// other loopback family): a client configured with `localhost` tries `[::1]` first, and another
/// user listening there received its bearer token. The daemon now holds `[::1]` at its port too,
/// serving the person there through the same guards.
#[test]
fn the_daemon_holds_its_port_on_the_ipv6_loopback_too() {
    if !has_v6_loopback() {
        eprintln!("SKIPPED: no IPv6 loopback here");
        return;
    }
    let env = Env::with_config("[approval]\npage = false\nnotifications = false\n");
    let d = crate::support::HttpServer::start(&env);
    let mut c = std::net::TcpStream::connect(("::1", d.port)).expect("archgate on [::1]");
    std::io::Write::write_all(
        &mut c,
        format!(
            "GET /health HTTP/1.1\r\nHost: [::1]:{}\r\nConnection: close\r\n\r\n",
            d.port
        )
        .as_bytes(),
    )
    .unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut c, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        std::net::TcpListener::bind(("::1", d.port)).is_err(),
        "[::1] at archgate's port is free for anyone"
    );
}

/// And a stranger already on `[::1]` at archgate's port is said, with its uid.
#[test]
fn a_stranger_on_the_ipv6_loopback_at_archgates_port_is_said() {
    if !is_root() || !has_v6_loopback() {
        eprintln!("SKIPPED: needs root (another uid must hold the port) and an IPv6 loopback");
        return;
    }
    let port = free_port();
    let script = format!(
        "import socket,time\n\
         s=socket.socket(socket.AF_INET6)\n\
         s.bind(('::1',{port}))\n\
         s.listen()\n\
         print('ready',flush=True)\n\
         time.sleep(60)\n"
    );
    let mut squatter = as_nobody(&script);
    let env = Env::with_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\nnotifications = false\n"
    ));
    let d = crate::support::HttpServer::spawn(env.command(&["serve", "--http"]));
    assert_eq!(d.port, port);
    let log = crate::support::wait_for("the warning", || {
        let l = d.log();
        l.contains(&format!("[::1]:{port}")).then_some(l)
    });
    // And `doctor` says it too, not only the daemon's log (attack 35 F2).
    let doctor = String::from_utf8_lossy(&env.run(&["doctor"]).stdout).into_owned();
    let _ = squatter.kill();
    let _ = squatter.wait();
    assert!(log.contains("uid 65534"), "{log}");
    let line = doctor
        .lines()
        .find(|l| l.contains("archgate port"))
        .unwrap_or_default();
    assert!(
        line.contains("MISSING") && doctor.contains("[::1]"),
        "{doctor}"
    );
}

/// Attack 36 F3: a stranger on `[::1]` whose accept queue is full lets every probe time out — a
/// timeout was read as "nobody there", while a client retrying its SYN got through and gave it
/// the token — and `status`/`doctor` looked only at the configured port, not at the one a
/// daemon started with `--port` serves. Both now say it.
#[test]
fn a_stranger_on_the_ipv6_loopback_with_a_full_queue_at_the_served_port_is_said() {
    if !is_root() || !has_v6_loopback() {
        eprintln!("SKIPPED: needs root (another uid must hold the port) and an IPv6 loopback");
        return;
    }
    let port = free_port();
    // Its own connections fill the queue (a backlog of 0 holds one); it never accepts.
    let script = format!(
        "import socket,time\n\
         s=socket.socket(socket.AF_INET6)\n\
         s.bind(('::1',{port}))\n\
         s.listen(0)\n\
         cs=[]\n\
         for i in range(3):\n\
         \x20   c=socket.socket(socket.AF_INET6)\n\
         \x20   c.setblocking(False)\n\
         \x20   try: c.connect(('::1',{port}))\n\
         \x20   except BlockingIOError: pass\n\
         \x20   cs.append(c)\n\
         time.sleep(0.3)\n\
         print('ready',flush=True)\n\
         time.sleep(90)\n"
    );
    let mut squatter = as_nobody(&script);
    // The configured port is another, free one: the daemon is told its port on the command line.
    let configured = free_port();
    assert_ne!(configured, port);
    let env = Env::with_config(&format!(
        "[server]\nport = {configured}\n[approval]\npage = false\nnotifications = false\n"
    ));
    let d = crate::support::HttpServer::spawn(env.command(&[
        "serve",
        "--http",
        "--port",
        &port.to_string(),
    ]));
    assert_eq!(d.port, port);
    let status = String::from_utf8_lossy(&env.run(&["status"]).stdout).into_owned();
    let doctor = String::from_utf8_lossy(&env.run(&["doctor"]).stdout).into_owned();
    let _ = squatter.kill();
    let _ = squatter.wait();
    assert!(
        status.contains(&format!("[::1]:{port}")) && status.contains("held by"),
        "{status}"
    );
    let line = doctor
        .lines()
        .find(|l| l.contains("archgate port"))
        .unwrap_or_default();
    assert!(line.contains("MISSING"), "{doctor}");
    assert!(doctor.contains(&format!("[::1]:{port}")), "{doctor}");
}

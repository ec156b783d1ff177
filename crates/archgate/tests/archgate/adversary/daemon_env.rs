//! Class: *the first client's environment chooses the daemon* (attack 2 F6, issue 33 item 8).
//! A daemon a bridge starts serves every later client, so nothing the first client had in its
//! environment may become the daemon's. Tried here: with no systemd user manager for the runtime
//! directory (only a session bus socket shows a session — the case that fell back to the bridge's
//! own environment), a bridge started under a hostile environment — a person-owned directory at
//! the front of `PATH`, `HOME` elsewhere, `XDG_DATA_DIRS`/`XDG_CONFIG_DIRS`/`XDG_DATA_HOME`
//! pointing at it, a made-up desktop, locale and Wayland name, a code-loading `BASH_ENV` — starts
//! a daemon whose `/proc/PID/environ` holds none of those values: `HOME` is the person's passwd
//! entry's, `XDG_RUNTIME_DIR` the runtime directory, the bus found there.
//!
//! And the same class through the base directories of archgate's own files (attack 4 F4): a
//! stdio client whose `XDG_CONFIG_HOME` (or `XDG_STATE_HOME`, `XDG_CACHE_HOME`) differs from the
//! session's — a project's `.mcp.json` env block — made the bridge start the shared daemon under
//! the project's config, serving the person's HTTP clients and refusing the person's own stdio
//! clients. Which files are the person's is read from the session (the user manager's
//! environment, or the process serving the session's socket, with the passwd home), never from
//! the bridge's environment: such a client starts no shared daemon (it is served in its own
//! process), and a running daemon refuses it.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Env, PATIENCE, POLL, StdioServer};

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

fn environ(pid: i32) -> Vec<(String, String)> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("the daemon's environ");
    raw.split(|b| *b == 0)
        .filter(|e| !e.is_empty())
        .filter_map(|e| {
            let e = String::from_utf8_lossy(e);
            e.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned()))
        })
        .collect()
}

#[test]
fn a_daemon_started_by_a_hostile_client_has_none_of_its_environment() {
    let mut env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n"
    ));
    // The person's session (its bus), started with the person's environment.
    let _session = env.session();
    // The client's own directories: the person's, 0755, so every trust check passes them.
    let elsewhere = env.path("scratch/elsewhere");
    let evil_bin = elsewhere.join("bin");
    std::fs::create_dir_all(&evil_bin).unwrap();
    let marker = elsewhere.display().to_string();
    let path = format!(
        "{}:{}",
        evil_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    env.vars.extend(
        [
            ("PATH", path.as_str()),
            ("HOME", marker.as_str()),
            ("XDG_DATA_DIRS", marker.as_str()),
            ("XDG_CONFIG_DIRS", marker.as_str()),
            ("XDG_DATA_HOME", marker.as_str()),
            ("XDG_CURRENT_DESKTOP", "HostileDesktop"),
            ("LANG", "hostile_XX.UTF-8"),
            ("WAYLAND_DISPLAY", "wayland-hostile"),
            ("BASH_ENV", &format!("{marker}/env.sh")),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );

    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(env.path("runtime").join("archgate/daemon.json"))
            .expect("a daemon was started"),
    )
    .unwrap();
    let daemon = info["pid"].as_u64().unwrap() as i32;
    let _stop = KillOnDrop(daemon);
    assert_eq!(info["spawned"], true, "{info}");

    let got = environ(daemon);
    let leaked: Vec<&(String, String)> = got
        .iter()
        .filter(|(k, v)| {
            v.contains(&marker) || v.contains("Hostile") || v.contains("hostile") || k == "BASH_ENV"
        })
        .collect();
    assert!(
        leaked.is_empty(),
        "the client's values reached the daemon: {leaked:?}"
    );
    let get = |k: &str| got.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let me = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .expect("a passwd entry");
    assert_eq!(get("HOME"), Some(me.dir.to_str().unwrap()), "{got:?}");
    assert_eq!(get("USER"), Some(me.name.as_str()), "{got:?}");
    let runtime = env.path("runtime").display().to_string();
    assert_eq!(get("XDG_RUNTIME_DIR"), Some(runtime.as_str()), "{got:?}");
    assert_eq!(
        get("DBUS_SESSION_BUS_ADDRESS"),
        Some(format!("unix:path={runtime}/bus").as_str()),
        "{got:?}"
    );
    // And it serves: the client's call is the daemon's.
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let _ = c.close();
    std::thread::sleep(Duration::from_millis(50));
}

/// `serve` with `vars` on top of the sandbox's, to its end; its stderr.
fn serve_once(env: &Env, vars: &[(&str, String)]) -> (bool, String) {
    let mut c = env.command(&["serve"]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.stdin(std::process::Stdio::null()).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_client_that_moved_archgates_directories_starts_no_shared_daemon_and_is_refused_by_one() {
    let mut env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n[policy]\ndeny = [\"system_status\"]\n"
    ));
    // The project's own base directories: the person's files (0755), so the config guard passes
    // them; its config allows what the person's denies.
    let project = env.path("scratch/project");
    std::fs::create_dir_all(project.join("xdg/archgate")).unwrap();
    std::fs::write(
        project.join("xdg/archgate/config.toml"),
        format!("[server]\nport = {port}\n[approval]\npage = false\npresence = \"off\"\n"),
    )
    .unwrap();
    let _session = env.session();
    let daemon_json = env.path("runtime").join("archgate/daemon.json");
    let moved: [(&str, String); 3] = [
        ("XDG_CONFIG_HOME", project.join("xdg").display().to_string()),
        (
            "XDG_STATE_HOME",
            project.join("state").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME",
            project.join("cache").display().to_string(),
        ),
    ];

    // No daemon runs: a client with any one of the three moved is served in its own process
    // (the project's config allows the call) and starts no daemon.
    for var in &moved {
        env.vars.push((var.0.to_owned(), var.1.clone()));
        let mut c = StdioServer::start_with(&env, &["serve"]);
        env.vars.pop();
        c.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        let _ = c.request(
            2,
            "tools/call",
            json!({"name": "system_status", "arguments": {}}),
        );
        let _ = c.close();
        if let Ok(text) = std::fs::read_to_string(&daemon_json) {
            let info: Value = serde_json::from_str(&text).unwrap();
            let _stop = KillOnDrop(info["pid"].as_u64().unwrap() as i32);
            panic!(
                "a client with {}={} started the shared daemon: {info}",
                var.0, var.1
            );
        }
    }

    // The person's own client starts the shared daemon, under the person's config.
    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(&daemon_json).expect("the person's client started a daemon"),
    )
    .unwrap();
    let _stop = KillOnDrop(info["pid"].as_u64().unwrap() as i32);
    let r = c.request(
        2,
        "tools/call",
        json!({"name": "system_status", "arguments": {}}),
    );
    assert_eq!(r["result"]["isError"], true, "the person's deny: {r}");
    let _ = c.close();

    // The daemon runs: a client that moved the config or the state directory is refused,
    // saying why (its records and tokens would not be the daemon's).
    let (ok, err) = serve_once(&env, &moved[..1]);
    assert!(!ok && err.contains("other_config"), "{err}");
    let (ok, err) = serve_once(&env, &moved[1..2]);
    assert!(!ok && err.contains("other_state"), "{err}");
}

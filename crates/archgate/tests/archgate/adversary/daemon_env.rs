//! Class: *the first client's environment chooses the daemon* (attack 2 F6, issue 33 item 8).
//! A daemon a bridge starts serves every later client, so nothing the first client had in its
//! environment may become the daemon's. Tried here: with no systemd user manager for the runtime
//! directory (only a session bus socket shows a session — the case that fell back to the bridge's
//! own environment), a bridge started under a hostile environment — a person-owned directory at
//! the front of `PATH`, `HOME` elsewhere, `XDG_DATA_DIRS`/`XDG_CONFIG_DIRS`/`XDG_DATA_HOME`
//! pointing at it, a made-up desktop, locale and Wayland name, a code-loading `BASH_ENV` — starts
//! a daemon whose `/proc/PID/environ` holds none of those values: `HOME` is the person's passwd
//! entry's, `XDG_RUNTIME_DIR` the runtime directory, the bus found there.

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
    let _bus = std::os::unix::net::UnixListener::bind(env.path("runtime").join("bus")).unwrap();

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

//! archgate's own state trusted by its path (attack 10, F1). What it tries, against the real
//! binary: a state directory whose parent another user may write (the precondition the config
//! guard exists for) — archgate used to start on it; and, while a daemon serves, that user swaps
//! the directory for one of theirs holding a standing rule for the person's `ask` call and a
//! link at archgate's old predictable temporary name (`.standing-rules.json.tmpPID`) to a file
//! of the person's. archgate used to run the call on the planted rule without asking, say
//! `config: ok`, and write its rules through the link into the person's file. Now: start is
//! refused naming the directory; after a swap no standing rule says yes, `/health` and
//! `archgate status` say the stored state is not used and why, and no file of the person's is
//! written (nothing is written into a directory another user controls, temporary files are
//! created new, never through a link, and the activity log is never opened through one).

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::support::*;

const ASKS: &str = "[approval]\npage = false\nnotifications = false\ntimeout_s = 5\n\
                    [policy]\nask = [\"system_status\"]\n";

fn chmod(p: &std::path::Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The rule a stranger plants: client `default`, `system_status`, no arguments.
fn planted_rule() -> serde_json::Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    json!([{
        "id": "planted", "client": "default", "tool": "system_status", "route": "system_status",
        "command": "system_status", "args": {"kind": "exact", "args": {}},
        "created": now, "expires": now + 3600, "max_uses_per_day": 20, "uses": [], "broad": false
    }])
}

#[test]
fn a_state_directory_under_a_parent_others_may_write_does_not_start() {
    let env = Env::with_config(ASKS);
    chmod(&env.path("state"), 0o777);
    let out = env.run(&["tools"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started on it: {err}");
    assert!(
        err.contains("not archgate's to keep its state in") && err.contains("writable"),
        "{err}"
    );
    assert!(
        !env.state_dir().join("token").exists(),
        "nothing written into it"
    );
}

#[test]
fn a_state_directory_swapped_while_serving_approves_nothing_and_is_not_written_through() {
    let env = Env::with_config(ASKS);
    let d = HttpServer::start(&env);
    let token = env.token();
    // The person's own file the stranger wants archgate to overwrite.
    let victim = env.path("scratch/.bashrc");
    std::fs::write(&victim, "# the person's shell startup\n").unwrap();
    chmod(&victim, 0o600);

    // The parent becomes writable by others; the stranger swaps the directory.
    chmod(&env.path("state"), 0o777);
    std::fs::rename(env.state_dir(), env.path("state/moved-by-stranger")).unwrap();
    std::fs::create_dir(env.state_dir()).unwrap();
    chmod(&env.state_dir(), 0o777);
    let rules = env.state_dir().join("standing-rules.json");
    std::fs::write(&rules, serde_json::to_vec(&planted_rule()).unwrap()).unwrap();
    let pid = d.pid();
    std::os::unix::fs::symlink(
        &victim,
        env.state_dir()
            .join(format!(".standing-rules.json.tmp{pid}")),
    )
    .unwrap();
    if nix::unistd::geteuid().is_root() {
        // As it is on a real machine: the planted directory and files are the stranger's.
        let nobody = Some(nix::unistd::Uid::from_raw(65534));
        for p in [env.state_dir(), rules.clone()] {
            nix::unistd::chown(&p, nobody, None).unwrap();
        }
    }

    let r = d.call(&token, "system_status", json!({}));
    assert_ne!(outcome(&r), "ok", "the planted rule approved the call: {r}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "# the person's shell startup\n",
        "archgate wrote through the stranger's link"
    );
    let h = d.health();
    assert_eq!(h["state"]["ok"], false, "{h}");
    let why = h["state"]["problem"].as_str().unwrap_or("");
    assert!(why.contains("state"), "{h}");
    let out = env.run(&["status", "--port", &d.port.to_string()]);
    let said = stdout(&out);
    assert!(said.contains("state: NOT USED"), "{said}");
}

/// A link planted at the activity log's name (a stranger's, in a directory they once could
/// write; or any same-name link) is never appended through: the log is opened `O_NOFOLLOW`.
#[test]
fn the_activity_log_is_never_written_through_a_link() {
    let env = Env::with_config("[approval]\npage = false\nnotifications = false\n");
    let victim = env.path("scratch/.profile");
    std::fs::write(&victim, "# the person's profile\n").unwrap();
    std::fs::create_dir_all(env.state_dir()).unwrap();
    chmod(&env.state_dir(), 0o700);
    std::os::unix::fs::symlink(&victim, env.audit_file()).unwrap();
    let _ = env.call("system_status", &json!({}));
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "# the person's profile\n",
        "archgate appended its log through the link"
    );
}

/// The daemon a stdio client starts sends its stderr to `daemon.log` in the state directory:
/// a link planted at that name is never appended through.
#[test]
fn a_spawned_daemons_log_is_never_written_through_a_link() {
    let env = Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    env.write_config(&format!(
        "[server]\nport = {port}\n[approval]\npage = false\n"
    ));
    let victim = env.path("scratch/.profile");
    std::fs::write(&victim, "# the person's profile\n").unwrap();
    std::fs::create_dir_all(env.state_dir()).unwrap();
    chmod(&env.state_dir(), 0o700);
    std::os::unix::fs::symlink(&victim, env.state_dir().join("daemon.log")).unwrap();
    let _session = env.session();
    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    let info: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.runtime_dir().join("daemon.json")).unwrap(),
    )
    .unwrap();
    let daemon = nix::unistd::Pid::from_raw(info["pid"].as_u64().unwrap() as i32);
    let _ = c.close();
    let _ = nix::sys::signal::kill(daemon, nix::sys::signal::Signal::SIGTERM);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "# the person's profile\n",
        "the daemon's log went through the link"
    );
}

//! Class: *a program outlives the archgate that answers for it* (issue 33: "programs die with the
//! daemon or are recorded as orphaned"). The attack: `kill -9` of the daemon while an approved
//! program runs — any same-user process can do it. Before, the program (its own process group,
//! no parent-death signal) and everything it started ran to their end with no archgate left to
//! watch, time out or record them. Now every program's group is watched by archgate's guard
//! (`archgate_exec` `guard.rs`: the archgate binary as `archgate __program-guard`, reading the
//! groups on a pipe from the archgate process),
//! which kills each group still running when the pipe closes — however archgate ended.

use crate::support::*;
use serde_json::json;

const CONFIG: &str = "[approval]\npage = false\nnotifications = false\n\
    [policy]\nallow = [\"omarchy_run toggle nightlight\"]\n\
    [exec]\nrequire_root_owned = false\n";

struct Reaper(Vec<i32>);
impl Drop for Reaper {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

#[test]
fn an_approved_program_and_its_children_die_with_a_killed_daemon() {
    let mut env = Env::with_config(CONFIG);
    // The route: a shell that starts a child in its group, says both pids, and waits.
    let marks = omarchy_with_route(&mut env, |m| {
        format!(
            "#!/bin/sh\nsleep 300 &\necho \"$$ $!\" > {m}/running.tmp\nmv {m}/running.tmp {m}/running\nwait\n"
        )
    });
    let mut server = HttpServer::start(&env);
    let mut c = StdioServer::start_with(&env, &["serve"]);
    c.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.call(2, "omarchy_run", json!({"route": "toggle nightlight"}));
    let pids: Vec<i32> = wait_for("the approved program and its child", || {
        let t = std::fs::read_to_string(marks.join("running")).ok()?;
        let v: Vec<i32> = t
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        (v.len() == 2).then_some(v)
    });
    let _reaper = Reaper(pids.clone());
    assert!(pids.iter().all(|p| alive(*p)), "{pids:?}");
    // The guard is told a group just after its spawn (the `+ PGID` line, `guard.rs`); a kill in
    // that moment is the window guard.rs says is left. The attack comes after it: the daemon's
    // own count says the guard holds the group.
    wait_for("the guard to hold the program's group", || {
        (server.health()["programs"]["guarded"].as_u64() >= Some(1)).then_some(())
    });

    server.child.kill().unwrap();
    let _ = server.child.wait();
    wait_for("the program and its child to end with the daemon", || {
        pids.iter().all(|p| !alive(*p)).then_some(())
    });
    let left = pids.iter().filter(|p| alive(**p)).count();
    eprintln!("programs left running after kill -9 of the daemon: {left}");
    assert_eq!(left, 0);
    let _ = c.response(2);
}

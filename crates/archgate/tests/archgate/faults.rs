//! Fault injection against the real binary: what archgate promises (every call answered and
//! recorded, nothing runs without a decision, no hang) must hold when the world misbehaves —
//! the daemon killed mid-write, its state directory full, its config replaced by garbage, a
//! program that will not die, a client that leaves mid-approval, a server that never answers.

use crate::support::*;
use serde_json::{Value, json};
use std::io::Write;
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BUSY: &str = r#"
[budgets]
per_minute = 100000
per_day = 10000000
[approval]
page = false
notifications = false
"#;

/// Sends calls from `threads` threads until `stop`; errors (the daemon is gone) end a thread.
fn hammer(port: u16, token: String, threads: usize, stop: Arc<AtomicBool>) -> Arc<AtomicUsize> {
    let answered = Arc::new(AtomicUsize::new(0));
    for t in 0..threads {
        let (stop, answered, token) = (stop.clone(), answered.clone(), token.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::SeqCst) {
                i += 1;
                // A big argument makes each record long (values are cut at 512 bytes).
                let args = if i.is_multiple_of(2) {
                    json!({})
                } else {
                    json!({"bogus": format!("{t}-{i}-{}", "x".repeat(480))})
                };
                let req = call_request(&token, "system_status", args, i);
                let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
                    return;
                };
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                if s.write_all(&req.bytes(port)).is_err() {
                    return;
                }
                let mut buf = Vec::new();
                if std::io::Read::read_to_end(&mut s, &mut buf).is_err() || buf.is_empty() {
                    return;
                }
                answered.fetch_add(1, Ordering::SeqCst);
            }
        });
    }
    answered
}

/// Whole lines of the log, and the torn tail after the last newline (empty when none).
fn split_log(bytes: &[u8]) -> (Vec<Value>, Vec<u8>) {
    let last_nl = bytes.iter().rposition(|b| *b == b'\n');
    let (whole, tail) = match last_nl {
        Some(i) => (&bytes[..=i], &bytes[i + 1..]),
        None => (&bytes[..0], bytes),
    };
    let lines = whole
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            serde_json::from_slice::<Value>(l).unwrap_or_else(|e| {
                panic!(
                    "a line before the last newline is not whole JSON ({e}): {}",
                    String::from_utf8_lossy(l)
                )
            })
        })
        .collect();
    (lines, tail.to_vec())
}

fn log_json(env: &Env) -> (Vec<Value>, String) {
    let out = env.run(&["log", "--json"]);
    assert!(out.status.success(), "archgate log: {out:?}");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("archgate log --json prints JSON lines"))
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn sigkill_during_heavy_audit_writing_leaves_only_whole_lines_and_the_reader_reports_a_torn_one() {
    let env = Env::with_config(BUSY);
    let mut d = HttpServer::start(&env);
    let stop = Arc::new(AtomicBool::new(false));
    let answered = hammer(d.port, env.token(), 8, stop.clone());
    wait_for("400 audit lines written under load", || {
        let n = std::fs::read(env.audit_file())
            .map(|b| b.iter().filter(|c| **c == b'\n').count())
            .unwrap_or(0);
        (n >= 400).then_some(())
    });
    d.child.kill().expect("SIGKILL"); // while the writer is busy
    d.child.wait().unwrap();
    stop.store(true, Ordering::SeqCst);
    assert!(answered.load(Ordering::SeqCst) > 0);

    let bytes = std::fs::read(env.audit_file()).unwrap();
    let (whole, tail) = split_log(&bytes);
    for v in &whole {
        assert!(
            v.get("event").is_some() || (v["id"].is_string() && v["outcome"].is_string()),
            "a whole line is a record or an event: {v}"
        );
    }
    // `archgate log` prints every whole line and reports the torn one, if the kill left one.
    let (printed, stderr) = log_json(&env);
    assert_eq!(printed.len(), whole.len());
    assert_eq!(
        stderr.contains("not whole records"),
        !tail.is_empty(),
        "stderr: {stderr}"
    );

    // Whether or not this kill tore a line, one torn mid-write is skipped and reported.
    if tail.is_empty() {
        tear_last_line(&env);
    }
    let (printed, stderr) = log_json(&env);
    assert_eq!(printed.len(), whole.len());
    assert!(stderr.contains("1 line(s) were not whole"), "{stderr}");
}

/// Appends the first half of the log's last line again, as a kill in mid-write leaves it.
fn tear_last_line(env: &Env) {
    let text = std::fs::read_to_string(env.audit_file()).unwrap();
    let line = text.lines().last().expect("a line to tear");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.audit_file())
        .unwrap();
    f.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
}

#[test]
fn a_restart_after_a_torn_last_line_keeps_every_new_record_whole() {
    let env = Env::with_config(BUSY);
    let mut d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    d.child.kill().expect("SIGKILL");
    d.child.wait().unwrap();
    tear_last_line(&env);
    let (before, _) = log_json(&env);

    // The next archgate appends to a file whose last line has no newline: its first record
    // must not be glued to the fragment (and lost with it).
    let mut d = HttpServer::start(&env);
    let token = env.token();
    for _ in 0..3 {
        assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    }
    assert!(d.stop().0.success());
    let (after, stderr) = log_json(&env);
    assert_eq!(
        after.len() - before.len(),
        3,
        "each of the 3 calls after the restart is a readable record; archgate log said: {stderr}"
    );
    assert!(
        stderr.contains("1 line(s) were not whole"),
        "only the old fragment is skipped: {stderr}"
    );
}

/// A tmpfs mounted over a directory for the length of a test.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(at: &std::path::Path, size: &str) -> Tmpfs {
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test needs to mount a tmpfs (as root, with CAP_SYS_ADMIN) to fill the state \
             directory; mount said: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(at.to_owned())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes to `path` until the file system is full.
/// The bar's state file as the daemon keeps it.
fn bar(env: &Env) -> Option<Value> {
    let bytes = std::fs::read(env.path("runtime/archgate/state.json")).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn fill(path: &std::path::Path) {
    let mut f = std::fs::File::create(path).expect("filler");
    let chunk = vec![b'x'; 4096];
    loop {
        if f.write_all(&chunk).is_err() {
            break;
        }
    }
    // The last page too, byte by byte.
    while f.write_all(b"x").is_ok() {}
    let _ = f.flush();
}

#[test]
fn a_full_state_directory_answers_no_call_and_reports_once_per_burst() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "SKIPPED: needs root (it mounts a small tmpfs to fill the state directory); CI runs it as root"
        );
        return;
    }
    let env = Env::with_config(BUSY);
    let _mnt = Tmpfs::mount(&env.path("state"), "1m");
    let mut d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    let filler = env.path("state/filler");
    let failures = |d: &HttpServer| d.log().matches("audit log write failed").count();
    let call = |d: &HttpServer| outcome(&d.call(&token, "system_status", json!({})));
    // Every call answered `ok`, to be found in the log at the end.
    let mut answered = 1;

    for burst in 1..=2 {
        fill(&filler);
        // While the log still takes records (the slack of its last page), calls are answered;
        // from the first record that cannot be written, none is (attack 33 F1): that call's
        // answer is withheld, the rest are refused before their work.
        let outcomes: Vec<String> = (0..20).map(|_| call(&d)).collect();
        let first = outcomes
            .iter()
            .position(|o| o == "refused")
            .unwrap_or_else(|| panic!("no call refused on a full disk: {outcomes:?}"));
        assert!(
            outcomes[..first].iter().all(|o| o == "ok")
                && outcomes[first..].iter().all(|o| o == "refused"),
            "{outcomes:?}"
        );
        answered += first;
        assert_eq!(d.health()["audit"]["writable"], false, "{}", d.health());
        // The bar says it too (attack 35 F7: its state.json said `serving`, nothing more).
        let said: Value = wait_for("the bar to say the log cannot be written", || {
            bar(&env).filter(|b| b["log_ok"] == false)
        });
        assert!(
            said["log_problem"]
                .as_str()
                .is_some_and(|p| p.contains("activity log cannot be written")),
            "{said}"
        );
        wait_for("the write failure on stderr", || {
            (failures(&d) >= burst).then_some(())
        });
        assert!(d.health()["audit"]["write_failures"].as_u64().unwrap() >= 1);
        assert_eq!(
            failures(&d),
            burst,
            "one report per burst of failures, not one per record:\n{}",
            d.log()
        );
        // Room again: the next write succeeds and says how much was lost; a call is answered
        // again at the latest after one refusal (whose record is that write).
        std::fs::remove_file(&filler).unwrap();
        assert!(
            (0..3).any(|_| call(&d) == "ok"),
            "no call answered after the disk had room again"
        );
        answered += 1;
        wait_for("the bar to say the log is written again", || {
            bar(&env).filter(|b| b["log_ok"] == true && b.get("log_problem").is_none())
        });
        wait_for("the recovery on stderr", || {
            (d.log().matches("writable again").count() >= burst).then_some(())
        });
    }
    let before = d.health()["calls"]["total"].as_u64().unwrap();
    for _ in 0..5 {
        assert_eq!(call(&d), "ok");
    }
    answered += 5;
    assert_eq!(d.health()["calls"]["total"].as_u64().unwrap(), before + 5);
    assert!(d.stop().0.success());
    // The records are whole and readable, and every answered call has one.
    let (printed, _) = log_json(&env);
    let records: Vec<&Value> = printed
        .iter()
        .filter(|v| v.get("event").is_none())
        .collect();
    let tail: Vec<&&Value> = records.iter().rev().take(5).collect();
    assert_eq!(tail.len(), 5);
    assert!(tail.iter().all(|r| r["tool"] == "system_status"));
    let ok = records.iter().filter(|r| r["outcome"] == "ok").count();
    assert_eq!(ok, answered, "answered calls without a record");
}

#[test]
fn garbage_config_mid_run_keeps_the_old_config_in_force() {
    let env = Env::with_config(&format!("{BUSY}\n[policy]\ndeny = [\"pacman_log\"]\n"));
    let mut d = HttpServer::start(&env);
    let token = env.token();
    assert_eq!(outcome(&d.call(&token, "pacman_log", json!({}))), "refused");
    assert_eq!(d.health()["config"]["ok"], true);

    env.write_config("[policy\ndeny = \u{0}\u{1}garbage ]]]\n");
    let r = env.run(&["reload"]);
    assert!(r.status.success(), "{r:?}");
    let h = wait_for("/health to show the broken config", || {
        let h = d.health();
        (h["config"]["ok"] == false).then_some(h)
    });
    assert!(
        !h["config"]["problems"].as_array().unwrap().is_empty(),
        "{h}"
    );
    // The previous snapshot decides: the route is still denied, other calls still work.
    assert_eq!(outcome(&d.call(&token, "pacman_log", json!({}))), "refused");
    assert_eq!(outcome(&d.call(&token, "system_status", json!({}))), "ok");
    assert!(d.log().contains("previous config stays in force"));

    // A good file again applies (the poll picks it up without a signal).
    env.write_config(&format!("{BUSY}\n[policy]\ndeny = []\n"));
    wait_for("the repaired config to apply", || {
        (d.health()["config"]["ok"] == true).then_some(())
    });
    assert_ne!(outcome(&d.call(&token, "pacman_log", json!({}))), "refused");
    assert!(d.stop().0.success());
}

/// Issue 36: a reload that changed a key read only at start said nothing. It is said in the log,
/// in /health and by `archgate status` ("takes effect at restart", naming the keys), and the
/// key keeps its start value meanwhile (the page stays off).
#[test]
fn a_reload_changing_a_start_only_key_says_it_takes_effect_at_restart() {
    let env = Env::with_config(BUSY);
    let mut d = HttpServer::start(&env);
    assert_eq!(d.health()["config"]["restart_pending"], json!([]));

    env.write_config(&format!(
        "{BUSY}page_port = 0\n[audit]\nkeep = 9\n[limits]\nmax_args_bytes = 32768\n"
    ));
    let r = env.run(&["reload"]);
    assert!(r.status.success(), "{r:?}");
    let h = wait_for("/health to name the keys waiting for a restart", || {
        let h = d.health();
        (h["config"]["restart_pending"] != json!([])).then_some(h)
    });
    assert_eq!(
        h["config"]["restart_pending"],
        json!(["approval.page_port", "audit.keep"]),
        "{h}"
    );
    let status = env.run(&["status"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("config: approval.page_port, audit.keep changed; takes effect at restart"),
        "{text}"
    );
    wait_for("the log to say it", || {
        d.log()
            .contains("approval.page_port, audit.keep changed; takes effect at restart")
            .then_some(())
    });

    // Changed back: nothing waits for a restart.
    env.write_config(BUSY);
    wait_for("the restored config to apply", || {
        (d.health()["config"]["restart_pending"] == json!([])).then_some(())
    });
    assert!(d.stop().0.success());
}

/// A fixture Omarchy whose `toggle nightlight` ignores SIGTERM and leaves helpers behind.
fn stubborn_omarchy(env: &mut Env) -> std::path::PathBuf {
    omarchy_with_route(env, |m| {
        format!(
            r#"#!/bin/sh
case "toggle" in
  toggle)
    trap '' TERM
    sh -c 'trap "" TERM; echo $$ > {m}/child; exec sleep 300' &
    sh -c 'sh -c "trap \"\" TERM; echo \$\$ > {m}/grandchild; exec sleep 300" & trap "" TERM; echo $$ > {m}/middle; wait' &
    echo $$ > {m}/leader
    while :; do sleep 1; done ;;
esac
"#
        )
    })
}

#[test]
fn a_program_that_ignores_sigterm_and_forks_leaves_nothing_after_its_timeout() {
    // (crates/exec/tests/exec.rs pins the same at the executor; this goes through the binary.)
    let mut env = Env::with_config(&format!(
        "{BUSY}\n[policy]\nallow = [\"omarchy_run toggle nightlight\"]\n\
         [exec]\nrequire_root_owned = false\n[tools]\ntimeouts = {{ omarchy_run = 2 }}\n"
    ));
    let marks = stubborn_omarchy(&mut env);
    let started = Instant::now();
    let (result, _) = env.call("omarchy_run", &json!({"route": "toggle nightlight"}));
    assert!(
        started.elapsed() < PATIENCE,
        "the call came back (bounded by its timeout)"
    );
    let text = result.to_string();
    assert_eq!(result["isError"], true, "{text}");
    assert!(text.contains("timed_out"), "{text}");
    let mut pids = Vec::new();
    for name in ["leader", "middle", "child", "grandchild"] {
        let pid: i32 = wait_for(&format!("the {name} pid file"), || {
            std::fs::read_to_string(marks.join(name))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        });
        pids.push((name, pid));
    }
    // A killed process may stay a zombie for a moment until reaped: poll, bounded.
    wait_for("every process of the call to be gone", || {
        pids.iter().all(|(_, p)| !alive(*p)).then_some(())
    });
    let records = env.calls();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["outcome"], "tool_error");
    assert_eq!(records[0]["error_kind"], "timed_out");
}

#[test]
fn a_client_gone_while_parked_is_unreachable_and_nothing_runs_later() {
    let env = Env::with_config(&format!("{BUSY}\n[policy]\nask = [\"pacman_conf\"]\n"));
    let mut d = HttpServer::start(&env);
    let token = env.token();
    let mut s = connect(d.port);
    s.write_all(&call_request(&token, "pacman_conf", json!({}), 7).bytes(d.port))
        .unwrap();
    let pending = wait_for("the call to be parked", || {
        let out = env.run(&["approvals", "--json"]);
        let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        (v.len() == 1).then(|| v[0].clone())
    });
    let id = pending["id"].as_str().unwrap().to_owned();
    drop(s); // the client leaves

    let record = wait_for("the call's record", || {
        env.calls().into_iter().find(|r| r["id"] == id.as_str())
    });
    assert_eq!(record["outcome"], "unreachable", "{record}");
    assert_eq!(record["approval"]["outcome"], "unreachable", "{record}");
    wait_for("the question to be withdrawn", || {
        let out = env.run(&["approvals", "--json"]);
        let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v.is_empty().then_some(())
    });
    // A late yes does nothing.
    let late = env.run(&["approve", &id]);
    assert!(!late.status.success(), "approving a withdrawn call fails");
    std::thread::sleep(Duration::from_millis(500));
    assert!(d.stop().0.success());
    let records: Vec<Value> = env
        .calls()
        .into_iter()
        .filter(|r| r["id"] == id.as_str())
        .collect();
    assert_eq!(records.len(), 1, "exactly one record, never an `ok` later");
    let h_calls: Vec<Value> = env.calls();
    assert!(h_calls.iter().all(|r| r["outcome"] != "ok"));
}

/// A TCP listener that accepts and never answers; kept open for the test's length.
fn black_hole() -> (TcpListener, u16, Arc<AtomicBool>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let listener = l.try_clone().unwrap();
    let s = stop.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            if s.load(Ordering::SeqCst) {
                break;
            }
            if let Ok(c) = conn {
                held.push(c); // read nothing, answer nothing
            }
        }
    });
    (l, port, stop)
}

#[test]
fn a_hanging_aur_or_wiki_server_gets_an_answer_within_the_timeout() {
    let (_l, port, _stop) = black_hole();
    let env = Env::with_config(&format!(
        "{BUSY}\n[arch]\naur_url = \"http://127.0.0.1:{port}\"\nnews_url = \"http://127.0.0.1:{port}/feeds/news/\"\nhttp_timeout_s = 2\n\
         [wiki]\nurl = \"http://127.0.0.1:{port}\"\nprefer = \"online_only\"\n"
    ));
    for (tool, args) in [
        ("aur_search", json!({"query": "yay"})),
        ("aur_info", json!({"names": ["yay"]})),
        ("wiki_search", json!({"query": "bluetooth"})),
        ("wiki_page", json!({"title": "Systemd"})),
        ("arch_news", json!({})),
    ] {
        let started = Instant::now();
        let (result, out) = env.call(tool, &args);
        let took = started.elapsed();
        assert!(took < PATIENCE, "{tool} came back");
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let kind = result["structuredContent"]["error"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            ["timed_out", "could_not_reach", "offline", "not_available"].contains(&kind.as_str()),
            "{tool}: a hang is reported as such, got {kind:?}: {result}; stderr {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(env.calls().len(), 5);
}

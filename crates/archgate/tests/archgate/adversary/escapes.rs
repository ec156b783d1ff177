//! Attack 5 of issue 16 (part of `hostile.rs`): terminal escapes in what an agent writes. A call
//! whose arguments carry `ESC[1A ESC[2K CR` once drew a fake row over the real one in
//! `archgate approvals`, an unknown tool's name did the same in `archgate log`, and a bidi
//! override (U+202E) showed an `su` command as something else. Each CLI view is rendered here by
//! a real terminal (tmux, its screen read back with `capture-pane`): the agent's bytes must show
//! as visible escapes, the real rows must stand, and no fake row may appear.

use crate::support::*;
use serde_json::{Value, json};
use std::process::Command;
use std::time::{Duration, Instant};

/// What an agent writes to forge a row: up one line, clear it, back to the start, a fake row.
const FORGE: &str = "\u{1b}[1A\u{1b}[2K\rFAKE-ROW  system_status  read  local  59s  xdg-open https://example.org\r\n";
/// A command whose displayed order a bidi override would reverse.
const BIDI: &str = "xdg-open \u{202e}gnp.tac-ot-us";

/// A real terminal: `script` runs in a fresh tmux server of its own, 200×50.
struct Terminal {
    socket: String,
}

impl Terminal {
    /// Runs `archgate ARGS` with `env`'s variables in a new terminal, waits for it to finish,
    /// and returns the screen as the terminal drew it.
    fn render(env: &Env, args: &[&str]) -> String {
        let t = Terminal {
            socket: format!("archgate-test-{}-{}", std::process::id(), rand_suffix()),
        };
        let script = env.path("scratch/run-in-terminal.sh");
        let done = env.path("scratch/terminal.done");
        let _ = std::fs::remove_file(&done);
        let mut sh = String::from("#!/bin/sh\n");
        let cmd = env.command(args);
        for (k, v) in cmd.get_envs() {
            let k = k.to_string_lossy();
            match v {
                Some(v) => sh.push_str(&format!("export {k}={}\n", quote(&v.to_string_lossy()))),
                None => sh.push_str(&format!("unset {k}\n")),
            }
        }
        sh.push_str("unset ARCHGATE_LOG\n");
        sh.push_str(&quote(BIN));
        for a in args {
            sh.push(' ');
            sh.push_str(&quote(a));
        }
        sh.push_str(&format!(
            " 2>/dev/null; touch {}; sleep 60\n",
            quote(&done.display().to_string())
        ));
        std::fs::write(&script, sh).unwrap();
        let ok = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-x",
                "200",
                "-y",
                "50",
            ])
            .arg(format!("sh {}", quote(&script.display().to_string())))
            .status()
            .expect("tmux (scripts/test-deps.sh installs it)");
        assert!(ok.success(), "tmux did not start");
        let start = Instant::now();
        while !done.exists() {
            assert!(
                start.elapsed() < PATIENCE,
                "archgate {args:?} did not finish in the terminal"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(200));
        let out = Command::new("tmux")
            .args([
                "-L",
                &t.socket,
                "capture-pane",
                "-p",
                "-J",
                "-S",
                "-",
                "-E",
                "-",
            ])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn rand_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos() as u64
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Lines of the screen that look like a row of `archgate approvals` (an id, then a tool).
fn rows_starting_with<'a>(screen: &'a str, word: &str) -> Vec<&'a str> {
    screen.lines().filter(|l| l.starts_with(word)).collect()
}

fn no_raw_controls(screen: &str) {
    assert!(
        !screen
            .chars()
            .any(|c| c == '\u{202e}' || c == '\u{1b}' || c == '\u{2066}' || c == '\u{200f}'),
        "raw control or bidi characters reached the screen: {screen:?}"
    );
}

const CONFIG: &str = "[approval]\npage = false\nnotifications = false\ntimeout_s = 120\n\
[budgets]\nper_minute = 100000\nper_day = 10000000\n[policy]\nask = [\"pkg_search\"]\n";

/// Parks one call (in a thread: it waits for the person) and returns its pending question.
fn park(env: &Env, d: &HttpServer, args: Value) -> (Value, std::thread::JoinHandle<Value>) {
    let (port, token) = (d.port, env.token());
    let call = std::thread::spawn(move || {
        let r = send(port, &call_request(&token, "pkg_search", args, 1));
        r.messages()
            .into_iter()
            .find(|m| m["id"] == 1)
            .unwrap_or(Value::Null)
    });
    let q = wait_for("a pending question", || {
        let out = env.run(&["approvals", "--json"]);
        let list: Vec<Value> = serde_json::from_slice(&out.stdout).ok()?;
        list.into_iter().next()
    });
    (q, call)
}

#[test]
fn escapes_in_a_waiting_call_cannot_draw_a_fake_row_in_approvals_or_show() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let query = format!("{FORGE}{BIDI}\u{2066}\u{200f}");
    let (q, call) = park(&env, &d, json!({ "query": query }));
    let id = q["id"].as_str().unwrap().to_owned();
    // The honest path: the CLI still reads the question whole (JSON keeps the exact text).
    assert_eq!(q["args"]["query"], query.as_str());

    let screen = Terminal::render(&env, &["approvals"]);
    no_raw_controls(&screen);
    assert_eq!(
        rows_starting_with(&screen, "ID ").len(),
        1,
        "the header stands: {screen}"
    );
    assert_eq!(
        rows_starting_with(&screen, &id).len(),
        1,
        "the real row stands: {screen}"
    );
    assert!(
        rows_starting_with(&screen, "FAKE-ROW").is_empty(),
        "a fake row was drawn: {screen}"
    );
    for shown in [
        "\\x1b[1A\\x1b[2K\\rFAKE-ROW",
        "\\u{202e}gnp.tac-ot-us",
        "\\u{2066}\\u{200f}",
    ] {
        assert!(screen.contains(shown), "{shown} is not shown: {screen}");
    }

    let screen = Terminal::render(&env, &["show", &id]);
    no_raw_controls(&screen);
    assert!(
        rows_starting_with(&screen, "FAKE-ROW").is_empty(),
        "{screen}"
    );
    assert!(screen.contains("\\u{202e}gnp.tac-ot-us"), "{screen}");
    assert!(
        screen.lines().any(|l| l.starts_with("tool: pkg_search")),
        "{screen}"
    );

    let denied = env.run(&["deny", &id]);
    assert!(denied.status.success(), "{denied:?}");
    let answer = call.join().unwrap();
    assert_eq!(answer["result"]["isError"], true, "{answer}");
}

#[test]
fn escapes_in_an_unknown_tool_name_cannot_forge_the_log() {
    let env = Env::with_config(CONFIG);
    let d = HttpServer::start(&env);
    let token = env.token();
    // A real record first, then the forger: a tool name that moves up and rewrites that line.
    let _ = d.call(&token, "system_status", json!({}));
    let forged = format!("{BIDI}{FORGE}2026-01-01T00:00:00Z local system_status ok");
    let (result, _) = env.call(&forged, &json!({}));
    assert_eq!(result["isError"], true, "{result}");
    wait_for("both records", || (env.calls().len() >= 2).then_some(()));

    let screen = Terminal::render(&env, &["log"]);
    no_raw_controls(&screen);
    let lines: Vec<&str> = screen.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("system_status") && l.contains(" ok ")),
        "the real record stands: {screen}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("FAKE-ROW") || l.starts_with("2026-01-01")),
        "a forged line was drawn: {screen}"
    );
    assert!(screen.contains("\\x1b[1A\\x1b[2K\\rFAKE-ROW"), "{screen}");
    assert!(screen.contains("\\u{202e}gnp.tac-ot-us"), "{screen}");
    // `--json` stays JSON, with the bidi override as a JSON escape rather than raw.
    let out = env.run(&["log", "--json"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{202e}'), "{text}");
    let parsed: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("log --json is JSON lines"))
        .collect();
    assert!(
        parsed
            .iter()
            .any(|v| v["tool"].as_str().is_some_and(|t| t.contains(BIDI))),
        "the exact name is still in the JSON"
    );
}

//! Starting the real binary for approval tests: private XDG directories, a stdio server whose
//! responses are read as they come, one-shot CLI commands, the audit log.

// Tests start the real binary and the real helpers (setpriv, makoctl); only here.
#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_archgate");

/// A bound against hangs, not a measurement.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Env {
    pub root: tempfile::TempDir,
    /// More variables for every process started (the test's D-Bus session).
    pub extra: Vec<(String, String)>,
}

impl Env {
    /// `config` is written to `$XDG_CONFIG_HOME/archgate/config.toml`.
    pub fn new(config: &str) -> Env {
        let root = tempfile::tempdir().expect("temp dir");
        for d in ["config/archgate", "state", "runtime", "cache"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        std::fs::set_permissions(
            root.path().join("runtime"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        std::fs::write(root.path().join("config/archgate/config.toml"), config).unwrap();
        Env {
            root,
            extra: Vec::new(),
        }
    }

    pub fn runtime_dir(&self) -> PathBuf {
        self.root.path().join("runtime/archgate")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_remove("ARCHGATE_CONFIG")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env("XDG_CONFIG_HOME", self.root.path().join("config"))
            .env("XDG_STATE_HOME", self.root.path().join("state"))
            .env("XDG_RUNTIME_DIR", self.root.path().join("runtime"))
            .env("XDG_CACHE_HOME", self.root.path().join("cache"))
            .env("ARCHGATE_LOG", "info");
        for (k, v) in &self.extra {
            c.env(k, v);
        }
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .stdin(Stdio::null())
            .output()
            .expect("run archgate")
    }

    /// Every line of the activity log, parsed.
    pub fn audit(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.root.path().join("state/archgate/activity.jsonl"))
            .unwrap_or_default();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// The audit record of one call, once it is written.
    pub fn audit_of(&self, id: &str) -> Value {
        let start = Instant::now();
        loop {
            if let Some(r) = self
                .audit()
                .into_iter()
                .find(|r| r["id"] == id && r.get("event").is_none())
            {
                return r;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "timed out waiting for the audit record of {id}; the server said:\n{}",
                self.server_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What `archgate serve` wrote to stderr.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.root.path().join("serve.log")).unwrap_or_default()
    }

    /// What `archgate approvals --json` lists.
    pub fn pending(&self) -> Vec<Value> {
        let out = self.run(&["approvals", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Vec<Value>>(&out.stdout).expect("approvals --json")
    }

    /// Waits until exactly one call is pending and returns it.
    pub fn one_pending(&self) -> Value {
        wait_for("a pending approval", || {
            let p = self.pending();
            (p.len() == 1).then(|| p[0].clone())
        })
    }
}

/// Polls `f` until it gives a value (every 50 ms, at most `PATIENCE`).
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < PATIENCE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `archgate serve` over stdio with an initialized MCP session.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    got: HashMap<i64, Value>,
}

impl Server {
    pub fn start(env: &Env) -> Server {
        let mut child = env
            .command(&["serve"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(env.root.path().join("serve.log")).expect("log file"))
            .spawn()
            .expect("start archgate serve");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout is protocol only; not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut s = Server {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            got: HashMap::new(),
        };
        s.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "approvals-test", "version": "1"}}}),
        );
        s.response(0);
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        // The control socket is up once the CLI reaches this instance.
        wait_for("the control socket", || {
            let out = env.run(&["dev-mode", "status"]);
            out.status.success().then_some(())
        });
        s
    }

    pub fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends tools/call with this id; the answer comes later through `response`.
    pub fn call(&mut self, id: i64, tool: &str, args: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
    }

    /// The response with this id (waits for it).
    pub fn response(&mut self, id: i64) -> Value {
        let start = Instant::now();
        loop {
            if let Some(v) = self.got.remove(&id) {
                return v;
            }
            let left = PATIENCE.saturating_sub(start.elapsed());
            assert!(!left.is_zero(), "no response to request {id}");
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    if let Some(i) = v["id"].as_i64() {
                        self.got.insert(i, v);
                    }
                }
                Err(_) => panic!("no response to request {id}"),
            }
        }
    }

    /// Closes stdin: the client went away.
    pub fn hang_up(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to end.
    pub fn wait(mut self) {
        self.stdin.take();
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < PATIENCE, "archgate did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Whether a tools/call result is a success, and its text.
pub fn result_text(r: &Value) -> (bool, String) {
    let res = &r["result"];
    let text = res["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    (res["isError"] != true && r.get("error").is_none(), text)
}

pub fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

//! Shared by `faults.rs` and `hostile.rs`: the real binary with private XDG directories, an HTTP
//! daemon whose frames and stderr are collected, a raw HTTP/1.1 client on `TcpStream` (so a test
//! can send any Host, Origin or token and drop a connection mid-call), and the audit log.

#![allow(dead_code)] // each test binary uses part of this

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_archgate");

/// A bound against hangs, not a measurement.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Private XDG directories (and a scratch area) under one temporary directory.
pub struct Env {
    pub root: tempfile::TempDir,
    /// More variables for every process started.
    pub vars: Vec<(String, String)>,
}

impl Env {
    pub fn new(config: &str) -> Env {
        let root = tempfile::tempdir().expect("temp dir");
        for d in ["config/archgate", "state", "runtime", "cache", "scratch"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.path().join("runtime"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        let env = Env {
            root,
            vars: Vec::new(),
        };
        env.write_config(config);
        env
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    pub fn config_file(&self) -> PathBuf {
        self.path("config/archgate/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        std::fs::write(self.config_file(), text).unwrap();
    }

    /// `$XDG_STATE_HOME/archgate`.
    pub fn state_dir(&self) -> PathBuf {
        self.path("state/archgate")
    }

    pub fn audit_file(&self) -> PathBuf {
        self.state_dir().join("activity.jsonl")
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("token"))
            .expect("token file")
            .trim()
            .to_owned()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_remove("ARCHGATE_CONFIG")
            .env_remove("ARCHGATE_LOG")
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("SWAYSOCK")
            .env_remove("HYPRLAND_INSTANCE_SIGNATURE")
            .env_remove("OMARCHY_PATH")
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_RUNTIME_DIR", self.path("runtime"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("HOME", self.path("scratch"))
            .stdin(Stdio::null());
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// Runs a one-shot command to its end, bounded by `PATIENCE` (killed and failed past it).
    pub fn run(&self, args: &[&str]) -> Output {
        let mut child = self
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run archgate");
        let read = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut b = Vec::new();
                let _ = r.read_to_end(&mut b);
                b
            })
        };
        let out = read(Box::new(child.stdout.take().unwrap()));
        let err = read(Box::new(child.stderr.take().unwrap()));
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().expect("wait") {
                break s;
            }
            if start.elapsed() > PATIENCE {
                let _ = child.kill();
                let _ = child.wait();
                panic!("archgate {args:?} did not finish within {PATIENCE:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Output {
            status,
            stdout: out.join().unwrap(),
            stderr: err.join().unwrap(),
        }
    }

    /// `archgate call TOOL ARGS`: the result JSON (stdout), the exit status and stderr.
    pub fn call(&self, tool: &str, args: &Value) -> (Value, Output) {
        let out = self.run(&["call", tool, &args.to_string()]);
        let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "archgate call {tool} {args}: stdout is not JSON ({e}); stdout {:?}; stderr {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (v, out)
    }

    /// Every line of the activity log, parsed (a line that is not JSON fails the test).
    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.audit_file())
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// Call records only (no events).
    pub fn calls(&self) -> Vec<Value> {
        self.audit()
            .into_iter()
            .filter(|r| r.get("event").is_none())
            .collect()
    }
}

/// The outcome a tools/call result reports: `ok`, or the outcome of an error result.
pub fn outcome(result: &Value) -> String {
    if result["isError"] == true {
        result["structuredContent"]["outcome"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned()
    } else {
        "ok".to_owned()
    }
}

/// Polls `f` every 50 ms until it gives a value, at most `PATIENCE`.
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

/// `archgate serve --http --port 0`; stdout frames and stderr kept as they come.
pub struct Daemon {
    pub child: Child,
    pub port: u16,
    pub stderr: Arc<Mutex<String>>,
    pub frames: Arc<Mutex<Vec<Value>>>,
}

impl Daemon {
    pub fn start(env: &Env) -> Daemon {
        Daemon::spawn(env.command(&["serve", "--http", "--port", "0"]))
    }

    /// Starts `serve --http` from a prepared command (e.g. under `prlimit`).
    pub fn spawn(mut command: Command) -> Daemon {
        let mut child = command
            .env("ARCHGATE_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn archgate serve --http");
        let stderr = Arc::new(Mutex::new(String::new()));
        {
            let pipe = child.stderr.take().unwrap();
            let stderr = stderr.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    let mut s = stderr.lock().unwrap();
                    s.push_str(&line);
                    s.push('\n');
                }
            });
        }
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).expect("read the first frame");
        let frame: Value = serde_json::from_str(&first).unwrap_or(Value::Null);
        assert_eq!(
            frame["event"],
            "listening",
            "archgate did not listen: {first:?}; stderr: {}",
            stderr.lock().unwrap()
        );
        let port = frame["port"].as_u64().expect("port") as u16;
        let frames = Arc::new(Mutex::new(Vec::new()));
        {
            let frames = frames.clone();
            std::thread::spawn(move || {
                for line in out.lines() {
                    let Ok(line) = line else { break };
                    if let Ok(v) = serde_json::from_str(&line) {
                        frames.lock().unwrap().push(v);
                    }
                }
            });
        }
        Daemon {
            child,
            port,
            stderr,
            frames,
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    pub fn health(&self) -> Value {
        let r = send(self.port, &Request::get("/health"));
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    /// A stateless-era (2026-07-28) `tools/call` with the token; the JSON-RPC result.
    pub fn call(&self, token: &str, tool: &str, args: Value) -> Value {
        let r = send(self.port, &call_request(token, tool, args, 1));
        assert_eq!(r.status, 200, "{tool}: HTTP {}: {}", r.status, r.text());
        let msgs = r.messages();
        let m = msgs
            .iter()
            .find(|m| m["id"] == 1)
            .unwrap_or_else(|| panic!("{tool}: no answer in {}", r.text()));
        m["result"].clone()
    }

    /// SIGTERM and wait (bounded).
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid()),
            nix::sys::signal::Signal::SIGTERM,
        );
        let start = Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(start.elapsed() < PATIENCE, "archgate ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub const MODERN: &str = "2026-07-28";

/// The request of a stateless-era `tools/call` with a bearer token.
pub fn call_request(token: &str, tool: &str, args: Value, id: u64) -> Request<'static> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut r = Request::post("/mcp", body.to_string());
    r.headers = vec![
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", MODERN.into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", tool.into()),
    ];
    r
}

#[path = "../e2e/wire.rs"]
mod wire;
#[allow(unused_imports)] // not every test binary opens its own connections
pub use wire::{Request, Response, connect, read_response};

/// Sends one request on a fresh connection and reads the answer to EOF.
pub fn send(port: u16, req: &Request) -> Response {
    req.send(port)
}

/// Pids of live processes whose command line contains `needle` (zombies excluded).
pub fn processes_with(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let state = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = state
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && String::from_utf8_lossy(&cmd).contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// Whether `pid` is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty()
        && !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

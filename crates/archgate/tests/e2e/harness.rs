//! Starting the real binary with private XDG directories: one-shot commands, a stdio server
//! and an HTTP server whose frames (stdout) and logs (stderr) are collected as they come.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_archgate");

/// How long a test waits for something the server should do at once before it fails
/// (a bound against hangs, not a measurement).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Private XDG directories under one temporary directory.
pub struct Env {
    pub root: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let root = tempfile::tempdir().expect("temp dir");
        for d in ["config", "state", "runtime", "cache"] {
            std::fs::create_dir(root.path().join(d)).unwrap();
        }
        Env { root }
    }

    pub fn dir(&self, which: &str) -> PathBuf {
        self.root.path().join(which)
    }

    /// `$XDG_STATE_HOME/archgate`.
    pub fn state_dir(&self) -> PathBuf {
        self.dir("state").join("archgate")
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir("config").join("archgate").join("config.toml")
    }

    pub fn write_config(&self, text: &str) {
        let f = self.config_file();
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("token"))
            .expect("token file")
            .trim()
            .to_owned()
    }

    /// Every record of the activity log, each parsed (a line that is not JSON fails the test).
    pub fn audit_records(&self) -> Vec<serde_json::Value> {
        let text =
            std::fs::read_to_string(self.state_dir().join("activity.jsonl")).unwrap_or_default();
        text.lines()
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line not JSON ({e}): {l}"))
            })
            .collect()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env_remove("ARCHGATE_CONFIG")
            .env_remove("ARCHGATE_LOG")
            .env("XDG_CONFIG_HOME", self.dir("config"))
            .env("XDG_STATE_HOME", self.dir("state"))
            .env("XDG_RUNTIME_DIR", self.dir("runtime"))
            .env("XDG_CACHE_HOME", self.dir("cache"))
            .stdin(Stdio::null());
        c
    }

    /// Runs a one-shot command to its end.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run archgate")
    }
}

/// Lines read from a pipe by a thread, kept as they arrive.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>, Arc<AtomicBool>);

impl Lines {
    fn collect(
        self,
        r: impl std::io::Read + Send + 'static,
        tx: Option<std::sync::mpsc::Sender<String>>,
    ) {
        std::thread::spawn(move || {
            for line in BufReader::new(r).lines() {
                let Ok(line) = line else { break };
                self.0.lock().unwrap().push(line.clone());
                if let Some(tx) = &tx {
                    let _ = tx.send(line);
                }
            }
            self.1.store(true, Ordering::SeqCst);
        });
    }

    /// Waits (bounded) until the pipe reached its end: the process is gone and all it wrote is here.
    pub fn wait_eof(&self) {
        let start = Instant::now();
        while !self.1.load(Ordering::SeqCst) && start.elapsed() < PATIENCE {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub fn joined(&self) -> String {
        self.all().join("\n")
    }
}

/// Sends SIGTERM and waits (bounded) for the process to end; returns its status and how long it took.
pub fn terminate(child: &mut Child) -> (ExitStatus, Duration) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return (status, start.elapsed());
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            panic!("archgate did not stop within {PATIENCE:?} of SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `archgate serve --http --port 0`, found through its listening frame.
pub struct HttpServer {
    pub child: Child,
    pub port: u16,
    pub frames: Lines,
    pub stderr: Lines,
    frame_rx: Receiver<String>,
}

impl HttpServer {
    /// Starts the server and waits for its first frame; `Err` carries that frame when it is not
    /// `listening` (with the process's exit status once it ended).
    pub fn try_start(
        env: &Env,
    ) -> Result<HttpServer, (serde_json::Value, Option<ExitStatus>, String)> {
        let mut child = env
            .command(&["serve", "--http", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn archgate serve --http");
        let frames = Lines::default();
        let stderr = Lines::default();
        let (tx, frame_rx) = channel();
        frames
            .clone()
            .collect(child.stdout.take().unwrap(), Some(tx));
        stderr.clone().collect(child.stderr.take().unwrap(), None);
        let first = match frame_rx.recv_timeout(PATIENCE) {
            Ok(l) => serde_json::from_str::<serde_json::Value>(&l)
                .unwrap_or_else(|e| panic!("first frame is not JSON ({e}): {l}")),
            Err(_) => serde_json::Value::Null,
        };
        if first["event"] == "listening" {
            let port = first["port"].as_u64().expect("port in the listening frame") as u16;
            assert_ne!(port, 0);
            return Ok(HttpServer {
                child,
                port,
                frames,
                stderr,
                frame_rx,
            });
        }
        let status = wait_bounded(&mut child);
        stderr.wait_eof();
        Err((first, status, stderr.joined()))
    }

    pub fn start(env: &Env) -> HttpServer {
        match Self::try_start(env) {
            Ok(s) => s,
            Err((frame, status, stderr)) => {
                panic!(
                    "archgate did not listen: frame {frame}, status {status:?}, stderr:\n{stderr}"
                )
            }
        }
    }

    /// Waits until `n` frames with `"event":"call"` have arrived (they follow the calls).
    pub fn wait_for_call_frames(&self, n: usize) -> Vec<serde_json::Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let calls: Vec<serde_json::Value> = self
                .frames
                .all()
                .iter()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|f| f["event"] == "call")
                .collect();
            if calls.len() >= n {
                return calls;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .frame_rx
                .recv_timeout(left.min(Duration::from_millis(200)))
            {
                Ok(_) | Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                _ => panic!(
                    "expected {n} call frames, have {}: {}",
                    calls.len(),
                    self.frames.joined()
                ),
            }
        }
    }

    pub fn stop(mut self) -> (ExitStatus, Duration, HttpServer) {
        let (status, took) = terminate(&mut self.child);
        self.frames.wait_eof();
        self.stderr.wait_eof();
        (status, took, self)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_bounded(child: &mut Child) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < PATIENCE {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait().ok()
}

/// `archgate serve` over stdio: JSON-RPC lines in, JSON-RPC lines out.
pub struct StdioServer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<String>,
    pub stdout: Lines,
    pub stderr: Lines,
}

impl StdioServer {
    pub fn start(env: &Env) -> StdioServer {
        Self::start_with(env, &["serve"])
    }

    /// `archgate` with these arguments (`serve --client NAME` …) as a stdio server.
    pub fn start_with(env: &Env, args: &[&str]) -> StdioServer {
        let mut child = env
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn archgate serve");
        let stdout = Lines::default();
        let stderr = Lines::default();
        let (tx, out) = channel();
        let pipe: ChildStdout = child.stdout.take().unwrap();
        stdout.clone().collect(pipe, Some(tx));
        stderr.clone().collect(child.stderr.take().unwrap(), None);
        StdioServer {
            stdin: child.stdin.take(),
            child,
            out,
            stdout,
            stderr,
        }
    }

    pub fn send(&mut self, msg: &serde_json::Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write to archgate's stdin");
        stdin.flush().unwrap();
    }

    /// Sends a request and returns the response with its id (messages in between are skipped).
    pub fn request(
        &mut self,
        id: u64,
        method: &str,
        params: serde_json::Value,
    ) -> serde_json::Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.out.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to {method}; stderr:\n{}", self.stderr.joined())
            });
            let v: serde_json::Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Waits for the message with this id (one already sent).
    pub fn wait_for_id(&mut self, id: u64) -> serde_json::Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.out.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to id {id}; stderr:\n{}", self.stderr.joined())
            });
            let v: serde_json::Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// Closes stdin (the client went away) and waits for the server to end on its own.
    pub fn close(mut self) -> (ExitStatus, Vec<String>) {
        drop(self.stdin.take());
        let status = wait_bounded(&mut self.child).expect("archgate ended after stdin closed");
        self.stdout.wait_eof();
        (status, self.stdout.all())
    }
}

pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

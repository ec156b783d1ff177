//! The binary as a process: lines of its pipes collected by threads as they come, a bounded
//! SIGTERM, and `archgate serve --http --port 0` found through its listening frame.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Env, PATIENCE, POLL, Request, Response, call_request, wait_for};

/// Lines read from a pipe by a thread, kept as they arrive.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>, Arc<AtomicBool>);

impl Lines {
    /// Starts the thread that reads `r` to its end (each line also sent to `tx`).
    pub fn collect(self, r: impl std::io::Read + Send + 'static, tx: Option<Sender<String>>) {
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
        wait_for("the end of a pipe", || {
            self.1.load(Ordering::SeqCst).then_some(())
        });
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
        std::thread::sleep(POLL);
    }
}

/// Waits (bounded) for the process to end on its own; past `PATIENCE` it is killed.
pub fn wait_bounded(child: &mut Child) -> Option<ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < PATIENCE {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(POLL);
    }
    let _ = child.kill();
    child.wait().ok()
}

/// `archgate serve --http --port 0`, found through its listening frame; stdout frames and
/// stderr kept as they come.
pub struct HttpServer {
    pub child: Child,
    pub port: u16,
    pub frames: Lines,
    pub stderr: Lines,
    frame_rx: Receiver<String>,
}

/// Why a server did not listen: its first frame, its exit status once it ended, its stderr.
pub type NotListening = (Value, Option<ExitStatus>, String);

impl HttpServer {
    /// Starts the server and waits for its first frame; `Err` carries that frame when it is not
    /// `listening` (with the process's exit status once it ended).
    pub fn try_start(env: &Env) -> Result<HttpServer, NotListening> {
        Self::try_spawn(env.command(&["serve", "--http", "--port", "0"]))
    }

    pub fn start(env: &Env) -> HttpServer {
        Self::spawn(env.command(&["serve", "--http", "--port", "0"]))
    }

    /// Starts `serve --http` from a prepared command (e.g. under `prlimit`).
    pub fn spawn(command: Command) -> HttpServer {
        match Self::try_spawn(command) {
            Ok(s) => s,
            Err((frame, status, stderr)) => {
                panic!(
                    "archgate did not listen: frame {frame}, status {status:?}, stderr:\n{stderr}"
                )
            }
        }
    }

    pub fn try_spawn(mut command: Command) -> Result<HttpServer, NotListening> {
        let mut child = command
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
            Ok(l) => serde_json::from_str::<Value>(&l)
                .unwrap_or_else(|e| panic!("first frame is not JSON ({e}): {l}")),
            Err(_) => Value::Null,
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

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// What the server wrote to stderr so far.
    pub fn log(&self) -> String {
        self.stderr.joined()
    }

    /// `GET /health`, which must answer 200.
    pub fn health(&self) -> Value {
        let r = Request::get("/health").send(self.port);
        assert_eq!(r.status, 200, "{}", r.text());
        r.json()
    }

    /// A stateless-era (2026-07-28) `tools/call` with the token; the JSON-RPC result.
    pub fn call(&self, token: &str, tool: &str, args: Value) -> Value {
        let r: Response = call_request(token, tool, args, 1).send(self.port);
        assert_eq!(r.status, 200, "{tool}: HTTP {}: {}", r.status, r.text());
        let msgs = r.messages();
        let m = msgs
            .iter()
            .find(|m| m["id"] == 1)
            .unwrap_or_else(|| panic!("{tool}: no answer in {}", r.text()));
        m["result"].clone()
    }

    /// Waits until `n` frames with `"event":"call"` have arrived (they follow the calls).
    pub fn wait_for_call_frames(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let calls: Vec<Value> = self
                .frames
                .all()
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|f| f["event"] == "call")
                .collect();
            if calls.len() >= n {
                return calls;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.frame_rx.recv_timeout(left.min(POLL * 10)) {
                Ok(_) | Err(RecvTimeoutError::Timeout) if Instant::now() < deadline => {}
                _ => panic!(
                    "expected {n} call frames, have {}: {}",
                    calls.len(),
                    self.frames.joined()
                ),
            }
        }
    }

    /// SIGTERM, wait (bounded) for the end and for all it wrote; its status and how long it took.
    pub fn stop(&mut self) -> (ExitStatus, Duration) {
        let (status, took) = terminate(&mut self.child);
        self.frames.wait_eof();
        self.stderr.wait_eof();
        (status, took)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `pid` is alive (and not a zombie).
pub fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !zombie(&stat)
}

fn zombie(stat: &str) -> bool {
    stat.rsplit_once(')')
        .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
}

/// A child process a test started, ended when the test ends however it ends (a failed assertion
/// included): SIGTERM, up to `PATIENCE` to exit, then SIGKILL; always reaped.
pub struct Reap(pub Child);

impl std::ops::Deref for Reap {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl Drop for Reap {
    fn drop(&mut self) {
        if !matches!(self.0.try_wait(), Ok(None)) {
            return;
        }
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let until = Instant::now() + PATIENCE;
        while Instant::now() < until && matches!(self.0.try_wait(), Ok(None)) {
            std::thread::sleep(POLL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

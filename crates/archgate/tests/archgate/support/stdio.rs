//! `archgate serve` over stdio: JSON-RPC lines in, JSON-RPC lines out, answers kept by id as
//! they come (stdout is the protocol only: a line that is not JSON fails the test).

use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Instant;

use super::{Env, Lines, PATIENCE, PROTOCOL, wait_bounded, wait_for};

pub struct StdioServer {
    pub child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<String>,
    got: HashMap<u64, Value>,
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
        stdout
            .clone()
            .collect(child.stdout.take().unwrap(), Some(tx));
        stderr.clone().collect(child.stderr.take().unwrap(), None);
        StdioServer {
            stdin: child.stdin.take(),
            child,
            out,
            got: HashMap::new(),
            stdout,
            stderr,
        }
    }

    /// `archgate serve` with an initialized MCP session (initialize was id 0).
    pub fn initialized(env: &Env) -> StdioServer {
        let mut s = Self::start(env);
        s.request(
            0,
            "initialize",
            json!({"protocolVersion": PROTOCOL, "capabilities": {},
                   "clientInfo": {"name": "archgate-e2e", "version": "0.0.0"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    /// An initialized session, once the CLI reaches the server's control socket.
    pub fn session(env: &Env) -> StdioServer {
        let s = Self::initialized(env);
        wait_for("the control socket", || {
            env.run(&["dev-mode", "status"])
                .status
                .success()
                .then_some(())
        });
        s
    }

    pub fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").expect("write to archgate's stdin");
        stdin.flush().unwrap();
    }

    /// Sends a request and returns the response with its id.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// Sends tools/call with this id; the answer comes later through `response`.
    pub fn call(&mut self, id: u64, tool: &str, args: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}));
    }

    /// The message with this id (one already sent); others that come first are kept for later.
    pub fn response(&mut self, id: u64) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(v) = self.got.remove(&id) {
                return v;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.out.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to id {id}; stderr:\n{}", self.stderr.joined())
            });
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout is protocol only; not JSON ({e}): {line}"));
            if let Some(i) = v["id"].as_u64() {
                self.got.insert(i, v);
            }
        }
    }

    /// Closes stdin: the client went away.
    pub fn hang_up(&mut self) {
        self.stdin.take();
    }

    /// Closes stdin and waits for the server to end on its own: its status and every stdout line.
    pub fn close(mut self) -> (ExitStatus, Vec<String>) {
        self.hang_up();
        let status = wait_bounded(&mut self.child).expect("archgate ended after stdin closed");
        self.stdout.wait_eof();
        (status, self.stdout.all())
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

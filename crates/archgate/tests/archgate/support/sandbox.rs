//! Private XDG directories (and a scratch `HOME`) under one temporary directory, the commands
//! that run the binary inside them, and what archgate leaves there: the token, the activity log,
//! the pending approvals.

use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use super::{BIN, PATIENCE, POLL, wait_for};

/// Variables of the machine's own session that would reach past the sandbox.
const OUTSIDE: [&str; 7] = [
    "ARCHGATE_CONFIG",
    "ARCHGATE_LOG",
    "DBUS_SESSION_BUS_ADDRESS",
    "WAYLAND_DISPLAY",
    "SWAYSOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "OMARCHY_PATH",
];

pub struct Env {
    pub root: tempfile::TempDir,
    /// More variables for every process started (a test's D-Bus session, a fake tool's path).
    pub vars: Vec<(String, String)>,
}

impl Env {
    /// The directories, no config file.
    pub fn new() -> Env {
        let root = tempfile::tempdir().expect("temp dir");
        for d in ["config", "state", "runtime", "cache", "scratch"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.path().join("runtime"),
            std::fs::Permissions::from_mode(0o700),
        )
        .unwrap();
        Env {
            root,
            vars: Vec::new(),
        }
    }

    /// The directories and `config` as `$XDG_CONFIG_HOME/archgate/config.toml`.
    pub fn with_config(config: &str) -> Env {
        let env = Env::new();
        env.write_config(config);
        env
    }

    /// A config whose `server.port` nothing listens on (bound and released), so commands that
    /// look for a running archgate never find the machine's own one on the default port 8765.
    pub fn hermetic() -> Env {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        Env::with_config(&format!("[server]\nport = {port}\n"))
    }

    /// A path under the temporary directory (`config`, `runtime`, `scratch/…`).
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.path().join(rel)
    }

    pub fn config_file(&self) -> PathBuf {
        self.path("config/archgate/config.toml")
    }

    pub fn write_config(&self, text: &str) {
        let f = self.config_file();
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, text).unwrap();
    }

    /// `$XDG_STATE_HOME/archgate`.
    pub fn state_dir(&self) -> PathBuf {
        self.path("state/archgate")
    }

    /// `$XDG_RUNTIME_DIR/archgate`.
    pub fn runtime_dir(&self) -> PathBuf {
        self.path("runtime/archgate")
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

    /// Points `c` into the sandbox: the XDG directories, `HOME`, none of the machine's session,
    /// no polkit and no system bus whatever the machine runs ([`super::world`]), stdin closed,
    /// then `vars`.
    pub fn sandbox<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        for k in OUTSIDE {
            c.env_remove(k);
        }
        c.env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("XDG_RUNTIME_DIR", self.path("runtime"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("HOME", self.path("scratch"))
            .env("LD_PRELOAD", super::world::no_polkit())
            .stdin(Stdio::null());
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// `archgate ARGS` in the sandbox.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args);
        self.sandbox(&mut c);
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
            std::thread::sleep(POLL);
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
            .map(|l| {
                serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line not JSON ({e}): {l}"))
            })
            .collect()
    }

    /// Call records only (no events).
    pub fn calls(&self) -> Vec<Value> {
        self.audit()
            .into_iter()
            .filter(|r| r.get("event").is_none())
            .collect()
    }

    /// The record of the call with this id, once it is written.
    pub fn audit_of(&self, id: &str) -> Value {
        wait_for(&format!("the audit record of {id}"), || {
            self.calls().into_iter().find(|r| r["id"] == id)
        })
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

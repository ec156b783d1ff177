//! Private XDG directories (and a scratch `HOME`) under one temporary directory, the commands
//! that run the binary inside them, and what archgate leaves there: the token, the activity log,
//! the pending approvals.

use serde_json::Value;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use super::{BIN, PATIENCE, POLL, wait_for};

/// Whether this machine would make a normal user's archgate ask polkit for every yes: archgate's
/// actions installed (what the Arch package does) and the tests not run as root.
pub fn polkit_asks_here() -> bool {
    !nix::unistd::geteuid().is_root()
        && std::path::Path::new("/usr/share/polkit-1/actions/org.archgate.policy").exists()
}

/// A config as a test wrote it, for this machine. Where [`polkit_asks_here`], a normal user's
/// archgate (presence `auto`) asks polkit for every yes and no agent answers in a test, so a
/// config that does not choose `presence` gets `presence = "off"` — what `auto` amounts to on a
/// machine without polkit, as in CI. Tests about presence choose it themselves; as root, or
/// without the actions, the text is written as it is.
fn presence_for_tests(text: &str) -> String {
    if !polkit_asks_here() || text.contains("presence") {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 32);
    let mut done = false;
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if !done && line.trim() == "[approval]" {
            if !line.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("presence = \"off\"\n");
            done = true;
        }
    }
    if !done {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("[approval]\npresence = \"off\"\n");
    }
    out
}

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
    /// A program and arguments every archgate runs under (see [`Env::without_system_bus`]).
    wrapper: Vec<String>,
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
            wrapper: Vec::new(),
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
        std::fs::write(f, presence_for_tests(text)).unwrap();
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
    /// stdin closed, then `vars`.
    pub fn sandbox<'c>(&self, c: &'c mut Command) -> &'c mut Command {
        for k in OUTSIDE {
            c.env_remove(k);
        }
        c.env("XDG_CONFIG_HOME", self.path("config"))
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

    /// Every archgate started from here sees no system bus and no polkit, whatever the machine
    /// runs: a world with no polkit, made here rather than assumed. archgate only ever uses the
    /// well-known `/run/dbus/system_bus_socket` and judges whether polkit is expected from
    /// archgate's actions file in `/usr/share/polkit-1/actions` (what the Arch package installs),
    /// so when either exists each process runs in a mount namespace of its own with an empty
    /// tmpfs over `/run/dbus` and over that directory (a machine with polkitd running and the
    /// actions installed is otherwise a world where polkit is expected and unreachable). As a normal user that takes a user namespace
    /// (mount(8) wants uid 0 there), and a second one inside it maps the caller's uid and gid back,
    /// so archgate runs as itself; root's files then show as unmapped (65534), which is fine for
    /// a test in which nothing is run. With no such socket the machine is that world already.
    pub fn without_system_bus(&mut self) {
        let bus = std::path::Path::new("/run/dbus/system_bus_socket").exists();
        let actions = std::path::Path::new("/usr/share/polkit-1/actions").is_dir();
        if !bus && !actions {
            return;
        }
        let hide = "for d in /run/dbus /usr/share/polkit-1/actions; do \
                    [ -d \"$d\" ] || continue; \
                    mount -t tmpfs -o mode=0755 archgate-no-polkit \"$d\" || exit 97; \
                    done; exec \"$@\"";
        let mut w: Vec<String> = ["unshare", "--mount", "--propagation", "private"]
            .map(String::from)
            .to_vec();
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        if !uid.is_root() {
            w.extend(["--user", "--map-root-user"].map(String::from));
        }
        w.extend(["sh", "-c", hide, "archgate-no-system-bus"].map(String::from));
        if !uid.is_root() {
            w.extend([
                "unshare".to_owned(),
                "--user".to_owned(),
                format!("--map-user={uid}"),
                format!("--map-group={gid}"),
            ]);
        }
        self.wrapper = w;
    }

    /// `archgate ARGS` in the sandbox.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = match self.wrapper.split_first() {
            Some((program, rest)) => {
                let mut c = Command::new(program);
                c.args(rest).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
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

//! What the HTTP load benches share: the real `archgate serve --http` in private XDG
//! directories, one-shot CLI commands against the same directories, CPU time of a process, and
//! latency summaries. The MCP client itself is in `mcp.rs`.

// Benches start the real binary and its CLI, like the tests do; only here.
#![allow(clippy::disallowed_methods, dead_code)]

pub mod mcp;
pub mod standin;

use anyhow::{Context, bail};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_archgate");

/// A bound against hangs, not a measurement.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// Private XDG directories with a config file: every process the bench starts uses them.
pub struct Home {
    root: tempfile::TempDir,
}

impl Home {
    /// `config` goes to `$XDG_CONFIG_HOME/archgate/config.toml`.
    pub fn new(config: &str) -> anyhow::Result<Home> {
        let root = tempfile::Builder::new()
            .prefix("archgate-bench-")
            .tempdir()?;
        for d in ["config/archgate", "state", "runtime", "cache"] {
            std::fs::create_dir_all(root.path().join(d))?;
        }
        std::fs::set_permissions(
            root.path().join("runtime"),
            std::fs::Permissions::from_mode(0o700),
        )?;
        std::fs::write(root.path().join("config/archgate/config.toml"), config)?;
        Ok(Home { root })
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        let r = self.root.path();
        c.args(args)
            .env_remove("ARCHGATE_CONFIG")
            .env_remove("ARCHGATE_LOG")
            // No desktop: notifications and the approval page's browser stay out of the figures.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("WAYLAND_DISPLAY")
            .env("XDG_CONFIG_HOME", r.join("config"))
            .env("XDG_STATE_HOME", r.join("state"))
            .env("XDG_RUNTIME_DIR", r.join("runtime"))
            .env("XDG_CACHE_HOME", r.join("cache"))
            .stdin(Stdio::null());
        c
    }

    /// Runs a CLI command to its end; a failure is an error carrying its output.
    pub fn run(&self, args: &[&str]) -> anyhow::Result<Output> {
        let out = self
            .command(args)
            .output()
            .with_context(|| format!("run archgate {args:?}"))?;
        if !out.status.success() {
            bail!(
                "archgate {args:?} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(out)
    }

    /// `archgate clients add NAME --preset P [--tools a,b]`; returns the token it prints once.
    pub fn add_client(&self, name: &str, preset: &str, tools: &[&str]) -> anyhow::Result<String> {
        let joined = tools.join(",");
        let mut args = vec!["clients", "add", name, "--preset", preset];
        if !tools.is_empty() {
            args.extend(["--tools", &joined]);
        }
        let out = self.run(&args)?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.split_whitespace()
            .find(|w| w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_owned)
            .with_context(|| format!("no token in the output of clients add: {text}"))
    }

    /// What the server wrote to stderr.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.path().join("serve.log")).unwrap_or_default()
    }
}

/// `archgate serve --http --port 0`, found through its listening frame. Its stdout (one frame
/// per call) is drained by a thread so the pipe never fills; stderr goes to `serve.log`.
pub struct Server {
    child: Child,
    pub port: u16,
    stderr_file: PathBuf,
}

impl Server {
    pub fn start(home: &Home) -> anyhow::Result<Server> {
        let stderr_file = home.path().join("serve.log");
        let mut child = home
            .command(&["serve", "--http", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr_file)?)
            .spawn()
            .context("spawn archgate serve --http")?;
        let mut lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let first = lines.next().transpose()?.unwrap_or_default();
        let frame: serde_json::Value = serde_json::from_str(&first).unwrap_or_default();
        if frame["event"] != "listening" {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "archgate did not listen: first frame {first:?}; stderr:\n{}",
                std::fs::read_to_string(&stderr_file).unwrap_or_default()
            );
        }
        let port = frame["port"].as_u64().context("port in the frame")? as u16;
        std::thread::spawn(move || for _ in lines.map_while(Result::ok) {});
        Ok(Server {
            child,
            port,
            stderr_file,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `/health`, parsed.
    pub async fn health(&self, http: &reqwest::Client) -> anyhow::Result<serde_json::Value> {
        let r = http
            .get(format!("http://127.0.0.1:{}/health", self.port))
            .send()
            .await?
            .error_for_status()?;
        Ok(r.json().await?)
    }

    /// SIGTERM, then a bounded wait (SIGKILL after it).
    pub fn stop(mut self) {
        self.terminate();
    }

    fn terminate(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        eprintln!(
            "archgate did not stop within 10 s of SIGTERM; killed. Log: {}",
            self.stderr_file.display()
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.terminate();
        }
    }
}

/// User + system CPU seconds a process has used (`/proc/PID/stat`, in USER_HZ = 100 on Linux).
pub fn cpu_seconds(pid: Option<u32>) -> f64 {
    let path = match pid {
        Some(p) => format!("/proc/{p}/stat"),
        None => "/proc/self/stat".to_owned(),
    };
    let Ok(stat) = std::fs::read_to_string(path) else {
        return f64::NAN;
    };
    // Fields after the command name (which may hold spaces) start at field 3.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        f.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    (ticks(11) + ticks(12)) / 100.0
}

/// The machine's load average, as `uptime` shows it.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// Latency figures of one set of samples (nearest-rank percentiles).
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub n: usize,
    pub p50: Duration,
    pub p90: Duration,
    pub p99: Duration,
    pub max: Duration,
    pub mean: Duration,
}

impl Summary {
    pub fn of(samples: &[Duration]) -> Summary {
        let mut s = samples.to_vec();
        s.sort_unstable();
        let pick = |p: f64| -> Duration {
            if s.is_empty() {
                return Duration::ZERO;
            }
            let rank = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len());
            s[rank - 1]
        };
        let total: Duration = s.iter().sum();
        Summary {
            n: s.len(),
            p50: pick(0.50),
            p90: pick(0.90),
            p99: pick(0.99),
            max: s.last().copied().unwrap_or_default(),
            mean: if s.is_empty() {
                Duration::ZERO
            } else {
                total / s.len() as u32
            },
        }
    }
}

/// Milliseconds with two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

/// A positive number from the environment, or the default.
pub fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

/// Config lines that point every online service at `base` (the stand-in): loopback only; and
/// pacman at `pacman_conf` when given.
pub fn offline_services(base: &str, pacman_conf: Option<&Path>) -> String {
    let conf = pacman_conf.map_or(String::new(), |p| {
        format!("pacman_conf = \"{}\"\n", p.display())
    });
    format!(
        "[arch]\n{conf}aur_url = \"{base}\"\npackages_url = \"{base}\"\nnews_url = \"{base}/feeds/news/\"\n\
         [wiki]\nurl = \"{base}\"\nprefer = \"offline_only\"\n"
    )
}

/// A small pacman world in the real on-disk formats (sync DBs, a local DB with file lists, a
/// pacman.conf), made by the repository's own generator `bench/pacman/generate.py`, so pacman
/// tools answer from databases as on Arch; returns its pacman.conf.
pub fn pacman_world(dir: &Path, packages: usize, installed: usize) -> anyhow::Result<PathBuf> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../bench/pacman/generate.py"
    );
    let out = Command::new("python3")
        .arg(script)
        .arg(dir)
        .args(["--packages", &packages.to_string()])
        .args(["--installed", &installed.to_string()])
        .stdin(Stdio::null())
        .output()
        .context("run python3 bench/pacman/generate.py")?;
    if !out.status.success() {
        bail!(
            "generate.py failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(dir.join("pacman.conf"))
}

/// The MCP era to speak, from `BENCH_ERA` (`stateful`, the default, or `stateless`).
pub fn era() -> anyhow::Result<mcp::Era> {
    match std::env::var("BENCH_ERA").as_deref() {
        Err(_) | Ok("") | Ok("stateful") => Ok(mcp::Era::Stateful),
        Ok("stateless") => Ok(mcp::Era::Stateless),
        Ok(other) => bail!("BENCH_ERA={other}: expected stateful or stateless"),
    }
}

//! The one harness of archgate's integration tests: private XDG directories (`sandbox`), the real
//! binary as a process whose output is collected as it comes (`process`: one-shot commands and
//! `serve --http`), MCP over stdio (`stdio`), raw HTTP/1.1 on a `TcpStream` (`wire`) and MCP over
//! HTTP (`mcp`). One bound against hangs (`PATIENCE`) and one polling step (`POLL`) for every
//! wait of every test.

pub mod mcp;
pub mod omarchy;
pub mod process;
pub mod run_log;
pub mod sandbox;
pub mod session;
pub mod stdio;
pub mod wire;
pub mod world;

pub use mcp::*;
pub use omarchy::*;
pub use process::*;
pub use run_log::RunLog;
pub use sandbox::*;
pub use stdio::*;
pub use wire::*;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_archgate");

/// How long a test waits for something archgate should do at once before it fails: a bound
/// against hangs on a loaded machine, not a measurement.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The step of every polling wait.
pub const POLL: Duration = Duration::from_millis(20);

/// Polls `f` every `POLL` until it gives a value; fails the test after `PATIENCE`.
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "timed out after {PATIENCE:?} waiting for {what}"
        );
        std::thread::sleep(POLL);
    }
}
/// The approval page's port, from the URL file the daemon writes in its runtime directory (the
/// page binds port 0 in tests: `page_port = 0`).
pub fn page_port(env: &Env) -> u16 {
    wait_for("the page's URL file", || {
        std::fs::read_dir(env.runtime_dir())
            .ok()?
            .flatten()
            .find_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if !(name.starts_with("page-") && name.ends_with(".url")) {
                    return None;
                }
                let url = std::fs::read_to_string(e.path()).ok()?;
                url.trim()
                    .trim_end_matches('/')
                    .rsplit(':')
                    .next()?
                    .parse()
                    .ok()
            })
    })
}

/// A finished process's stdout and stderr, one after the other.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The permission bits of a file (with set-id and sticky bits).
pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The repository root (crates/archgate/../..).
pub fn repo() -> PathBuf {
    crate::manifest_dir()
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

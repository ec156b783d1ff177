//! Helpers shared by these tests: the repository root, output as text, golden comparison.

use std::path::PathBuf;
use std::process::Output;

/// The repository root (crates/archgate/../..).
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

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

/// Compares `actual` with `tests/home/golden/NAME`. `ARCHGATE_BLESS=1` rewrites the file instead
/// (then review the diff).
pub fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/home/golden")
        .join(name);
    if std::env::var_os("ARCHGATE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("golden file {} ({e})", path.display()));
    assert_eq!(
        actual,
        want,
        "output differs from {} (ARCHGATE_BLESS=1 rewrites it)",
        path.display()
    );
}

/// Polls `f` until it answers, for at most 30 s (a bound against hangs, not a measurement).
pub fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < crate::harness::PATIENCE,
            "gave up waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Private XDG directories and a config whose `server.port` nothing listens on (bound and
/// released), so commands that look for a running archgate never find the machine's own one
/// on the default port 8765.
pub fn hermetic_env() -> crate::harness::Env {
    let env = crate::harness::Env::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    env.write_config(&format!("[server]\nport = {port}\n"));
    env
}

/// Something that answers `GET /health` like a serving archgate, on a fixed port, for as long
/// as it lives. `on` returns `None` when the port is taken (then whatever holds it plays the
/// part).
pub struct FakeArchgate {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FakeArchgate {
    pub fn on(port: u16) -> Option<FakeArchgate> {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
        listener.set_nonblocking(true).ok()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                        let mut buf = [0u8; 4096];
                        let _ = s.read(&mut buf);
                        let body =
                            r#"{"name":"archgate","status":"serving","version":"0.0.0-fake"}"#;
                        let _ = write!(
                            s,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
                }
            }
        });
        Some(FakeArchgate { stop })
    }
}

impl Drop for FakeArchgate {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

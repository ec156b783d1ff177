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

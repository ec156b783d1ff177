//! Integration tests of archgate-desktop, one binary: a fake Hyprland socket serving several
//! releases' JSON, Omarchy's registry and Quickshell IPC from snapshot files, and a real headless
//! Sway desktop (started once by `scripts/desktop-session.sh`, shared through its lock file).

mod common;
mod hyprland;
mod omarchy;
mod photo;
mod quickshell;
mod session;
mod theme;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

//! Integration tests of archgate-pacman against the real pacman tools (one test binary).
//!
//! These tests spawn processes: real `pacman`, `vercmp` and the fixture script are the oracle
//! archgate's answers are compared with. Only tests may do that outside crates/exec.
#![allow(clippy::disallowed_methods)]

mod cache;
mod conf_lines;
mod errors;
mod health_world;
mod integrity;
mod moved;
mod oracle;
mod pacnew;
mod remote;
mod support;
mod updates;
mod upkeep;
mod vercmp_table;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

//! Integration tests of archgate-core (the one test binary of this crate): the gate end to end
//! inside one process, and tidy checks on the workspace's source.

mod config;
mod gate;
mod tidy;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

//! Integration tests of archgate-exec against real programs and real process groups (the one
//! test binary of this crate).
//!
//! The programs under test are ordinary binaries in /usr/bin. Where a test needs a program that
//! misbehaves (forks helpers that ignore SIGTERM, writes a lot), it runs `/usr/bin/sh -c SCRIPT`:
//! that is an argv given to an allowed binary, which is exactly what archgate permits.

mod arg0;
mod environment;
mod groups;
mod once_open;
mod output;
mod permit;
mod person;
mod pinning;
mod search;
mod support;
mod tidy;
mod trust;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

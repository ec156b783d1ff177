//! Integration tests of archgate-wiki (the one test binary of this crate): one module per topic,
//! and the helpers they share.

mod convert;
mod facade;
mod news;
mod offline;
mod online;
mod server;

use std::path::PathBuf;

/// The crate's fixture directory.
pub fn fixtures() -> PathBuf {
    crate::manifest_dir().join("tests/fixtures")
}

/// Copies a directory tree (fixtures are copied before tests change them).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

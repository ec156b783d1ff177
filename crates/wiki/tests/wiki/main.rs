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
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
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

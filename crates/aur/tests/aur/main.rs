//! Integration tests of archgate-aur (the one test binary of this crate).

mod support;

mod blind_spots;
mod client;
mod commit_binding;
mod corpus_eval;
mod garbage;
mod git_repo;
mod helpers;
mod misfires;
mod misfires_attack29;
mod misfires_attack30;
mod misfires_attack31;
mod misfires_attack31b;
mod misfires_attack31c;
mod misfires_attack32;
mod misfires_landing2;
mod misfires_landing3;
mod misfires_landing4;
mod misfires_landing5;
mod misfires_landing6;
mod misfires_landing7;
mod misfires_landing8;
mod misfires_landing9;
mod misfires_unseen;
mod ops;
mod rules;
mod scriptlet_paths;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

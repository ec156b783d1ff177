//! Invariants of the source tree, checked under `cargo test` (rust-analyzer's tidy, in small).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if p.is_dir() {
            if name != "target"
                && !name.starts_with('.')
                && name != "node_modules"
                && name != "fuzz"
            {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(workspace()).unwrap().display().to_string()
}

/// Only the gate issues permits: without one no tool can start a program.
#[test]
fn permits_are_issued_only_by_the_gate() {
    let needle = ["__issued", "_by_gate("].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            let r = rel(p);
            t.contains(&needle)
                && r != "crates/core/src/gate/mod.rs"
                && !r.starts_with("crates/exec/")
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "permits issued outside the gate: {offenders:?}"
    );
}

/// Every source file says what it is about in its first line.
#[test]
fn every_source_file_starts_with_a_module_doc() {
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, t)| {
            let first = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("#!["))
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "files without a //! header: {offenders:?}"
    );
}

/// Only archgate-exec may depend on spawning; no crate silences the lint wholesale.
#[test]
fn spawn_lint_is_allowed_only_in_exec_and_tests() {
    let needle = ["allow(clippy::", "disallowed_methods)"].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            let r = rel(p);
            t.contains(&needle)
                && !r.starts_with("crates/exec/src/")
                && !r.contains("/tests/")
                && !r.contains("/benches/")
                && !r.contains("/examples/")
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "process spawning allowed outside exec: {offenders:?}"
    );
}

/// No unsafe anywhere: each crate root forbids it (the workspace lint does too).
#[test]
fn no_unsafe_blocks() {
    let needle = ["unsafe", " {"].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, t)| t.contains(&needle))
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

//! Tidy checks on the workspace's source: who may start programs without a gate permit.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let name = e.file_name();
        if name == "target" || name == "node_modules" || name.to_string_lossy().starts_with('.') {
            continue;
        }
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `spawn_for_person`, `run_for_person` and `become_for_person` launch without a permit, so only the person's own CLI
/// commands may use them — never a tool, the gate, a server or another crate.
#[test]
fn only_the_cli_commands_spawn_for_the_person() {
    let crates = crate::manifest_dir().join("..");
    let crates = crates.canonicalize().unwrap();
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    assert!(
        files.len() > 20,
        "found too few sources under {}",
        crates.display()
    );
    let allowed = [
        crates.join("exec/src"),
        // The crate's own tests of these functions.
        crates.join("exec/tests"),
        crates.join("archgate/src/commands"),
        // A notification's default action: the person's own click opens the approval page in
        // their browser (`xdg-open` on a login file archgate wrote), as `archgate ui` does.
        crates.join("archgate/src/channels/notify.rs"),
    ];
    let mut offenders = Vec::new();
    for f in &files {
        if f.ends_with("exec/tests/tidy.rs") {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let uses = text.contains("spawn_for_person")
            || text.contains("run_for_person")
            || text.contains("become_for_person");
        if uses && !allowed.iter().any(|a| f.starts_with(a)) {
            offenders.push(f.display().to_string());
        }
    }
    assert!(
        offenders.is_empty(),
        "spawn_for_person/run_for_person/become_for_person are for the person's CLI commands only; also used in: {offenders:?}"
    );
}

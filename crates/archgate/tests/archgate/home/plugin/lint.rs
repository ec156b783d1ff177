//! qmllint is clean on the plugin, against type stubs of what it imports.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{repo, text};

use super::*;

fn qmllint() -> PathBuf {
    for p in [
        "/usr/lib/qt6/bin/qmllint",
        "/usr/bin/qmllint6",
        "/usr/bin/qmllint",
    ] {
        if Path::new(p).is_file() {
            return p.into();
        }
    }
    panic!("qmllint not found (Debian: qt6-declarative-dev-tools; Arch: qt6-declarative)");
}

/// qmllint's warnings for `files`, minus Debian's missing jsroot.qmltypes (only in the -dev
/// package; it affects no check here).
fn lint(dir: &Path, files: &[&str]) -> Vec<String> {
    let stubs = repo().join("tests/plugin/qml-stubs");
    let out = Command::new(qmllint())
        .current_dir(dir)
        .arg("--json")
        .arg("-")
        .arg("-I")
        .arg(&stubs)
        .args(files)
        .output()
        .expect("qmllint runs");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("qmllint --json ({e}): {}", text(&out)));
    let mut warnings = Vec::new();
    for f in report["files"].as_array().unwrap() {
        for w in f["warnings"].as_array().unwrap() {
            let msg = w["message"].as_str().unwrap_or("");
            if msg.starts_with("Warnings occurred while importing base modules")
                || msg.starts_with("Failed to find the following builtins: jsroot.qmltypes")
            {
                continue;
            }
            if w["type"] == "info" {
                continue;
            }
            warnings.push(format!(
                "{}:{}: {msg}",
                f["filename"].as_str().unwrap_or(""),
                w["line"]
            ));
        }
    }
    warnings
}

#[test]
fn qmllint_is_clean_on_the_plugin() {
    let dir = repo().join("plugin");
    let warnings = lint(&dir, &["Service.qml", "BarWidget.qml", "Panel.qml"]);
    assert!(warnings.is_empty(), "qmllint:\n{}", warnings.join("\n"));

    // The check has teeth: a misspelt property and a wrong handler are caught.
    let tmp = tempfile::tempdir().unwrap();
    let broken = qml("Service.qml")
        .replace("watchChanges: true", "watchChange: true")
        .replace(
            "onExited: function(exitCode, exitStatus) { root.exited(exitCode) }",
            "onFinished: root.exited(0)",
        );
    std::fs::write(tmp.path().join("Service.qml"), broken).unwrap();
    let warnings = lint(tmp.path(), &["Service.qml"]);
    assert!(
        warnings.iter().any(|w| w.contains("watchChange")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.contains("onFinished")),
        "{warnings:?}"
    );
}

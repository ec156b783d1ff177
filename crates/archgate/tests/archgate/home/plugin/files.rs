//! What the plugin writes (only under archgate's runtime and state directories) and its
//! manifest (the checks `omarchy plugin add` makes).

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::repo;

use super::*;

/// Omarchy reloads the shell on any write under its plugins directory: the QML writes only the
/// two files under archgate's runtime and state directories, and runs nothing that could write
/// elsewhere.
#[test]
fn the_plugin_never_writes_inside_its_own_directory() {
    let service = qml("Service.qml");
    let bar = qml("BarWidget.qml");
    let panel = qml("Panel.qml");
    for (name, src) in [
        ("Service.qml", &service),
        ("BarWidget.qml", &bar),
        ("Panel.qml", &panel),
    ] {
        for banned in [
            "Qt.resolvedUrl",
            "shellDir",
            "configDir",
            "manifest.path",
            "\"sh\"",
            "\"bash\"",
            "/bin/sh",
            "\"tee\"",
            "\"cp\"",
            "\"mv\"",
            "\"touch\"",
        ] {
            assert!(!src.contains(banned), "{name} uses {banned}");
        }
    }
    // The widget and the panel only read; the panel runs nothing of its own.
    assert!(!bar.contains("setText("), "BarWidget.qml writes a file");
    assert!(!panel.contains("setText("), "Panel.qml writes a file");
    for runs in ["Process {", "execDetached(", "command:"] {
        assert!(!panel.contains(runs), "Panel.qml runs a program ({runs})");
    }

    // Every write goes through a FileView whose path is built from the runtime or state dir.
    let writes: BTreeSet<String> = service
        .match_indices(".setText(")
        .map(|(i, _)| {
            service[..i]
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(writes, ["stateView", "stopFlag"].map(String::from).into());
    for id in &writes {
        let decl = &service[service.find(&format!("id: {id}\n")).unwrap()..];
        let path_line = decl
            .lines()
            .find(|l| l.trim().starts_with("path:"))
            .unwrap();
        assert!(
            path_line.contains("root.stateFile") || path_line.contains("root.stopFlagFile"),
            "{id} writes to {path_line}"
        );
    }
    let prop = |name: &str| -> String {
        let line = service
            .lines()
            .find(|l| l.contains(&format!("property string {name}:")))
            .unwrap_or_else(|| panic!("no property {name}"));
        line.to_owned()
    };
    assert!(prop("stateFile").contains("root.runtimeDir + \"/state.json\""));
    assert!(prop("stopFlagFile").contains("root.stateDir + \"/"));
    assert!(prop("runtimeDir").contains("XDG_RUNTIME_DIR"));
    assert!(prop("stateDir").contains("root.stateHome + \"/archgate\""));
    assert!(
        prop("stateHome").contains("XDG_STATE_HOME") && prop("stateHome").contains("/.local/state")
    );

    // The only programs it runs: archgate itself, and mkdir for archgate's two directories.
    let mut programs = BTreeSet::new();
    for (i, _) in service.match_indices("command: [") {
        let list = &service[i + "command: [".len()..];
        let list = &list[..list.find(']').unwrap()];
        programs.insert(list.split(',').next().unwrap().trim().to_owned());
        if list.starts_with("\"mkdir\"") {
            assert_eq!(
                list,
                "\"mkdir\", \"-p\", \"-m\", \"0700\", root.runtimeDir, root.stateDir"
            );
        }
        if list.starts_with("\"setpriv\"") {
            assert_eq!(
                list,
                "\"setpriv\", \"--pdeathsig\", \"TERM\", root.bin, \"serve\", \"--http\""
            );
        }
    }
    assert_eq!(
        programs,
        ["\"mkdir\"", "\"setpriv\"", "root.bin"]
            .map(String::from)
            .into()
    );
    for src in [&service, &bar] {
        for (i, _) in src.match_indices("execDetached([") {
            let first = src[i + "execDetached([".len()..].split(',').next().unwrap();
            assert!(
                first == "root.bin" || first == "\"archgate\"",
                "runs {first}"
            );
        }
    }
}

/// The checks `omarchy plugin validate` (run by `omarchy plugin add`) makes, written out.
#[test]
fn the_manifest_is_valid_for_omarchy_plugin_add() {
    let m = manifest();
    let dir = repo().join("plugin");
    assert_eq!(m["schemaVersion"], 1, "schemaVersion is the number 1");
    assert!(m["schemaVersion"].is_u64());
    for f in ["id", "name", "version", "kinds", "entryPoints"] {
        assert!(m.get(f).is_some(), "missing {f}");
    }
    let id = m["id"].as_str().unwrap();
    assert!(
        id.chars().next().unwrap().is_ascii_alphanumeric()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            && !id.contains("..")
            && !id.starts_with("omarchy."),
        "id {id:?}"
    );
    let kinds: Vec<&str> = m["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(!kinds.is_empty());
    let eps = m["entryPoints"].as_object().unwrap();
    // The kinds Omarchy 4's shell knows (shell/README.md of the public omarchy repository), and
    // the entry point key its loaders read for each kind we use (shell.qml and
    // services/PluginRegistry.qml there: the panel loader reads entryPoints[kind]).
    for k in &kinds {
        assert!(
            ["bar-widget", "panel", "overlay", "menu", "service", "bar"].contains(k),
            "unknown kind {k}"
        );
    }
    assert_eq!(kinds, ["service", "panel", "bar-widget"]);
    for (kind, key) in [
        ("service", "service"),
        ("panel", "panel"),
        ("bar-widget", "barWidget"),
    ] {
        if kinds.contains(&kind) {
            assert!(eps.contains_key(key), "kind {kind} needs entryPoints.{key}");
        }
    }
    for ep in eps.values() {
        let ep = ep.as_str().unwrap();
        assert!(!ep.is_empty() && !ep.starts_with('/') && !ep.contains("..") && !ep.contains('\n'));
        assert!(dir.join(ep).is_file(), "entry point {ep} missing");
    }
    let section = m["barWidget"]["defaultSection"].as_str().unwrap();
    assert!(["left", "center", "right"].contains(&section));
    assert_eq!(
        m["version"],
        env!("CARGO_PKG_VERSION"),
        "plugin and binary versions agree"
    );
    fn no_symlinks(d: &Path) {
        for e in std::fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            assert!(!t.is_symlink(), "{} is a symlink", e.path().display());
            if t.is_dir() {
                no_symlinks(&e.path());
            }
        }
    }
    no_symlinks(&dir);
}

/// The Arch package installs every file the manifest names (entryPoints): one left out gives
/// Omarchy a plugin whose panel or widget is missing. Read from the PKGBUILD's `package()`, so it
/// holds for a normal user too; `tests/run-package.sh` checks the built package itself.
#[test]
fn the_package_installs_every_file_the_manifest_names() {
    let pkgbuild =
        std::fs::read_to_string(repo().join("packaging/arch/PKGBUILD")).expect("PKGBUILD");
    let package = &pkgbuild[pkgbuild.find("package() {").expect("a package() function")..];
    // The words of package()'s lines, a trailing backslash joining a line to the next.
    let words: BTreeSet<&str> = package
        .split_whitespace()
        .filter(|w| w.starts_with("plugin/"))
        .collect();
    let named: BTreeSet<String> = manifest()["entryPoints"]
        .as_object()
        .expect("entryPoints")
        .values()
        .map(|v| format!("plugin/{}", v.as_str().expect("a file name")))
        .chain(["plugin/manifest.json".to_owned()])
        .collect();
    assert!(named.len() > 2, "{named:?}");
    for file in &named {
        assert!(
            repo().join(file).is_file(),
            "{file} is named but not in the repository"
        );
        assert!(
            words.contains(file.as_str()),
            "the PKGBUILD does not install {file}: {words:?}"
        );
    }
}

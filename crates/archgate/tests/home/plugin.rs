//! The Omarchy plugin (plugin/*.qml) and its contract with the daemon, read as text: every
//! archgate command, frame event, /health field and state.json field the QML uses exists in the
//! real binary; the plugin writes only under archgate's runtime and state directories; the
//! manifest passes the checks `omarchy plugin add` makes; qmllint is clean.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{Env, HttpServer};
use crate::support::{repo, text, wait_for};

fn qml(name: &str) -> String {
    std::fs::read_to_string(repo().join("plugin").join(name)).expect("plugin file")
}

fn manifest() -> Value {
    serde_json::from_str(&qml("manifest.json")).expect("manifest.json is JSON")
}

/// Every double-quoted string in `s`.
fn strings(s: &str) -> Vec<String> {
    s.split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t.to_owned())
        .collect()
}

/// The text of every `[ ... ]` that starts right after `prefix` (e.g. `[root.bin, `).
fn lists_after(src: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let end = after.find(']').expect("closing bracket");
        out.push(after[..end].to_owned());
        rest = &after[end..];
    }
    out
}

/// Identifiers following `prefix` (e.g. `health.` → `status`, `version`, …).
fn members_after(src: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        let after = &rest[i + prefix.len()..];
        let word: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !word.is_empty()
        {
            out.insert(word);
        }
        rest = after;
    }
    out
}

/// The `{ ... }` block that follows the first occurrence of `head`.
fn block(src: &str, head: &str) -> String {
    let start = src.find(head).unwrap_or_else(|| panic!("no {head:?}"));
    let open = start + src[start..].find('{').unwrap();
    let mut depth = 0;
    for (i, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return src[open..=open + i].to_owned();
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced block after {head:?}")
}

/// Every archgate command line the QML runs.
fn archgate_commands() -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    for file in ["Service.qml", "BarWidget.qml"] {
        let src = qml(file);
        for l in lists_after(&src, "root.bin, ")
            .into_iter()
            .chain(lists_after(&src, "[\"archgate\", "))
        {
            cmds.push(strings(&l));
        }
    }
    cmds
}

#[test]
fn every_archgate_command_the_plugin_runs_exists() {
    let cmds = archgate_commands();
    let names: BTreeSet<String> = cmds.iter().map(|c| c.join(" ")).collect();
    for want in ["serve --http", "--version", "ui"] {
        assert!(
            names.contains(want),
            "the plugin no longer runs `archgate {want}`: {names:?}"
        );
    }
    let env = Env::new();
    for c in &cmds {
        let mut args: Vec<&str> = c.iter().map(String::as_str).collect();
        if !args[0].starts_with('-') {
            args.push("--help");
        }
        let out = env.run(&args);
        assert!(
            out.status.success(),
            "`archgate {}` is not a command archgate knows: {}",
            args.join(" "),
            text(&out)
        );
    }
    // The clients clientConfig() names are the ones `archgate client-config` takes.
    let ipc = block(&qml("Service.qml"), "function clientConfig(");
    let known = block(&ipc, "var known = ");
    for client in strings(&known) {
        let out = env.run(&["client-config", &client, "--help"]);
        assert!(out.status.success(), "client {client}: {}", text(&out));
    }
}

#[test]
fn every_frame_health_and_state_field_the_plugin_reads_exists_in_the_daemon() {
    let service = qml("Service.qml");
    let bar = qml("BarWidget.qml");

    let env = Env::new();
    env.write_config("[approval]\npage_port = 0\nnotifications = false\n");
    let server = HttpServer::start(&env);

    // Frame events: the daemon emits `listening` (seen by the harness), `failed` and `call`.
    let handled: BTreeSet<String> = service
        .match_indices("f.event === \"")
        .map(|(i, m)| {
            let rest = &service[i + m.len()..];
            rest[..rest.find('"').unwrap()].to_owned()
        })
        .collect();
    assert_eq!(
        handled,
        ["call", "failed", "listening"].map(String::from).into(),
        "the frames Service.qml handles"
    );
    let busy = env.run(&["serve", "--http", "--port", &server.port.to_string()]);
    let failed: Value = serde_json::from_slice(
        busy.stdout
            .split(|b| *b == b'\n')
            .next()
            .unwrap_or_default(),
    )
    .expect("a failed frame");
    assert_eq!(failed["event"], "failed");
    assert!(failed["reason"].is_string());
    for f in members_after(&service, "f.") {
        if f != "event" {
            assert!(
                ["port", "reason", "tool", "outcome"].contains(&f.as_str()),
                "Service.qml reads frame field {f:?}"
            );
        }
    }
    let token = env.token();
    let (c, _) = crate::mcp_http::McpHttp::initialize(server.port, &token);
    c.call_tool(1, "system_status", serde_json::json!({}));
    let calls = server.wait_for_call_frames(1);
    for f in ["tool", "outcome"] {
        assert!(
            calls[0][f].is_string(),
            "call frame without {f}: {}",
            calls[0]
        );
    }

    // /health: every field probed() reads.
    let health = crate::wire::Request::get("/health")
        .send(server.port)
        .json();
    let read = members_after(&service, "health.");
    assert!(read.contains("pending_approvals") && read.contains("developer_mode"));
    for f in &read {
        assert!(
            !health[f.as_str()].is_null(),
            "/health has no {f:?}: {health}"
        );
    }
    assert!(health["config"]["ok"].is_boolean());

    // state.json: the fields the service and the widget read are in the daemon's file.
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(env.dir("runtime").join("archgate/state.json")).unwrap(),
    )
    .unwrap();
    let fields: BTreeSet<String> = members_after(&block(&service, "function readState()"), "s.")
        .into_iter()
        .chain(members_after(&bar, "fileState."))
        .collect();
    assert!(fields.contains("pending_approvals") && fields.contains("developer_mode"));
    for f in &fields {
        assert!(
            state.get(f.as_str()).is_some(),
            "state.json has no {f:?}: {state}"
        );
    }
    // What writeState() writes are the daemon's own field names, nothing else.
    let written = block(&service, "stateView.setText(JSON.stringify(");
    for line in written.lines() {
        let Some((key, _)) = line.trim().split_once(':') else {
            continue;
        };
        if key.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !key.is_empty() {
            assert!(
                state.get(key).is_some(),
                "writeState() writes {key:?}, unknown to archgate"
            );
        }
    }

    // reloadConfig() sends SIGHUP: the daemon re-reads its config and keeps serving.
    assert!(service.contains("daemon.signal(1)"));
    let pid = nix::unistd::Pid::from_raw(server.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    wait_for("a /health answer after SIGHUP", || {
        let h = crate::wire::Request::get("/health").send(server.port);
        (h.status == 200).then_some(())
    });
}

#[test]
fn the_ipc_surface_is_the_documented_one() {
    let service = qml("Service.qml");
    let ipc = block(&service, "IpcHandler {");
    assert!(ipc.contains(&format!(
        "target: \"{}\"",
        manifest()["id"].as_str().unwrap()
    )));
    let functions: BTreeSet<String> = members_after(&ipc, "function ");
    let want: BTreeSet<String> = [
        "status",
        "start",
        "stop",
        "restart",
        "reloadConfig",
        "clientConfig",
    ]
    .map(String::from)
    .into();
    assert_eq!(functions, want);
    // Each returns a string worth reading.
    for f in &want {
        let head = format!("function {f}(");
        let sig = &ipc[ipc.find(&head).unwrap()..];
        let sig = &sig[..sig.find('{').unwrap()];
        assert!(sig.contains("): string"), "{f} returns no string: {sig}");
    }
    let readme = qml("README.md");
    for f in &want {
        assert!(
            readme.contains(&format!("`{f}")),
            "plugin/README.md does not document {f}"
        );
    }
    // Widgets exist per monitor: only the service registers the IPC target.
    assert!(!qml("BarWidget.qml").contains("IpcHandler {"));
    assert!(qml("BarWidget.qml").contains(&format!(
        "moduleName: \"{}\"",
        manifest()["id"].as_str().unwrap()
    )));
}

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

/// The panel (kind `panel`): serving or stopped and why, the approvals waiting, the config's
/// health, and start / stop / restart — each read from or done through the service, whose
/// members it names must exist; the IPC functions and the buttons share one implementation.
#[test]
fn the_panel_shows_the_service_and_drives_it() {
    let service = qml("Service.qml");
    let panel = qml("Panel.qml");
    let bar = qml("BarWidget.qml");
    let used = members_after(&panel, "root.service.");
    for want in [
        "status",
        "reason",
        "port",
        "pendingApprovals",
        "developerMode",
        "configOk",
        "configProblems",
        "startDaemon",
        "stopDaemon",
        "restartDaemon",
        "openApprovals",
    ] {
        assert!(used.contains(want), "Panel.qml does not use service.{want}");
    }
    // Everything it names is a property or a top-level function of the service.
    let ipc = block(&service, "IpcHandler {");
    let outside_ipc = service.replace(&ipc, "");
    for m in &used {
        let declared = outside_ipc.contains(&format!("property string {m}:"))
            || outside_ipc.contains(&format!("property int {m}:"))
            || outside_ipc.contains(&format!("property bool {m}:"))
            || outside_ipc.contains(&format!("property var {m}:"))
            || outside_ipc.contains(&format!("function {m}("));
        assert!(declared, "Service.qml has no top-level {m}");
    }
    // The IPC functions call the same functions the buttons do.
    for (ipc_fn, shared) in [
        ("start", "startDaemon"),
        ("stop", "stopDaemon"),
        ("restart", "restartDaemon"),
    ] {
        let body = block(&ipc, &format!("function {ipc_fn}("));
        assert!(
            body.contains(&format!("root.{shared}()")),
            "{ipc_fn} does not call {shared}: {body}"
        );
        assert!(panel.contains(&format!("root.service.{shared}()")));
    }
    // The panel follows the shell's panel contract: open(payload), close(), opened.
    for contract in [
        "function open(payload)",
        "function close()",
        "property bool opened",
    ] {
        assert!(panel.contains(contract), "Panel.qml lacks {contract}");
    }
    // The config's problems come from /health, which carries them.
    assert!(service.contains("health.config.problems"));
    // The widget shows a broken config: in its label and its tooltip, from the service or from
    // state.json's config_ok before the service is there.
    assert!(bar.contains("fileState.config_ok"));
    let label = block(&bar, "readonly property string label:");
    assert!(label.contains("!configOk"), "{label}");
    let tooltip = block(&bar, "readonly property string tooltip:");
    assert!(tooltip.contains("configProblems"), "{tooltip}");
    // A click opens the panel through the shell.
    assert!(bar.contains("host.shell.toggle(moduleName"));
}

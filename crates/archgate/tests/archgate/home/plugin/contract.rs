//! The plugin's contract with the daemon: every archgate command, frame event, /health and
//! state field the QML reads exists in the real binary; the IPC surface is the documented one;
//! the panel reads from and acts through the service.

use serde_json::Value;
use std::collections::BTreeSet;

use crate::support::{Env, HttpServer};
use crate::support::{text, wait_for};

use super::*;

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
    let (c, _) = crate::support::McpHttp::initialize(server.port, &token);
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
    let health = crate::support::Request::get("/health")
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
        &std::fs::read_to_string(env.path("runtime").join("archgate/state.json")).unwrap(),
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
        let h = crate::support::Request::get("/health").send(server.port);
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
    // And an activity log that cannot be written (attack 35 F7): from /health's audit, or from
    // state.json's log_ok before the service is there.
    assert!(service.contains("health.audit.writable"));
    assert!(bar.contains("fileState.log_ok"));
    assert!(label.contains("!logOk"), "{label}");
    assert!(tooltip.contains("!logOk"), "{tooltip}");
    // A click opens the panel through the shell.
    assert!(bar.contains("host.shell.toggle(moduleName"));
}

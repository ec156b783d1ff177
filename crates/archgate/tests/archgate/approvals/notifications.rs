//! Desktop notifications with actions on a real private session bus, with mako as the server
//! (`scripts/desktop-session.sh` starts D-Bus, headless Sway and mako as `nobody`).

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

use crate::support::{Env, StdioServer, result_text, text, wait_for};

pub(super) struct Desktop {
    pub(super) dir: tempfile::TempDir,
    script: PathBuf,
    pub(super) bus: String,
}

impl Desktop {
    /// A sandbox on this desktop's session bus whose config asks the person about
    /// `system_status` through notifications (`more` is added to `[approval]`).
    pub(super) fn env(&self, more: &str) -> Env {
        let mut env = Env::with_config(&format!(
            "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = true\n{more}"
        ));
        env.vars
            .push(("DBUS_SESSION_BUS_ADDRESS".into(), self.bus.clone()));
        env
    }

    pub(super) fn start() -> Desktop {
        use std::os::unix::fs::PermissionsExt;
        // Under /tmp, traversable: the session runs as `nobody`.
        let dir = tempfile::Builder::new()
            .prefix("archgate-desktop-")
            .tempdir_in("/tmp")
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let script = crate::manifest_dir().join("../../scripts/desktop-session.sh");
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(dir.path().join("s"))
            // Stopped on drop; and by the script's watcher should this process die first.
            .env("SESSION_OWNER_PID", std::process::id().to_string())
            .output()
            .expect("desktop-session.sh");
        assert!(out.status.success(), "desktop session: {}", text(&out));
        let bus = format!("unix:path={}", dir.path().join("s/run/bus").display());
        Desktop { dir, script, bus }
    }

    pub(super) fn makoctl(&self, args: &[&str]) -> std::process::Output {
        Command::new("makoctl")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .output()
            .expect("makoctl")
    }

    /// mako's notifications from archgate: (id, body).
    pub(super) fn shown(&self) -> Vec<(u64, String)> {
        let out = self.makoctl(&["list"]);
        assert!(out.status.success(), "{}", text(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("makoctl list JSON");
        v["data"][0]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|n| n["app-name"]["data"] == "archgate")
            .map(|n| {
                (
                    n["id"]["data"].as_u64().unwrap(),
                    n["body"]["data"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect()
    }

    /// The notification that shows the question `qid`.
    pub(super) fn notification_for(&self, qid: &str) -> u64 {
        wait_for(&format!("a notification for {qid}"), || {
            self.shown()
                .into_iter()
                .find(|(_, body)| body.contains(qid))
                .map(|(id, _)| id)
        })
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(&self.script)
            .arg("stop")
            .arg(self.dir.path().join("s"))
            .output();
    }
}

#[test]
fn allow_in_the_notification_approves_dismissing_cancels_and_an_answer_elsewhere_withdraws_it() {
    let desktop = Desktop::start();
    let env = desktop.env("");
    let mut s = StdioServer::session(&env);

    // Allow.
    s.call(1, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let nid = desktop.notification_for(&qid);
    let body = desktop
        .shown()
        .into_iter()
        .find(|(id, _)| *id == nid)
        .unwrap()
        .1;
    assert!(
        body.contains("system_status"),
        "the notification shows the command: {body}"
    );
    let out = desktop.makoctl(&["invoke", "-n", &nid.to_string(), "allow"]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "{body}");
    let rec = env.audit_of(&qid);
    assert_eq!(rec["approval"]["outcome"], "accepted");
    assert_eq!(rec["approval"]["channel"], "notification");

    // Answered on another channel: the notification is withdrawn.
    s.call(4, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let nid = desktop.notification_for(&qid);
    assert!(env.run(&["approve", &qid]).status.success());
    assert!(result_text(&s.response(4)).0);
    wait_for("the notification to be withdrawn", || {
        (!desktop.shown().iter().any(|(id, _)| *id == nid)).then_some(())
    });
    assert_eq!(env.audit_of(&qid)["approval"]["channel"], "cli");

    // Dismissed: cancelled.
    s.call(3, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let nid = desktop.notification_for(&qid);
    assert!(
        desktop
            .makoctl(&["dismiss", "-n", &nid.to_string()])
            .status
            .success()
    );
    let (ok, body) = result_text(&s.response(3));
    assert!(!ok && body.starts_with("cancelled"), "{body}");
    let rec = env.audit_of(&qid);
    assert_eq!(rec["outcome"], "cancelled");
    assert_eq!(rec["approval"]["channel"], "notification");

    // Deny last: a declined route backs off before it is asked again (nag guard).
    s.call(2, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let nid = desktop.notification_for(&qid);
    assert!(
        desktop
            .makoctl(&["invoke", "-n", &nid.to_string(), "deny"])
            .status
            .success()
    );
    let (ok, body) = result_text(&s.response(2));
    assert!(!ok && body.starts_with("declined"), "{body}");
    assert_eq!(env.audit_of(&qid)["approval"]["channel"], "notification");
}

/// `makoctl invoke … allow` is what an agent's shell can do too. Under `presence = "polkit"` the
/// click is a yes that polkit must confirm for the daemon; with no polkit to ask here (no system
/// bus, or archgate's actions not installed) it fails closed: the call does not run, the refusal
/// is audited, and the question stays pending for the person's own answer.
#[test]
fn a_notification_click_under_presence_is_refused_without_polkit_and_nothing_runs() {
    let desktop = Desktop::start();
    // No polkit in the tests' world, whatever this machine runs (`support::world`): its own
    // polkitd with archgate's actions installed would otherwise ask for a password nobody types.
    let env = desktop.env("presence = \"polkit\"\n");
    let mut s = StdioServer::session(&env);

    s.call(1, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let nid = desktop.notification_for(&qid);
    let out = desktop.makoctl(&["invoke", "-n", &nid.to_string(), "allow"]);
    assert!(out.status.success(), "{}", text(&out));
    let refused = wait_for("the refusal in the audit log", || {
        env.audit()
            .into_iter()
            .find(|r| r["event"] == "presence_refused" && r["id"] == qid.as_str())
    });
    assert_eq!(refused["channel"], "notification");
    assert_eq!(refused["kind"], "presence_unavailable");
    // Still waiting for the person; nothing ran.
    assert_eq!(env.one_pending()["id"], qid.as_str());
    assert!(
        !env.audit()
            .iter()
            .any(|r| r["id"] == qid.as_str() && r.get("event").is_none()),
        "the call was decided: {:?}",
        env.audit()
    );
    // The person's no needs nothing.
    assert!(env.run(&["deny", &qid]).status.success());
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok && body.starts_with("declined"), "{body}");
}

/// Issue 33: a config that stops applying is said on the desktop too — which file, why, and
/// that the last good copy applies — on reload (the file deleted) and at start.
#[test]
fn a_config_not_applied_is_said_in_a_notification_on_reload_and_at_start() {
    let desktop = Desktop::start();
    let env = desktop.env("");
    let file = env.config_file().display().to_string();
    let says = |what: &str| {
        wait_for(&format!("a notification that {what}"), || {
            desktop.shown().into_iter().find(|(_, body)| {
                body.contains(&file) && body.contains(what) && body.contains("last good from")
            })
        })
    };
    let mut d = crate::support::HttpServer::start(&env);
    std::fs::remove_file(env.config_file()).unwrap();
    let (first, _) = says("is missing");
    assert!(d.stop().0.success());
    let out = desktop.makoctl(&["dismiss", "-n", &first.to_string()]);
    assert!(out.status.success(), "{}", text(&out));
    let _d = crate::support::HttpServer::start(&env);
    let (again, _) = says("is missing");
    assert_ne!(again, first, "a new notification at start");
}

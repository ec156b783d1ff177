//! The notification on today's Omarchy, which replaced mako with its own notification daemon in
//! its Quickshell shell (basecamp/omarchy c10159128). Quickshell is not packaged here, so a
//! python-dbusmock template plays it on a private session bus, in the shape read from
//! Quickshell's server and Omarchy's Service.qml (`omarchy_shell_server.py` says what): a click
//! invokes the default action and then closes the notification as *dismissed*; in do-not-disturb
//! the shell closes a new notification as *dismissed* before `Notify` even returns; a notification
//! it closes on request is gone from the server (the card on screen keeps its own timer).
//! Real mako at Omarchy's older settings: `omarchy_mako.rs`.

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};

use super::omarchy_mako::opener;
use crate::support::{Env, StdioServer, result_text, text, wait_for};

const PYTHON: &str = "/usr/bin/python3";
const SHELL_IFACE: &str = "org.archgate.Test.OmarchyShell";

struct ShellBus {
    daemon: Child,
    mock: Child,
    address: String,
    dir: tempfile::TempDir,
}

impl Drop for ShellBus {
    fn drop(&mut self) {
        let _ = self.mock.kill();
        let _ = self.mock.wait();
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

impl ShellBus {
    /// A private session bus with the Omarchy shell's notification server on it.
    fn start() -> ShellBus {
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}", dir.path().join("bus").display());
        let daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", &format!("--address={address}")])
            .stdout(Stdio::null())
            .spawn()
            .expect("dbus-daemon (scripts/test-deps.sh installs dbus)");
        wait_for("dbus-daemon to start", || {
            dir.path().join("bus").exists().then_some(())
        });
        let template =
            crate::manifest_dir().join("tests/archgate/approvals/omarchy_shell_server.py");
        let mock = Command::new(PYTHON)
            .args(["-m", "dbusmock", "--session", "--template"])
            .arg(&template)
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .spawn()
            .expect("python3 -m dbusmock (scripts/test-deps.sh installs python3-dbusmock)");
        let mut bus = ShellBus {
            daemon,
            mock,
            address,
            dir,
        };
        wait_for("the shell's notification server to take its name", || {
            if let Ok(Some(s)) = bus.mock.try_wait() {
                panic!("dbusmock exited: {s}");
            }
            (bus.py("print(b.name_has_owner('org.freedesktop.Notifications'))") == "True")
                .then_some(())
        });
        bus
    }

    /// Runs `body` with `b` the bus and `s` the shell's test interface; its printout.
    fn py(&self, body: &str) -> String {
        let script = format!(
            "import dbus, sys, json\nb = dbus.bus.BusConnection(sys.argv[1])\n\
             def shell():\n    return dbus.Interface(b.get_object('org.freedesktop.Notifications', \
             '/org/freedesktop/Notifications', introspect=False), '{SHELL_IFACE}')\n\
             if b.name_has_owner('org.freedesktop.Notifications'):\n    s = shell()\n{body}\n"
        );
        let out = Command::new(PYTHON)
            .args(["-c", &script, &self.address])
            .output()
            .expect("python3");
        assert!(out.status.success(), "python: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Every `Notify` the server was sent, in order.
    fn notified(&self) -> Vec<Value> {
        serde_json::from_str(&self.py("print(s.Notified())")).expect("Notified JSON")
    }

    /// The notification archgate sent for the question whose id its body ends with.
    fn notification_for(&self, qid: &str) -> Value {
        wait_for("the question's notification", || {
            self.notified().into_iter().find(|n| {
                n["app"] == "archgate" && n["body"].as_str().is_some_and(|b| b.contains(qid))
            })
        })
    }

    fn live(&self) -> Vec<u64> {
        serde_json::from_str(&self.py("print(json.dumps([int(n) for n in s.Live()]))")).unwrap()
    }

    fn env(&self, exec: &str) -> Env {
        let mut env = Env::with_config(&format!(
            "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 120\npage = true\n\
             page_port = 0\nnotifications = true\n{exec}"
        ));
        env.vars
            .push(("DBUS_SESSION_BUS_ADDRESS".into(), self.address.clone()));
        env
    }
}

#[test]
fn on_omarchys_shell_the_click_opens_the_page_its_close_is_not_a_no_and_an_answer_withdraws_it() {
    let bus = ShellBus::start();
    let bin = bus.dir.path().join("bin");
    let log = bus.dir.path().join("opened");
    opener(&bin, &log);
    let env = bus.env(&format!(
        "[exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n",
        bin.display()
    ));
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let n = bus.notification_for(&qid);
    let nid = n["id"].as_u64().unwrap();

    // The card keeps two lines of summary: the grant and the time left come first.
    let summary = n["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("local asks to run system_status · "),
        "{summary}"
    );
    assert!(
        summary.contains(" left · says it is archgate-e2e 0.0.0"),
        "{summary}"
    );
    // The click's default action, and a question the shell does not keep in its history once
    // it is gone (an answered question must not wait there as if it still did).
    let actions: Vec<&str> = n["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(actions[..2], ["default", "Open"], "{n}");
    assert_eq!(n["hints"]["transient"], true, "{n}");
    assert_eq!(
        n["hints"]["urgency"], 1,
        "normal: critical never leaves the screen: {n}"
    );
    assert!(n["expire"].as_i64().unwrap() > 0, "{n}");

    // The click: the default action, then the shell closes it as dismissed. The page opens at
    // the call, and the close that follows the click is not the person saying no.
    assert_eq!(bus.py(&format!("print(bool(s.Click({nid})))")), "True");
    let given: Vec<String> = wait_for("the browser opener's arguments", || {
        let t = std::fs::read_to_string(&log).ok()?;
        Some(t.lines().map(str::to_owned).collect())
    });
    let html = std::fs::read_to_string(&given[0]).expect("the login file");
    assert!(html.contains(&format!("#call={qid}\"")), "{html}");
    assert_eq!(
        env.one_pending()["id"],
        qid.as_str(),
        "the click answers nothing"
    );

    // A second question, answered elsewhere: its notification is withdrawn (CloseNotification).
    s.call(2, "system_status", json!({}));
    let second = wait_for("the second question", || {
        let all: Value = serde_json::from_slice(&env.run(&["approvals", "--json"]).stdout).ok()?;
        all.as_array()?
            .iter()
            .find(|q| q["id"] != qid.as_str())
            .and_then(|q| q["id"].as_str().map(str::to_owned))
    });
    let nid2 = bus.notification_for(&second)["id"].as_u64().unwrap();
    assert!(bus.live().contains(&nid2));
    for id in [&qid, &second] {
        let out = env.run(&["approve", id]);
        assert!(out.status.success(), "{}", text(&out));
    }
    assert!(result_text(&s.response(1)).0);
    assert!(result_text(&s.response(2)).0);
    assert_eq!(env.audit_of(&qid)["approval"]["channel"], "cli");
    wait_for("the answered question's notification to be closed", || {
        (!bus.live().contains(&nid2)).then_some(())
    });
}

#[test]
fn on_omarchys_shell_the_card_x_is_a_no_and_do_not_disturbs_instant_close_is_not() {
    let bus = ShellBus::start();
    let env = bus.env("");
    let mut s = StdioServer::session(&env);

    // Do-not-disturb: the shell closes the notification as dismissed before Notify returns.
    // Nobody dismissed anything: the question waits, and an answer elsewhere decides it.
    bus.py("s.SetDnd(True)");
    s.call(1, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    let n = bus.notification_for(&qid);
    assert!(!bus.live().contains(&n["id"].as_u64().unwrap()));
    // One more round trip through the daemon after the close reached it.
    let _ = env.run(&["approvals", "--json"]);
    assert_eq!(
        env.one_pending()["id"],
        qid.as_str(),
        "do-not-disturb is not a no"
    );
    let out = env.run(&["approve", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(result_text(&s.response(1)).0);
    assert_eq!(env.audit_of(&qid)["approval"]["channel"], "cli");

    // Out of do-not-disturb, the card's X is the person's no.
    bus.py("s.SetDnd(False)");
    s.call(2, "system_status", json!({}));
    let second = wait_for("the second question", || {
        let all: Value = serde_json::from_slice(&env.run(&["approvals", "--json"]).stdout).ok()?;
        all.as_array()?
            .first()
            .and_then(|q| q["id"].as_str().map(str::to_owned))
    });
    let nid = bus.notification_for(&second)["id"].as_u64().unwrap();
    assert_eq!(
        bus.py(&format!("print(bool(s.CloseButton({nid})))")),
        "True"
    );
    let (ok, said) = result_text(&s.response(2));
    assert!(!ok && said.starts_with("cancelled"), "{said}");
    assert_eq!(env.audit_of(&second)["outcome"], "cancelled");
}

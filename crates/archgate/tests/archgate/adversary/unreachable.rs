//! Class: "a failure to reach a checker is read as the checker's absence" (issue 33, item 5: a
//! same-user process held its uid's system-bus connections, archgate's presence check could not
//! connect, and `approval.presence = "auto"` read that as "polkit not installed": `archgate
//! approve` of a destructive route and `dev-mode on` went through, recorded as a plain yes).
//!
//! The rule: whether presence applies is read from root's files (archgate's actions file, owned
//! by root and not writable by others, and polkitd), never from whether a connection succeeds
//! now; once it applies, every failure to confirm refuses. The attack itself — archgate's actions
//! installed, the bus out of reach — needs root's directory, so it is tried where a test can
//! set a root and a bus that only tests can reach: `person::presence::tests`
//! (`an_unreachable_bus_refuses_once_presence_applies`,
//! `a_bus_that_never_answers_refuses_once_presence_applies`,
//! `root_s_files_decide_whether_presence_applies`); the shipped binary reads the fixed paths.
//!
//! What this file tries, against the real binary: yeses that need presence (`dev-mode on` under
//! `auto`, an Allow under `polkit`), each of which must leave a record saying when presence was
//! asked, when it ended and how — and that record must agree with what happened: the yes took
//! effect exactly when the record says presence let it (`presence`), and did nothing when it says
//! presence refused it (`presence_refused`). Whatever this machine has installed, a yes never
//! passes unrecorded.

use serde_json::{Value, json};

use crate::support::{Env, StdioServer, result_text, text};

fn presence_events(env: &Env) -> Vec<Value> {
    env.audit()
        .into_iter()
        .filter(|r| {
            r["event"]
                .as_str()
                .is_some_and(|e| e == "presence" || e == "presence_refused")
        })
        .collect()
}

fn check_record(ev: &Value) {
    for k in [
        "asked_at", "ended_at", "ended", "action", "setting", "channel",
    ] {
        assert!(
            ev[k].as_str().is_some_and(|v| !v.is_empty()),
            "{k} missing: {ev}"
        );
    }
    assert!(ev["asked_at"].as_str() <= ev["ended_at"].as_str(), "{ev}");
}

#[test]
fn developer_mode_on_under_auto_is_recorded_with_how_presence_ended() {
    let env =
        Env::with_config("[approval]\npresence = \"auto\"\npage = false\nnotifications = false\n");
    let _s = StdioServer::session(&env);
    let out = env.run(&["dev-mode", "on", "--for", "10m"]);
    let events = crate::support::wait_for("the presence record", || {
        let e = presence_events(&env);
        (!e.is_empty()).then_some(e)
    });
    assert_eq!(events.len(), 1, "{events:?}");
    let ev = &events[0];
    check_record(ev);
    assert_eq!(ev["what"], "developer_mode");
    assert_eq!(ev["action"], "org.archgate.developer-mode");
    let on = text(&env.run(&["dev-mode", "status"])).contains("ON");
    assert_eq!(
        on,
        ev["event"] == "presence",
        "developer mode is {} but the record says {ev} ({})",
        if on { "on" } else { "off" },
        text(&out)
    );
    assert_eq!(out.status.success(), on, "{}", text(&out));
}

#[test]
fn an_allow_under_polkit_is_recorded_with_how_presence_ended() {
    let env = Env::with_config(
        "[policy]\nask = [\"system_status\"]\n[approval]\npresence = \"polkit\"\ntimeout_s = 60\npage = false\nnotifications = false\n",
    );
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    let out = env.run(&["approve", &id]);
    let events = crate::support::wait_for("the presence record", || {
        let e = presence_events(&env);
        (!e.is_empty()).then_some(e)
    });
    let ev = &events[0];
    check_record(ev);
    assert_eq!(ev["what"], "answer");
    assert_eq!(ev["id"], id.as_str());
    assert_eq!(ev["action"], "org.archgate.approve");
    if ev["event"] == "presence_refused" {
        // Refused: the question stays pending and the call has not run; the person's no ends it.
        assert!(!out.status.success(), "{}", text(&out));
        assert_eq!(env.pending().len(), 1);
        assert!(env.run(&["deny", &id]).status.success());
        assert!(!result_text(&s.response(1)).0);
    } else {
        assert_eq!(ev["ended"], "confirmed", "{ev}");
        assert!(out.status.success(), "{}", text(&out));
        assert!(result_text(&s.response(1)).0);
    }
}

//! The notification as a person on Omarchy sees it: real mako in the headless Sway, configured
//! as Omarchy configured it (`OMARCHY_MAKO` below), with the agent's own `clientInfo` name in
//! the summary line, the click (mako's default action, Omarchy's Super+Alt+Comma `makoctl
//! invoke`) opening the approval page at that call, an answered question's notification gone,
//! and one plain follow-up when a question runs out unanswered.

#![allow(clippy::disallowed_methods)]

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::notifications::Desktop;
use crate::support::{Env, StdioServer, result_text, text, wait_for};

/// Omarchy's mako settings, our own text in the shape of its `default/mako/core.ini` (basecamp/
/// omarchy, the last version before it replaced mako, c10159128^): top-right, 420 px wide, 5 s
/// default timeout, grouped by app, summary and body, do-not-disturb hides everything, and
/// mako's default format (summary in bold on the first line, then the body) and max-visible.
const OMARCHY_MAKO: &str = "anchor=top-right\ngroup-by=app-name,summary,body\n\
default-timeout=5000\nwidth=420\nouter-margin=20\npadding=10,15\nborder-size=2\n\
max-icon-size=32\nfont=sans-serif 14px\n\n[mode=do-not-disturb]\ninvisible=true\n\n\
[urgency=critical]\ndefault-timeout=0\nlayer=overlay\n";

/// Puts Omarchy's settings into the session's mako and reloads it.
fn omarchy_settings(desktop: &Desktop) {
    let file = desktop.dir.path().join("s/home/.config/mako/config");
    std::fs::write(&file, OMARCHY_MAKO).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = desktop.makoctl(&["reload"]);
    assert!(out.status.success(), "makoctl reload: {}", text(&out));
}

/// mako's notifications from archgate, whole (`makoctl list`).
fn listed(desktop: &Desktop) -> Vec<Value> {
    let out = desktop.makoctl(&["list"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("makoctl list JSON");
    v["data"][0]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["app-name"]["data"] == "archgate")
        .cloned()
        .collect()
}

fn field(n: &Value, k: &str) -> String {
    n[k]["data"].as_str().unwrap_or("").to_owned()
}

/// A fake browser opener (`xdg-open`, found through `[exec] search_dirs`): it writes its
/// arguments to `log`.
pub(super) fn opener(bin: &Path, log: &Path) {
    std::fs::create_dir_all(bin).unwrap();
    let script = format!(
        "#!/bin/sh\nPATH=/usr/bin:/bin\nprintf '%s\\n' \"$@\" > {log}.tmp && mv {log}.tmp {log}\n",
        log = log.display()
    );
    let p = bin.join("xdg-open");
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn env_on(desktop: &Desktop, timeout_s: u64, exec: &str) -> Env {
    let mut env = Env::with_config(&format!(
        "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = {timeout_s}\npage = true\n\
         page_port = 0\nnotifications = true\n{exec}"
    ));
    env.vars
        .push(("DBUS_SESSION_BUS_ADDRESS".into(), desktop.bus.clone()));
    env
}

#[test]
fn on_omarchys_mako_the_summary_names_the_agent_and_time_the_click_opens_the_page_at_the_call_and_an_answer_takes_it_down()
 {
    let desktop = Desktop::start();
    omarchy_settings(&desktop);
    let scratch = tempfile::tempdir().unwrap();
    let bin = scratch.path().join("bin");
    let log = scratch.path().join("xdg-open.args");
    opener(&bin, &log);
    let env = env_on(
        &desktop,
        120,
        &format!(
            "[exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n",
            bin.display()
        ),
    );
    // The test client's initialize says `clientInfo: archgate-e2e 0.0.0` (support/stdio.rs).
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let qid = env.one_pending()["id"].as_str().unwrap().to_owned();
    assert_eq!(env.one_pending()["agent"], "archgate-e2e 0.0.0");
    let nid = desktop.notification_for(&qid);
    let shown = listed(&desktop)
        .into_iter()
        .find(|n| n["id"]["data"].as_u64() == Some(nid))
        .expect("the notification");

    // The summary line, which mako always shows whole, names the agent and the time left.
    let summary = field(&shown, "summary");
    assert!(
        summary.starts_with("local asks to run system_status · "),
        "{summary}"
    );
    assert!(
        summary.ends_with(" left · says it is archgate-e2e 0.0.0"),
        "{summary}"
    );
    // The sentence leading the body names the grant too, never the agent's own word alone.
    let body = field(&shown, "body");
    assert!(body.starts_with("local wants to "), "{body}");
    // A default action (the click), and Allow and Deny for those who bind them.
    let actions = &shown["actions"]["data"];
    assert_eq!(actions["default"], "Open", "{shown}");
    assert_eq!(actions["allow"], "Allow", "{shown}");
    assert_eq!(actions["deny"], "Deny", "{shown}");

    // Invoking the default action, as the click and Omarchy's Super+Alt+Comma do, opens the
    // page at this call through the person's browser opener; it answers nothing.
    let out = desktop.makoctl(&["invoke", "-n", &nid.to_string()]);
    assert!(out.status.success(), "{}", text(&out));
    let given: Vec<String> = wait_for("the browser opener's arguments", || {
        let t = std::fs::read_to_string(&log).ok()?;
        Some(t.lines().map(str::to_owned).collect())
    });
    assert_eq!(given.len(), 1, "{given:?}");
    let html = std::fs::read_to_string(&given[0]).expect("the login file");
    assert!(
        html.contains(&format!("#call={qid}\"")),
        "the login leads to the call: {html}"
    );
    assert!(html.contains("/login?t="), "{html}");
    assert_eq!(
        env.one_pending()["id"],
        qid.as_str(),
        "opening the page answers nothing"
    );

    // Answered elsewhere: the question is decided by that answer (not cancelled by the click's
    // close), and its notification is gone.
    let out = env.run(&["approve", &qid]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(result_text(&s.response(1)).0);
    let rec = env.audit_of(&qid);
    assert_eq!(rec["approval"]["channel"], "cli");
    assert_eq!(rec["agent"], "archgate-e2e 0.0.0", "{rec}");
    wait_for("the answered question's notification to go", || {
        (!listed(&desktop)
            .iter()
            .any(|n| n["id"]["data"].as_u64() == Some(nid)))
        .then_some(())
    });
}

#[test]
fn on_omarchys_mako_questions_that_run_out_are_taken_down_and_one_plain_follow_up_stays() {
    let desktop = Desktop::start();
    omarchy_settings(&desktop);
    // The person is in do-not-disturb: mako shows nothing, but keeps what it was sent.
    let out = desktop.makoctl(&["mode", "-a", "do-not-disturb"]);
    assert!(out.status.success(), "{}", text(&out));
    let env = env_on(&desktop, 5, "");
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    s.call(2, "system_status", json!({}));
    let pending = wait_for("two pending approvals", || {
        let p = env.pending();
        (p.len() == 2).then_some(p)
    });
    let nids: Vec<u64> = pending
        .iter()
        .map(|q| desktop.notification_for(q["id"].as_str().unwrap()))
        .collect();
    for id in [1, 2] {
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok && body.contains("timed_out"), "{body}");
    }

    let follow = wait_for("one follow-up counting both", || {
        let f: Vec<Value> = listed(&desktop)
            .into_iter()
            .filter(|n| field(n, "summary").contains("ran out unanswered"))
            .collect();
        (f.len() == 1 && field(&f[0], "summary").contains("2 questions")).then(|| f[0].clone())
    });
    assert!(
        field(&follow, "body").contains("local (says it is archgate-e2e 0.0.0) asked at "),
        "{follow}"
    );
    assert!(
        follow["actions"]["data"]
            .as_object()
            .is_none_or(|a| a.is_empty()),
        "a plain notification: {follow}"
    );
    wait_for("the expired questions' notifications to go", || {
        (!listed(&desktop)
            .iter()
            .any(|n| nids.contains(&n["id"]["data"].as_u64().unwrap_or(0))))
        .then_some(())
    });
}

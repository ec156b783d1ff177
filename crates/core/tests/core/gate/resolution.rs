//! What is approved is what runs (issue 16, attacks 1 and 2): policy judges the resolved
//! commands, standing rules cover the resolved action, the permit runs only what was approved,
//! and `Gate::explain` is the gate's own decision.

use super::*;

/// Issue 16, attack 1: policy judges the command resolution built, not the plan's words. An
/// entry that resolves to `su …` is blocked under an allow-everything rule and developer mode.
#[tokio::test]
async fn elevation_through_resolution_is_blocked_whatever_allows_it() {
    let e = env("[policy]\nallow = [\"*\"]\n");
    e.gate
        .take_person_channel()
        .unwrap()
        .set_dev_mode(Some(600), archgate_core::person::now_secs())
        .unwrap();
    for argv in [
        &["su", "-c", "id", "root"][..],
        &["/usr/bin/pkexec", "id"],
        &["env", "sudo", "id"],
    ] {
        entry(&e, argv);
        let r = e.gate.call(&client(), "from_file", json!({})).await;
        assert_eq!(r.outcome, Outcome::Refused, "{argv:?}");
        let err = r.output.unwrap_err();
        assert!(
            err.message.contains("elevates privilege"),
            "{}",
            err.message
        );
    }
    // The honest path: the same tool with a harmless entry runs under the allow rule.
    entry(&e, &["printf", "fine"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok, "{:?}", r.output);
    let recs = records(&e);
    assert!(
        recs[0]
            .target
            .as_deref()
            .unwrap()
            .starts_with("su -c id root"),
        "{:?}",
        recs[0].target
    );
}

/// Issue 16, attack 2: a standing rule covers the resolved command. After "Always" for an entry
/// that ran `printf a`, the same words behind which the entry now runs `printf b` ask again.
#[tokio::test]
async fn a_standing_rule_does_not_cover_a_changed_command() {
    let e = env("");
    let _channel = e.gate.broker().register_pull_channel();
    entry(&e, &["printf", "a"]);
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "from_file", json!({})).await });
    let q = parked(&e).await;
    assert_eq!(
        q.summary, "/usr/bin/printf a",
        "the question shows the resolved command"
    );
    e.gate
        .broker()
        .answer(&q.id, Answer::AllowAlways, "cli")
        .unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Ok);
    // Same command: the rule approves without asking.
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok);
    // The entry changed: the same words ask again.
    entry(&e, &["printf", "b"]);
    let g = e.gate.clone();
    let t = tokio::spawn(async move { g.call(&client(), "from_file", json!({})).await });
    let q = parked(&e).await;
    assert_eq!(q.summary, "/usr/bin/printf b");
    e.gate.broker().answer(&q.id, Answer::Deny, "cli").unwrap();
    assert_eq!(t.await.unwrap().outcome, Outcome::Declined);
    let recs = records(&e);
    assert_eq!(
        recs[1].approval.as_ref().unwrap().channel.as_deref(),
        Some("standing_rule")
    );
}

/// The program is judged as the file it is: a harmless name that is a symlink to `su` is `su`.
#[tokio::test]
async fn a_program_is_judged_as_the_file_it_resolves_to() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/usr/bin/su", dir.path().join("helper")).unwrap();
    let e = env(&format!(
        "[exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\nrequire_root_owned = false\n[policy]\nallow = [\"from_file app\"]\n",
        dir.path().display()
    ));
    entry(&e, &["helper", "-c", "id"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Refused, "{:?}", r.output);
    assert!(r.output.unwrap_err().message.contains("elevates privilege"));
    // A program that is not there is refused before anyone is asked.
    entry(&e, &["no-such-program-here"]);
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Unresolved);
    assert_eq!(
        r.output.unwrap_err().kind,
        Kind::Tool(ErrorKind::NotInstalled)
    );
}

/// What is approved is what runs: a tool that builds another command in `execute` than the one
/// resolution showed is refused by the permit, and nothing of it runs.
#[tokio::test]
async fn a_command_built_again_differently_is_refused() {
    let e = env("[policy]\nallow = [\"from_file app\"]\n");
    entry(&e, &["printf", "resolved"]);
    let r = e
        .gate
        .call(&client(), "from_file", json!({"drift": true}))
        .await;
    assert_eq!(r.outcome, Outcome::ToolError);
    assert_eq!(
        r.output.unwrap_err().kind,
        Kind::Tool(ErrorKind::NotApproved)
    );
    let r = e.gate.call(&client(), "from_file", json!({})).await;
    assert_eq!(r.outcome, Outcome::Ok);
}

/// `Gate::explain` (behind `archgate policy explain`) takes the gate's own decision: the
/// resolved command, the blocked elevation and the standing rule.
#[tokio::test]
async fn explain_is_the_gate_decision() {
    let e = env("[policy]\nallow = [\"from_file app\"]\n");
    entry(&e, &["su", "-c", "id"]);
    let x = e
        .gate
        .explain(&client(), "from_file", json!({}))
        .await
        .unwrap();
    assert_eq!(x.decision.tier, Tier::Blocked);
    assert_eq!(x.action.summary(), "su -c id");
    entry(&e, &["printf", "ok"]);
    let x = e
        .gate
        .explain(&client(), "from_file", json!({}))
        .await
        .unwrap();
    assert_eq!(x.decision.verdict, archgate_core::policy::Verdict::Allow);
    assert!(records(&e).is_empty(), "explaining is not a call");
}

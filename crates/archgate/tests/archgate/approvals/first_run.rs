//! The first run that teaches (issue 32): `archgate setup` ends with one harmless test question
//! the person answers where real ones are answered; `archgate doctor` opens with its verdict —
//! can a question reach the person and be answered here — with "another process of yours can
//! approve in your name" first when it applies; on a desktop with real mako and without one.

#![allow(clippy::disallowed_methods)]

use std::process::Stdio;

use super::notifications::Desktop;
use crate::support::{Env, text, wait_for};

const CONFIG: &str = "[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = true\n";

/// The lines before the first check.
fn verdict(env: &Env) -> Vec<String> {
    let out = env.run(&["doctor"]);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .take_while(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn doctor_opens_with_a_verdict_and_says_first_that_another_process_can_approve() {
    let desktop = Desktop::start();
    let mut env = Env::with_config(CONFIG);
    env.vars
        .push(("DBUS_SESSION_BUS_ADDRESS".into(), desktop.bus.clone()));
    // No polkit in the tests' world, whatever this machine runs (`support::world`): under
    // presence = auto a yes goes through unconfirmed, so that comes first.
    let v = verdict(&env);
    assert!(
        v[0].starts_with("FIRST: another process of yours can approve in your name"),
        "{v:#?}"
    );
    let said = v.join("\n");
    assert!(said.contains("VERDICT: yes."), "{said}");
    assert!(said.contains("desktop notification (mako"), "{said}");

    // No session bus at all: a question reaches nobody by itself, said plainly.
    let alone = Env::with_config(CONFIG);
    let said = verdict(&alone).join("\n");
    assert!(
        said.contains("VERDICT: a question does NOT reach you by itself here"),
        "{said}"
    );
}

#[test]
fn setup_ends_with_a_test_question_that_reaches_the_desktop_and_runs_nothing() {
    let desktop = Desktop::start();
    let mut env = Env::new();
    env.vars
        .push(("DBUS_SESSION_BUS_ADDRESS".into(), desktop.bus.clone()));
    let child = env
        .command(&["setup", "--yes", "--stdio", "--test-question"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("archgate setup");
    let q = env.one_pending();
    assert_eq!(q["client"], "archgate setup");
    assert_eq!(q["tool"], "setup_test");
    let id = q["id"].as_str().unwrap().to_owned();
    // On the desktop, as a real question would be.
    let nid = desktop.notification_for(&id);
    let out = desktop.makoctl(&["list"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("archgate setup asks to run setup_test"),
        "{}",
        text(&out)
    );
    let out = env.run(&["approve", &id]);
    assert!(out.status.success(), "{}", text(&out));
    let out = child.wait_with_output().unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("you said yes through cli"), "{said}");
    assert!(said.contains("Nothing ran."), "{said}");
    wait_for("the test question's notification to go", || {
        (!desktop.shown().iter().any(|(n, _)| *n == nid)).then_some(())
    });
    assert!(
        env.calls().is_empty(),
        "nothing ran, nothing was recorded as a call: {:?}",
        env.calls()
    );
}

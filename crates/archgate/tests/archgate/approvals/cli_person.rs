//! The CLI as the person uses it (issue 32): ids by unique prefix, `archgate approve` with no id
//! asking `[y/N/a]` on a real terminal (a pty from util-linux `script`) and refusing anything
//! else, `approve --always` printing its rule, local time and the agent's own name in `show`
//! and `log`.

#![allow(clippy::disallowed_methods)]

use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::{Env, StdioServer, result_text, text, wait_for};

const ASK: &str = "[policy]\nask = [\"system_status\"]\n[approval]\ntimeout_s = 60\npage_port = 0\nnotifications = false\n";

fn common_prefix(a: &str, b: &str) -> String {
    a.chars()
        .zip(b.chars())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect()
}

#[test]
fn ids_are_taken_by_unique_prefix_and_an_ambiguous_one_lists_the_matches() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    s.call(2, "system_status", json!({}));
    let ids: Vec<String> = wait_for("two pending approvals", || {
        let p = env.pending();
        (p.len() == 2).then(|| {
            p.iter()
                .map(|q| q["id"].as_str().unwrap().to_owned())
                .collect()
        })
    });
    let shared = common_prefix(&ids[0], &ids[1]);
    assert!(!shared.is_empty(), "{ids:?}");

    // Ambiguous: a typed error naming both, and nothing answered.
    for cmd in ["approve", "deny", "show"] {
        let out = env.run(&[cmd, &shared]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", text(&out));
        let said = text(&out);
        assert!(said.starts_with("ambiguous_id: "), "{said}");
        assert!(said.contains(&ids[0]) && said.contains(&ids[1]), "{said}");
    }
    assert_eq!(env.pending().len(), 2);

    // Unique names (one character past the shared part; a strict prefix is tested alone in
    // `approve_always_…`): `show` shows that one, `approve` and `deny` answer it.
    let unique = |i: usize| ids[i][..shared.len() + 1].to_owned();
    let out = env.run(&["show", &unique(0)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!("id: {}", ids[0])),
        "{}",
        text(&out)
    );
    let out = env.run(&["approve", &unique(0)]);
    assert!(out.status.success(), "{}", text(&out));
    let out = env.run(&["deny", &unique(1)]);
    assert!(out.status.success(), "{}", text(&out));
    let (a, b) = (result_text(&s.response(1)).0, result_text(&s.response(2)).0);
    assert!(a != b, "one approved, one denied");
    assert_eq!(env.audit_of(&ids[0])["approval"]["outcome"], "accepted");
    assert_eq!(env.audit_of(&ids[1])["approval"]["outcome"], "declined");
}

#[test]
fn approve_without_an_id_asks_on_the_persons_terminal_and_never_from_a_pipe() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();

    // Not a terminal (stdin is /dev/null here): refused, nothing answered.
    let out = env.run(&["approve"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).starts_with("not_a_terminal: "), "{}", text(&out));
    assert_eq!(env.one_pending()["id"], id.as_str());

    // On a terminal: the call shown whole (the agent's own name, local time, the time left),
    // then the question; "y" approves it.
    let probe = env.command(&["approve"]);
    let bin = probe.get_program().to_string_lossy().into_owned();
    assert!(bin.ends_with("archgate"), "a wrapper is in the way: {bin}");
    let mut c = Command::new("script");
    env.sandbox(&mut c);
    c.args(["-qec", &format!("{bin} approve"), "/dev/null"])
        .env("TZ", "AGT-5:45")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("script(1)");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"y\n").unwrap();
    stdin.flush().unwrap();
    let (ok, body) = result_text(&s.response(1));
    assert!(ok, "{body}");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let said = text(&out);
    assert!(said.contains("[y/N/a]"), "{said}");
    assert!(said.contains(&format!("id: {id}")), "{said}");
    assert!(
        said.contains("agent: archgate-e2e 0.0.0 (its own name for itself, unverified)"),
        "{said}"
    );
    assert!(said.contains(" AGT"), "the deadline in local time: {said}");
    assert!(said.contains(" left, then declined"), "{said}");
    assert!(said.contains(&format!("approved {id}")), "{said}");
    let rec = env.audit_of(&id);
    assert_eq!(rec["approval"]["channel"], "cli");
    assert_eq!(rec["agent"], "archgate-e2e 0.0.0");

    // `log` names the agent beside its client, at local time.
    let out = env
        .command(&["log"])
        .env("TZ", "AGT-5:45")
        .output()
        .unwrap();
    let said = text(&out);
    let line = said
        .lines()
        .find(|l| l.contains("system_status") && l.contains("approval=accepted"))
        .unwrap_or_else(|| panic!("{said}"));
    // The grant and the door it came through first, then the agent's own word for itself
    // (attack 4 F3: a forged clientInfo cannot fake the row's first columns).
    assert!(
        line.contains(" local/stdio (says it is archgate-e2e 0.0.0) "),
        "{line}"
    );
    assert!(line.contains(" AGT"), "{line}");
}

#[test]
fn approve_always_prints_the_rule_and_how_to_revoke_it() {
    let env = Env::with_config(ASK);
    let mut s = StdioServer::session(&env);
    s.call(1, "system_status", json!({}));
    let id = env.one_pending()["id"].as_str().unwrap().to_owned();
    // Named by a strict prefix of its id (the only call waiting).
    let prefix = &id[..id.len() - 3];
    let out = env.run(&["approve", prefix, "--always"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(result_text(&s.response(1)).0);
    let rules = env.run(&["rules", "list", "--json"]);
    let rules: serde_json::Value = serde_json::from_slice(&rules.stdout).unwrap();
    let rule = rules[0]["id"].as_str().expect("a rule").to_owned();
    let said = text(&out);
    assert!(
        said.contains(&format!("standing rule {rule} made")),
        "{said}"
    );
    assert!(
        said.contains("approves system_status for client local"),
        "{said}"
    );
    assert!(
        said.contains(&format!("revoke it: archgate rules revoke {rule}")),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "approved, with a standing rule for identical calls, {id}"
        )),
        "{said}"
    );
}

//! Hand-offs through the real binary where no desktop exists (the sandbox has no Wayland socket
//! and no DISPLAY): the answer says so and gives the exact command and `archgate handoff ID`;
//! one hand-off at a time; and `archgate handoff ID` from a shell without a terminal (an agent's
//! own shell) runs nothing — it is refused, recorded once with its channel, and cannot be claimed
//! again. The desktop, the password and pacman are `tests/run-handoff.sh`'s (as root).

use serde_json::{Value, json};

use crate::support::{Env, StdioServer};

fn refusal(answer: &Value) -> &Value {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    &answer["result"]["structuredContent"]["error"]
}

#[test]
fn without_a_desktop_the_answer_gives_the_command_and_a_shell_without_a_terminal_runs_nothing() {
    let env = Env::with_config("[policy]\nallow = [\"handoff unit restart\"]\n");
    let mut s = StdioServer::initialized(&env);
    let args = json!({"op": "unit_restart", "unit": "archgate-e2e.service", "reason": "a test"});
    s.call(2, "handoff", args.clone());
    let first = s.response(2);
    let e = refusal(&first);
    if e["kind"] == "not_installed" {
        // sudo is one of the test dependencies (scripts/test-deps.sh); say so rather than pass.
        panic!("sudo is not installed here: {e}");
    }
    assert_eq!(e["kind"], "not_available", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no desktop session"),
        "{e}"
    );
    let id = e["details"]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        e["details"]["run_in_own_terminal"],
        format!("archgate handoff {id}")
    );
    let command: Vec<String> = serde_json::from_value(e["details"]["command"].clone()).unwrap();
    // sudo by the absolute path checked: root's alone (attack 5b, F1).
    assert_eq!(command[..3], ["/usr/bin/sudo", "-k", "--"]);
    assert!(command[3].ends_with("/systemctl"), "{command:?}");
    assert_eq!(command[4..], ["restart", "--", "archgate-e2e.service"]);

    // One at a time: the first still waits for the person.
    s.call(3, "handoff", args);
    let second = s.response(3);
    let e = refusal(&second);
    assert_eq!(e["kind"], "busy", "{e}");
    assert!(e["message"].as_str().unwrap().contains(&id), "{e}");

    // The agent's shell has no terminal: the helper claims it, shows it, and runs nothing.
    let out = env.run(&["handoff", &id]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("Refused; nothing ran"), "{stdout}");
    assert!(stdout.contains("archgate-e2e.service"), "{stdout}");
    let events: Vec<Value> = env
        .audit()
        .into_iter()
        .filter(|r| r["event"] == "handoff")
        .collect();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["id"], id.as_str());
    assert_eq!(events[0]["channel"], "own_terminal");
    // Outside a terminal archgate opened, the claimant is not verified (attack 5b, F2).
    assert_eq!(events[0]["verified"], false);
    assert_eq!(events[0]["outcome"], "refused");
    assert_eq!(events[0]["command"], json!(command));

    // It ended: nothing is left to claim.
    let again = env.run(&["handoff", &id]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("no hand-off"),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    drop(s);
}

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
    // The line the person types carries root's limits (attack 30 F4: the person's shell's
    // file-size limit stopped pacman halfway) and root's whole environment after sudo, the facts'
    // (attack 27 F6, 28 F1, 29 F5: sudo kept the person's PATH, and root ran the agent's `ldconfig`), and
    // `archgate handoff ID` is said to be the preferred way.
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains(
            "themselves: /usr/bin/sudo -k -- /usr/bin/prlimit --fsize=unlimited --cpu=unlimited --as=unlimited --data=unlimited --stack=8388608: --nofile=1024: -- /usr/bin/env -i USER=root LOGNAME=root HOME=/root PATH=/usr/bin:/usr/sbin "
        ),
        "{e}"
    );
    assert!(
        message.contains("LC_COLLATE=C LC_CTYPE=C.UTF-8 /usr/bin/"),
        "{e}"
    );
    assert!(message.contains("preferred way"), "{e}");
    assert_eq!(
        e["details"]["typed_line"]
            .as_str()
            .map(|l| l.contains("/usr/bin/env -i ")),
        Some(true),
        "{e}"
    );
    // Typed as it is, up to the program, into a shell whose limits the agent lowered (attack 30
    // F4: `prlimit --pid` on the person's shell, or a `ulimit` in ~/.bashrc): root's program gets
    // them whole. Run where sudo asks root nothing (as root: CI, the hand-off harness); the
    // program is swapped for a shell that prints its limits, so no unit is restarted.
    if nix::unistd::geteuid().is_root() {
        let typed = e["details"]["typed_line"].as_str().unwrap();
        let cut = typed.find(&format!(" {} restart", command[3])).unwrap();
        let line = format!(
            "{} /bin/sh -c 'ulimit -f; ulimit -n; ulimit -t'",
            &typed[..cut]
        );
        let out = std::process::Command::new("/bin/bash")
            .args([
                "-c",
                &format!("ulimit -S -f 500; ulimit -S -n 64; ulimit -S -t 5; {line}"),
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{line}\n{out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "unlimited\n1024\nunlimited\n",
            "{line}"
        );
    }

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

/// A pacman root with one config file and the `.pacnew` pacman left beside it (our own text;
/// the shape `pkg_pacnew` finds under `RootDir/etc`, as tests/handoff/test_handoff.py uses).
fn pacnew_world(dir: &std::path::Path, live: &str, new: &str) -> (std::path::PathBuf, String) {
    let root = dir.join("root");
    let etc = root.join("etc");
    std::fs::create_dir_all(&etc).unwrap();
    std::fs::create_dir_all(dir.join("db/local")).unwrap();
    std::fs::create_dir_all(dir.join("db/sync")).unwrap();
    std::fs::write(etc.join("handoff.conf"), live).unwrap();
    let pacnew = etc.join("handoff.conf.pacnew");
    std::fs::write(&pacnew, new).unwrap();
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nRootDir = {}\nDBPath = {}\nArchitecture = x86_64\n",
            root.display(),
            dir.join("db").display()
        ),
    )
    .unwrap();
    (conf, pacnew.display().to_string())
}

#[test]
fn adopting_a_pacnew_asks_with_the_change_as_a_bounded_escaped_diff() {
    let dir = tempfile::tempdir().unwrap();
    let live = "a = 1\nb = 2\nc = 3\n";
    let new = "a = 1\nb = 20\nc = 3\n<b>\u{1b}[2J\u{202e}\n";
    let (conf, pacnew) = pacnew_world(dir.path(), live, new);
    let env = Env::with_config(&format!(
        "[arch]\npacman_conf = \"{}\"\n[policy]\nask = [\"handoff\"]\n\
         [approval]\npage = false\nnotifications = false\ntimeout_s = 120\n",
        conf.display()
    ));
    let mut s = StdioServer::initialized(&env);
    s.call(
        2,
        "handoff",
        json!({"op": "pacnew_adopt", "path": pacnew, "reason": "take the new defaults"}),
    );
    if !nix::unistd::geteuid().is_root() {
        // A normal user's fixture lies in their own directory, which the agent (the same uid)
        // could swap between the question and root's `mv`: refused before anyone is asked
        // (attack 7 F3). As root (CI) the world is root's all the way and the question is shown.
        let (ok, body) = crate::support::result_text(&s.response(2));
        // Refused by whichever check meets the person's directory first: pacman's
        // configuration (not root's alone) or the .pacnew's own path (root is not alone).
        assert!(
            !ok && (body.contains("not root's alone") || body.contains("root is not alone")),
            "{body}"
        );
        assert!(env.pending().is_empty(), "asked");
        return;
    }
    let q = env.one_pending();
    let d = &q["picture"];
    assert_eq!(d["kind"], "diff", "{q}");
    assert!(
        d["path"].as_str().unwrap().ends_with("/etc/handoff.conf"),
        "{d}"
    );
    assert_eq!(
        (d["added"].as_u64(), d["removed"].as_u64()),
        (Some(2), Some(1)),
        "{d}"
    );
    let lines: Vec<(String, String)> = d["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["op"].as_str().unwrap().to_owned(),
                l["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        lines.contains(&("removed".into(), "b = 2".into())),
        "{lines:?}"
    );
    assert!(
        lines.contains(&("added".into(), "b = 20".into())),
        "{lines:?}"
    );
    // The agent may have chosen nothing here, but a config file's text is still shown, never
    // obeyed: visible escapes for the screen.
    assert!(
        lines.contains(&("added".into(), "<b>\\x1b[2J\\u{202e}".into())),
        "{lines:?}"
    );

    // The CLI's short form: what is written, the counts, the first lines.
    let id = q["id"].as_str().unwrap().to_owned();
    for args in [vec!["show", id.as_str()], vec!["approvals"]] {
        let out = env.run(&args);
        let said = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains("change: 2 lines added, 1 removed, from "),
            "{args:?}: {said}"
        );
        assert!(
            said.contains("writes: ") && said.contains("/etc/handoff.conf\n"),
            "{said}"
        );
        assert!(
            said.contains("- b = 2") && said.contains("+ b = 20"),
            "{said}"
        );
        assert!(said.contains("+ <b>\\x1b[2J\\u{202e}"), "{said}");
        assert!(
            !said.contains('\u{1b}') && !said.contains('\u{202e}'),
            "{said:?}"
        );
    }
    let out = env.run(&["deny", &id]);
    assert!(out.status.success());
    let _ = s.response(2);
    // Nothing was written.
    assert_eq!(
        std::fs::read_to_string(dir.path().join("root/etc/handoff.conf")).unwrap(),
        live
    );
}

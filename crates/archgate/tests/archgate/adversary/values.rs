//! Class: *a route whose values are run as code is judged by its wrapper* — every argument check
//! (privilege words, archgate's own name, the plugin guard, the destructive table, pins, the
//! trust chain) read words in text a shell or the route's script then runs, so `S=sud; ${S}o`,
//! `launch tui systemctl reboot`, `hook ../../x` and `a=arch; ${a}gate approve` passed as `act`
//! and developer mode ran them (attack 3, F2, F3, F4, F9, F10).
//!
//! What it tries, against the real binary and a fixture Omarchy whose scripts do with their
//! arguments what Omarchy 4's do (`launch tui` runs its command, `launch floating terminal with
//! presentation` puts its text in `bash -c`, `hook` runs a file named from its value, and a route
//! archgate has no table entry for that runs `"$@"`): with developer mode on, an allow rule and an
//! "Always" offer in reach, each call must park for the person as destructive — the exact command
//! shown — and nothing may run before the yes. The `shell` route forwarding a plugin method is
//! blocked like `shell_call` is.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, result_text, text};

#[test]
fn a_route_that_runs_its_value_is_never_approved_by_developer_mode_or_a_rule() {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "launch tui",
                args: "<command> [args...]",
            },
            Entry {
                words: "launch floating terminal with presentation",
                args: "<command>",
            },
            Entry {
                words: "hook",
                args: "[name] [args...]",
            },
            // Not in archgate's table: found by reading what its script does with "$@".
            Entry {
                words: "run later",
                args: "<command...>",
            },
        ],
        "[policy]\nallow = [\"omarchy launch floating terminal with presentation\"]\n",
    );
    // The scripts do with their values what Omarchy 4's do (never reached here: nothing may run).
    rig.set_script("omarchy-launch-tui", r#"exec "$1" "$@""#);
    rig.set_script(
        "omarchy-launch-floating-terminal-with-presentation",
        "cmd=\"$*\"\nbash -c \"$cmd\"",
    );
    rig.set_script("omarchy-hook", r#"bash "$HOME/.config/omarchy/hooks/$1""#);
    rig.set_script("omarchy-run-later", r#"sleep 1; "$@""#);
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));

    let calls = [
        json!({"route": "launch tui", "args": ["systemctl", "reboot"]}),
        json!({"route": "launch floating terminal with presentation", "args": ["S=sud; ${S}o id"]}),
        json!({"route": "run later", "args": ["a=arch; ${a}gate approve x"]}),
    ];
    // A relative value that climbs with `..` is refused before anyone is asked (attack 37 F5):
    // never automatic, a fortiori.
    let (ok, body) = {
        s.call(
            9,
            "omarchy_run",
            json!({"route": "hook", "args": ["../../../../tmp/x"]}),
        );
        result_text(&s.response(9))
    };
    assert!(!ok && body.contains("climbs"), "{body}");
    assert!(rig.ran().is_empty(), "ran");
    for (i, args) in calls.iter().enumerate() {
        let id = 10 + i as u64;
        s.call(id, "omarchy_run", args.clone());
        let q = env.one_pending();
        assert_eq!(q["tier"], "destructive", "{args}: {q}");
        assert!(
            rig.ran().is_empty(),
            "{args} ran before the person answered"
        );
        let qid = q["id"].as_str().unwrap().to_owned();
        let out = env.run(&["deny", &qid]);
        assert!(out.status.success(), "{}", text(&out));
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok, "{args}: a declined call answered as a success: {body}");
        assert!(rig.ran().is_empty(), "{args} ran after a no");
    }
}

#[test]
fn the_shell_route_is_judged_as_the_ipc_call_it_forwards() {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "shell",
            args: "[-q] <target> <method> [args...]",
        }],
        "",
    );
    let env = &rig.env;
    for args in [
        json!(["shell", "rescanPlugins"]),
        json!(["-q", "shell", "setPluginEnabled", "bar", "false"]),
    ] {
        let req = json!({"route": "shell", "args": args}).to_string();
        let out = env.run(&["policy", "explain", "omarchy_run", &req]);
        let t = String::from_utf8_lossy(&out.stdout);
        assert!(t.contains("tier:     blocked"), "{req}: {t}");
    }
    // Any other forwarded call runs what the shell is told: destructive, never automatic.
    let req = json!({"route": "shell", "args": ["shell", "call", "omarchy.menu", "runAction", "systemctl reboot"]}).to_string();
    let out = env.run(&["policy", "explain", "omarchy_run", &req]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(t.contains("tier:     destructive"), "{t}");
    // The same IPC call through `shell_call`'s own door is destructive too: `guard::tests`
    // (`ipc_calls_that_run_what_they_are_given`).
    assert!(rig.ran().is_empty());
}

/// The same door for addresses: `launch` opens only http, https and mailto; a route that opens
/// an address given as its value (`launch browser`, `launch webapp`) is held to the same rule.
#[test]
fn a_route_that_opens_an_address_opens_only_what_launch_opens() {
    let rig = OmarchyRig::new(
        &[Entry {
            words: "launch browser",
            args: "[url]",
        }],
        "",
    );
    let mut s = StdioServer::session(&rig.env);
    for (i, url) in ["file:///etc/passwd", "javascript:alert(1)", "FILE://x/y"]
        .iter()
        .enumerate()
    {
        let id = 1 + i as u64;
        s.call(
            id,
            "omarchy_run",
            json!({"route": "launch browser", "args": [url]}),
        );
        let (ok, body) = result_text(&s.response(id));
        assert!(!ok && body.contains("http"), "{url}: {body}");
    }
    assert!(rig.ran().is_empty());
}

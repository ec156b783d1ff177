//! Class: "a signal derived from the withheld text" — `journal` withholds a logged command
//! line's arguments, so no part of a read answer may depend on them: not the entries found, not
//! the page's `next` cursor, not how full the page is, not its note (attack 14 F4: a grep was
//! journalctl's, on the whole message; its note, then its `next` with `limit: 1` and a pattern
//! that also matched a visible line, said whether sudo's `-pS3cret…` began with a guess — a
//! password recovered a character at a time by read calls, no question). And the same command
//! line in the audit records' other spellings (attack 14 F1: sudo's `USER_CMD … cmd=<hex>`, the
//! kernel's `audit: type=1309 … a3=…`) is withheld by its fields.
//!
//! What it tries, against the real binary over stdio, on journal files the real
//! systemd-journal-remote made: a right and a wrong guess at the password (with and without a
//! visible match, limits 1 and 2) — the answers must be byte for byte the same; then greps for
//! the audit spellings (`cmd=6D`, `a3=`, the hex of `-pS3`) — nothing.

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Env, StdioServer};

const SECRET: &str = "S3cretPassw0rd";

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02X}")).collect()
}

/// sudo's line, a visible PAM line after it, and the audit records of the same command.
fn make_journal(dir: &std::path::Path) {
    let cmd = format!("mysql -u root -p{SECRET} -e DROP");
    let lines = [
        (
            "syslog",
            "sudo",
            format!("alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/{cmd}"),
        ),
        (
            "syslog",
            "run0",
            "pam_unix(run0:session): session opened for user root(uid=0) by alice(uid=1000)"
                .to_owned(),
        ),
        (
            "audit",
            "sudo",
            format!(
                "USER_CMD pid=5397 uid=1000 auid=1000 ses=2 msg='cwd=\"/home/alice\" cmd={} exe=\"/usr/bin/sudo\" terminal=pts/1 res=success'",
                hex(&cmd)
            ),
        ),
        (
            "kernel",
            "kernel",
            format!(
                "audit: type=1309 audit(1765000000.124:457): argc=6 a0=\"mysql\" a1=\"-u\" a2=\"root\" a3=\"-p{SECRET}\" a4=\"-e\" a5=\"DROP\""
            ),
        ),
    ];
    let mut export = String::new();
    for (i, (transport, ident, msg)) in lines.iter().enumerate() {
        let field = if *transport == "audit" {
            "_COMM"
        } else {
            "SYSLOG_IDENTIFIER"
        };
        export.push_str(&format!(
            "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={}\n_TRANSPORT={transport}\n\
             PRIORITY=5\n{field}={ident}\nMESSAGE={msg}\n\n",
            1_764_500_000_000_000 + i as u64 * 1_000_000,
            i * 1000 + 1,
            "5e".repeat(16),
        ));
    }
    let mut child = Command::new("/lib/systemd/systemd-journal-remote")
        .arg(format!("--output={}", dir.join("t.journal").display()))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("systemd-journal-remote (scripts/test-deps.sh installs it)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(export.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_read_answer_tells_nothing_of_the_text_it_withholds() {
    let env = Env::new();
    let journal = tempfile::tempdir().unwrap();
    make_journal(journal.path());
    env.write_config(&format!(
        "[diagnostics]\njournal_dir = \"{}\"\n",
        journal.path().display()
    ));
    let mut s = StdioServer::initialized(&env);
    let mut id = 1;
    let mut call = |args: Value| -> Value {
        id += 1;
        let r = s.request(
            id,
            "tools/call",
            json!({"name": "journal", "arguments": args}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["structuredContent"].clone()
    };
    for visible in ["session opened|", ""] {
        for limit in [1, 2] {
            let guess = |c: &str| json!({"grep": format!("{visible}COMMAND=/usr/bin/mysql -u root -pS3cret{c}"), "limit": limit});
            let right = call(guess("P"));
            let wrong = call(guess("X"));
            assert_eq!(
                right, wrong,
                "{visible:?} limit {limit}: the answer tells the guess"
            );
            assert!(right.get("next").is_none(), "{right}");
        }
    }
    for grep in ["cmd=6D", "a3=", &hex("-pS3"), "S3c"] {
        let page = call(json!({"grep": grep}));
        assert_eq!(page["entries"], json!([]), "grep {grep}: {page}");
    }
    let all = call(json!({}));
    let text = all.to_string();
    assert!(
        !text.contains(SECRET) && !text.contains(&hex("-pS3")),
        "{text}"
    );
    assert_eq!(all["entries"].as_array().unwrap().len(), 4, "{all}");
    s.close();
}

/// Attack 16 F4/F5/F7–F10: the writers of command lines write other shapes than the one each
/// was recognised by — sudo's `(command continued)` records and a long `ENV=` split before
/// `COMMAND=` (real sudo 1.9.13's shapes, captured by the attacker), systemd's job line under
/// `StatusUnitFormat=description` (no `UNIT - `; the unit is journald's `UNIT=`), polkitd's
/// D-Bus caller subject `system-bus-name::1.77 [cmdline]`, doas's `command not permitted for
/// alice: <cmdline>`, cronie's `CMDEND (<cmdline>)`, dbus-daemon's `comm="<cmdline>"`. Our
/// own text in those shapes; each entry's fields as journald writes them. Alert priority, so
/// the `journal://boot/0` resource (warnings and worse) reads them too.
fn make_journal_of_other_shapes(dir: &std::path::Path) {
    let started = "39f53479d3a045ac8e11786248231fbf";
    let lines: Vec<Vec<(&str, String)>> = vec![
        vec![
            ("SYSLOG_IDENTIFIER", "sudo".into()),
            ("_COMM", "sudo".into()),
            (
                "MESSAGE",
                format!(
                    "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/curl {}",
                    "--header=X-Filler:aaaa ".repeat(38)
                ),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "sudo".into()),
            ("_COMM", "sudo".into()),
            (
                "MESSAGE",
                format!(
                    "   alice : (command continued) --header=Authorization:Bearer:{SECRET} https://api.example/x"
                ),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "sudo".into()),
            (
                "MESSAGE",
                format!(
                    "root : (command continued) ENV=PGPASSWORD={SECRET} {}",
                    "A=b ".repeat(200)
                ),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "systemd".into()),
            ("_COMM", "systemd".into()),
            ("UNIT", "run-u42.service".into()),
            ("MESSAGE_ID", started.into()),
            (
                "MESSAGE",
                format!("Started /usr/bin/mysql -u root -p{SECRET} -e DROP."),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "polkitd".into()),
            (
                "MESSAGE",
                format!(
                    "Operator of unix-session:2 FAILED to authenticate to gain authorization for action org.freedesktop.systemd1.manage-units for system-bus-name::1.81 [systemctl start backup@--password={SECRET}.service] (owned by unix-user:alice)"
                ),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "doas".into()),
            (
                "MESSAGE",
                format!("command not permitted for alice: mysql -u root -p{SECRET} -e DROP"),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "CROND".into()),
            (
                "MESSAGE",
                format!("(alice) CMDEND (/usr/bin/backup --password={SECRET})"),
            ),
        ],
        vec![
            ("_COMM", "dbus-daemon".into()),
            ("_EXE", "/usr/bin/dbus-daemon".into()),
            (
                "MESSAGE",
                format!(
                    "[system] Activating via systemd: service name='org.freedesktop.nm_dispatcher' unit='dbus-org.freedesktop.nm-dispatcher.service' requested by ':1.60' (uid=1000 pid=2345 comm=\"nmcli dev wifi connect Home password {SECRET}\")"
                ),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "sudo".into()),
            (
                "MESSAGE",
                "pam_unix(sudo:session): session opened for user root(uid=0) by alice(uid=1000)"
                    .into(),
            ),
        ],
    ];
    let mut export = String::new();
    for (i, fields) in lines.iter().enumerate() {
        export.push_str(&format!(
            "__REALTIME_TIMESTAMP={}\n__MONOTONIC_TIMESTAMP={}\n_BOOT_ID={}\n_TRANSPORT=syslog\nPRIORITY=1\n",
            1_764_500_000_000_000 + i as u64 * 1_000_000,
            i * 1000 + 1,
            "6f".repeat(16),
        ));
        for (k, v) in fields {
            export.push_str(&format!("{k}={v}\n"));
        }
        export.push('\n');
    }
    let mut child = Command::new("/lib/systemd/systemd-journal-remote")
        .arg(format!("--output={}", dir.join("t.journal").display()))
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("systemd-journal-remote (scripts/test-deps.sh installs it)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(export.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_writer_of_command_lines_shows_only_its_shapes_known_safe() {
    let env = Env::new();
    let journal = tempfile::tempdir().unwrap();
    make_journal_of_other_shapes(journal.path());
    env.write_config(&format!(
        "[diagnostics]\njournal_dir = \"{}\"\n",
        journal.path().display()
    ));
    let mut s = StdioServer::initialized(&env);
    let mut id = 1;
    let mut call = |args: Value| -> Value {
        id += 1;
        let r = s.request(
            id,
            "tools/call",
            json!({"name": "journal", "arguments": args}),
        );
        assert_eq!(r["result"]["isError"], false, "{r}");
        r["result"]["structuredContent"].clone()
    };
    let all = call(json!({"limit": 50}));
    let entries = all["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 9, "{all}");
    assert!(!all.to_string().contains("S3c"), "{all}");
    let messages: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(
        messages.contains(
            &"pam_unix(sudo:session): session opened for user root(uid=0) by alice(uid=1000)"
        ),
        "a shape known safe is shown: {messages:?}"
    );
    assert_eq!(
        entries.iter().filter(|e| e["withheld"] == true).count(),
        8,
        "{all}"
    );
    for grep in ["S3c", "Bearer", "PGPASSWORD", "password=", "-p.*DROP"] {
        let page = call(json!({"grep": grep}));
        assert_eq!(page["entries"], json!([]), "grep {grep}: {page}");
    }
    // What is shown is what a grep finds: the programs kept, the notes.
    let kept = call(json!({"grep": "curl|systemctl|CMDEND \\(/usr/bin/backup|comm=\"nmcli"}));
    assert_eq!(kept["entries"].as_array().unwrap().len(), 4, "{kept}");
    let r = s.request(99, "resources/read", json!({"uri": "journal://boot/0"}));
    let text = r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    let v: Value = serde_json::from_str(text).unwrap_or_else(|_| panic!("{r}"));
    assert_eq!(v["entries"].as_array().unwrap().len(), 9, "{v}");
    assert!(!text.contains("S3c"), "{text}");
    s.close();
}

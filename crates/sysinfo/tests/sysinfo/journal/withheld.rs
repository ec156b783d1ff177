//! Attack 5a F9: `journal` (read, no question) answered sudo's log lines whole, and a password
//! given as an argument with them: `journal {"grep": "COMMAND="}` listed every elevated command
//! line. Entries in the exact shapes sudo, pkexec and doas log, made into a real journal file;
//! journalctl (the oracle) has them whole, the tool's answer keeps each program and withholds its
//! arguments, and a grep cannot test a withheld argument.

use archgate_sysinfo::journal::{self, JournalQuery};

use super::*;

const SECRET: &str = "S3cretPassw0rd";

fn export_with_command_lines() -> Vec<u8> {
    let mut out = Vec::new();
    let lines = [
        (
            "sudo",
            format!(
                "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql -u root -p{SECRET} -e DROP"
            ),
        ),
        (
            "pkexec",
            format!(
                "alice: Executing command [USER=root] [TTY=unknown] [CWD=/home/alice] [COMMAND=/usr/bin/tee --token={SECRET}]"
            ),
        ),
        (
            "doas",
            format!(
                "alice ran command /usr/bin/curl -u bob:{SECRET} https://x as root from /home/alice"
            ),
        ),
        (
            "sshd",
            "Accepted publickey for alice from 10.0.0.2".to_owned(),
        ),
    ];
    for (i, (ident, msg)) in lines.iter().enumerate() {
        let t = (T0 + (i as u64 + 1) * 1_000_000).to_string();
        entry(
            &mut out,
            &[
                ("__REALTIME_TIMESTAMP", &t),
                ("__MONOTONIC_TIMESTAMP", &format!("{}", i + 1)),
                ("_BOOT_ID", BOOT_B),
                ("_TRANSPORT", "syslog"),
                ("PRIORITY", "5"),
                ("SYSLOG_IDENTIFIER", ident),
                ("MESSAGE", msg),
            ],
            &[],
        );
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logged_command_lines_keep_their_program_and_withhold_their_arguments() {
    let dir = journal_dir(export_with_command_lines()).await;
    let d = dir.path();
    let p = permit();
    // The oracle has them whole: what the tool withholds is really there.
    let whole = oracle(d, &[]).await;
    assert_eq!(
        whole
            .iter()
            .filter(|e| text(&e["MESSAGE"]).contains(SECRET))
            .count(),
        3
    );
    let page = journal::query(&p, &opts(d), &q(50)).await.unwrap();
    assert_eq!(page.entries.len(), 4);
    for e in &page.entries {
        assert!(!e.message.contains(SECRET), "{e:?}");
    }
    let shown: Vec<&str> = page.entries.iter().map(|e| e.message.as_str()).collect();
    for program in ["/usr/bin/mysql", "/usr/bin/tee", "/usr/bin/curl"] {
        assert!(
            shown
                .iter()
                .any(|m| m.contains(program) && m.contains("withheld")),
            "{shown:?}"
        );
    }
    let json = serde_json::to_value(&page).unwrap();
    assert_eq!(
        json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["withheld"] == true)
            .count(),
        3,
        "{json}"
    );
    // A grep matches each message as shown: the program stays findable, a withheld argument
    // never is (attack 14 F4), and every grep's answer says so.
    for (grep, want) in [
        ("COMMAND=", 2),
        ("mysql", 1),
        ("-pS3cret", 0),
        ("S3c", 0),
        ("S3c|arguments withheld", 3),
        ("Accepted publickey", 1),
    ] {
        let got = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(grep.to_owned()),
                ..q(50)
            },
        )
        .await
        .unwrap();
        assert_eq!(got.entries.len(), want, "grep {grep}: {:?}", got.entries);
        assert!(got.entries.iter().all(|e| !e.message.contains(SECRET)));
        assert_eq!(got.note.as_deref(), Some(journal::GREP_ON_SHOWN), "{grep}");
    }
    assert_eq!(oracle(d, &["--grep", "-pS3cret"]).await.len(), 1);
}

/// Attack 10 F3: the same command lines, logged by the programs that record another's — polkitd
/// (every pkexec authorisation, and an agent's registration), systemd (a `systemd-run`/`run0`
/// unit's description is its command line), cron, the kernel's audit records (no identifier),
/// and sudo's own JSON log format.
/// Shapes: polkit's `polkitbackendinteractiveauthority.c` log formats, systemd's
/// `VERB UNIT - DESCRIPTION` unit lines, cronie's `(user) CMD (command)`, the audit
/// subsystem's EXECVE and PROCTITLE records; our own text in those shapes.
fn export_with_other_writers() -> Vec<u8> {
    let mut out = Vec::new();
    let lines: [(Option<&str>, &str, String); 9] = [
        (
            Some("polkitd"),
            "syslog",
            format!(
                "Operator of unix-session:2 successfully authenticated as unix-user:root to gain TEMPORARY authorization for action org.freedesktop.policykit.exec for unix-process:5397:2186455 [pkexec /usr/bin/tee --token={SECRET}] (owned by unix-user:alice)"
            ),
        ),
        (
            Some("polkitd"),
            "syslog",
            format!(
                "Registered Authentication Agent for unix-session:2 (system bus name :1.77 [/usr/bin/agent --key={SECRET}], object path /org/freedesktop/PolicyKit1/AuthenticationAgent, locale en_US.UTF-8)"
            ),
        ),
        (
            Some("systemd"),
            "journal",
            format!("Started run-u42.service - /usr/bin/mysql -u root -p{SECRET} -e DROP."),
        ),
        (
            Some("CROND"),
            "syslog",
            format!("(root) CMD (/usr/bin/backup --password={SECRET})"),
        ),
        (
            None,
            "audit",
            format!("EXECVE argc=3 a0=\"mysql\" a1=\"-u\" a2=\"-p{SECRET}\""),
        ),
        (
            None,
            "audit",
            format!("PROCTITLE proctitle=\"mysql -p{SECRET}\""),
        ),
        (
            Some("systemd"),
            "journal",
            "Started user@1000.service - User Manager for UID 1000.".to_owned(),
        ),
        (
            Some("systemd"),
            "journal",
            format!("Started run-u43.service - [run0] mysql --password={SECRET}."),
        ),
        // sudo with `Defaults log_format=json` (sudoers(5)): the event as JSON, no `COMMAND=`.
        (
            Some("sudo"),
            "syslog",
            format!(
                "@cee:{{\"sudo\":{{\"accept\":{{\"command\":\"/usr/bin/mysql\",\"runargv\":[\"mysql\",\"-u\",\"root\",\"-p{SECRET}\"],\"runuser\":\"root\",\"submituser\":\"alice\"}}}}}}"
            ),
        ),
    ];
    for (i, (ident, transport, msg)) in lines.iter().enumerate() {
        let t = (T0 + (i as u64 + 1) * 1_000_000).to_string();
        let mut fields = vec![
            ("__REALTIME_TIMESTAMP", t.as_str()),
            ("__MONOTONIC_TIMESTAMP", "1"),
            ("_BOOT_ID", BOOT_B),
            ("_TRANSPORT", transport),
            ("PRIORITY", "5"),
            ("MESSAGE", msg.as_str()),
        ];
        if let Some(ident) = ident {
            fields.push(("SYSLOG_IDENTIFIER", ident));
        }
        entry(&mut out, &fields, &[]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_lines_logged_by_polkitd_systemd_cron_and_audit_are_withheld_too() {
    let dir = journal_dir(export_with_other_writers()).await;
    let d = dir.path();
    let p = permit();
    let whole = oracle(d, &[]).await;
    assert_eq!(
        whole
            .iter()
            .filter(|e| text(&e["MESSAGE"]).contains(SECRET))
            .count(),
        8,
        "the oracle has every secret whole"
    );
    let page = journal::query(&p, &opts(d), &q(50)).await.unwrap();
    assert_eq!(page.entries.len(), 9, "{:?}", page.entries);
    for e in &page.entries {
        assert!(!e.message.contains(SECRET), "{e:?}");
    }
    let shown: Vec<&str> = page.entries.iter().map(|e| e.message.as_str()).collect();
    for program in [
        "[pkexec ",
        "[/usr/bin/agent ",
        "- /usr/bin/mysql ",
        "CMD (/usr/bin/backup ",
        "a0=\"mysql\" ",
        "- [run0] ",
        "\"runargv\":[\"mysql\",",
    ] {
        assert!(
            shown
                .iter()
                .any(|m| m.contains(program) && m.contains("withheld")),
            "{program}: {shown:?}"
        );
    }
    assert!(
        shown.contains(&"Started user@1000.service - User Manager for UID 1000."),
        "a unit's ordinary description is shown: {shown:?}"
    );
    for grep in [SECRET, "token=", "S3c", "-p.*S3"] {
        let got = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(grep.to_owned()),
                ..q(50)
            },
        )
        .await
        .unwrap();
        assert!(
            got.entries.is_empty(),
            "grep {grep} matches only withheld text: {:?}",
            got.entries
        );
    }
    // What is shown is found: the withheld entries as shown, never their arguments.
    let shown = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            grep: Some("mysql".to_owned()),
            ..q(50)
        },
    )
    .await
    .unwrap();
    assert_eq!(shown.entries.len(), 3, "{:?}", shown.entries);
    assert!(
        shown
            .entries
            .iter()
            .all(|e| e.withheld && !e.message.contains(SECRET))
    );
}

/// Attack 14 F1: the audit records carry the same command line in other spellings — sudo's own
/// `USER_CMD … cmd=<hex>` (libaudit's `audit_log_user_command`) through journald's audit
/// transport and as the kernel prints it when no auditd runs, and the kernel's printk of EXECVE
/// and PROCTITLE by number (`audit: type=1309 …`, `type=1327`). Our own text in those shapes.
fn export_with_audit_spellings() -> Vec<u8> {
    let hex: String = format!("mysql -u root -p{SECRET} -e DROP")
        .bytes()
        .map(|b| format!("{b:02X}"))
        .collect();
    let mut out = Vec::new();
    let lines: [(&str, Option<&str>, String); 5] = [
        (
            "audit",
            None,
            format!(
                "USER_CMD pid=5397 uid=1000 auid=1000 ses=2 msg='cwd=\"/home/alice\" cmd={hex} exe=\"/usr/bin/sudo\" terminal=pts/1 res=success'"
            ),
        ),
        (
            "kernel",
            Some("kernel"),
            format!(
                "audit: type=1123 audit(1765000000.123:456): pid=5397 uid=1000 auid=1000 ses=2 msg='cwd=\"/home/alice\" cmd={hex} exe=\"/usr/bin/sudo\" terminal=pts/1 res=success'"
            ),
        ),
        (
            "kernel",
            Some("kernel"),
            format!(
                "audit: type=1309 audit(1765000000.124:457): argc=6 a0=\"mysql\" a1=\"-u\" a2=\"root\" a3=\"-p{SECRET}\" a4=\"-e\" a5=\"DROP\""
            ),
        ),
        (
            "kernel",
            Some("kernel"),
            format!("audit: type=1327 audit(1765000000.124:457): proctitle={hex}"),
        ),
        (
            "kernel",
            Some("kernel"),
            "audit: type=1130 audit(1765000000.2:458): pid=1 uid=0 msg='unit=sshd comm=\"systemd\" exe=\"/usr/lib/systemd/systemd\" res=success'".to_owned(),
        ),
    ];
    for (i, (transport, ident, msg)) in lines.iter().enumerate() {
        let t = (T0 + (i as u64 + 1) * 1_000_000).to_string();
        let mut fields = vec![
            ("__REALTIME_TIMESTAMP", t.as_str()),
            ("__MONOTONIC_TIMESTAMP", "1"),
            ("_BOOT_ID", BOOT_B),
            ("_TRANSPORT", *transport),
            ("PRIORITY", "5"),
            ("MESSAGE", msg.as_str()),
        ];
        if let Some(ident) = ident {
            fields.push(("SYSLOG_IDENTIFIER", ident));
        }
        if *transport == "audit" {
            // journald's audit transport names the process by the record's `comm=`.
            fields.push(("_COMM", "sudo"));
        }
        entry(&mut out, &fields, &[]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audit_records_have_their_command_line_fields_withheld_whatever_their_name() {
    let dir = journal_dir(export_with_audit_spellings()).await;
    let d = dir.path();
    let p = permit();
    let hex_head = "6D7973716C202D7520726F6F74";
    let whole = oracle(d, &[]).await;
    assert_eq!(
        whole
            .iter()
            .filter(|e| {
                let m = text(&e["MESSAGE"]);
                m.contains(SECRET) || m.contains(hex_head)
            })
            .count(),
        4
    );
    let page = journal::query(&p, &opts(d), &q(50)).await.unwrap();
    assert_eq!(page.entries.len(), 5);
    for e in &page.entries {
        assert!(
            !e.message.contains(SECRET) && !e.message.contains(hex_head),
            "{e:?}"
        );
    }
    let shown: Vec<&str> = page.entries.iter().map(|e| e.message.as_str()).collect();
    assert!(
        shown
            .iter()
            .any(|m| m.contains("a0=\"mysql\" [arguments withheld"))
    );
    assert_eq!(
        shown
            .iter()
            .filter(|m| m.contains("cmd=[arguments withheld"))
            .count(),
        2
    );
    assert!(
        shown
            .iter()
            .any(|m| m.contains("proctitle=[arguments withheld"))
    );
    assert!(shown.iter().any(|m| m.contains("unit=sshd")), "{shown:?}");
    for grep in ["cmd=6D", "a3=", "S3c", "2D70533363"] {
        let got = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(grep.to_owned()),
                ..q(50)
            },
        )
        .await
        .unwrap();
        assert!(got.entries.is_empty(), "grep {grep}: {:?}", got.entries);
    }
}

/// Attack 16: default-deny per writer of command lines, on real journal files. Each writer's
/// entry as journald records it (identifier, `_COMM`, `_EXE`, `UNIT`/`USER_UNIT`,
/// `MESSAGE_ID`): shapes not known safe are withheld whole, known safe ones shown, known
/// command lines cut to their program. Shapes: cronie's `CMDEND` (do_command.c since 1.5.6,
/// read through the unit filter `units cronie.service` uses), fcron's `Job '…' started`,
/// util-linux su's `(to root) alice on pts/1`, systemd-run's `Running as unit:`, the user
/// manager's job line under `StatusUnitFormat=description` (`USER_UNIT=`), a sudo record named
/// by `_EXE` only. Our own text in those shapes.
fn export_with_writers_other_shapes() -> Vec<u8> {
    let mut out = Vec::new();
    let started = "39f53479d3a045ac8e11786248231fbf";
    let lines: Vec<Vec<(&str, String)>> = vec![
        vec![
            ("SYSLOG_IDENTIFIER", "CROND".into()),
            ("_SYSTEMD_UNIT", "cronie.service".into()),
            (
                "MESSAGE",
                format!("(alice) CMDEND (/usr/bin/backup --password={SECRET})"),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "CROND".into()),
            ("_SYSTEMD_UNIT", "cronie.service".into()),
            ("MESSAGE", "(CRON) STARTUP (1.7.2)".into()),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "fcron".into()),
            (
                "MESSAGE",
                format!("Job '/usr/bin/backup -p{SECRET}' started for user alice (pid 4242)"),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "su".into()),
            ("MESSAGE", "(to root) alice on pts/1".into()),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "systemd-run".into()),
            (
                "MESSAGE",
                "Running as unit: run-u12.service; invocation ID: 0123abcd".into(),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "systemd".into()),
            ("USER_UNIT", "run-u7.service".into()),
            ("MESSAGE_ID", started.into()),
            (
                "MESSAGE",
                format!("Started /usr/bin/pg_dump --dbname=postgresql://app:{SECRET}@db/app."),
            ),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "systemd".into()),
            ("UNIT", "sshd.service".into()),
            ("MESSAGE_ID", started.into()),
            ("MESSAGE", "Started OpenSSH Daemon.".into()),
        ],
        vec![
            ("SYSLOG_IDENTIFIER", "logger-of-mine".into()),
            ("_EXE", "/usr/bin/sudo".into()),
            (
                "MESSAGE",
                format!("   alice : (command continued) --token={SECRET}"),
            ),
        ],
    ];
    for (i, fields) in lines.iter().enumerate() {
        let t = (T0 + (i as u64 + 1) * 1_000_000).to_string();
        let mut f: Vec<(&str, &str)> = vec![
            ("__REALTIME_TIMESTAMP", &t),
            ("__MONOTONIC_TIMESTAMP", "1"),
            ("_BOOT_ID", BOOT_B),
            ("_TRANSPORT", "syslog"),
            ("PRIORITY", "5"),
        ];
        f.extend(fields.iter().map(|(k, v)| (*k, v.as_str())));
        entry(&mut out, &f, &[]);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_of_command_lines_shows_only_its_shapes_known_safe() {
    let dir = journal_dir(export_with_writers_other_shapes()).await;
    let d = dir.path();
    let p = permit();
    let whole = oracle(d, &[]).await;
    assert_eq!(
        whole
            .iter()
            .filter(|e| text(&e["MESSAGE"]).contains(SECRET))
            .count(),
        4
    );
    let page = journal::query(&p, &opts(d), &q(50)).await.unwrap();
    assert_eq!(page.entries.len(), 8);
    let shown: Vec<&str> = page.entries.iter().map(|e| e.message.as_str()).collect();
    assert!(shown.iter().all(|m| !m.contains(SECRET)), "{shown:?}");
    for safe in [
        "(CRON) STARTUP (1.7.2)",
        "(to root) alice on pts/1",
        "Running as unit: run-u12.service; invocation ID: 0123abcd",
        "Started OpenSSH Daemon.",
    ] {
        assert!(shown.contains(&safe), "{safe}: {shown:?}");
    }
    assert!(shown.contains(&"(alice) CMDEND (/usr/bin/backup [arguments withheld: a command line may hold secrets])"), "{shown:?}");
    assert_eq!(page.entries.iter().filter(|e| e.withheld).count(), 4);
    // The unit filter `units` reads a unit's last lines with.
    let cronie = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            unit: Some("cronie.service".into()),
            ..q(10)
        },
    )
    .await
    .unwrap();
    assert_eq!(cronie.entries.len(), 2);
    assert!(cronie.entries.iter().all(|e| !e.message.contains(SECRET)));
    for grep in [SECRET, "dbname", "token=", "password="] {
        let got = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(grep.to_owned()),
                ..q(50)
            },
        )
        .await
        .unwrap();
        assert!(got.entries.is_empty(), "grep {grep}: {:?}", got.entries);
    }
}

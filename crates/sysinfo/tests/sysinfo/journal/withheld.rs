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
    // A grep leaves every withheld entry out, whatever it asks (a pattern that also matches the
    // shown note would test the withheld text: `S3c|arguments withheld`), and says so; other
    // entries are found as journalctl finds them.
    for (grep, want) in [
        ("COMMAND=", 0),
        ("mysql", 0),
        ("-pS3cret", 0),
        ("S3c|arguments withheld", 0),
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
        if grep != "Accepted publickey" {
            assert!(
                got.note
                    .as_deref()
                    .is_some_and(|n| n.contains("left out of a grep")),
                "{:?}",
                got.note
            );
        }
    }
    assert_eq!(oracle(d, &["--grep", "-pS3cret"]).await.len(), 1);
}

//! Attack 14 F4: a grep matched by journalctl on the whole message told, through the page's
//! note, then its `next` cursor and how full it was, whether a withheld argument matched a
//! pattern — a password recovered a character at a time (`journal {"grep":"session opened|
//! COMMAND=… -pS3cretP", "limit":1}` had `next` only when the guess was right). Class: *a signal
//! derived from the withheld text*. The grep is now archgate's, on the message as shown: every
//! part of the answer is the same for a right and a wrong guess, and it is what filtering the
//! shown page gives.

use archgate_sysinfo::journal::{self, GREP_ON_SHOWN, JournalQuery, SCAN_MAX};

use super::*;

const SECRET: &str = "S3cretPassw0rd";

/// A visible PAM line between two sudo lines, oldest first: the shape the attack used (a
/// pattern that matches the visible line and guesses at the withheld one).
fn export_with_one_sudo_line() -> Vec<u8> {
    let mut out = Vec::new();
    let lines = [
        (
            "sudo",
            format!(
                "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/mysql -u root -p{SECRET} -e DROP"
            ),
        ),
        (
            "run0",
            "pam_unix(run0:session): session opened for user root(uid=0) by alice(uid=1000)"
                .to_owned(),
        ),
        (
            "sudo",
            format!(
                "alice : TTY=pts/1 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/psql --password={SECRET}"
            ),
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

/// The answer as the agent gets it, cursors included.
fn answer(page: &journal::JournalPage) -> String {
    let cursors: Vec<&str> = page.entries.iter().map(|e| e.cursor.as_str()).collect();
    format!("{} {cursors:?}", serde_json::to_string(page).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grep_answers_the_same_whether_or_not_a_withheld_argument_matches() {
    let dir = journal_dir(export_with_one_sudo_line()).await;
    let d = dir.path();
    let p = permit();
    // journalctl's own grep does see the secret: what the answer must not tell.
    assert_eq!(
        oracle(
            d,
            &[
                "--grep",
                "session opened|COMMAND=/usr/bin/mysql -u root -pS3cretP"
            ]
        )
        .await
        .len(),
        2
    );
    for visible in ["session opened|", ""] {
        for limit in [1, 2, 3] {
            let ask = |guess: &str| JournalQuery {
                grep: Some(format!(
                    "{visible}COMMAND=/usr/bin/mysql -u root -pS3cret{guess}"
                )),
                ..q(limit)
            };
            let right = journal::query(&p, &opts(d), &ask("P")).await.unwrap();
            let wrong = journal::query(&p, &opts(d), &ask("X")).await.unwrap();
            assert_eq!(
                answer(&right),
                answer(&wrong),
                "limit {limit}, {visible:?}: entries, next, note and fill tell nothing"
            );
            assert!(right.next.is_none(), "{limit}: {:?}", right.next);
            assert_eq!(right.entries.len(), usize::from(!visible.is_empty()));
            assert_eq!(right.note.as_deref(), Some(GREP_ON_SHOWN));
        }
    }
    // Paging by a grep is paging by what is shown: `arguments withheld` finds the two sudo lines
    // one page each, and the visible line is never counted.
    let first = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            grep: Some("arguments withheld".into()),
            ..q(1)
        },
    )
    .await
    .unwrap();
    assert_eq!(first.entries.len(), 1);
    assert!(first.entries[0].message.contains("/usr/bin/psql"));
    let second = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            grep: Some("arguments withheld".into()),
            cursor: first.next.clone(),
            ..q(1)
        },
    )
    .await
    .unwrap();
    assert_eq!(second.entries.len(), 1);
    assert!(second.entries[0].message.contains("/usr/bin/mysql"));
    assert!(second.next.is_none());
}

/// A grep that matches nothing within `SCAN_MAX` entries answers where it stopped, the same
/// way whatever the entries hold; the next page goes on from there and finds the match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_grep_stops_at_its_scan_cap_and_pages_on() {
    let mut export = Vec::new();
    let n = SCAN_MAX + 5;
    for i in 0..n {
        let t = (T0 + i as u64 * 1000).to_string();
        let msg = if i == 0 { "the needle" } else { "hay" };
        entry(
            &mut export,
            &[
                ("__REALTIME_TIMESTAMP", &t),
                ("__MONOTONIC_TIMESTAMP", &format!("{}", i + 1)),
                ("_BOOT_ID", BOOT_B),
                ("PRIORITY", "6"),
                ("SYSLOG_IDENTIFIER", "app"),
                ("MESSAGE", msg),
            ],
            &[],
        );
    }
    let dir = journal_dir(export).await;
    let d = dir.path();
    let p = permit();
    let ask = |cursor: Option<String>| JournalQuery {
        grep: Some("needle".into()),
        cursor,
        ..q(10)
    };
    let first = journal::query(&p, &opts(d), &ask(None)).await.unwrap();
    assert!(first.entries.is_empty());
    assert!(
        first.next.is_some(),
        "the scan stopped before the journal's end"
    );
    assert!(
        first.note.as_deref().is_some_and(|n| n.contains("stopped")),
        "{:?}",
        first.note
    );
    let second = journal::query(&p, &opts(d), &ask(first.next))
        .await
        .unwrap();
    assert_eq!(second.entries.len(), 1);
    assert_eq!(second.entries[0].message, "the needle");
    assert!(second.next.is_none());
}

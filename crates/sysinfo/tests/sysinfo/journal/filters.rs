//! Every filter and cursor paging, compared with what `journalctl` answers on the same files.

use archgate_sysinfo::journal::{self, JournalQuery, Priority};
use serde_json::Value;

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_filter_answers_what_journalctl_answers() {
    let dir = journal_dir(export()).await;
    let d = dir.path();
    let p = permit();
    let cases: Vec<(JournalQuery, Vec<&str>)> = vec![
        (q(200), vec![]),
        (
            JournalQuery {
                priority: Some(Priority::Err),
                ..q(200)
            },
            vec!["-p", "err"],
        ),
        (
            JournalQuery {
                unit: Some("alpha.service".into()),
                ..q(200)
            },
            vec!["-u", "alpha.service"],
        ),
        (
            JournalQuery {
                unit: Some("beta".into()),
                ..q(200)
            },
            vec!["-u", "beta"],
        ),
        (
            JournalQuery {
                unit: Some("al*".into()),
                ..q(200)
            },
            vec!["-u", "al*"],
        ),
        (
            JournalQuery {
                boot: Some(-1),
                ..q(200)
            },
            vec!["-b", "-1"],
        ),
        (
            JournalQuery {
                boot: Some(0),
                priority: Some(Priority::Warning),
                ..q(200)
            },
            vec!["-b", "0", "-p", "warning"],
        ),
        (
            JournalQuery {
                kernel: true,
                boot: Some(-1),
                ..q(200)
            },
            vec!["-k", "-b", "-1"],
        ),
        (
            JournalQuery {
                grep: Some("line1[01]".into()),
                ..q(200)
            },
            vec!["--grep", "line1[01]"],
        ),
        (
            JournalQuery {
                grep: Some(r"\$\(id\); `x` \|".into()),
                ..q(200)
            },
            vec!["--grep", r"\$\(id\); `x` \|"],
        ),
        (
            JournalQuery {
                since: Some("@1764500005".into()),
                until: Some("@1764500015".into()),
                ..q(200)
            },
            vec!["--since", "@1764500005", "--until", "@1764500015"],
        ),
        (
            JournalQuery {
                user: true,
                unit: Some("ag-user.service".into()),
                ..q(200)
            },
            vec!["--user-unit", "ag-user.service"],
        ),
        (JournalQuery { limit: 5, ..q(5) }, vec!["-n", "5"]),
        // journalctl's smart case: a capital makes the match case-sensitive.
        (
            JournalQuery {
                grep: Some("l{20}".into()),
                ..q(200)
            },
            vec!["--grep", "l{20}"],
        ),
        (
            JournalQuery {
                grep: Some("L{20}|BOOT1 LINE3".into()),
                ..q(200)
            },
            vec!["--grep", "L{20}|BOOT1 LINE3"],
        ),
        (
            JournalQuery {
                grep: Some("boot1 line3".into()),
                ..q(200)
            },
            vec!["--grep", "boot1 line3"],
        ),
    ];
    for (query, flags) in cases {
        if query.grep.as_deref() == Some("L{20}|BOOT1 LINE3") {
            // Case-sensitive (a capital): the lower-case `boot1 line3` lines are not matched.
            let caps = oracle(d, &flags).await;
            assert!(caps.iter().all(|e| !text(&e["MESSAGE"]).contains("line3")));
        }
        let page = journal::query(&p, &opts(d), &query)
            .await
            .unwrap_or_else(|e| panic!("{query:?}: {e}"));
        let want = oracle(d, &flags).await;
        assert!(!want.is_empty(), "{flags:?} finds something");
        let want: Vec<Value> = want.into_iter().take(query.limit).collect();
        same(&page.entries, &want);
        // A grep's answer always says what it matched (`grep.rs`); nothing else is noted.
        match &query.grep {
            Some(_) => assert_eq!(page.note.as_deref(), Some(journal::GREP_ON_SHOWN)),
            None => assert!(page.note.is_none(), "{:?}", page.note),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_by_cursor_walks_every_entry_once_newest_first() {
    let dir = journal_dir(export()).await;
    let d = dir.path();
    let p = permit();
    let all = oracle(d, &[]).await;
    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                cursor: cursor.clone(),
                ..q(4)
            },
        )
        .await
        .unwrap();
        assert!(page.entries.len() <= 4);
        seen.extend(page.entries);
        pages += 1;
        match page.next {
            Some(n) => cursor = Some(n),
            None => break,
        }
        assert!(pages < 20, "paging ends");
    }
    same(&seen, &all);
    assert_eq!(pages, all.len().div_ceil(4));
    // The same with a filter: the priority holds across pages.
    let errs = oracle(d, &["-p", "err"]).await;
    let first = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            priority: Some(Priority::Err),
            ..q(3)
        },
    )
    .await
    .unwrap();
    let second = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            priority: Some(Priority::Err),
            cursor: first.next.clone(),
            ..q(3)
        },
    )
    .await
    .unwrap();
    same(
        &[first.entries, second.entries].concat(),
        &errs[..6.min(errs.len())],
    );
}

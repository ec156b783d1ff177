//! Bad input is a typed error naming what exists; no journal is "not available", never an
//! empty page.

use archgate_sysinfo::journal::{self, JournalQuery, Priority};
use archgate_sysinfo::{DiagError, DiagOptions, boots};

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_typed_error_naming_what_exists() {
    let dir = journal_dir(export()).await;
    let d = dir.path();
    let p = permit();
    let err = |q: JournalQuery| {
        let p = &p;
        async move { journal::query(p, &opts(d), &q).await.unwrap_err() }
    };
    match err(JournalQuery {
        boot: Some(-7),
        ..q(10)
    })
    .await
    {
        DiagError::BootOutOfRange { asked, have } => assert_eq!((asked, have), (-7, vec![-1, 0])),
        e => panic!("{e}"),
    }
    match err(JournalQuery {
        unit: Some("alpah.service".into()),
        ..q(10)
    })
    .await
    {
        DiagError::UnknownUnit { name, near } => {
            assert_eq!(name, "alpah.service");
            assert_eq!(near, ["alpha.service"]);
        }
        e => panic!("{e}"),
    }
    // A unit the journal knows, with nothing matching the rest: an empty page, not an error.
    let page = journal::query(
        &p,
        &opts(d),
        &JournalQuery {
            unit: Some("beta.service".into()),
            priority: Some(Priority::Emerg),
            ..q(10)
        },
    )
    .await
    .unwrap();
    assert!(page.entries.is_empty() && page.next.is_none());
    for c in ["s=1;i=2", "nonsense", "s=1;i=2;--user"] {
        assert_eq!(
            err(JournalQuery {
                cursor: Some(c.into()),
                ..q(10)
            })
            .await
            .kind(),
            "invalid_cursor",
            "{c}"
        );
    }
    assert_eq!(
        err(JournalQuery {
            grep: Some("(".into()),
            ..q(10)
        })
        .await
        .kind(),
        "invalid_arguments"
    );
    assert_eq!(
        err(JournalQuery {
            since: Some("garbage".into()),
            ..q(10)
        })
        .await
        .kind(),
        "invalid_arguments"
    );
    // Hostile words: refused before anything runs, or passed literally (and found nowhere).
    for bad in ["a\0b", &"x".repeat(64 * 1024)] {
        assert_eq!(
            err(JournalQuery {
                grep: Some(bad.into()),
                ..q(10)
            })
            .await
            .kind(),
            "invalid_arguments"
        );
        assert_eq!(
            err(JournalQuery {
                unit: Some(bad.into()),
                ..q(10)
            })
            .await
            .kind(),
            "invalid_arguments"
        );
    }
    // The canary is this run's own (two runs at once share no path).
    let scratch = tempfile::tempdir().unwrap();
    let pwned = scratch.path().join("pwned");
    let shell = format!("a.service; touch {}", pwned.display());
    let substitution = format!("$(touch {})", pwned.display());
    for literal in ["-x", "--output=cat", &shell, &substitution] {
        match err(JournalQuery {
            unit: Some(literal.into()),
            ..q(10)
        })
        .await
        {
            DiagError::UnknownUnit { name, .. } => {
                assert!(
                    name.starts_with(literal),
                    "{name} is {literal} as systemd completes it"
                )
            }
            e => panic!("{literal}: {e}"),
        }
        let page = journal::query(
            &p,
            &opts(d),
            &JournalQuery {
                grep: Some(literal.into()),
                ..q(10)
            },
        )
        .await
        .unwrap();
        assert!(
            page.entries.is_empty(),
            "{literal} is a pattern, not an option"
        );
    }
    assert!(!pwned.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_journal_is_not_available_never_an_empty_page() {
    let empty = tempfile::tempdir().unwrap();
    let p = permit();
    for dir in [empty.path().to_owned(), empty.path().join("missing")] {
        let e = journal::query(&p, &opts(&dir), &q(10)).await.unwrap_err();
        assert_eq!(e.kind(), "not_available", "{e}");
        assert_eq!(
            boots::boots(&p, &opts(&dir), 5).await.unwrap_err().kind(),
            "not_available"
        );
        assert_eq!(
            boots::crashes(&p, &opts(&dir), 5).await.unwrap_err().kind(),
            "not_available"
        );
    }
    // The machine here keeps no journal (no journald): the same answer, named.
    let machine = DiagOptions {
        root: empty.path().to_owned(),
        ..DiagOptions::default()
    };
    let e = journal::query(&p, &machine, &q(10)).await.unwrap_err();
    assert!(e.to_string().contains("/var/log/journal"), "{e}");
}

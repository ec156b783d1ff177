//! The journal, boots and crashes against real journal files: export-format entries written
//! here (the format of systemd's "Journal Export Format" document, fields as journald writes
//! them), made into journal files by the real `systemd-journal-remote`, read through
//! `archgate_sysinfo` and compared field by field with `journalctl --directory … -o json`
//! itself. `scripts/test-deps.sh` installs systemd-journal-remote (Debian's package).

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};
use archgate_sysinfo::journal::{self, JournalQuery, Priority};
use archgate_sysinfo::{DiagError, DiagOptions, JournalSource, boots};
use serde_json::Value;

const BOOT_A: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";
const BOOT_B: &str = "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b";
const T0: u64 = 1_764_500_000_000_000;

fn permit() -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/lib/systemd"), PathBuf::from("/usr/bin")],
        ..ExecConfig::default()
    })
}

/// One export-format entry. `binary` fields use the format's length-prefixed form.
fn entry(out: &mut Vec<u8>, fields: &[(&str, &str)], binary: &[(&str, &[u8])]) {
    for (k, v) in fields {
        out.extend_from_slice(format!("{k}={v}\n").as_bytes());
    }
    for (k, v) in binary {
        out.extend_from_slice(k.as_bytes());
        out.push(b'\n');
        out.extend_from_slice(&(v.len() as u64).to_le_bytes());
        out.extend_from_slice(v);
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// A journal of two boots: two system units, a user unit, kernel lines, every priority, a
/// message with shell metacharacters, one that is not UTF-8, one of 10 KiB, and a core dump.
fn export() -> Vec<u8> {
    let mut out = Vec::new();
    let mut t = T0;
    // User units are the calling user's: journalctl --user-unit matches them with its own uid.
    let uid = nix::unistd::geteuid().to_string();
    for (b, boot) in [BOOT_A, BOOT_B].iter().enumerate() {
        for i in 0..12u64 {
            t += 1_000_000;
            let rt = t.to_string();
            let mono = (i * 1_000_000 + 7).to_string();
            let prio = (i % 8).to_string();
            let pid = (200 + i).to_string();
            let msg = format!("boot{b} line{i} $(id); `x` | rm -rf ~ 'q' \"d\"");
            let mut f: Vec<(&str, &str)> = vec![
                ("__REALTIME_TIMESTAMP", &rt),
                ("__MONOTONIC_TIMESTAMP", &mono),
                ("_BOOT_ID", boot),
                ("PRIORITY", &prio),
                ("_PID", &pid),
                ("MESSAGE", &msg),
            ];
            match i % 4 {
                0 => f.extend([
                    ("_SYSTEMD_UNIT", "alpha.service"),
                    ("SYSLOG_IDENTIFIER", "alpha"),
                ]),
                1 => f.extend([
                    ("_SYSTEMD_UNIT", "beta.service"),
                    ("SYSLOG_IDENTIFIER", "betad"),
                ]),
                2 => f.extend([
                    ("_SYSTEMD_USER_UNIT", "ag-user.service"),
                    ("_SYSTEMD_UNIT", "user@1000.service"),
                    ("_UID", &uid),
                ]),
                _ => f.extend([("_TRANSPORT", "kernel"), ("SYSLOG_IDENTIFIER", "kernel")]),
            }
            entry(&mut out, &f, &[]);
        }
    }
    t += 1_000_000;
    let rt = t.to_string();
    let long = "L".repeat(10 * 1024);
    entry(
        &mut out,
        &[
            ("__REALTIME_TIMESTAMP", &rt),
            ("__MONOTONIC_TIMESTAMP", "99000007"),
            ("_BOOT_ID", BOOT_B),
            ("PRIORITY", "3"),
            ("_SYSTEMD_UNIT", "alpha.service"),
            ("MESSAGE", &long),
        ],
        &[],
    );
    t += 1_000_000;
    let rt = t.to_string();
    entry(
        &mut out,
        &[
            ("__REALTIME_TIMESTAMP", &rt),
            ("__MONOTONIC_TIMESTAMP", "99500007"),
            ("_BOOT_ID", BOOT_B),
            ("PRIORITY", "4"),
            ("_SYSTEMD_UNIT", "beta.service"),
        ],
        &[("MESSAGE", b"not utf-8: \xff\xfe end")],
    );
    t += 1_000_000;
    let rt = t.to_string();
    let ts = (t - 500_000).to_string();
    entry(
        &mut out,
        &[
            ("__REALTIME_TIMESTAMP", &rt),
            ("__MONOTONIC_TIMESTAMP", "99900007"),
            ("_BOOT_ID", BOOT_B),
            ("PRIORITY", "2"),
            ("MESSAGE_ID", "fc2e22bc6ee647b6b90729ab34a250b1"),
            ("MESSAGE", "Process 4242 (crashy) of user 1000 dumped core."),
            ("SYSLOG_IDENTIFIER", "systemd-coredump"),
            ("COREDUMP_PID", "4242"),
            ("COREDUMP_UID", "1000"),
            ("COREDUMP_GID", "1000"),
            ("COREDUMP_SIGNAL", "11"),
            ("COREDUMP_SIGNAL_NAME", "SIGSEGV"),
            ("COREDUMP_EXE", "/usr/bin/crashy"),
            ("COREDUMP_COMM", "crashy"),
            ("COREDUMP_TIMESTAMP", &ts),
        ],
        &[],
    );
    out
}

/// Journal files made from `export` by the real systemd-journal-remote.
async fn journal_dir(export: Vec<u8>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("test.journal");
    let out = permit()
        .run(
            CommandSpec::new("systemd-journal-remote")
                .arg(format!("--output={}", file.display()))
                .arg("-")
                .stdin_bytes(export),
        )
        .await
        .expect("systemd-journal-remote runs (scripts/test-deps.sh installs it)");
    assert!(out.success(), "{}", out.stderr_lossy());
    dir
}

fn opts(dir: &Path) -> DiagOptions {
    DiagOptions {
        journal: JournalSource::Directory(dir.to_owned()),
        ..DiagOptions::default()
    }
}

/// journalctl's own answer, newest first.
async fn oracle(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let out = permit()
        .run(
            CommandSpec::new("journalctl")
                .arg(format!("--directory={}", dir.display()))
                .args(["-o", "json", "--all", "-r", "-q", "--no-pager"])
                .args(extra.iter().copied()),
        )
        .await
        .unwrap();
    assert!(out.success(), "{}", out.stderr_lossy());
    out.stdout_lossy()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(b) => String::from_utf8_lossy(
            &b.iter()
                .map(|x| x.as_u64().unwrap() as u8)
                .collect::<Vec<_>>(),
        )
        .into_owned(),
        _ => String::new(),
    }
}

/// Our entries against journalctl's, field by field.
fn same(ours: &[journal::Entry], theirs: &[Value]) {
    assert_eq!(ours.len(), theirs.len(), "entry count");
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!(o.cursor, t["__CURSOR"].as_str().unwrap());
        let usec: i128 = t["__REALTIME_TIMESTAMP"].as_str().unwrap().parse().unwrap();
        let ours_t =
            time::OffsetDateTime::parse(&o.time, &time::format_description::well_known::Rfc3339)
                .unwrap();
        assert_eq!(ours_t.unix_timestamp_nanos(), usec * 1000, "{}", o.time);
        let unit = t
            .get("_SYSTEMD_USER_UNIT")
            .or(t.get("_SYSTEMD_UNIT"))
            .map(text);
        assert_eq!(o.unit, unit);
        let prio: Option<u8> = t.get("PRIORITY").map(|p| text(p).parse().unwrap());
        assert_eq!(o.priority, prio.and_then(Priority::from_number));
        let pid: Option<u32> = t.get("_PID").map(|p| text(p).parse().unwrap());
        assert_eq!(o.pid, pid);
        let msg = text(&t["MESSAGE"]);
        if msg.len() > journal::MESSAGE_MAX {
            assert!(o.message.ends_with('…') && msg.starts_with(o.message.trim_end_matches('…')));
        } else {
            assert_eq!(o.message, msg);
        }
    }
}

fn q(limit: usize) -> JournalQuery {
    JournalQuery {
        limit,
        ..JournalQuery::default()
    }
}

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
    ];
    for (query, flags) in cases {
        let page = journal::query(&p, &opts(d), &query)
            .await
            .unwrap_or_else(|e| panic!("{query:?}: {e}"));
        let want = oracle(d, &flags).await;
        assert!(!want.is_empty(), "{flags:?} finds something");
        let want: Vec<Value> = want.into_iter().take(query.limit).collect();
        same(&page.entries, &want);
        assert!(page.note.is_none());
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
    for literal in [
        "-x",
        "--output=cat",
        "a.service; touch /tmp/archgate-pwned",
        "$(touch /tmp/archgate-pwned)",
    ] {
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
    assert!(!Path::new("/tmp/archgate-pwned").exists());
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boots_and_crashes_are_what_journalctl_and_coredumpctl_say() {
    let dir = journal_dir(export()).await;
    let d = dir.path();
    let p = permit();
    let b = boots::boots(&p, &opts(d), 10).await.unwrap();
    assert_eq!(b.boots.iter().map(|b| b.index).collect::<Vec<_>>(), [0, -1]);
    assert_eq!(b.boots[0].id, BOOT_B);
    for boot in &b.boots {
        let errs = oracle(d, &["-b", &boot.id, "-p", "err"]).await.len();
        assert!(errs > 0);
        assert_eq!(boot.errors, errs, "boot {}", boot.index);
        assert!(boot.first < boot.last);
    }
    assert_eq!(boots::boots(&p, &opts(d), 1).await.unwrap().boots.len(), 1);
    let c = boots::crashes(&p, &opts(d), 10).await.unwrap();
    let out = p
        .run(CommandSpec::new("coredumpctl").args([
            format!("--directory={}", d.display()),
            "--json=short".into(),
            "--no-pager".into(),
        ]))
        .await
        .unwrap();
    let want: Vec<Value> = serde_json::from_str(out.stdout_lossy().trim()).unwrap();
    assert_eq!(c.crashes.len(), want.len());
    assert_eq!(c.crashes[0].exe, want[0]["exe"].as_str().unwrap());
    assert_eq!(c.crashes[0].exe, "/usr/bin/crashy");
    assert_eq!(c.crashes[0].signal, "SIGSEGV");
    assert_eq!(c.crashes[0].pid, want[0]["pid"].as_u64().unwrap());
    let t = time::OffsetDateTime::parse(
        &c.crashes[0].time,
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(
        t.unix_timestamp_nanos(),
        i128::from(want[0]["time"].as_u64().unwrap()) * 1000
    );
    // A journal without core dumps: an empty list, not an error.
    let plain = journal_dir({
        let mut e = Vec::new();
        entry(
            &mut e,
            &[
                ("__REALTIME_TIMESTAMP", "1764500000000000"),
                ("__MONOTONIC_TIMESTAMP", "1"),
                ("_BOOT_ID", BOOT_A),
                ("MESSAGE", "hi"),
            ],
            &[],
        );
        e
    })
    .await;
    assert!(
        boots::crashes(&p, &opts(plain.path()), 5)
            .await
            .unwrap()
            .crashes
            .is_empty()
    );
    for bad in [0, 51] {
        assert_eq!(
            boots::boots(&p, &opts(d), bad).await.unwrap_err().kind(),
            "invalid_arguments"
        );
    }
}

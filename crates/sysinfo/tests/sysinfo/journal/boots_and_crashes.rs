//! Boots and crashes, compared with `journalctl --list-boots` and `coredumpctl`.

use archgate_sysinfo::boots;
use archgate_sysinfo::journal::{self, JournalQuery};
use serde_json::Value;

use super::*;

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
    // The crash's command line and environment are in the journal (journalctl has them) but in
    // no read answer: not the crashes, not the journal's entries, not a grep.
    let whole = oracle(d, &["SYSLOG_IDENTIFIER=systemd-coredump"]).await;
    assert!(
        whole[0]["COREDUMP_CMDLINE"]
            .as_str()
            .unwrap()
            .contains("S3cretCore")
    );
    let answers = [
        serde_json::to_string(&c).unwrap(),
        serde_json::to_string(&journal::query(&p, &opts(d), &q(200)).await.unwrap()).unwrap(),
        serde_json::to_string(
            &journal::query(
                &p,
                &opts(d),
                &JournalQuery {
                    grep: Some("S3cretCore|dumped core".into()),
                    ..q(200)
                },
            )
            .await
            .unwrap(),
        )
        .unwrap(),
    ];
    for a in &answers {
        assert!(!a.contains("S3cretCore"), "{a}");
    }
    assert!(answers[2].contains("dumped core"));
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

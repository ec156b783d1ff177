//! The journal, boots and crashes against real journal files: export-format entries written
//! here (the format of systemd's "Journal Export Format" document, fields as journald writes
//! them), made into journal files by the real `systemd-journal-remote`, read through
//! `archgate_sysinfo` and compared field by field with `journalctl --directory … -o json`
//! itself. `scripts/test-deps.sh` installs systemd-journal-remote (Debian's package).
//!
//! The shared part: the export written here, the journal files made from it, `journalctl` as
//! the oracle.

mod boots_and_crashes;
mod errors;
mod filters;
mod grep;
mod launchers;
mod withheld;

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};
use archgate_sysinfo::journal::{self, JournalQuery, Priority};
use archgate_sysinfo::{DiagOptions, JournalSource};
use serde_json::Value;

pub const BOOT_A: &str = "0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a";

pub const BOOT_B: &str = "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b";

pub const T0: u64 = 1_764_500_000_000_000;

pub fn permit() -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/lib/systemd"), PathBuf::from("/usr/bin")],
        ..ExecConfig::default()
    })
}

/// One export-format entry. `binary` fields use the format's length-prefixed form.
pub fn entry(out: &mut Vec<u8>, fields: &[(&str, &str)], binary: &[(&str, &[u8])]) {
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
pub fn export() -> Vec<u8> {
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
            // The crashed process's command line and environment (systemd-coredump stores
            // both): never in a read answer (`boots_and_crashes.rs`).
            ("COREDUMP_CMDLINE", "/usr/bin/crashy --token=S3cretCoreArg"),
            ("COREDUMP_ENVIRON", "PGPASSWORD=S3cretCoreEnv"),
            ("COREDUMP_TIMESTAMP", &ts),
        ],
        &[],
    );
    out
}

/// Journal files made from `export` by the real systemd-journal-remote.
pub async fn journal_dir(export: Vec<u8>) -> tempfile::TempDir {
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

pub fn opts(dir: &Path) -> DiagOptions {
    DiagOptions {
        journal: JournalSource::Directory(dir.to_owned()),
        ..DiagOptions::default()
    }
}

/// journalctl's own answer, newest first.
pub async fn oracle(dir: &Path, extra: &[&str]) -> Vec<Value> {
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

pub fn text(v: &Value) -> String {
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
pub fn same(ours: &[journal::Entry], theirs: &[Value]) {
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

pub fn q(limit: usize) -> JournalQuery {
    JournalQuery {
        limit,
        ..JournalQuery::default()
    }
}

//! The activity log: exactly one JSON line per call, however it ended; every line bounded
//! (`bound`), and rotation that keeps recent history (`writer::Retention`).

pub mod bound;
pub mod orphans;
pub mod reader;
pub mod record;
mod rotate;
mod settings;
mod since;
mod writer;

pub use reader::{Entry, ReadReport, read_log, recent};
pub use record::{
    ApprovalRecord, Outcome, ProvenanceRecord, Record, args_digest, canonical_json, now_rfc3339,
    recorded_args, truncate_args,
};
pub use settings::{AuditSettings, HARD_CAP, KEEP_YOUNG, Retention};
pub use writer::{AuditLog, AuditStats, Handed};

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    fn rec(i: usize) -> Record {
        Record {
            time: now_rfc3339(),
            id: format!("c{i}"),
            client: "local".into(),
            agent: None,
            transport: "stdio".into(),
            tool: "system_status".into(),
            route: Some("system_status".into()),
            target: None,
            tier: Some("read".into()),
            decision: Some("allow".into()),
            reason: None,
            rule: None,
            approval: None,
            outcome: Outcome::Ok,
            error_kind: None,
            exit_code: None,
            duration_ms: 1,
            args_sha256: args_digest(&serde_json::json!({})),
            args: serde_json::json!({}),
            dev_mode: false,
            task: None,
            provenance: None,
        }
    }

    fn settings(dir: &std::path::Path, queue: usize) -> AuditSettings {
        AuditSettings {
            path: dir.join("activity.jsonl"),
            queue,
            max_bytes: 1 << 30,
            keep: 3,
        }
    }

    #[test]
    fn person_events_are_read_back_as_events_with_a_time() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start(settings(t.path(), 16));
        log.record(&rec(1));
        log.event(&serde_json::json!({"event": "developer_mode", "on": true, "channel": "cli"}));
        assert!(log.flush(Duration::from_secs(10)));
        let r = read_log(&t.path().join("activity.jsonl")).unwrap();
        assert_eq!(r.entries.len(), 2);
        match &r.entries[1] {
            Entry::Event(v) => {
                assert_eq!(v["event"], "developer_mode");
                assert_eq!(v["channel"], "cli");
                assert!(v["time"].is_string());
            }
            Entry::Call(_) => panic!("an event was read as a call"),
        }
    }

    /// Waits (bounded, no timing asserted) until the log at `path` holds `n` entries.
    fn holds(path: &std::path::Path, n: usize) -> bool {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let held = read_log(path).map_or(0, |r| r.entries.len());
            if held >= n || std::time::Instant::now() > until {
                return held == n;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Issue 23: the log does not lag its calls. With nothing queued, a record is in the file
    /// when `record` returns: the caller found the writer free and wrote it (issue 34: with
    /// whatever else was queued, in one `write`), no thread to wake.
    #[test]
    fn an_idle_log_holds_each_record_when_record_returns() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let log = AuditLog::start(settings(t.path(), 16));
        // The very first record too: the file is open before any call (a kill right after the
        // first answer must not lose its record).
        for i in 0..200 {
            log.record(&rec(i));
            let r = read_log(&path).unwrap();
            assert_eq!(r.entries.len(), i + 1, "record {i} was not in the file yet");
            assert_eq!(r.skipped, 0);
        }
        assert_eq!(log.stats().written.load(Ordering::Relaxed), 200);
    }

    /// Issue 34: lines made while a write is under way wait in the queue, not for the write, and
    /// then go to the file together, in one `write`, in the order they were made.
    #[test]
    fn lines_queued_behind_a_write_go_out_in_one_write_in_order() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let log = AuditLog::start(settings(t.path(), 1000));
        log.record(&rec(0));
        assert!(holds(&path, 1));
        let before = log.stats().batches.load(Ordering::Relaxed);
        {
            let _busy = log.hold_writer();
            for i in 1..=300 {
                log.record(&rec(i)); // returns at once: the writer is busy
            }
        }
        assert!(log.flush(Duration::from_secs(10)));
        let r = read_log(&path).unwrap();
        let ids: Vec<String> = r
            .entries
            .iter()
            .map(|e| match e {
                Entry::Call(r) => r.id.clone(),
                Entry::Event(_) => panic!("no events expected"),
            })
            .collect();
        assert_eq!(ids, (0..=300).map(|i| format!("c{i}")).collect::<Vec<_>>());
        // The writer woke for the first, took what was queued then and waited for the lock:
        // that, then all the rest together.
        let writes = log.stats().batches.load(Ordering::Relaxed) - before;
        assert!(writes <= 2, "300 queued lines took {writes} writes");
    }

    /// Issue 34: a full queue under a writable log is overload, not a reason to lose records: the
    /// caller that finds it full waits for the writer once and writes the queue itself.
    #[test]
    fn a_full_queue_makes_its_caller_write_rather_than_drop() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let log = AuditLog::start(settings(t.path(), 4));
        let busy = log.hold_writer();
        std::thread::scope(|s| {
            let log2 = log.clone();
            let caller = s.spawn(move || {
                for i in 0..10 {
                    log2.record(&rec(i));
                }
            });
            // Bounded: the caller fills the queue (4), then waits for the writer.
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while log.queued_lines() < 5 && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
            drop(busy);
            caller.join().unwrap();
        });
        assert!(log.flush(Duration::from_secs(10)));
        assert_eq!(log.stats().dropped_total.load(Ordering::Relaxed), 0);
        let ids: Vec<String> = read_log(&path)
            .unwrap()
            .entries
            .iter()
            .map(|e| match e {
                Entry::Call(r) => r.id.clone(),
                Entry::Event(_) => panic!("no events expected"),
            })
            .collect();
        assert_eq!(ids, (0..10).map(|i| format!("c{i}")).collect::<Vec<_>>());
    }

    /// Every record handed over before a graceful stop is on disk when `shutdown` returns, each
    /// caller's in its order.
    #[test]
    fn every_record_is_on_disk_when_shutdown_returns() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let log = AuditLog::start(settings(t.path(), 100_000));
        std::thread::scope(|s| {
            for th in 0..4 {
                let log = log.clone();
                s.spawn(move || {
                    for i in 0..2000 {
                        log.record(&rec(th * 10_000 + i));
                    }
                });
            }
        });
        assert!(log.shutdown(Duration::from_secs(10)));
        let r = read_log(&path).unwrap();
        assert_eq!((r.entries.len(), r.skipped), (8000, 0));
        for th in 0..4 {
            let mine: Vec<usize> = r
                .entries
                .iter()
                .filter_map(|e| match e {
                    Entry::Call(r) => r.id.strip_prefix('c')?.parse::<usize>().ok(),
                    Entry::Event(_) => None,
                })
                .filter(|n| n / 10_000 == th)
                .collect();
            assert_eq!(mine, (0..2000).map(|i| th * 10_000 + i).collect::<Vec<_>>());
        }
        assert_eq!(log.stats().written.load(Ordering::Relaxed), 8000);
    }

    /// A write that fails is surfaced: counted (`/health` shows it), and `event_now` — an act
    /// call's start — says it did not reach the file, so the call is refused.
    #[test]
    fn a_failed_write_is_counted_and_event_now_says_so() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        std::fs::create_dir(&path).unwrap(); // not a file: every write fails
        let log = AuditLog::start(settings(t.path(), 16));
        log.record(&rec(1));
        assert!(log.flush(Duration::from_secs(10)));
        assert!(log.stats().write_failures.load(Ordering::Relaxed) >= 1);
        assert!(!log.event_now(&serde_json::json!({"event": "started", "id": "x"})));
        std::fs::remove_dir(&path).unwrap();
        assert!(log.event_now(&serde_json::json!({"event": "started", "id": "y"})));
        assert_eq!(read_log(&path).unwrap().entries.len(), 1);
    }

    #[test]
    fn concurrent_records_are_whole_lines_one_each() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start(settings(t.path(), 100_000));
        std::thread::scope(|s| {
            for th in 0..8 {
                let log = log.clone();
                s.spawn(move || {
                    for i in 0..500 {
                        log.record(&rec(th * 1000 + i));
                    }
                });
            }
        });
        assert!(log.flush(Duration::from_secs(10)));
        let r = read_log(&t.path().join("activity.jsonl")).unwrap();
        assert_eq!(r.skipped, 0);
        assert_eq!(r.entries.len(), 4000);
        let mut ids: Vec<_> = r
            .entries
            .iter()
            .map(|e| match e {
                Entry::Call(r) => r.id.clone(),
                Entry::Event(_) => panic!("no events expected"),
            })
            .collect();
        // Each thread's records in the order it made them (queued or written at once).
        for th in 0..8 {
            let mine: Vec<usize> = ids
                .iter()
                .filter_map(|id| id.strip_prefix('c')?.parse::<usize>().ok())
                .filter(|n| n / 1000 == th)
                .collect();
            assert!(
                mine.windows(2).all(|w| w[0] < w[1]),
                "thread {th} out of order"
            );
            assert_eq!(mine.len(), 500);
        }
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 4000);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(t.path().join("activity.jsonl"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_full_queue_yields_a_dropped_record_with_the_count() {
        let t = tempfile::tempdir().unwrap();
        // Make the writer unable to drain: the log path is a directory, so writes fail while
        // we fill the tiny queue; then make it writable and flush.
        let path = t.path().join("activity.jsonl");
        std::fs::create_dir(&path).unwrap();
        let log = AuditLog::start(AuditSettings {
            path: path.clone(),
            queue: 4,
            max_bytes: 1 << 30,
            keep: 2,
        });
        for i in 0..200 {
            log.record(&rec(i));
        }
        assert!(
            log.stats().dropped_total.load(Ordering::Relaxed) > 0,
            "a 4-slot queue must overflow under 200 records"
        );
        std::fs::remove_dir(&path).unwrap();
        // The records enqueued while failing are lost with the failure; what counts is that the
        // drop count reaches the file once writing works.
        log.record(&rec(999));
        assert!(log.flush(Duration::from_secs(5)));
        let dropped = log.stats().dropped_total.load(Ordering::Relaxed);
        let r = read_log(&path).unwrap();
        let n: u64 = r
            .entries
            .iter()
            .filter_map(|e| match e {
                Entry::Event(v) if v["event"] == "dropped" => v["n"].as_u64(),
                _ => None,
            })
            .sum();
        assert_eq!(n, dropped, "every drop is counted in a dropped event");
    }

    /// Class: a file written at a path judged once follows whatever is there at write time
    /// (attack 14 F7). The state directory loses trust while the daemon runs (its parent opened
    /// to others) and is swapped for another's holding a planted log: the rotation that follows
    /// writes nothing there — the records fail loudly (`write_failures`, `event_now` false, so
    /// act calls are refused) instead of landing in the other user's files.
    #[test]
    fn a_rotation_after_the_directory_lost_trust_writes_nothing_there() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let state = t.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let log = AuditLog::start(AuditSettings {
            path: state.join("activity.jsonl"),
            queue: 16,
            max_bytes: 4096,
            keep: 3,
        });
        log.record(&rec(0));
        assert!(log.flush(Duration::from_secs(10)));
        assert_eq!(log.stats().write_failures.load(Ordering::Relaxed), 0);

        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(&state, t.path().join("moved-by-another")).unwrap();
        std::fs::create_dir(&state).unwrap();
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
        let planted = state.join("activity.jsonl");
        std::fs::write(&planted, "").unwrap();
        for i in 1..40 {
            log.record(&rec(i));
        }
        assert!(log.flush(Duration::from_secs(10)));
        let others: Vec<_> = std::fs::read_dir(&state).unwrap().flatten().collect();
        assert_eq!(others.len(), 1, "nothing new in the swapped directory");
        assert_eq!(
            std::fs::read(&planted).unwrap(),
            b"",
            "nothing in the planted log"
        );
        assert!(log.stats().write_failures.load(Ordering::Relaxed) >= 1);
        assert!(!log.event_now(&serde_json::json!({"event": "started", "id": "z"})));
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }

    #[test]
    fn unwritable_location_keeps_accepting_records() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start(settings(&t.path().join("missing/dir"), 16));
        for i in 0..10 {
            log.record(&rec(i));
        }
        assert!(log.flush(Duration::from_secs(5)));
        assert!(log.stats().write_failures.load(Ordering::Relaxed) >= 1);
    }

    #[test]
    fn rotation_keeps_the_configured_number_of_files_once_they_are_old() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start_with(
            AuditSettings {
                path: t.path().join("activity.jsonl"),
                queue: 64,
                max_bytes: 2048,
                keep: 2,
            },
            Retention {
                keep_young: Duration::ZERO,
                hard_cap: HARD_CAP,
            },
        );
        for i in 0..60 {
            log.record(&rec(i));
            if i % 5 == 0 {
                log.flush(Duration::from_secs(5));
            }
        }
        assert!(log.flush(Duration::from_secs(5)));
        // The log's files (beside them, the lock rotation takes: `rotate.rs`).
        let mut names: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n != "activity.lock")
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["activity.jsonl", "activity.jsonl.1", "activity.jsonl.2"]
        );
    }

    /// Every call record in the log and its rotated files, by id.
    fn all_ids(dir: &std::path::Path) -> Vec<String> {
        let mut ids = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            for e in read_log(&e.path()).unwrap().entries {
                if let Entry::Call(r) = e {
                    ids.push(r.id.clone());
                }
            }
        }
        ids.sort();
        ids
    }

    fn events(dir: &std::path::Path, name: &str) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            for e in read_log(&e.path()).unwrap().entries {
                if let Entry::Event(v) = e
                    && v["event"] == name
                {
                    out.push(v);
                }
            }
        }
        out
    }

    #[test]
    fn young_history_survives_rotation_beyond_keep() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start(AuditSettings {
            path: t.path().join("activity.jsonl"),
            queue: 64,
            max_bytes: 2048,
            keep: 2,
        });
        for i in 0..60 {
            log.record(&rec(i));
            log.flush(Duration::from_secs(5));
        }
        let files = std::fs::read_dir(t.path()).unwrap().count();
        assert!(files > 3, "rotation happened ({files} files)");
        let mut want: Vec<String> = (0..60).map(|i| format!("c{i}")).collect();
        want.sort();
        assert_eq!(all_ids(t.path()), want, "no young record was rotated away");
        assert!(events(t.path(), "rotated").is_empty());
    }

    #[test]
    fn past_the_hard_cap_young_records_go_and_the_log_says_so() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start_with(
            AuditSettings {
                path: t.path().join("activity.jsonl"),
                queue: 64,
                max_bytes: 2048,
                keep: 2,
            },
            Retention {
                keep_young: KEEP_YOUNG,
                hard_cap: 8192,
            },
        );
        for i in 0..80 {
            log.record(&rec(i));
            log.flush(Duration::from_secs(5));
        }
        let total: u64 = std::fs::read_dir(t.path())
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum();
        assert!(total <= 8192 + 2 * 2048, "{total} bytes");
        let rotated = events(t.path(), "rotated");
        assert!(!rotated.is_empty(), "records went without a word");
        assert_eq!(rotated[0]["reason"], "hard_cap");
        assert!(rotated[0]["files"].as_u64().unwrap() >= 1);
        let ids = all_ids(t.path());
        assert!(ids.contains(&"c79".to_owned()), "the newest stay");
    }

    /// Issue 16.8 (attack 7): fourteen calls with 4 MiB unknown tool names used to rotate every
    /// earlier record out of all six files. Now each makes one small record.
    #[test]
    fn huge_tool_names_cannot_flush_the_log() {
        let t = tempfile::tempdir().unwrap();
        let log = AuditLog::start(AuditSettings {
            path: t.path().join("activity.jsonl"),
            queue: 1024,
            max_bytes: 16 << 20,
            keep: 5,
        });
        for i in 0..100 {
            log.record(&rec(i));
        }
        let name = "A".repeat(4 << 20);
        for i in 0..14 {
            let mut r = rec(1000 + i);
            r.tool = name.clone();
            r.route = Some(name.clone());
            log.record(&r);
        }
        assert!(log.flush(Duration::from_secs(10)));
        let ids = all_ids(t.path());
        assert_eq!(ids.len(), 114);
        for i in 0..100 {
            assert!(ids.contains(&format!("c{i}")), "c{i} is gone");
        }
        let len = std::fs::metadata(t.path().join("activity.jsonl"))
            .unwrap()
            .len();
        assert!(len < 14 * 8 * 1024 + 100 * 1024, "{len} bytes");
    }

    #[test]
    fn torn_last_line_is_skipped_and_counted() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("activity.jsonl");
        let whole = serde_json::to_string(&rec(1)).unwrap();
        std::fs::write(&p, format!("{whole}\n{}", &whole[..whole.len() / 2])).unwrap();
        let r = read_log(&p).unwrap();
        assert_eq!((r.entries.len(), r.skipped), (1, 1));
    }
}

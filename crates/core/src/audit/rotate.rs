//! Rotating the activity log: `activity.jsonl` → `.1` → `.2` → …, and the retention that
//! removes the oldest. Rotation changes the file set every archgate process writes (the daemon,
//! an in-process stdio server, `archgate call`, the CLI's events), so it is done one process at
//! a time (attack 23 F4; class: *read-modify-write of shared state without a lock across the
//! processes that write it* — two processes rotating at once renamed onto each other's rotated
//! files, and 47 of 750 calls that ran had no record), under a `flock` on `activity.lock` beside
//! the log (archgate's own file: `paths::lock_own_file`), and judged under it on the file the
//! name holds then: when another process has just rotated, nothing more is renamed. A writer
//! whose file was rotated away by another process reopens before it writes
//! (`writer.rs` `moved_away`).

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use super::settings::{AuditSettings, Retention, dir_and_name};

/// The lock every archgate process takes to rotate the log, beside it.
const ROTATE_LOCK: &str = "activity.lock";

/// Never more numbered files than this, young or not.
const MAX_FILES: u32 = 1000;

/// Rotates when the log the name holds now is the file `open_id` (the caller's, which it has
/// closed) and `adding` more bytes would pass `max_bytes`. Returns the `rotated` event to write
/// when young records went. The caller opens the log again after.
pub(super) fn rotate_if_full(
    s: &AuditSettings,
    r: &Retention,
    open_id: Option<(u64, u64)>,
    adding: u64,
) -> std::io::Result<Option<serde_json::Value>> {
    let (dir, _) = dir_and_name(&s.path);
    let _held = crate::paths::lock_own_file(dir, ROTATE_LOCK.as_ref())?;
    let now = std::fs::symlink_metadata(&s.path).ok();
    let still_open = now
        .as_ref()
        .is_some_and(|m| Some((m.dev(), m.ino())) == open_id);
    let size = now.map_or(0, |m| m.len());
    if still_open && size > 0 && size + adding > s.max_bytes {
        rotate(s, r)
    } else {
        Ok(None)
    }
}

/// activity.jsonl → activity.jsonl.1 → activity.jsonl.2 → …; then, from the oldest end, files
/// beyond `keep` go when they are older than `keep_young` — or, younger, only while all files
/// together pass `hard_cap`. Returns the `rotated` event to write when young records went.
fn rotate(s: &AuditSettings, r: &Retention) -> std::io::Result<Option<serde_json::Value>> {
    let path = &s.path;
    // Judged now: a directory that lost trust since start is not renamed in (nor written).
    let (dir, name) = dir_and_name(path);
    let own = crate::paths::OwnDir::open(dir)?;
    let numbered = |n: u32| PathBuf::from(format!("{}.{n}", path.display()));
    let mut last = 0;
    while last < MAX_FILES && numbered(last + 1).exists() {
        last += 1;
    }
    if last == MAX_FILES {
        let _ = std::fs::remove_file(numbered(last));
        last -= 1;
    }
    for n in (1..=last).rev() {
        let _ = std::fs::rename(numbered(n), numbered(n + 1));
    }
    own.rename(
        name,
        std::ffi::OsString::from(format!("{}.1", name.to_string_lossy())).as_ref(),
    )?;
    last += 1;
    let size = |n: u32| std::fs::metadata(numbered(n)).map_or(0, |m| m.len());
    let mut total: u64 = (1..=last).map(size).sum();
    let now = std::time::SystemTime::now();
    let (mut files, mut bytes, mut newest) = (0u32, 0u64, None);
    while last > s.keep.max(1) {
        let p = numbered(last);
        let meta = std::fs::metadata(&p).ok();
        let len = meta.as_ref().map_or(0, |m| m.len());
        let written = meta.and_then(|m| m.modified().ok());
        let young = written
            .and_then(|w| now.duration_since(w).ok())
            .is_none_or(|age| age < r.keep_young);
        if young && total <= r.hard_cap {
            break;
        }
        if std::fs::remove_file(&p).is_err() {
            break; // reported by the next write if the directory is the problem
        }
        total = total.saturating_sub(len);
        if young {
            files += 1;
            bytes += len;
            newest = newest.max(written);
        }
        last -= 1;
    }
    if files == 0 {
        return Ok(None);
    }
    let newest = newest.map(time::OffsetDateTime::from).and_then(|t| {
        t.format(&time::format_description::well_known::Rfc3339)
            .ok()
    });
    Ok(Some(serde_json::json!({
        "event": "rotated",
        "time": super::record::now_rfc3339(),
        "reason": "hard_cap",
        "files": files,
        "bytes": bytes,
        "newest_removed": newest,
        "hard_cap": r.hard_cap,
    })))
}

#[cfg(test)]
mod tests {
    use super::super::{AuditLog, AuditSettings, Retention};
    use std::time::Duration;

    fn log(dir: &std::path::Path, max_bytes: u64) -> AuditLog {
        AuditLog::start_with(
            AuditSettings {
                path: dir.join("activity.jsonl"),
                queue: 16,
                max_bytes,
                keep: 1000,
            },
            // Nothing is old enough to go: every record must still be somewhere.
            Retention {
                keep_young: Duration::from_secs(86_400),
                hard_cap: u64::MAX,
            },
        )
    }

    /// Every `"n"` line in the log and its rotated files, by the writer's name.
    fn lines(dir: &std::path::Path, who: &str) -> Vec<String> {
        let mut found = Vec::new();
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("activity.jsonl") {
                let text = std::fs::read_to_string(e.path()).unwrap();
                found.extend(
                    text.lines()
                        .filter(|l| l.contains(&format!("\"who\":\"{who}\"")))
                        .map(|l| format!("{name} {l}")),
                );
            }
        }
        found
    }

    /// Attack 23 F4: four archgate processes writing one log rotate it at once, a rotation
    /// every few lines; no record is lost (before: rotated files were renamed onto each other,
    /// and a writer's rename found no file and its batch failed).
    #[test]
    fn processes_rotating_at_once_lose_no_record() {
        let t = tempfile::tempdir().unwrap();
        let logs: Vec<AuditLog> = (0..4).map(|_| log(t.path(), 512)).collect();
        std::thread::scope(|s| {
            for (i, l) in logs.iter().enumerate() {
                s.spawn(move || {
                    // Written now, as a call's `started` line is (`event` may drop on a full
                    // queue, and says so; `event_now` says whether the line reached the file).
                    for n in 0..250 {
                        let who = format!("w{i}");
                        assert!(
                            l.event_now(&serde_json::json!({"event": "x", "who": who, "n": n}))
                        );
                    }
                });
            }
        });
        for i in 0..4 {
            assert_eq!(lines(t.path(), &format!("w{i}")).len(), 250, "writer {i}");
        }
    }

    /// Attack 23 F6: after another process rotated the log, this one's next record goes to the
    /// new `activity.jsonl`, where the next daemon looks — not into the rotated file its open
    /// descriptor still names.
    #[test]
    fn a_writer_whose_file_another_process_rotated_writes_to_the_new_file() {
        let t = tempfile::tempdir().unwrap();
        let daemon = log(t.path(), 1 << 20);
        assert!(daemon.event_now(&serde_json::json!({"event": "x", "who": "daemon", "n": 0})));
        let cli = log(t.path(), 600);
        for n in 0..20 {
            assert!(cli.event_now(&serde_json::json!({"event": "x", "who": "cli", "n": n})));
        }
        assert!(
            t.path().join("activity.jsonl.1").exists(),
            "the CLI rotated"
        );
        // A writer looks whether its file is still the log's at most every `LOOK_EVERY`.
        std::thread::sleep(super::super::settings::LOOK_EVERY + Duration::from_millis(50));
        assert!(daemon.event_now(&serde_json::json!({"event": "x", "who": "daemon", "n": 1})));
        let daemons = lines(t.path(), "daemon");
        assert!(
            daemons
                .iter()
                .any(|l| l.starts_with("activity.jsonl ") && l.contains("\"n\":1")),
            "{daemons:?}"
        );
    }
}

//! What was written to the activity log since a moment, read whole or not at all (attack 10 F2;
//! class: *absence from a bounded window of evidence read as evidence of absence*). The stdio
//! bridge marks where the log stood when it sends a call ([`mark`]) and, when its daemon goes
//! away, reads everything written since ([`read_since`]) — never a bounded tail, in which a
//! call's `started` line pushed out by others' records would read as "nothing started".

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Where the log stood at a moment (a call sent): its file (inode) and length. What was written
/// since is then read whole ([`read_since`]), not searched for in a bounded tail: a call's
/// `started` line pushed out of the last MiB by others' records must never read as "nothing
/// started" (attack 10, F2; class: *absence from a bounded window of evidence read as evidence
/// of absence*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LogMark {
    /// The file's identity — inode and birth time (an inode number is reused once rotation
    /// removes the oldest file). `None`: there was no log yet (the default: a mark taken before
    /// any log existed).
    ino: Option<FileId>,
    len: u64,
}

type FileId = (u64, Option<std::time::SystemTime>);

fn file_id(m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (m.ino(), m.created().ok())
}

/// The log's mark now.
pub fn mark(path: &Path) -> LogMark {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => LogMark {
            ino: Some(file_id(&m)),
            len: m.len(),
        },
        _ => LogMark { ino: None, len: 0 },
    }
}

/// The most [`read_since`] reads: beyond it, what was written since is not known whole.
pub const SINCE_MAX: u64 = 256 * 1024 * 1024;

/// Everything written to the log since `mark`, whole — across one rotation (the file then
/// marked is `.1`, read from the mark; the current one read whole) — or `None` when that cannot
/// be known: the log rotated more than once, was truncated or replaced, or more than
/// [`SINCE_MAX`] was written. `None` means *not known*: nothing may be concluded from a line
/// being absent.
pub fn read_since(path: &Path, mark: LogMark) -> Option<String> {
    let from = |p: &Path, offset: u64| -> Option<(FileId, String)> {
        let mut f = crate::paths::open_private(p).ok()?;
        let m = f.metadata().ok()?;
        if !m.is_file() || m.len() < offset || m.len() - offset > SINCE_MAX {
            return None;
        }
        f.seek(SeekFrom::Start(offset)).ok()?;
        let mut buf = Vec::new();
        f.take(SINCE_MAX).read_to_end(&mut buf).ok()?;
        Some((file_id(&m), String::from_utf8_lossy(&buf).into_owned()))
    };
    let current = std::fs::symlink_metadata(path).ok().map(|m| file_id(&m));
    let Some(ino) = mark.ino else {
        // No log when marked: all there is was written since (a rotated file now would be a
        // second file since, and the first may be gone).
        let rotated_exists = std::fs::symlink_metadata(rotated_of(path)).is_ok();
        return match current {
            None if !rotated_exists => Some(String::new()),
            Some(_) if !rotated_exists => from(path, 0).map(|(_, t)| t),
            _ => None,
        };
    };
    if current == Some(ino) {
        let (seen, text) = from(path, mark.len)?;
        return (seen == ino).then_some(text);
    }
    // Rotated since: the marked file is `.1` now, and the current one is the only newer one.
    let (seen, mut text) = from(&rotated_of(path), mark.len)?;
    if seen != ino {
        return None;
    }
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let now = match current {
        Some(_) => from(path, 0)?.1,
        None => String::new(),
    };
    (text.len() as u64 + now.len() as u64 <= SINCE_MAX).then(|| text + &now)
}

fn rotated_of(path: &Path) -> std::path::PathBuf {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    rotated.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class: absence from a bounded window read as absence. What was written since a mark is
    /// read whole, across one rotation; past what can be known whole (two rotations, a
    /// truncated or replaced log) the answer is `None`, never a shorter text.
    #[test]
    fn what_was_written_since_a_mark_is_read_whole_or_not_at_all() {
        let t = tempfile::tempdir().unwrap();
        let log = t.path().join("activity.jsonl");
        assert_eq!(read_since(&log, mark(&log)), Some(String::new()));
        std::fs::write(&log, "old\n").unwrap();
        let m = mark(&log);
        let big = "y".repeat(3 << 20) + "\n";
        let append = |s: &str| {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            f.write_all(s.as_bytes()).unwrap();
        };
        append("started\n");
        append(&big);
        let since = read_since(&log, m).unwrap();
        assert!(since.starts_with("started\n") && !since.contains("old"));
        // One rotation: the marked file is `.1`.
        let rotated = t.path().join("activity.jsonl.1");
        std::fs::rename(&log, &rotated).unwrap();
        std::fs::write(&log, "after\n").unwrap();
        let since = read_since(&log, m).unwrap();
        assert!(since.starts_with("started\n") && since.ends_with("after\n"));
        // Two: the marked file is gone; what was written since is not known.
        std::fs::rename(&log, &rotated).unwrap();
        std::fs::write(&log, "later\n").unwrap();
        assert_eq!(read_since(&log, m), None);
        // Truncated below the mark: not known either.
        let m2 = mark(&log);
        std::fs::write(&log, "").unwrap();
        assert_eq!(read_since(&log, m2), None);
        // No log when marked, one rotation since: what came first may be gone.
        let none = t.path().join("none.jsonl");
        let m3 = mark(&none);
        std::fs::write(&none, "x\n").unwrap();
        assert_eq!(read_since(&none, m3), Some("x\n".into()));
        std::fs::write(t.path().join("none.jsonl.1"), "y\n").unwrap();
        assert_eq!(read_since(&none, m3), None);
    }
}

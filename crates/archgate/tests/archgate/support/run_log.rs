//! A log the programs a test starts append their lines to (`echo "$0 $*" >> FILE`), read without
//! losing a line. Reading the file and then removing it lost one: a shell that had opened the
//! file (`>>` creates it) but not yet written was read as nothing, the file was removed, and its
//! line went into the unlinked file — a launch that ran was seen as one that never did (the
//! flaky `launch_door` web-app test). Here the file is never removed or truncated; a look takes
//! the whole lines written since the last look.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct RunLog {
    path: PathBuf,
    /// Bytes of the file already taken, always at a line's end.
    seen: AtomicUsize,
}

impl RunLog {
    pub fn new(path: PathBuf) -> RunLog {
        RunLog {
            path,
            seen: AtomicUsize::new(0),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The whole lines written since the last look (a line still being written waits for the
    /// next look).
    pub fn take(&self) -> Vec<String> {
        let all = std::fs::read(&self.path).unwrap_or_default();
        let seen = self.seen.load(Ordering::SeqCst).min(all.len());
        let new = &all[seen..];
        let Some(end) = new.iter().rposition(|&b| b == b'\n') else {
            return Vec::new();
        };
        self.seen.store(seen + end + 1, Ordering::SeqCst);
        String::from_utf8_lossy(&new[..end])
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::RunLog;
    use std::io::Write;

    /// A writer that opened the log before a look and wrote after it: its line is taken by the
    /// next look (the old read-then-remove lost it).
    #[test]
    fn a_line_written_after_a_look_by_a_writer_already_open_is_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::new(dir.path().join("ran.log"));
        let mut writer = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log.path())
            .unwrap();
        assert!(log.take().is_empty());
        writer
            .write_all(b"omarchy-launch-webapp https://a.example/\nhalf")
            .unwrap();
        assert_eq!(log.take(), vec!["omarchy-launch-webapp https://a.example/"]);
        assert!(log.take().is_empty(), "a line is taken once");
        writer.write_all(b" done\n").unwrap();
        assert_eq!(log.take(), vec!["half done"]);
    }
}

//! The audit writer: one line per record, written by one thread in batches, so a caller never
//! writes, waits for a write or takes a lock another caller holds (issue 34).
//!
//! `AuditLog::record` serializes on the caller's thread and `try_send`s the line into a bounded
//! queue (lock-free); each caller's records keep their order there. The writer thread takes
//! whatever is queued when it wakes — one line when calls are few, many under load — and writes
//! it in one `write` on an O_APPEND descriptor, so a SIGKILL leaves at most a torn last line, which
//! the reader skips and reports. The log lags a call by the writer's wake-up (tens of µs on an idle
//! machine); a graceful stop flushes the queue first (`flush`, `shutdown`), so every record
//! handed over is on disk before the daemon stops, and what must be on disk *before* something
//! happens (an act call's `started` line) is written by `event_now` on its caller's thread, under
//! the lock only the writer thread shares. A full queue drops the record, counts it, warns once on
//! stderr, and when the writer next catches up it writes `{"event":"dropped","n":N}`. A failing
//! write is reported on stderr (once per burst of failures, with the count when writing recovers),
//! counted (`write_failures`, shown by `/health`), and the server keeps serving.

use super::record::Record;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct AuditSettings {
    pub path: PathBuf,
    pub queue: usize,
    pub max_bytes: u64,
    pub keep: u32,
}

/// How long history survives rotation. A rotated file is removed once it is older than
/// `keep_young` (by its last write) and `keep` newer files exist; a younger one is removed only
/// when all files together pass `hard_cap` bytes, and then a `rotated` event says so.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub keep_young: Duration,
    pub hard_cap: u64,
}

/// Rotated files are kept this long by default, whatever their number.
pub const KEEP_YOUNG: Duration = Duration::from_secs(7 * 86_400);
/// All files together never pass this by default (or `max_bytes × (keep + 1)` when larger).
pub const HARD_CAP: u64 = 256 << 20;
/// Never more numbered files than this, young or not.
const MAX_FILES: u32 = 1000;

impl Retention {
    pub fn default_for(s: &AuditSettings) -> Retention {
        Retention {
            keep_young: KEEP_YOUNG,
            hard_cap: HARD_CAP.max(s.max_bytes.saturating_mul(u64::from(s.keep) + 1)),
        }
    }
}

enum Msg {
    Line(String),
    Flush(std::sync::mpsc::Sender<()>),
}

#[derive(Debug, Default)]
pub struct AuditStats {
    pub written: AtomicU64,
    pub dropped_total: AtomicU64,
    pub write_failures: AtomicU64,
    /// `write`s that carried lines (several lines each once calls come faster than one write).
    pub batches: AtomicU64,
}

#[derive(Clone)]
pub struct AuditLog {
    tx: SyncSender<Msg>,
    /// The file and its state: the writer thread's, and `event_now`'s (an act call's start).
    writer: Arc<Mutex<Writer>>,
    pending_dropped: Arc<AtomicU64>,
    warned_full: Arc<AtomicBool>,
    stats: Arc<AuditStats>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("stats", &self.stats)
            .finish()
    }
}

impl AuditLog {
    /// Starts the writer thread. Never fails: an unwritable location is reported when writing.
    pub fn start(settings: AuditSettings) -> AuditLog {
        let retention = Retention::default_for(&settings);
        AuditLog::start_with(settings, retention)
    }

    /// [`AuditLog::start`] with its own retention.
    pub fn start_with(settings: AuditSettings, retention: Retention) -> AuditLog {
        AuditLog::spawn(settings, retention, true)
    }

    /// [`AuditLog::start`] for a process that may record nothing (a command that only reads):
    /// the file is opened, and created, by the first write, so recording nothing leaves no log
    /// behind. The first record then goes through the writer thread.
    pub fn start_unopened(settings: AuditSettings) -> AuditLog {
        let retention = Retention::default_for(&settings);
        AuditLog::spawn(settings, retention, false)
    }

    fn spawn(settings: AuditSettings, retention: Retention, open_now: bool) -> AuditLog {
        let (tx, rx) = sync_channel(settings.queue.max(1));
        let pending_dropped = Arc::new(AtomicU64::new(0));
        let stats = Arc::new(AuditStats::default());
        let mut first = Writer::new(settings, retention, pending_dropped.clone(), stats.clone());
        // Opened now, so the first record does not wait for the file to be opened (a record
        // behind a file still to open lagged its call). Failing here is retried, and reported,
        // by the first write.
        if open_now {
            let _ = first.open();
        }
        let writer = Arc::new(Mutex::new(first));
        let thread = {
            let writer = writer.clone();
            std::thread::Builder::new()
                .name("archgate-audit".into())
                .spawn(move || drain(&writer, rx))
                .expect("spawning the audit writer thread")
        };
        AuditLog {
            tx,
            writer,
            pending_dropped,
            warned_full: Arc::new(AtomicBool::new(false)),
            stats,
            thread: Arc::new(Mutex::new(Some(thread))),
        }
    }

    /// Enqueues one record without blocking.
    pub fn record(&self, record: &Record) {
        match super::bound::record_line(record) {
            Ok(line) => self.enqueue(line),
            Err(e) => tracing::error!("audit record could not be serialized: {e}"),
        }
    }

    /// Enqueues one event line (what the person changed: developer mode, standing rules). It
    /// must be an object with an `"event"` key, so readers tell it from a call record; a `time`
    /// is added when it has none.
    pub fn event(&self, event: &serde_json::Value) {
        if let Some(line) = event_line(event) {
            self.enqueue(line);
        }
    }

    /// Writes one event line now, on the caller's thread, and says whether it reached the file
    /// (the kernel's copy: it survives this process being killed). For what must be in the log
    /// before something happens — a call's `started` line before its program runs. Lines still
    /// queued by other callers may land after it: only this line's own moment is promised.
    pub fn event_now(&self, event: &serde_json::Value) -> bool {
        let Some(mut batch) = event_line(event) else {
            return false;
        };
        batch.push('\n');
        self.writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .write_batch(&mut batch)
    }

    fn enqueue(&self, line: String) {
        match self.tx.try_send(Msg::Line(line)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.pending_dropped.fetch_add(1, Ordering::Relaxed);
                self.stats.dropped_total.fetch_add(1, Ordering::Relaxed);
                if !self.warned_full.swap(true, Ordering::Relaxed) {
                    tracing::warn!("audit queue full: records are being dropped and counted");
                }
            }
        }
    }

    /// Holds the writer as a write under way would (tests: lines queue behind it meanwhile).
    #[cfg(test)]
    pub(crate) fn hold_writer(&self) -> impl Drop + '_ {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn stats(&self) -> &AuditStats {
        &self.stats
    }

    /// Waits until everything enqueued so far is written, at most `timeout`.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (tx, rx) = std::sync::mpsc::channel();
        let deadline = std::time::Instant::now() + timeout;
        // The queue may be full; retry the flush request until the deadline.
        let mut msg = Msg::Flush(tx);
        loop {
            match self.tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(m)) if std::time::Instant::now() < deadline => {
                    msg = m;
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(_) => return false,
            }
        }
        rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()))
            .is_ok()
    }

    /// Flushes within `timeout` and lets the writer thread finish.
    pub fn shutdown(&self, timeout: Duration) -> bool {
        let ok = self.flush(timeout);
        if ok && let Some(t) = self.thread.lock().ok().and_then(|mut g| g.take()) {
            drop(t); // detached: the process is about to exit; the queue is already drained.
        }
        ok
    }
}

/// An event as one bounded line, with a `time` when it has none; `None` when it is no object.
fn event_line(event: &serde_json::Value) -> Option<String> {
    let mut v = event.clone();
    let o = v.as_object_mut()?;
    debug_assert!(
        o.contains_key("event"),
        "an audit event needs an \"event\" key"
    );
    o.entry("time")
        .or_insert_with(|| super::record::now_rfc3339().into());
    Some(super::bound::bounded_event(&v).to_string())
}

struct Writer {
    settings: AuditSettings,
    retention: Retention,
    file: Option<File>,
    size: u64,
    pending_dropped: Arc<AtomicU64>,
    stats: Arc<AuditStats>,
    failing: Option<u64>,
}

/// The writer thread: waits for queued lines, then writes all that are queued (up to 256 KiB)
/// in one `write`, under the writer's lock (an `event_now` meanwhile finishes first).
fn drain(writer: &Mutex<Writer>, rx: Receiver<Msg>) {
    let lock = || writer.lock().unwrap_or_else(|p| p.into_inner());
    let mut batch = String::new();
    let mut waiters = Vec::new();
    loop {
        let first = match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                // Idle: report drops that happened with nothing else to write.
                lock().write_batch(&mut batch);
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let mut next = Some(first);
        while let Some(m) = next {
            match m {
                Msg::Line(l) => {
                    batch.push_str(&l);
                    batch.push('\n');
                }
                Msg::Flush(w) => waiters.push(w),
            }
            next = if batch.len() < 256 * 1024 {
                rx.try_recv().ok()
            } else {
                None
            };
        }
        lock().write_batch(&mut batch);
        for w in waiters.drain(..) {
            let _ = w.send(());
        }
    }
    lock().write_batch(&mut batch);
}

impl Writer {
    fn new(
        settings: AuditSettings,
        retention: Retention,
        pending_dropped: Arc<AtomicU64>,
        stats: Arc<AuditStats>,
    ) -> Writer {
        Writer {
            settings,
            retention,
            file: None,
            size: 0,
            pending_dropped,
            stats,
            failing: None,
        }
    }

    /// Writes the batch (after the drop count, if any); whether it reached the file.
    fn write_batch(&mut self, batch: &mut String) -> bool {
        let dropped = self.pending_dropped.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let ev = serde_json::json!({"event": "dropped", "n": dropped, "time": super::record::now_rfc3339()});
            batch.push_str(&ev.to_string());
            batch.push('\n');
        }
        if batch.is_empty() {
            return true;
        }
        let lines = batch.bytes().filter(|b| *b == b'\n').count() as u64;
        let written = match self.try_write(batch.as_bytes()) {
            Ok(()) => {
                self.stats.written.fetch_add(lines, Ordering::Relaxed);
                self.stats.batches.fetch_add(1, Ordering::Relaxed);
                if let Some(lost) = self.failing.take() {
                    tracing::warn!(path = %self.settings.path.display(), "audit log writable again; {lost} records were lost");
                }
                true
            }
            Err(e) => {
                // The drop count must still reach the file once writing works again.
                self.pending_dropped.fetch_add(dropped, Ordering::Relaxed);
                self.stats.write_failures.fetch_add(1, Ordering::Relaxed);
                self.file = None;
                match &mut self.failing {
                    None => {
                        tracing::error!(path = %self.settings.path.display(), "audit log write failed: {e}; archgate keeps serving");
                        self.failing = Some(lines);
                    }
                    Some(n) => *n += lines,
                }
                false
            }
        };
        batch.clear();
        written
    }

    /// Opens the log for appending (creating it 0600) and learns its size.
    fn open(&mut self) -> std::io::Result<()> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.settings.path)?;
        self.size = f.metadata()?.len();
        // A previous process killed mid-write may have left a torn last line without its
        // newline: end it, so the first new record is not glued to the fragment (the reader
        // skips and reports the fragment; the new record stays whole).
        if self.size > 0 && !ends_with_newline(&self.settings.path)? {
            (&f).write_all(b"\n")?;
            self.size += 1;
        }
        self.file = Some(f);
        Ok(())
    }

    fn try_write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let mut notice = None;
        if self.size + bytes.len() as u64 > self.settings.max_bytes && self.size > 0 {
            self.file = None;
            notice = rotate(&self.settings, &self.retention)?;
            self.size = 0;
        }
        if self.file.is_none() {
            self.open()?;
        }
        let f = self.file.as_mut().expect("opened above");
        if let Some(n) = notice {
            let line = format!("{n}\n");
            f.write_all(line.as_bytes())?;
            self.size += line.len() as u64;
            self.stats.written.fetch_add(1, Ordering::Relaxed);
        }
        f.write_all(bytes)?;
        self.size += bytes.len() as u64;
        Ok(())
    }
}

fn ends_with_newline(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = File::open(path)?;
    f.seek(SeekFrom::End(-1))?;
    let mut b = [0u8; 1];
    f.read_exact(&mut b)?;
    Ok(b[0] == b'\n')
}

/// activity.jsonl → activity.jsonl.1 → activity.jsonl.2 → …; then, from the oldest end, files
/// beyond `keep` go when they are older than `keep_young` — or, younger, only while all files
/// together pass `hard_cap`. Returns the `rotated` event to write when young records went.
fn rotate(s: &AuditSettings, r: &Retention) -> std::io::Result<Option<serde_json::Value>> {
    let path = &s.path;
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
    std::fs::rename(path, numbered(1))?;
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

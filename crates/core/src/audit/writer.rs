//! The audit writer: one line per record, written in batches — one `write` for whatever is
//! queued — by whichever thread finds the writer free, so a caller never waits for a write or a
//! lock another holds (issue 34) and the log does not lag an unhurried call (issue 23).
//!
//! `AuditLog::record` serializes on the caller's thread and `try_send`s the line into a bounded
//! queue (lock-free), so each caller's records keep their order. Then, if the writer is free
//! (`try_lock`: never waiting), the caller takes everything queued — its own line last — and
//! writes it in one `write`; if it is busy, the caller returns at once and the holder, which
//! looks at the queue again after letting go, writes the line with the next batch. A holder
//! writes at most [`ROUNDS`] batches for others before it hands what is still queued to the
//! writer thread, so under load no caller is kept writing for the rest. With nothing else
//! queued, a record is in the file when `record` returns. A graceful stop flushes the queue
//! (`flush`, `shutdown`): every record handed over is on disk before the daemon stops. What must
//! be on disk *before* something happens (an act call's `started` line) is written by
//! `event_now`, which waits for the writer. Each batch goes to an O_APPEND descriptor in one
//! `write`, so a SIGKILL leaves at most a torn last line, which the reader skips and reports. A
//! caller that finds the queue full (overload) waits for the writer once and writes the queue
//! itself rather than lose its record; only when that cannot help (the log failing) is the
//! record dropped, counted, warned about once on stderr, and the next batch carries
//! `{"event":"dropped","n":N}`. A failing write is reported on stderr (once per burst of
//! failures, with the count when writing recovers), counted (`write_failures`, in `/health`),
//! and the log is failing (`writable` false) until a write succeeds: the gate answers no call
//! meanwhile (attack 33 F1).

use super::record::Record;
use super::settings::{AuditSettings, LOOK_EVERY, Retention, dir_and_name};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Where [`AuditLog::record`] left a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handed {
    /// Written (or its write failed: [`AuditLog::writable`] says which) by the caller itself.
    Written,
    /// Queued behind another caller's write, which writes it with its next batch.
    Queued,
    /// Handed to the writer thread (a file to open or rotate, a failure to recover from): in the
    /// file only after the caller returned — a caller that must know waits ([`AuditLog::flush`]).
    ToThread,
    /// Never to be written (it could not be serialized, or the queue was full): counted.
    Lost,
}

/// Batches a lock holder writes for others before it hands the rest to the writer thread.
const ROUNDS: usize = 2;
/// A batch is cut at this size (whole lines).
const BATCH_BYTES: usize = 256 * 1024;

#[derive(Debug, Default)]
pub struct AuditStats {
    pub written: AtomicU64,
    pub dropped_total: AtomicU64,
    pub write_failures: AtomicU64,
    /// `write`s that carried lines (several lines each once calls come faster than one write).
    pub batches: AtomicU64,
    /// The last write failed and none has succeeded since: the log cannot be written now, and
    /// the gate answers no call whose record would be lost (attack 33 F1).
    pub failing: AtomicBool,
}

#[derive(Clone)]
pub struct AuditLog {
    tx: SyncSender<String>,
    /// The file, its state and the queue's receiving end: whoever holds it writes.
    writer: Arc<Mutex<Writer>>,
    /// Lines in the queue; a holder letting go looks at it to see whether lines came meanwhile.
    queued: Arc<AtomicUsize>,
    pending_dropped: Arc<AtomicU64>,
    warned_full: Arc<AtomicBool>,
    stats: Arc<AuditStats>,
    /// The writer thread, woken when a holder hands lines over (or every 500 ms: idle drops).
    thread: Arc<std::thread::Thread>,
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
    /// behind.
    pub fn start_unopened(settings: AuditSettings) -> AuditLog {
        let retention = Retention::default_for(&settings);
        AuditLog::spawn(settings, retention, false)
    }

    fn spawn(settings: AuditSettings, retention: Retention, open_now: bool) -> AuditLog {
        let (tx, rx) = sync_channel(settings.queue.max(1));
        let pending_dropped = Arc::new(AtomicU64::new(0));
        let stats = Arc::new(AuditStats::default());
        let mut first = Writer::new(
            settings,
            retention,
            rx,
            pending_dropped.clone(),
            stats.clone(),
        );
        // Opened now, so the first record goes to the file with its call like every other one
        // (a record behind a file still to open lagged its call: a kill right after the first
        // answer lost it). Failing here is retried, and reported, by the first write.
        // A log that cannot be opened at the start is failing from the start: no call is
        // answered until a record reaches it (the first refused call's record is the next try).
        if open_now && first.open().is_err() {
            stats.failing.store(true, Ordering::SeqCst);
        }
        let writer = Arc::new(Mutex::new(first));
        let queued = Arc::new(AtomicUsize::new(0));
        let thread = {
            let (writer, queued) = (writer.clone(), queued.clone());
            std::thread::Builder::new()
                .name("archgate-audit".into())
                .spawn(move || writer_thread(&writer, &queued))
                .expect("spawning the audit writer thread")
        };
        AuditLog {
            tx,
            writer,
            queued,
            pending_dropped,
            warned_full: Arc::new(AtomicBool::new(false)),
            stats,
            thread: Arc::new(thread.thread().clone()),
        }
    }

    /// Hands one record to the log without waiting (see the module doc), and says where it went.
    pub fn record(&self, record: &Record) -> Handed {
        match super::bound::record_line(record) {
            Ok(line) => self.enqueue(line),
            Err(e) => {
                tracing::error!("audit record could not be serialized: {e}");
                Handed::Lost
            }
        }
    }

    /// Hands one event line to the log (what the person changed: developer mode, standing
    /// rules). It must be an object with an `"event"` key, so readers tell it from a call
    /// record; a `time` is added when it has none.
    pub fn event(&self, event: &serde_json::Value) {
        if let Some(line) = event_line(event) {
            let _ = self.enqueue(line);
        }
    }

    /// Writes one event line now, on the caller's thread, and says whether it reached the file
    /// (the kernel's copy: it survives this process being killed). For what must be in the log
    /// before something happens — a call's `started` line before its program runs. It waits for
    /// the writer; lines queued by other callers may land after it: only this line's own moment
    /// is promised.
    pub fn event_now(&self, event: &serde_json::Value) -> bool {
        let Some(mut batch) = event_line(event) else {
            return false;
        };
        batch.push('\n');
        let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let written = w.write_batch(&mut batch);
        self.let_go(w);
        written
    }

    fn enqueue(&self, line: String) -> Handed {
        self.queued.fetch_add(1, Ordering::SeqCst);
        let mut sent = self.tx.try_send(line);
        if let Err(TrySendError::Full(line)) = sent {
            // Overload: the queue is full. Rather than lose the record, this caller waits for
            // the writer once and writes what is queued (only a writable log: a failing one's
            // queue is the writer thread's), then queues its line again.
            let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            if w.writes_at_once() {
                let n = w.write_queued();
                self.queued.fetch_sub(n, Ordering::SeqCst);
            }
            drop(w);
            sent = self.tx.try_send(line);
        }
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = sent {
            self.queued.fetch_sub(1, Ordering::SeqCst);
            self.pending_dropped.fetch_add(1, Ordering::Relaxed);
            self.stats.dropped_total.fetch_add(1, Ordering::Relaxed);
            if !self.warned_full.swap(true, Ordering::Relaxed) {
                tracing::warn!("audit queue full: records are being dropped and counted");
            }
            return Handed::Lost;
        }
        // Against `let_go`'s fence: either this caller finds the writer free, or its holder
        // sees this line queued after letting go.
        fence(Ordering::SeqCst);
        match self.writer.try_lock() {
            Ok(w) => {
                let at_once = w.writes_at_once();
                self.write_queued(w, ROUNDS);
                if at_once {
                    Handed::Written
                } else {
                    Handed::ToThread
                }
            }
            Err(_) => Handed::Queued,
        }
    }

    /// With the writer held: writes what is queued (one `write`), lets go, and does so again
    /// while lines came meanwhile and the writer is free — at most `rounds` times; what is
    /// still queued then goes to the writer thread.
    fn write_queued<'a>(&'a self, mut w: MutexGuard<'a, Writer>, rounds: usize) {
        for _ in 0..rounds {
            if !w.writes_at_once() {
                // A file to open or rotate, a failure to recover from, a drop count to report:
                // the writer thread's work, not a caller's.
                break;
            }
            let n = w.write_queued();
            self.queued.fetch_sub(n, Ordering::SeqCst);
            drop(w);
            fence(Ordering::SeqCst);
            if self.queued.load(Ordering::SeqCst) == 0 {
                return;
            }
            match self.writer.try_lock() {
                Ok(g) => w = g,
                // The holder looks at the queue when it lets go.
                Err(_) => return,
            }
        }
        self.thread.unpark();
    }

    /// Lets go of the writer after a write of its own, writing what came meanwhile.
    fn let_go(&self, w: MutexGuard<'_, Writer>) {
        drop(w);
        fence(Ordering::SeqCst);
        if self.queued.load(Ordering::SeqCst) > 0
            && let Ok(w) = self.writer.try_lock()
        {
            self.write_queued(w, ROUNDS);
        }
    }

    /// Lines queued and not yet written (tests).
    #[cfg(test)]
    pub(crate) fn queued_lines(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Holds the writer as a write under way would (tests: lines queue behind it meanwhile).
    #[cfg(test)]
    pub(crate) fn hold_writer(&self) -> impl Drop + '_ {
        struct Held<'a>(Option<MutexGuard<'a, Writer>>, &'a AuditLog);
        impl Drop for Held<'_> {
            fn drop(&mut self) {
                if let Some(w) = self.0.take() {
                    self.1.let_go(w);
                }
            }
        }
        Held(
            Some(self.writer.lock().unwrap_or_else(|p| p.into_inner())),
            self,
        )
    }

    pub fn stats(&self) -> &AuditStats {
        &self.stats
    }

    /// Whether the log can be written now: false from a failed write until one succeeds (a
    /// record of a refused call is the next try, so freeing the disk is noticed by the next
    /// call).
    pub fn writable(&self) -> bool {
        !self.stats.failing.load(Ordering::SeqCst)
    }

    /// Writes everything handed over so far (a failing write is counted and reported, as ever);
    /// false when the queue could not be emptied within `timeout`.
    pub fn flush(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let mut w = self.writer.lock().unwrap_or_else(|p| p.into_inner());
            let n = w.write_queued();
            self.queued.fetch_sub(n, Ordering::SeqCst);
            // The drop count too, when no batch carried it.
            let mut none = String::new();
            w.write_batch(&mut none);
            drop(w);
            if self.queued.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
        }
    }

    /// Flushes within `timeout`; the writer thread stays parked (the process is about to exit).
    pub fn shutdown(&self, timeout: Duration) -> bool {
        self.flush(timeout)
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
    /// The queue's receiving end: read only by whoever holds the writer.
    rx: Receiver<String>,
    /// The batch being made (kept: its buffer is reused).
    batch: String,
    file: Option<File>,
    /// The open file's device and inode: the log's name must still be it (`moved_away`).
    open_id: Option<(u64, u64)>,
    /// When the name was last looked at (`moved_away`).
    looked: Option<Instant>,
    size: u64,
    pending_dropped: Arc<AtomicU64>,
    stats: Arc<AuditStats>,
    failing: Option<u64>,
}

/// The writer thread: writes what a holder handed over (it wakes the thread), and every 500 ms
/// what is queued with nobody writing, drop counts included.
fn writer_thread(writer: &Mutex<Writer>, queued: &AtomicUsize) {
    loop {
        std::thread::park_timeout(Duration::from_millis(500));
        loop {
            let mut w = writer.lock().unwrap_or_else(|p| p.into_inner());
            let n = w.write_queued();
            queued.fetch_sub(n, Ordering::SeqCst);
            if n == 0 {
                let mut none = String::new();
                w.write_batch(&mut none);
            }
            drop(w);
            fence(Ordering::SeqCst);
            if n == 0 || queued.load(Ordering::SeqCst) == 0 {
                break;
            }
        }
    }
}

impl Writer {
    fn new(
        settings: AuditSettings,
        retention: Retention,
        rx: Receiver<String>,
        pending_dropped: Arc<AtomicU64>,
        stats: Arc<AuditStats>,
    ) -> Writer {
        Writer {
            settings,
            retention,
            rx,
            batch: String::new(),
            file: None,
            open_id: None,
            looked: None,
            size: 0,
            pending_dropped,
            stats,
            failing: None,
        }
    }

    /// Whether a caller may write a batch to the open file: no file to open, no rotation due
    /// within a batch, no failure to recover from, no drop count to report first.
    fn writes_at_once(&self) -> bool {
        self.file.is_some()
            && self.failing.is_none()
            && self.size + 2 * BATCH_BYTES as u64 <= self.settings.max_bytes
            && self.pending_dropped.load(Ordering::Relaxed) == 0
    }

    /// Writes what is queued (up to [`BATCH_BYTES`], whole lines) in one `write`; how many lines
    /// it took from the queue.
    fn write_queued(&mut self) -> usize {
        let mut batch = std::mem::take(&mut self.batch);
        let mut n = 0;
        while batch.len() < BATCH_BYTES {
            let Ok(line) = self.rx.try_recv() else { break };
            batch.push_str(&line);
            batch.push('\n');
            n += 1;
        }
        if n > 0 {
            self.write_batch(&mut batch);
        }
        self.batch = batch;
        n
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
                self.stats.failing.store(false, Ordering::SeqCst);
                if let Some(lost) = self.failing.take() {
                    tracing::warn!(path = %self.settings.path.display(), "audit log writable again; {lost} records were lost");
                }
                true
            }
            Err(e) => {
                // The drop count must still reach the file once writing works again.
                self.pending_dropped.fetch_add(dropped, Ordering::Relaxed);
                self.stats.write_failures.fetch_add(1, Ordering::Relaxed);
                self.stats.failing.store(true, Ordering::SeqCst);
                self.file = None;
                match &mut self.failing {
                    None => {
                        tracing::error!(path = %self.settings.path.display(), "audit log write failed: {e}; no call is answered until it can be written");
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

    /// Opens the log for appending (creating it 0600) and learns its size — at start and at
    /// every reopen after a rotation or a failure, the directory judged each time (attack 14
    /// F7; class: *a file written at a path judged once follows whatever is there at write
    /// time*): never through a link, never another's file, never in a directory whose chain
    /// another user may write. Refused, the write fails loudly (`write_failures`, stderr, and
    /// act calls refused as for any unwritable log) and lands nowhere else.
    fn open(&mut self) -> std::io::Result<()> {
        let (dir, name) = dir_and_name(&self.settings.path);
        let f = crate::paths::OwnDir::open(dir)?.open_append_read(name)?;
        let meta = f.metadata()?;
        self.size = meta.len();
        self.open_id = Some((meta.dev(), meta.ino()));
        self.looked = Some(Instant::now());
        // A previous process killed mid-write may have left a torn last line without its
        // newline: end it, so the first new record is not glued to the fragment (the reader
        // skips and reports the fragment; the new record stays whole).
        // Read through the descriptor: by the name, another process's rotation in between left
        // this one nothing (`ENOENT`) or a new, shorter file (`EINVAL` seeking), and the write
        // failed — one lost line in a few dozen concurrent rotations (CI, processes_rotating_at_once_lose_no_record).
        if self.size > 0 && !ends_with_newline(&f, self.size)? {
            (&f).write_all(b"\n")?;
            self.size += 1;
        }
        self.file = Some(f);
        Ok(())
    }

    fn try_write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.file.is_some() && self.moved_away() {
            self.file = None;
        }
        if self.file.is_none() {
            self.open()?;
        }
        let mut notice = None;
        if self.size + bytes.len() as u64 > self.settings.max_bytes && self.size > 0 {
            // The log as it is now, under the lock every process rotates under (`rotate.rs`).
            self.file = None;
            notice = super::rotate::rotate_if_full(
                &self.settings,
                &self.retention,
                self.open_id,
                bytes.len() as u64,
            )?;
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

impl Writer {
    /// Whether the log's name no longer names the open file — another archgate process rotated
    /// it, or the person moved it — so the next write reopens (attack 23 F6; class: *the log's
    /// file set changed under a writer by another process*: the daemon went on writing into
    /// `activity.jsonl.1` for good after the CLI rotated, and the run its killed process left
    /// was reported as nothing started). The name is looked at (one `stat`) at most every
    /// [`LOOK_EVERY`]: a line written in between lands in `activity.jsonl.1`, which the finders
    /// read too while the new file is short (`orphans::read_tail`); not an inotify watch per
    /// log, which every archgate process (and test) would hold against the user's limit.
    fn moved_away(&mut self) -> bool {
        if self.looked.is_some_and(|t| t.elapsed() < LOOK_EVERY) {
            return false;
        }
        self.looked = Some(Instant::now());
        match std::fs::symlink_metadata(&self.settings.path) {
            Ok(m) => Some((m.dev(), m.ino())) != self.open_id,
            Err(_) => true,
        }
    }
}

fn ends_with_newline(f: &std::fs::File, size: u64) -> std::io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, size - 1)?;
    Ok(b[0] == b'\n')
}

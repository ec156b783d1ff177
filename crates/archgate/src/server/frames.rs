//! Frames: in HTTP mode, one JSON line on stdout per state change and per call, never with
//! arguments. Supervisors (the Omarchy plugin) read them. stdout carries nothing else.
//!
//! A call's frame is not written on the call's path: it is queued (no lock) and written with
//! the others queued within [`DELAY`] of it, in one `write`, by a thread of its own (issue 34:
//! with one client, the frame's `write` was one of three system calls archgate added to each
//! call's round trip, and each line woke the supervisor reading the pipe). A state frame
//! (`emit`) is written at once, after every call frame queued before it, so the order on
//! stdout is the order things happened; a graceful stop writes what is queued (`flush`), so
//! every call's frame is out before the daemon ends.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// How long a queued call frame may wait for others to share its `write`.
pub const DELAY: Duration = Duration::from_millis(5);

/// Call frames queued and written in batches to one sink (stdout, or a test's buffer).
pub struct Batcher {
    inner: Arc<Inner>,
}

type Sink = Box<dyn Fn(&[u8]) + Send + Sync>;

struct Inner {
    tx: Sender<Vec<u8>>,
    /// The queue's receiving end; whoever holds it writes, so batches keep their order.
    rx: Mutex<Receiver<Vec<u8>>>,
    /// Whether the thread was woken for frames it has not yet taken.
    armed: AtomicBool,
    /// Started by the first call frame (an idle daemon has none); `None` when it could not.
    thread: OnceLock<Option<std::thread::Thread>>,
    sink: Sink,
}

impl Batcher {
    /// A batcher writing to `sink`; its thread starts with the first queued line and ends when
    /// the batcher is dropped.
    pub fn new(sink: Sink) -> Batcher {
        let (tx, rx) = channel();
        Batcher {
            inner: Arc::new(Inner {
                tx,
                rx: Mutex::new(rx),
                armed: AtomicBool::new(false),
                thread: OnceLock::new(),
                sink,
            }),
        }
    }

    fn thread(&self) -> Option<&std::thread::Thread> {
        self.inner
            .thread
            .get_or_init(|| {
                let weak = Arc::downgrade(&self.inner);
                std::thread::Builder::new()
                    .name("archgate-frames".into())
                    .spawn(move || batch_thread(&weak))
                    .ok()
                    .map(|t| t.thread().clone())
            })
            .as_ref()
    }

    /// Queues one line (its newline included); written within about [`DELAY`].
    pub fn queue(&self, line: Vec<u8>) {
        let i = &self.inner;
        if i.tx.send(line).is_err() {
            return;
        }
        // Only the first frame after a batch wakes the thread; the rest ride along.
        if !i.armed.swap(true, Ordering::AcqRel) {
            match self.thread() {
                Some(t) => t.unpark(),
                // No thread could start: written at once instead.
                None => i.write_queued(None),
            }
        }
    }

    /// Writes what is queued, then `line`, in one write.
    pub fn write_now(&self, line: &[u8]) {
        self.inner.write_queued(Some(line));
    }

    /// Writes what is queued now.
    pub fn flush(&self) {
        self.inner.write_queued(None);
    }
}

impl Drop for Batcher {
    fn drop(&mut self) {
        self.inner.write_queued(None);
        if let Some(Some(t)) = self.inner.thread.get() {
            t.unpark();
        }
    }
}

impl Inner {
    fn write_queued(&self, then: Option<&[u8]>) {
        let rx = self.rx.lock().unwrap_or_else(|p| p.into_inner());
        let mut batch = Vec::new();
        while let Ok(line) = rx.try_recv() {
            batch.extend_from_slice(&line);
        }
        if let Some(l) = then {
            batch.extend_from_slice(l);
        }
        if !batch.is_empty() {
            (self.sink)(&batch);
        }
    }
}

/// Waits to be woken, lets [`DELAY`] pass so more frames can join, writes them; ends when its
/// batcher is gone.
fn batch_thread(inner: &Weak<Inner>) {
    loop {
        std::thread::park();
        match inner.upgrade() {
            Some(i) if i.armed.load(Ordering::Acquire) => {
                drop(i);
                std::thread::sleep(DELAY);
                let Some(i) = inner.upgrade() else { return };
                // Cleared before the queue is read: a frame queued after this wakes the
                // thread again, so none waits for a batch that already left.
                i.armed.store(false, Ordering::SeqCst);
                i.write_queued(None);
            }
            Some(_) => {} // woken for nothing (park may return spuriously)
            None => return,
        }
    }
}

/// The process's stdout batcher, made on first use.
fn stdout() -> &'static Batcher {
    static OUT: OnceLock<Batcher> = OnceLock::new();
    OUT.get_or_init(|| {
        Batcher::new(Box::new(|bytes: &[u8]| {
            let mut out = std::io::stdout().lock();
            // A closed stdout (supervisor gone) must not stop the server.
            let _ = out.write_all(bytes);
            let _ = out.flush();
        }))
    })
}

/// A state frame, written now (after the call frames queued before it).
pub fn emit(v: &serde_json::Value) {
    let mut line = v.to_string().into_bytes();
    line.push(b'\n');
    stdout().write_now(&line);
}

/// Writes the call frames still queued (a graceful stop, before the process ends).
pub fn flush() {
    stdout().flush();
}

/// The same line as `emit(&json!({"event": "call", "tool", "client", "outcome"}))`, serialized
/// straight from the record's fields (no `Value` built per call) and queued for the next batch.
pub fn call_frame(r: &archgate_core::audit::Record) {
    if let Some(line) = call_line(r) {
        stdout().queue(line);
    }
}

fn call_line(r: &archgate_core::audit::Record) -> Option<Vec<u8>> {
    #[derive(serde::Serialize)]
    struct Frame<'a> {
        event: &'static str,
        tool: &'a str,
        client: &'a str,
        outcome: &'static str,
    }
    let frame = Frame {
        event: "call",
        tool: &r.tool,
        client: &r.client,
        outcome: r.outcome.as_str(),
    };
    let mut line = serde_json::to_vec(&frame).ok()?;
    line.push(b'\n');
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn collecting() -> (Batcher, Arc<Mutex<Vec<Vec<u8>>>>) {
        let writes: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let w = writes.clone();
        let b = Batcher::new(Box::new(move |bytes: &[u8]| {
            w.lock().unwrap().push(bytes.to_vec());
        }));
        (b, writes)
    }

    fn text(writes: &Mutex<Vec<Vec<u8>>>) -> String {
        String::from_utf8(writes.lock().unwrap().concat()).unwrap()
    }

    #[test]
    fn queued_frames_come_out_in_order_in_few_writes() {
        let (b, writes) = collecting();
        for i in 0..100 {
            b.queue(format!("{i}\n").into_bytes());
        }
        let until = Instant::now() + Duration::from_secs(10);
        while text(&writes).lines().count() < 100 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        let want: String = (0..100).map(|i| format!("{i}\n")).collect();
        assert_eq!(
            text(&writes),
            want,
            "every frame, in order, without a flush"
        );
        assert!(
            writes.lock().unwrap().len() < 100,
            "frames queued together share writes"
        );
    }

    #[test]
    fn a_state_frame_follows_the_call_frames_queued_before_it() {
        let (b, writes) = collecting();
        b.queue(b"call 1\n".to_vec());
        b.queue(b"call 2\n".to_vec());
        b.write_now(b"stopping\n");
        assert_eq!(text(&writes), "call 1\ncall 2\nstopping\n");
    }

    #[test]
    fn a_flush_writes_every_queued_frame_at_once() {
        let (b, writes) = collecting();
        for i in 0..1000 {
            b.queue(format!("{i}\n").into_bytes());
        }
        b.flush();
        // Nothing is left for the thread: everything is out when `flush` returns.
        assert_eq!(text(&writes).lines().count(), 1000);
    }
}

//! The time the gate reads: passed in, so a test that turns a budget's minute or an approval's
//! deadline sets the clock instead of sleeping to a wall-clock boundary.

use futures::future::BoxFuture;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use tokio::sync::Notify;

/// Where a `Gate` reads the time (call ids, budgets, developer mode, standing rules, questions'
/// deadlines, the audit record's time).
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> OffsetDateTime;

    /// Seconds since the Unix epoch (0 before it).
    fn now_secs(&self) -> u64 {
        u64::try_from(self.now().unix_timestamp()).unwrap_or(0)
    }

    /// A monotonic reading, for deadlines (the approval broker's): time since an arbitrary
    /// origin fixed for the process, which never goes back. A clock that fakes only `now`
    /// keeps the system's monotonic time here.
    fn monotonic(&self) -> Duration {
        system_monotonic()
    }

    /// Resolves once `monotonic()` has reached `at` (at once if it has).
    fn sleep_until(&self, at: Duration) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep_until((origin() + at).into()))
    }
}

/// The process's monotonic origin: the first reading.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn system_monotonic() -> Duration {
    origin().elapsed()
}

/// The system's clock: what archgate runs on.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that moves only when told (tests): whole seconds since the epoch. Its monotonic
/// reading is the same seconds, so deadlines pass when it is advanced (and a test that sets it
/// back moves them away again).
#[derive(Debug, Default)]
pub struct ManualClock {
    secs: AtomicI64,
    /// Wakes `sleep_until` whenever the clock moves.
    moved: Notify,
}

impl ManualClock {
    pub fn at(unix_secs: i64) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            secs: AtomicI64::new(unix_secs),
            moved: Notify::new(),
        })
    }
    pub fn set(&self, unix_secs: i64) {
        self.secs.store(unix_secs, Ordering::SeqCst);
        self.moved.notify_waiters();
    }
    pub fn advance(&self, secs: i64) {
        self.secs.fetch_add(secs, Ordering::SeqCst);
        self.moved.notify_waiters();
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(self.secs.load(Ordering::SeqCst))
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }

    fn monotonic(&self) -> Duration {
        Duration::from_secs(u64::try_from(self.secs.load(Ordering::SeqCst)).unwrap_or(0))
    }

    fn sleep_until(&self, at: Duration) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            loop {
                // Registered before the reading, so a move between the two is not missed.
                let moved = self.moved.notified();
                tokio::pin!(moved);
                moved.as_mut().enable();
                if self.monotonic() >= at {
                    return;
                }
                moved.await;
            }
        })
    }
}

/// RFC 3339, as the audit log writes times.
pub fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

//! The time the gate reads: passed in, so a test that turns a budget's minute or an approval's
//! deadline sets the clock instead of sleeping to a wall-clock boundary.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use time::OffsetDateTime;

/// Where a `Gate` reads the time (call ids, budgets, developer mode, standing rules, questions'
/// deadlines, the audit record's time).
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> OffsetDateTime;

    /// Seconds since the Unix epoch (0 before it).
    fn now_secs(&self) -> u64 {
        u64::try_from(self.now().unix_timestamp()).unwrap_or(0)
    }
}

/// The system's clock: what archgate runs on.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that moves only when told (tests): whole seconds since the epoch.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn at(unix_secs: i64) -> Arc<ManualClock> {
        Arc::new(ManualClock(AtomicI64::new(unix_secs)))
    }
    pub fn set(&self, unix_secs: i64) {
        self.0.store(unix_secs, Ordering::SeqCst);
    }
    pub fn advance(&self, secs: i64) {
        self.0.fetch_add(secs, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::from_unix_timestamp(self.0.load(Ordering::SeqCst))
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

/// RFC 3339, as the audit log writes times.
pub fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

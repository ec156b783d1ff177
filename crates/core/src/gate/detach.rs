//! Work that acts, once started, is not the agent's to stop midway (class: *work that acts is
//! stopped midway by the agent*, attack 15 F3). The person's yes (or their rule) is to the whole
//! command; a program cut off where the agent chose (a theme removed and not yet replaced) is a
//! state no approved call produces. MCP tasks already keep the rule (`tasks/cancel` lets started
//! act work run to its end); a plain request's end — the client's `notifications/cancelled`, a
//! closed connection, a bridged client gone — keeps it through this latch.
//!
//! The transport runs the call apart from its request inside [`ON_START`] and, when the request
//! ends first, calls [`StartLatch::abandon`]: if the work has not started, the call is stopped
//! (a waiting question withdrawn, nothing ran); if it has, it runs to its end (or its timeout)
//! and its one record says what it did. The gate calls [`StartLatch::start`] before act or
//! destructive work starts; after `abandon` won, nothing starts. One atomic decides, so the two
//! never both win.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

const WAITING: u8 = 0;
const STARTED: u8 = 1;
const ABANDONED: u8 = 2;

/// Whether a call's act work started before its request ended.
#[derive(Debug, Default)]
pub struct StartLatch(AtomicU8);

impl StartLatch {
    pub fn new() -> Arc<StartLatch> {
        Arc::new(StartLatch::default())
    }

    /// The gate, as act work is about to start: `false` when the request ended first (then
    /// nothing starts).
    pub fn start(&self) -> bool {
        match self
            .0
            .compare_exchange(WAITING, STARTED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(now) => now == STARTED,
        }
    }

    /// The transport, as the request ends: `true` when no act work had started (the call may
    /// be stopped: nothing ran, and now nothing will); `false` when it had (let it run).
    pub fn abandon(&self) -> bool {
        match self
            .0
            .compare_exchange(WAITING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(now) => now == ABANDONED,
        }
    }
}

tokio::task_local! {
    /// Set by a transport whose request can end before its call (see the module's text).
    pub static ON_START: Arc<StartLatch>;
}

/// The gate's side: may the act work of the call being polled start? (No latch: yes.)
pub(crate) fn may_start() -> bool {
    ON_START.try_with(|l| l.start()).unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_of_start_and_abandon_wins_and_each_answers_its_own_again() {
        let l = StartLatch::new();
        assert!(l.start());
        assert!(l.start());
        assert!(!l.abandon(), "started work is not abandoned");
        let l = StartLatch::new();
        assert!(l.abandon());
        assert!(!l.start(), "nothing starts after the request ended");
        assert!(l.abandon());
    }
}

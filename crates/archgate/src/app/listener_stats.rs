//! What a TCP listener (`/mcp`, the approval page) did with its connections, for `/health`:
//! counted by `server/limits.rs`, shown as `connections` and `page_connections`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What a listener did with its connections, for `/health`.
#[derive(Debug, Default)]
pub struct Stats {
    pub open: AtomicUsize,
    pub accepted: AtomicU64,
    /// Closed at once: every connection in scope was busy.
    pub refused: AtomicU64,
    /// Closed to make room for a new one.
    pub evicted: AtomicU64,
    /// Closed by the idle timeout (the header timeout is hyper's and not counted here).
    pub idle_closed: AtomicU64,
    /// Closed before a byte was read: the peer's socket belongs to another uid (or to no uid
    /// the kernel's table names).
    pub refused_peer: AtomicU64,
    /// Closed because a request's body did not arrive whole within the body deadline.
    pub body_timeout: AtomicU64,
}

impl Stats {
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "open": self.open.load(Ordering::Relaxed),
            "accepted": self.accepted.load(Ordering::Relaxed),
            "refused": self.refused.load(Ordering::Relaxed),
            "evicted": self.evicted.load(Ordering::Relaxed),
            "idle_closed": self.idle_closed.load(Ordering::Relaxed),
            "refused_peer": self.refused_peer.load(Ordering::Relaxed),
            "body_timeout": self.body_timeout.load(Ordering::Relaxed),
        })
    }
}

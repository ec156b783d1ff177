//! What the daemon's bridge socket (`server/bridge.rs`) did with its connections, held by the
//! [`App`](super::App) so `/health` can show it.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What the listener did with its connections (shown in `/health`).
#[derive(Default)]
pub struct BridgeStats {
    pub open: AtomicUsize,
    pub accepted: AtomicU64,
    /// Another uid at the other end (or no credentials).
    pub refused_peer: AtomicU64,
    /// A hello that was too large, unfinished, not JSON or named an unknown client.
    pub refused_hello: AtomicU64,
    /// Past a cap (greeting, all connections, sessions of one client).
    pub refused_cap: AtomicU64,
    /// Where it listens, once it does.
    pub socket: std::sync::OnceLock<PathBuf>,
    /// Open connections per client name.
    pub(crate) by_client: Mutex<HashMap<String, usize>>,
}

impl BridgeStats {
    pub fn json(&self) -> Value {
        json!({
            "socket": self.socket.get(),
            "open": self.open.load(Ordering::Relaxed),
            "accepted": self.accepted.load(Ordering::Relaxed),
            "refused_peer": self.refused_peer.load(Ordering::Relaxed),
            "refused_hello": self.refused_hello.load(Ordering::Relaxed),
            "refused_cap": self.refused_cap.load(Ordering::Relaxed),
        })
    }
}

//! When each client last made an authenticated HTTP request: written by every request, read by
//! `/health`, `archgate status` and the approval page.
//!
//! Every request writes it, so it takes no lock all requests share (issue 34): the map of
//! clients is replaced whole (under `edit`) only when a client is first seen, renamed or
//! forgotten, and a request of a client seen before stores one atomic.

use arc_swap::ArcSwap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct LastSeen {
    map: ArcSwap<HashMap<String, Arc<AtomicU64>>>,
    edit: Mutex<()>,
}

impl LastSeen {
    /// `client` made a request at `now` (Unix seconds).
    pub fn touch(&self, client: &str, now: u64) {
        if let Some(t) = self.map.load().get(client) {
            t.store(now, Ordering::Relaxed);
            return;
        }
        self.change(|m| {
            m.entry(client.to_owned())
                .or_default()
                .store(now, Ordering::Relaxed);
        });
    }

    pub fn get(&self, client: &str) -> Option<u64> {
        self.map
            .load()
            .get(client)
            .map(|t| t.load(Ordering::Relaxed))
    }

    pub fn rename(&self, from: &str, to: &str) {
        self.change(|m| {
            if let Some(t) = m.remove(from) {
                m.insert(to.to_owned(), t);
            }
        });
    }

    pub fn forget(&self, client: &str) {
        self.change(|m| {
            m.remove(client);
        });
    }

    /// A copy of the map, changed by `f`, in its place (one change at a time).
    fn change(&self, f: impl FnOnce(&mut HashMap<String, Arc<AtomicU64>>)) {
        let _one = self.edit.lock().unwrap_or_else(|p| p.into_inner());
        let mut m = HashMap::clone(&self.map.load());
        f(&mut m);
        self.map.store(Arc::new(m));
    }
}

#[cfg(test)]
mod tests {
    use super::LastSeen;

    #[test]
    fn a_client_is_seen_renamed_and_forgotten() {
        let s = LastSeen::default();
        assert_eq!(s.get("a"), None);
        s.touch("a", 10);
        s.touch("a", 12);
        s.touch("b", 11);
        assert_eq!((s.get("a"), s.get("b")), (Some(12), Some(11)));
        s.rename("a", "c");
        assert_eq!((s.get("a"), s.get("c")), (None, Some(12)));
        s.touch("c", 13);
        assert_eq!(s.get("c"), Some(13));
        s.forget("c");
        assert_eq!(s.get("c"), None);
        assert_eq!(s.get("b"), Some(11));
    }
}

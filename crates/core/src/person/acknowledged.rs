//! The routes the person acknowledged (`archgate policy ack`), so an `allow` prefix may grant
//! them without a question: `acknowledged-routes.json`, 0600 in the state directory.
//!
//! Read by every call (policy judges on it) without a lock all callers share: the set is an
//! `ArcSwap`, a call keeps the set it began with. The file is the truth, in every archgate
//! process (attack 23 F2; class: *state a yes depends on, read once per process and rewritten
//! whole from that copy*): an acknowledgement the person removed by editing the file kept
//! granting in the running daemon while `policy explain` said "ask", and one the CLI added did
//! not reach it. So the file's stamp is looked at again at most every [`LOOK_EVERY_MS`] (one
//! `stat`, by one caller at a time, none waiting) and the set re-read when it changed; something
//! there that is not archgate's is none of it used. A change is one at a time across processes
//! (a `flock` on `acknowledged-routes.lock`, `paths::lock_own_file`) and starts from the file.

use arc_swap::ArcSwap;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::rules::{FileStamp, stamp};
use super::{PersonError, read_json};
use crate::paths::write_private_file;

/// The change lock, beside the file.
const LOCK: &str = "acknowledged-routes.lock";

/// How often a call may look at the file's stamp.
const LOOK_EVERY_MS: u64 = 100;

#[derive(Debug)]
pub(super) struct Acknowledged {
    file: PathBuf,
    set: ArcSwap<BTreeSet<String>>,
    born: Instant,
    /// When the stamp was last looked at, in ms since `born`.
    looked: AtomicU64,
    /// The file's stamp when the set was read.
    stamp: Mutex<Option<FileStamp>>,
}

impl Acknowledged {
    /// Reads the file; `Err(why)` with an empty set when something there is not archgate's.
    pub(super) fn load(file: PathBuf) -> (Acknowledged, Option<String>) {
        let st = stamp(&file);
        let (set, untrusted) = match read_json(&file) {
            Ok(a) => (a.unwrap_or_default(), None),
            Err(why) => (BTreeSet::new(), Some(why)),
        };
        let a = Acknowledged {
            file,
            set: ArcSwap::from_pointee(set),
            born: Instant::now(),
            looked: AtomicU64::new(0),
            stamp: Mutex::new(st),
        };
        (a, untrusted)
    }

    /// The set as the file holds it (looked at again at most every [`LOOK_EVERY_MS`]).
    pub(super) fn get(&self) -> Arc<BTreeSet<String>> {
        self.follow_the_file();
        self.set.load_full()
    }

    fn follow_the_file(&self) {
        let now = u64::try_from(self.born.elapsed().as_millis()).unwrap_or(u64::MAX);
        let last = self.looked.load(Ordering::Relaxed);
        if now.saturating_sub(last) < LOOK_EVERY_MS
            || self
                .looked
                .compare_exchange(last, now, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let Ok(mut seen) = self.stamp.try_lock() else {
            return; // a change is being saved: it stores the set itself
        };
        let st = stamp(&self.file);
        if st == *seen {
            return;
        }
        *seen = st;
        let set = read_json(&self.file).ok().flatten().unwrap_or_default();
        self.set.store(Arc::new(set));
    }

    /// Acknowledges `route` (see the module doc).
    pub(super) fn add(&self, route: &str) -> Result<(), PersonError> {
        let mut seen = self.stamp.lock().unwrap_or_else(|p| p.into_inner());
        let _held = self.file.parent().and_then(|dir| {
            crate::paths::lock_own_file(dir, LOCK.as_ref())
                .inspect_err(|e| tracing::warn!("acknowledged routes' lock not taken: {e}"))
                .ok()
        });
        let mut set = match read_json::<BTreeSet<String>>(&self.file) {
            Ok(stored) => stored.unwrap_or_default(),
            // Something there that is not archgate's: none of it is used (as `load` does); the
            // save replaces it with this process's set, or refuses in a directory not archgate's.
            Err(_) => BTreeSet::clone(&self.set.load()),
        };
        set.insert(archgate_policy::normalize_route(route));
        let bytes = serde_json::to_vec_pretty(&set).unwrap_or_default();
        let saved = write_private_file(&self.file, &bytes).map_err(|source| PersonError::Io {
            path: self.file.clone(),
            source,
        });
        *seen = stamp(&self.file);
        self.set.store(Arc::new(set));
        saved
    }
}

#[cfg(test)]
mod tests {
    use super::super::PersonState;

    fn open(dir: &std::path::Path) -> PersonState {
        PersonState::load(
            dir.join("standing-rules.json"),
            dir.join("acknowledged-routes.json"),
        )
    }

    /// Class: *read-modify-write of shared state without a lock across the processes that
    /// write it*: two archgate processes (the daemon and an in-process stdio server) acknowledge
    /// routes at once; every acknowledgement is kept.
    #[test]
    fn two_processes_acknowledging_at_once_keep_every_route() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (open(t.path()), open(t.path()));
        std::thread::scope(|s| {
            for (p, who) in [(&a, "a"), (&b, "b")] {
                s.spawn(move || {
                    for i in 0..40 {
                        p.acknowledge(&format!("omarchy {who} {i}")).unwrap();
                    }
                });
            }
        });
        assert_eq!(open(t.path()).acknowledged().len(), 80);
    }

    /// Attack 23 F2: the running daemon follows the file — an acknowledgement another process
    /// added, and one the person removed by editing the file, within a look's interval.
    #[test]
    fn a_running_process_follows_acknowledgements_added_or_removed_elsewhere() {
        let t = tempfile::tempdir().unwrap();
        let daemon = open(t.path());
        assert!(daemon.acknowledged().is_empty());
        open(t.path())
            .acknowledge("omarchy toggle nightlight")
            .unwrap();
        let wait = std::time::Duration::from_millis(super::LOOK_EVERY_MS + 50);
        std::thread::sleep(wait);
        assert!(daemon.acknowledged().contains("omarchy toggle nightlight"));
        std::fs::write(t.path().join("acknowledged-routes.json"), "[]").unwrap();
        std::thread::sleep(wait);
        assert!(
            daemon.acknowledged().is_empty(),
            "{:?}",
            daemon.acknowledged()
        );
    }
}

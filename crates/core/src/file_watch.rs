//! Noticing that a few files changed without looking at them on every request: one inotify
//! watch on each file's directory, read by one thread that counts the changes naming them.
//!
//! The client store checks on every HTTP request whether the token or the clients file changed
//! (a client revoked by the CLI is refused on its next request). Two `statx` a request did that;
//! now a request reads one counter ([`FileWatch::changes`]), and only a change costs a re-read.
//! The directory is watched, not the file: the CLI replaces the files by `rename`, which a watch
//! on the old inode would not see. Every kind of change that can alter what a file holds counts:
//! a write closed, a rename onto or away from the name, a creation, a deletion, an attribute
//! change (an `mtime` set back, a mode changed). When the kernel's queue overflows, every file
//! counts as changed. When the watch is lost (the directory removed or moved, reading failing),
//! [`FileWatch::active`] turns false for good and the caller goes back to looking at the files
//! itself; so does one that could not start a watch (no inotify, its limits reached).
//!
//! Why inotify through `nix` (already a dependency; its `inotify` feature is a safe wrapper of
//! the three syscalls) and not the `notify` crate: one directory on Linux needs none of
//! `notify`'s backends, debouncing or its own threads, and no new crate.

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A watch over some files; stops its thread when dropped.
#[derive(Debug)]
pub struct FileWatch {
    shared: Arc<Shared>,
    inotify: Arc<Inotify>,
    watches: Vec<WatchDescriptor>,
}

#[derive(Debug)]
struct Shared {
    /// Changes seen so far (starts at 1: whatever happened before the watch began is a change).
    changes: AtomicU64,
    /// Whether the watch still stands; false for good once lost.
    active: AtomicBool,
    /// Set by `drop`, so the thread ends at the wake-up its watch's removal causes.
    stopping: AtomicBool,
}

const MASK: AddWatchFlags = AddWatchFlags::IN_CLOSE_WRITE
    .union(AddWatchFlags::IN_MOVED_TO)
    .union(AddWatchFlags::IN_MOVED_FROM)
    .union(AddWatchFlags::IN_CREATE)
    .union(AddWatchFlags::IN_DELETE)
    .union(AddWatchFlags::IN_ATTRIB)
    .union(AddWatchFlags::IN_DELETE_SELF)
    .union(AddWatchFlags::IN_MOVE_SELF)
    .union(AddWatchFlags::IN_ONLYDIR);

impl FileWatch {
    /// Watches `files` (through their directories, which must exist). `None` when inotify is not
    /// to be had here; the caller then looks at the files itself.
    pub fn start(files: &[&Path]) -> Option<FileWatch> {
        let inotify = Arc::new(Inotify::init(InitFlags::IN_CLOEXEC).ok()?);
        let mut names: Vec<(WatchDescriptor, OsString)> = Vec::new();
        let mut watches: Vec<WatchDescriptor> = Vec::new();
        for f in files {
            let dir: PathBuf = match f.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
                _ => PathBuf::from("."),
            };
            let name = f.file_name()?.to_owned();
            // The same directory twice gives the same descriptor.
            let wd = inotify.add_watch(&dir, MASK).ok()?;
            if !watches.contains(&wd) {
                watches.push(wd);
            }
            names.push((wd, name));
        }
        let shared = Arc::new(Shared {
            changes: AtomicU64::new(1),
            active: AtomicBool::new(true),
            stopping: AtomicBool::new(false),
        });
        let (s, i) = (shared.clone(), inotify.clone());
        std::thread::Builder::new()
            .name("archgate-watch".into())
            .spawn(move || watch(&i, &s, &names))
            .ok()?;
        Some(FileWatch {
            shared,
            inotify,
            watches,
        })
    }

    /// How many changes were seen so far: a different number means a file may differ.
    pub fn changes(&self) -> u64 {
        self.shared.changes.load(Ordering::Acquire)
    }

    /// Whether the watch still stands (false for good once lost).
    pub fn active(&self) -> bool {
        self.shared.active.load(Ordering::Acquire)
    }
}

impl Drop for FileWatch {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Release);
        // Removing a watch queues an `IN_IGNORED` event, which wakes the thread to end.
        for wd in self.watches.drain(..) {
            let _ = self.inotify.rm_watch(wd);
        }
    }
}

/// The thread: counts the events that name a watched file; gives up when the watch is lost.
fn watch(inotify: &Inotify, shared: &Shared, names: &[(WatchDescriptor, OsString)]) {
    let lost = AddWatchFlags::IN_IGNORED
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_UNMOUNT;
    loop {
        let events = match inotify.read_events() {
            Ok(e) => e,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => {
                shared.active.store(false, Ordering::Release);
                shared.changes.fetch_add(1, Ordering::AcqRel);
                return;
            }
        };
        if shared.stopping.load(Ordering::Acquire) {
            return;
        }
        let mut changed = false;
        for e in &events {
            if e.mask.intersects(lost) {
                // The directory is gone or moved: its files can no longer be followed here.
                shared.active.store(false, Ordering::Release);
                shared.changes.fetch_add(1, Ordering::AcqRel);
                return;
            }
            changed |= e.mask.contains(AddWatchFlags::IN_Q_OVERFLOW)
                || names
                    .iter()
                    .any(|(wd, n)| *wd == e.wd && e.name.as_deref() == Some(n.as_os_str()));
        }
        if changed {
            shared.changes.fetch_add(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Waits (bounded) until `f` holds; whether it did.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        f()
    }

    #[test]
    fn a_replaced_file_counts_and_its_neighbours_do_not() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("clients.json");
        std::fs::write(&a, "[]").unwrap();
        let w = FileWatch::start(&[&a]).expect("inotify works here");
        let start = w.changes();
        // A neighbour's change is not one of ours: write it, then ours, and count exactly one.
        std::fs::write(t.path().join("other"), "x").unwrap();
        crate::paths::write_private_file(&a, b"[1]").unwrap();
        assert!(eventually(|| w.changes() > start));
        let after = w.changes();
        std::fs::write(t.path().join("other"), "y").unwrap();
        std::fs::write(t.path().join("other2"), "y").unwrap();
        // A change to ours after the neighbours' marks the end of what they could have counted.
        std::fs::remove_file(&a).unwrap();
        assert!(eventually(|| w.changes() > after));
        assert_eq!(w.changes(), after + 1, "only the deletion counted");
        assert!(w.active());
    }

    #[test]
    fn a_removed_directory_ends_the_watch_and_says_so() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        std::fs::create_dir(&dir).unwrap();
        let w = FileWatch::start(&[&dir.join("token")]).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        assert!(eventually(|| !w.active()));
    }
}

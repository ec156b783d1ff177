//! Files archgate once saw open to another user's writes. Class: *trust judged from today's
//! mode, while write access granted earlier outlives it* (attack 33 F2, F3): a file another user
//! could write — mode `0666`, `0777`, or owned by them — is refused, and rightly; but a
//! descriptor that user opened for writing meanwhile survives the `chmod go-w` (or `chown`) that
//! fixes the mode, and writes the file whenever it likes: the config then applied as the
//! person's, and a route script ran the stranger's code under the person's yes. The kernel keeps
//! no record of who may still hold such a descriptor, so this process remembers every regular
//! file (by device, inode and birth time) it refused as writable by, or owned by, another user, and refuses
//! that inode for as long as it lives — until the file is replaced by a new one (a copy moved
//! over it), which no earlier descriptor reaches.
//!
//! What it cannot see: a window this process never looked into (the file was open to others
//! before archgate started, or only between two of its looks). Said in SECURITY.md.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

/// Device, inode and birth time: an inode number the filesystem gives again to a new file (after
/// the refused one was deleted) is a new file, born later, which no earlier descriptor reaches.
type Key = (u64, u64, Option<std::time::SystemTime>);

static SEEN: Mutex<BTreeSet<Key>> = Mutex::new(BTreeSet::new());

fn key(meta: &std::fs::Metadata) -> Key {
    (meta.dev(), meta.ino(), meta.created().ok())
}

/// Remembers `meta`'s inode when it is a regular file (a directory's permissions are checked at
/// each use of it; only a file's open descriptor outlives a change of mode).
pub fn remember(meta: &std::fs::Metadata) {
    if meta.is_file() {
        SEEN.lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key(meta));
    }
}

/// Whether `meta`'s inode is a file this process once refused as open to another user's writes.
pub fn was_open_to_others(meta: &std::fs::Metadata) -> bool {
    meta.is_file()
        && SEEN
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&key(meta))
}

/// The person's way out, for a message: a new file in its place, which no earlier descriptor
/// reaches (a `chmod` leaves them writing).
pub fn replace_hint(path: &std::path::Path) -> String {
    let p = path.display();
    format!("replace it: cp {p} {p}.new && chmod go-w {p}.new && mv {p}.new {p}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_file_stays_refused_until_it_is_replaced() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("config.toml");
        std::fs::write(&f, "x").unwrap();
        let before = std::fs::metadata(&f).unwrap();
        assert!(!was_open_to_others(&before));
        remember(&before);
        assert!(was_open_to_others(&std::fs::metadata(&f).unwrap()));
        // Replaced by a copy moved over it: a new inode, which no earlier descriptor reaches.
        let new = t.path().join("config.toml.new");
        std::fs::copy(&f, &new).unwrap();
        std::fs::rename(&new, &f).unwrap();
        assert!(!was_open_to_others(&std::fs::metadata(&f).unwrap()));
        // A directory is never remembered.
        remember(&std::fs::metadata(t.path()).unwrap());
        assert!(!was_open_to_others(&std::fs::metadata(t.path()).unwrap()));
    }
}

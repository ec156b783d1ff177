//! A small on-disk cache of HTTP answers, one JSON file per URL, written atomically; freshness by TTL.

use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use crate::error::WikiError;

/// The on-disk cache.
#[derive(Debug, Clone)]
pub(crate) struct Cache {
    dir: PathBuf,
}

/// What a cache file holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    url: String,
    fetched_at: i64,
    body: String,
}

/// A cached answer.
pub(crate) struct Hit {
    pub body: Vec<u8>,
    pub fetched_at: OffsetDateTime,
}

impl Hit {
    pub fn is_fresh(&self, ttl: Duration) -> bool {
        let age = OffsetDateTime::now_utc() - self.fetched_at;
        age.whole_seconds() >= 0 && age.unsigned_abs() < ttl
    }
}

impl Cache {
    pub fn new(dir: &Path) -> Self {
        Cache {
            dir: dir.join("wiki-http"),
        }
    }

    fn file(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        self.dir.join(format!("{}.json", hex::encode(digest)))
    }

    /// The cached answer for `url`, fresh or not.
    pub fn get(&self, url: &str) -> Option<Hit> {
        let path = self.file(url);
        let bytes = read_own(&path)?;
        let stored: Stored = serde_json::from_slice(&bytes).ok()?;
        if stored.url != url {
            return None;
        }
        Some(Hit {
            body: stored.body.into_bytes(),
            fetched_at: OffsetDateTime::from_unix_timestamp(stored.fetched_at).ok()?,
        })
    }

    /// Stores an answer (only UTF-8 bodies: the wiki and the feed are text), atomically.
    pub fn put(&self, url: &str, body: &[u8], fetched_at: OffsetDateTime) -> Result<(), WikiError> {
        let Ok(body) = std::str::from_utf8(body) else {
            return Ok(());
        };
        create_private_dir(&self.dir)?;
        let stored = Stored {
            url: url.to_owned(),
            fetched_at: fetched_at.unix_timestamp(),
            body: body.to_owned(),
        };
        let json = serde_json::to_vec(&stored)
            .map_err(|e| WikiError::io("encode", self.file(url), std::io::Error::other(e)))?;
        write_atomic(&self.file(url), &json)
    }
}

/// Creates a directory (and parents) readable only by its owner, and judges it now: a cache
/// directory that is not archgate's own (its chain writable by another user, another's
/// directory swapped in after start) is refused, not written into (attack 14 F8).
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), WikiError> {
    archgate_exec::own_file::OwnDir::create(dir)
        .map(drop)
        .map_err(|e| WikiError::io("create", dir, e))
}

/// Writes `bytes` to `path` whole or not at all, only into a directory judged at this write:
/// an unpredictable temporary created `O_EXCL|O_NOFOLLOW` beside it, renamed through the held
/// directory (`archgate_exec::own_file`), so readers see the old file or the new one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WikiError> {
    archgate_exec::own_file::write_private_file(path, bytes)
        .map_err(|e| WikiError::io("write", path, e))
}

/// A cache file's bytes, only when it is archgate's own (its directory judged now, not a link,
/// this uid's and writable by no one else); `None` otherwise.
pub(crate) fn read_own(path: &Path) -> Option<Vec<u8>> {
    archgate_exec::own_file::read_own_file(path).ok()?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_round_trip_and_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path());
        assert!(cache.get("http://x/a").is_none());
        let old = OffsetDateTime::now_utc() - time::Duration::hours(2);
        cache.put("http://x/a", b"{\"a\":1}", old).unwrap();
        let hit = cache.get("http://x/a").unwrap();
        assert_eq!(hit.body, b"{\"a\":1}");
        assert!(!hit.is_fresh(Duration::from_secs(3600)));
        assert!(hit.is_fresh(Duration::from_secs(3 * 3600)));
        assert!(cache.get("http://x/b").is_none());
    }

    /// Class: a file written at a path judged once, or at a predictable name, follows whatever
    /// is there at write time. A cache directory swapped after start (its parent opened to
    /// others) is neither written into nor read from.
    #[test]
    fn a_swapped_cache_directory_is_neither_written_nor_read() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let home = t.path().join("cache");
        std::fs::create_dir(&home).unwrap();
        let cache = Cache::new(&home);
        let at = OffsetDateTime::from_unix_timestamp(1_700_000_000).unwrap();
        cache.put("https://w/a", b"one", at).unwrap();
        assert_eq!(cache.get("https://w/a").unwrap().body, b"one");
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(home.join("wiki-http"), home.join("moved")).unwrap();
        std::fs::create_dir(home.join("wiki-http")).unwrap();
        std::fs::copy(
            home.join("moved")
                .join(cache.file("https://w/a").file_name().unwrap()),
            cache.file("https://w/a"),
        )
        .unwrap();
        assert!(
            cache.get("https://w/a").is_none(),
            "a planted answer is not read"
        );
        assert!(cache.put("https://w/b", b"two", at).is_err());
        assert_eq!(
            std::fs::read_dir(home.join("wiki-http")).unwrap().count(),
            1
        );
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

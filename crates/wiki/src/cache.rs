//! A small on-disk cache of HTTP answers, one JSON file per URL, written atomically; freshness by TTL.

use std::io::Write;
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
        let bytes = std::fs::read(&path).ok()?;
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

/// Creates a directory (and parents) readable only by its owner.
pub(crate) fn create_private_dir(dir: &Path) -> Result<(), WikiError> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| WikiError::io("create", dir, e))
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename,
/// so readers see the old file or the new one, never half of one.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WikiError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp =
        tempfile::NamedTempFile::new_in(dir).map_err(|e| WikiError::io("create", dir, e))?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| WikiError::io("write", tmp.path().to_owned(), e))?;
    tmp.persist(path)
        .map_err(|e| WikiError::io("rename", path, e.error))?;
    Ok(())
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
}

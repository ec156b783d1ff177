//! The on-disk HTTP cache of RPC answers: one file per URL (named by its SHA-256), fresh for a TTL, written
//! atomically (temporary file, then rename). A broken cache only costs a refetch.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

#[derive(Debug)]
pub(super) struct Cache {
    dir: PathBuf,
    ttl: Duration,
    counter: AtomicU64,
}

impl Cache {
    pub(super) fn new(dir: PathBuf, ttl: Duration) -> Cache {
        Cache {
            dir,
            ttl,
            counter: AtomicU64::new(0),
        }
    }

    fn path(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        self.dir.join(hex::encode(digest))
    }

    pub(super) async fn get(&self, url: &str) -> Option<Vec<u8>> {
        let p = self.path(url);
        let meta = tokio::fs::metadata(&p).await.ok()?;
        let age = SystemTime::now()
            .duration_since(meta.modified().ok()?)
            .unwrap_or(Duration::MAX);
        if age > self.ttl {
            return None;
        }
        tokio::fs::read(&p).await.ok()
    }

    pub(super) async fn put(&self, url: &str, body: &[u8]) {
        if let Err(e) = self.write(url, body).await {
            tracing::warn!(error = %e, dir = %self.dir.display(), "cannot write the AUR cache");
        }
    }

    async fn write(&self, url: &str, body: &[u8]) -> std::io::Result<()> {
        tokio::fs::create_dir_all(&self.dir).await?;
        let target = self.path(url);
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = self.dir.join(format!(
            ".tmp-{}-{}-{n}",
            std::process::id(),
            target.file_name().and_then(|f| f.to_str()).unwrap_or("x")
        ));
        tokio::fs::write(&tmp, body).await?;
        if let Err(e) = tokio::fs::rename(&tmp, &target).await {
            let _ = tokio::fs::remove_file(&tmp).await;
            return Err(e);
        }
        Ok(())
    }
}

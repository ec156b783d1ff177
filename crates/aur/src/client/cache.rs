//! The on-disk HTTP cache of RPC answers: one file per URL (named by its SHA-256), fresh for a TTL, written
//! atomically (temporary file, then rename). A broken cache only costs a refetch. Written and read only as
//! archgate's own (`archgate_exec::own_file`: the directory judged at each write and read, an unpredictable
//! temporary created `O_EXCL|O_NOFOLLOW`; attack 14 F8).

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use sha2::{Digest, Sha256};

#[derive(Debug)]
pub(super) struct Cache {
    dir: PathBuf,
    ttl: Duration,
}

impl Cache {
    pub(super) fn new(dir: PathBuf, ttl: Duration) -> Cache {
        Cache { dir, ttl }
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
        tokio::task::spawn_blocking(move || archgate_exec::own_file::read_own_file(&p))
            .await
            .ok()?
            .ok()?
    }

    pub(super) async fn put(&self, url: &str, body: &[u8]) {
        if let Err(e) = self.write(url, body).await {
            tracing::warn!(error = %e, dir = %self.dir.display(), "cannot write the AUR cache");
        }
    }

    async fn write(&self, url: &str, body: &[u8]) -> std::io::Result<()> {
        let target = self.path(url);
        let body = body.to_vec();
        tokio::task::spawn_blocking(move || {
            archgate_exec::own_file::write_private_file_creating(&target, &body)
        })
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Class: a file written at a path judged once, or at a predictable name, follows whatever
    /// is there at write time. A link at the old temporary name (`.tmp-PID-NAME-0`) is not
    /// followed; a cache directory swapped after start is neither written nor read.
    #[tokio::test]
    async fn rpc_cache_follows_no_planted_link_and_no_swapped_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let home = t.path().join("cache");
        let dir = home.join("rpc");
        std::fs::create_dir_all(&dir).unwrap();
        let victim = t.path().join("bashrc");
        std::fs::write(&victim, "mine\n").unwrap();
        let cache = Cache::new(dir.clone(), Duration::from_secs(60));
        let name = cache
            .path("u")
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let old = dir.join(format!(".tmp-{}-{name}-0", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old).unwrap();
        cache.write("u", b"one").await.unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        assert_eq!(cache.get("u").await.as_deref(), Some(&b"one"[..]));

        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(&dir, home.join("moved")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join(&name), "planted").unwrap();
        std::os::unix::fs::symlink(&victim, &old).unwrap();
        assert_eq!(cache.get("u").await, None, "a planted answer is not read");
        assert!(cache.write("v", b"two").await.is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

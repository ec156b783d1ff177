//! Disk use of the filesystems holding `/` and `/home`, from `statvfs`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::probe::{Probe, ProbeError};
use crate::procfs::{Usage, usage};

/// Use of the filesystem that holds one path. Bytes are whole-filesystem figures, as `df` shows
/// them: `available_bytes` is what an unprivileged user may still write.
#[derive(Debug, Serialize)]
pub struct Disk {
    /// The path asked about (`/`, `/home`).
    pub path: String,
    /// Its filesystem's size and use, or why it could not be had.
    #[serde(flatten)]
    pub usage: Probe<Usage>,
}

/// `/` always, `/home` when it exists; `root` is prefixed to both (it is `/` on a real machine).
pub(crate) async fn disks(root: &Path, timeout: Duration) -> Vec<Disk> {
    let mut out = vec![Disk {
        path: "/".to_owned(),
        usage: probe(root.to_owned(), timeout).await.into(),
    }];
    let home = root.join("home");
    if home.is_dir() {
        out.push(Disk {
            path: "/home".to_owned(),
            usage: probe(home, timeout).await.into(),
        });
    }
    out
}

/// `statvfs` on a blocking thread, given up after `timeout` (a hung network mount must not hang
/// the whole status).
pub(crate) async fn probe(path: PathBuf, timeout: Duration) -> Result<Usage, ProbeError> {
    let asked = path.clone();
    let task = tokio::task::spawn_blocking(move || statvfs(&asked));
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => r,
        Ok(Err(join)) => Err(ProbeError::Unreadable {
            path,
            source: std::io::Error::other(join.to_string()),
        }),
        Err(_) => Err(ProbeError::TimedOut {
            what: "the filesystem",
            after: timeout,
        }),
    }
}

fn statvfs(path: &Path) -> Result<Usage, ProbeError> {
    let st = nix::sys::statvfs::statvfs(path).map_err(|e| ProbeError::Unreadable {
        path: path.to_owned(),
        source: std::io::Error::from(e),
    })?;
    let unit = st.fragment_size();
    let total = st.blocks().saturating_mul(unit);
    let free = st.blocks_free().saturating_mul(unit);
    let available = st.blocks_available().saturating_mul(unit);
    let used = total.saturating_sub(free);
    // `usage` derives used from available; filesystems reserve blocks for root, so set it apart.
    let mut u = usage(total, available);
    u.used_bytes = used;
    Ok(u)
}

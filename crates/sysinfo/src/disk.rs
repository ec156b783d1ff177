//! Disk use of the filesystems holding `/` and `/home`, from `statvfs`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
/// Both are asked at once, each with its own timeout.
pub(crate) async fn disks(root: &Path, timeout: Duration) -> Vec<Disk> {
    let home = root.join("home");
    let home = home.is_dir().then_some(home);
    let (slash, home) = tokio::join!(probe(root.to_owned(), timeout), async {
        match home {
            Some(h) => Some(probe(h, timeout).await),
            None => None,
        }
    });
    let mut out = vec![Disk {
        path: "/".to_owned(),
        usage: slash.into(),
    }];
    if let Some(h) = home {
        out.push(Disk {
            path: "/home".to_owned(),
            usage: h.into(),
        });
    }
    out
}

/// How long a filesystem's answer is reused: handing `statvfs` to a blocking thread and back costs
/// far more than the answer (thread wake-ups), and disk use does not move in a second.
const FRESH: Duration = Duration::from_secs(1);

/// The last answer per path, with when it was had (successes only: a failure is asked again).
static RECENT: Mutex<Vec<(PathBuf, Instant, Usage)>> = Mutex::new(Vec::new());

fn recent(path: &Path) -> Option<Usage> {
    let m = RECENT.lock().unwrap_or_else(|p| p.into_inner());
    m.iter()
        .find(|(p, at, _)| p == path && at.elapsed() < FRESH)
        .map(|(_, _, u)| *u)
}

fn remember(path: &Path, u: Usage) {
    let mut m = RECENT.lock().unwrap_or_else(|p| p.into_inner());
    m.retain(|(p, at, _)| p != path && at.elapsed() < FRESH);
    m.push((path.to_owned(), Instant::now(), u));
}

/// `statvfs` on a blocking thread, given up after `timeout` (a hung network mount must not hang
/// the whole status); an answer less than [`FRESH`] old is reused.
pub(crate) async fn probe(path: PathBuf, timeout: Duration) -> Result<Usage, ProbeError> {
    if let Some(u) = recent(&path) {
        return Ok(u);
    }
    let asked = path.clone();
    let task = tokio::task::spawn_blocking(move || statvfs(&asked));
    match tokio::time::timeout(timeout, task).await {
        Ok(Ok(r)) => {
            if let Ok(u) = &r {
                remember(&path, *u);
            }
            r
        }
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

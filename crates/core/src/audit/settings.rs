//! The activity log's settings — where it is, how large a file grows, how long rotated
//! history survives — read by the writer (`writer.rs`) and by rotation (`rotate.rs`) alike.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the log is and how it is bounded (`[audit]` in the config).
#[derive(Debug, Clone)]
pub struct AuditSettings {
    pub path: PathBuf,
    pub queue: usize,
    pub max_bytes: u64,
    pub keep: u32,
}

/// How long history survives rotation. A rotated file is removed once it is older than
/// `keep_young` (by its last write) and `keep` newer files exist; a younger one is removed only
/// when all files together pass `hard_cap` bytes, and then a `rotated` event says so.
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub keep_young: Duration,
    pub hard_cap: u64,
}

/// Rotated files are kept this long by default, whatever their number.
pub const KEEP_YOUNG: Duration = Duration::from_secs(7 * 86_400);
/// All files together never pass this by default (or `max_bytes × (keep + 1)` when larger).
pub const HARD_CAP: u64 = 256 << 20;

impl Retention {
    pub fn default_for(s: &AuditSettings) -> Retention {
        Retention {
            keep_young: KEEP_YOUNG,
            hard_cap: HARD_CAP.max(s.max_bytes.saturating_mul(u64::from(s.keep) + 1)),
        }
    }
}

/// The log's directory and file name.
pub(super) fn dir_and_name(path: &Path) -> (&Path, &std::ffi::OsStr) {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    (dir, path.file_name().unwrap_or_default())
}

/// How often a writer looks whether its file is still the log's name (`writer.rs`
/// `moved_away`): a line written in between lands in the file another process just rotated.
pub(super) const LOOK_EVERY: Duration = Duration::from_millis(100);

//! The record of what an index holds: per source file its mtime, size and hash.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::write_atomic;
use crate::error::WikiError;

/// How one source file looked when it was indexed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stamp {
    pub mtime_ns: u64,
    pub size: u64,
    pub sha256: String,
}

/// The manifest file of an index directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub schema: u32,
    pub source_dir: PathBuf,
    /// Unix time of the last build.
    pub built_at: i64,
    /// Relative path → stamp.
    pub pages: BTreeMap<String, Stamp>,
}

pub(crate) fn path(index_dir: &Path) -> PathBuf {
    index_dir.join("manifest.json")
}

impl Manifest {
    /// Reads the manifest; `None` when absent or unreadable (a full rebuild follows).
    pub fn load(index_dir: &Path) -> Option<Manifest> {
        let bytes = crate::cache::read_own(&path(index_dir))?;
        match serde_json::from_slice(&bytes) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::warn!(error = %e, "wiki index manifest unreadable; rebuilding");
                None
            }
        }
    }

    pub fn save(&self, index_dir: &Path) -> Result<(), WikiError> {
        let json = serde_json::to_vec(self)
            .map_err(|e| WikiError::io("encode", path(index_dir), std::io::Error::other(e)))?;
        write_atomic(&path(index_dir), &json)
    }
}

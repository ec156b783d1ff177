//! Names that were clients of `archgate clients` and are no longer (revoked, or renamed away).
//!
//! Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6). The person's
//! trust in a token client — its grant and `trusted_relay` in a `[clients.NAME]` section written
//! for it, the "Always…" rules made through its questions — was given to the token's holder. The
//! section stays in config after the token goes, so the name is remembered here (0600, next to
//! `clients.json`) and a stdio bridge is refused it for good: a bridge can never inherit what
//! was given to a token client, now or before. Written before `clients.json`, so a process that
//! notices the clients change reads the name here too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use super::ClientError;
use crate::paths::write_private_file;

/// The retired names, re-read when their file changes (another process revoked a client).
#[derive(Debug)]
pub(super) struct Retired {
    file: PathBuf,
    seen: Mutex<(Option<SystemTime>, Option<u64>, BTreeSet<String>)>,
}

fn stamp(p: &Path) -> (Option<SystemTime>, Option<u64>) {
    match std::fs::metadata(p) {
        Ok(m) => (m.modified().ok(), Some(m.len())),
        Err(_) => (None, None),
    }
}

/// The names stored in `p` (none when absent; a file that is not archgate's or does not parse
/// is reported and read as empty — the current token clients are refused to a bridge anyway).
fn read(p: &Path) -> BTreeSet<String> {
    match super::read_private_file(p) {
        Ok(Some(b)) => serde_json::from_slice(&b).unwrap_or_else(|e| {
            tracing::error!(path = %p.display(), "retired client names not read: {e}");
            BTreeSet::new()
        }),
        Ok(None) => BTreeSet::new(),
        Err(why) => {
            tracing::error!(path = %p.display(), "retired client names not used: {why}");
            BTreeSet::new()
        }
    }
}

impl Retired {
    /// The names beside `clients_file` (`clients-retired.json`).
    pub(super) fn open(clients_file: &Path) -> Retired {
        let file = clients_file.with_file_name("clients-retired.json");
        let (mtime, len) = stamp(&file);
        let names = read(&file);
        Retired {
            file,
            seen: Mutex::new((mtime, len, names)),
        }
    }

    /// Whether `name` was a token client once (one `stat` when nothing changed).
    pub(super) fn contains(&self, name: &str) -> bool {
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let (mtime, len) = stamp(&self.file);
        if (mtime, len) != (g.0, g.1) {
            *g = (mtime, len, read(&self.file));
        }
        g.2.contains(name)
    }

    /// Remembers `name` (stored before the caller saves `clients.json`).
    pub(super) fn add(&self, name: &str) -> Result<(), ClientError> {
        let mut g = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let mut names = read(&self.file);
        if !names.insert(name.to_owned()) {
            return Ok(());
        }
        let bytes = serde_json::to_vec_pretty(&names).unwrap_or_default();
        write_private_file(&self.file, &bytes).map_err(|source| ClientError::Io {
            path: self.file.clone(),
            source,
        })?;
        let (mtime, len) = stamp(&self.file);
        *g = (mtime, len, names);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ClientStore, DEFAULT_CLIENT};
    use std::os::unix::fs::PermissionsExt;

    /// Class: *trust keyed by a name outlives the token that owned it* (attack 18 F6). A name
    /// revoked or renamed away is remembered (0600), by another process too; one never a token
    /// client's, the new name, and `default`'s rotation are not.
    #[test]
    fn a_name_revoked_or_renamed_away_is_remembered_as_a_former_token_clients() {
        let t = tempfile::tempdir().unwrap();
        let open = || ClientStore::open(&t.path().join("token"), &t.path().join("clients.json"));
        let (a, b) = (open().unwrap(), open().unwrap());
        a.add("phone", "full", None).unwrap();
        a.add("tablet", "full", None).unwrap();
        assert!(!b.was_token_client("phone"));
        a.revoke("phone").unwrap();
        a.rename("tablet", "tablet2").unwrap();
        a.revoke(DEFAULT_CLIENT).unwrap();
        for s in [&a, &b] {
            assert!(s.was_token_client("phone"));
            assert!(s.was_token_client("tablet"));
            assert!(!s.was_token_client("tablet2"));
            assert!(!s.was_token_client(DEFAULT_CLIENT));
            assert!(!s.was_token_client("cursor"));
        }
        let file = t.path().join("clients-retired.json");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

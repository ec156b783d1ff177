//! One change to the clients' files at a time, across archgate's processes (attack 21 F2; class:
//! *read-modify-write of shared state without a lock across the processes that write it*). The
//! CLI, the daemon's page and `setup` each change `clients.json` (and `clients-retired.json`):
//! two changes at once each started from what it had read, and the later save lost the earlier
//! one — a revocation both commands reported, whose token kept working. A change now holds this
//! process's mutex and a `flock` on `clients.lock` beside the files (archgate's own file, in the
//! judged directory: `paths::lock_own_file`, which the standing rules' lock takes too), and
//! starts from the files as they are under it.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use super::ClientError;

/// Held for the whole of one change.
pub(super) struct Editing<'a> {
    _lock: nix::fcntl::Flock<std::fs::File>,
    _mutex: MutexGuard<'a, ()>,
}

/// The lock's name, beside `clients.json`.
const LOCK: &str = "clients.lock";

/// Takes this process's `mutex`, then the lock every archgate process takes (waiting for it).
pub(super) fn take<'a>(
    mutex: &'a Mutex<()>,
    clients_file: &Path,
) -> Result<Editing<'a>, ClientError> {
    let guard = mutex.lock().unwrap_or_else(|p| p.into_inner());
    let dir = clients_file.parent().unwrap_or(Path::new("/"));
    let io = |source| ClientError::Io {
        path: dir.join(LOCK),
        source,
    };
    let lock = crate::paths::lock_own_file(dir, LOCK.as_ref()).map_err(io)?;
    Ok(Editing {
        _lock: lock,
        _mutex: guard,
    })
}

#[cfg(test)]
mod tests {
    use super::super::ClientStore;

    /// Attack 21 F2: two archgate processes (the CLI and the daemon's page; here two stores on
    /// the same files, each having read them before either change) revoke one client each. Each
    /// change starts from the files under the lock, so neither undoes the other: both tokens
    /// stop working and both names are remembered as former token clients.
    #[test]
    fn two_processes_changes_are_both_kept() {
        let t = tempfile::tempdir().unwrap();
        let open = || ClientStore::open(&t.path().join("token"), &t.path().join("clients.json"));
        let first = open().unwrap();
        let alpha = first.add("alpha", "read-only", None).unwrap();
        let beta = first.add("beta", "read-only", None).unwrap();
        let other = open().unwrap();
        first.revoke("alpha").unwrap();
        // `other` still holds the list it read with alpha in it.
        other.revoke("beta").unwrap();
        other.add("gamma", "read-only", None).unwrap();
        let config = crate::config::Config::default();
        let now = open().unwrap();
        let names: Vec<String> = now.list().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["gamma"]);
        assert!(now.authenticate(&alpha, &config).is_none());
        assert!(now.authenticate(&beta, &config).is_none());
        assert!(now.was_token_client("alpha") && now.was_token_client("beta"));
        // A rename made by one is seen by the other's next change.
        first.rename("gamma", "delta").unwrap();
        assert!(matches!(
            other.rename("gamma", "epsilon"),
            Err(super::ClientError::NotFound(_))
        ));
    }
}

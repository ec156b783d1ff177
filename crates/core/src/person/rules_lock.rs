//! One change to the standing rules at a time across archgate's processes (class: *read-modify-
//! write of shared state without a lock across the processes that write it*, attack 21 F2's).
//! The daemon, an in-process stdio server and the CLI each re-read `standing-rules.json` and save
//! it whole; two changes at once each saved the list it had read, and the earlier one's rule (or
//! a rule's recorded use, which its daily cap counts) was lost. A change holds a `flock` on
//! `standing-rules.lock` beside the file (archgate's own file in the judged directory:
//! `paths::lock_own_file`, which the clients' lock takes too) from before it reads until after it
//! saves.

use std::path::Path;

/// The lock's name, beside the rules file.
const LOCK: &str = "standing-rules.lock";

/// Held for one change. `None` when the lock cannot be had (the directory is not archgate's:
/// then the rules are not used at all, `state_untrusted`, and nothing is saved that matters).
pub(super) type Held = Option<nix::fcntl::Flock<std::fs::File>>;

/// Takes the lock every archgate process takes before it changes the rules (waiting for it).
pub(super) fn take(rules_file: &Path) -> Held {
    let dir = rules_file.parent()?;
    crate::paths::lock_own_file(dir, LOCK.as_ref())
        .inspect_err(|e| tracing::warn!("standing rules' lock not taken: {e}"))
        .ok()
}

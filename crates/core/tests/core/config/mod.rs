//! Configuration fails closed in every way it can go wrong: missing after it existed, replaced
//! by a symlink or another kind of file, another mode, its directory losing trust, an entry that
//! cannot be applied. In each, the last good copy stays in force at start and on reload, and the
//! status names the file, the reason, and that the last good copy applies.

use archgate_core::config::guard::{self, OnDisk};
use archgate_core::config::{ConfigHandle, ReloadOutcome};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;

mod chain;
mod entries;
mod kept;
mod ways;

/// The person's config: `aur_search` denied.
const PERSON: &str = "[policy]\ndeny = [\"aur_search\"]\n";

/// A private config directory and state directory under one temporary directory.
struct Place {
    _root: tempfile::TempDir,
    dir: PathBuf,
    file: PathBuf,
    last_good: PathBuf,
    uid: u32,
}

impl Place {
    fn new() -> Place {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("config/archgate");
        std::fs::create_dir_all(&dir).unwrap();
        for d in [root.path().join("config"), dir.clone()] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        let uid = std::fs::metadata(&dir).unwrap().uid();
        Place {
            file: dir.join("config.toml"),
            last_good: root.path().join("state/archgate").join(guard::LAST_GOOD),
            dir,
            _root: root,
            uid,
        }
    }

    fn write(&self, text: &str) {
        std::fs::write(&self.file, text).unwrap();
        std::fs::set_permissions(&self.file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    fn open(&self) -> ConfigHandle {
        ConfigHandle::open_guarded(self.file.clone(), self.last_good.clone(), self.uid)
            .expect("opens")
            .0
    }

    /// The person's config applied once (so a last good copy exists), and the handle.
    fn with_person(&self) -> ConfigHandle {
        self.write(PERSON);
        let h = self.open();
        assert!(denies_aur(&h), "the person's deny applies");
        assert!(h.status().ok);
        h
    }
}

/// Whether the config in force denies `aur_search`.
fn denies_aur(h: &ConfigHandle) -> bool {
    h.current()
        .policy
        .rules
        .first_match("aur_search")
        .is_some_and(|m| m.list == archgate_core::policy::RuleList::Deny)
}

/// The status says the file is not applied, why (`why`), and that the last good copy applies.
fn says_last_good(h: &ConfigHandle, why: &str) {
    let s = h.status();
    assert!(!s.ok, "{s:?}");
    assert!(h.is_broken());
    assert!(s.using.starts_with("last good from "), "{s:?}");
    let error = s.error.clone().unwrap_or_default();
    assert!(error.contains(why), "{why:?} in {s:?}");
    assert_eq!(s.file, h.path().display().to_string());
}

/// Reloads until the file's change is judged (one missing or empty poll is waited out).
fn reload_judged(h: &ConfigHandle) -> ReloadOutcome {
    match h.reload().0 {
        ReloadOutcome::WaitingForFile => h.reload().0,
        o => o,
    }
}

//! The config in force, swapped whole on reload.
//!
//! `ConfigHandle::current()` hands out an `Arc<Config>`; a call takes one at its start and is
//! decided under it to the end. `reload()` re-reads the file (`guard::read_guarded`): a file that
//! applies replaces the snapshot and becomes the last good copy; anything else leaves the
//! snapshot in force and records why — a file that does not parse or has an entry that cannot be
//! applied, one another user could write (file, link, directory), one that is not a regular
//! file, and one that is missing. A missing file is waited out for one poll (editors replace
//! files by rename) before it is reported; it never brings back defaults once a config applied.
//! An empty file (nothing but blanks and comments) is waited out the same way: a save in place
//! (`cat > config.toml`, nano, vim with `backupcopy=yes`) truncates the file before writing it,
//! and that moment is not "defaults on purpose"; only an empty file seen at two looks in a row
//! applies (at start, the second look follows after `SECOND_LOOK`).
//! `open_guarded` starts the same way (see `guard.rs`): a file that cannot be applied, or a file
//! missing while a last good copy exists, gives that copy, never defaults; a copy that exists
//! but cannot be read or trusted, when it is needed, refuses to start (`ConfigRefused`).
//! Reload never reads the copy: what is in force stays in force.

use super::guard::{self, ConfigRefused, OnDisk};
use super::{Config, Loaded, Problem};
use arc_swap::ArcSwap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The file is unchanged in effect.
    Unchanged,
    /// A new snapshot is in force.
    Applied,
    /// The file is not applied (it does not apply, may not be applied, or is gone); the
    /// previous snapshot stays. Reported once per change on disk.
    Rejected,
    /// The file vanished or is empty; waiting one poll before judging it.
    WaitingForFile,
}

#[derive(Debug)]
struct ReloadState {
    problems: Vec<Problem>,
    /// Set while the file on disk is not applied.
    broken: bool,
    missing_polls: u32,
    /// An empty file was seen once and not yet applied (it applies if still empty next time).
    empty_pending: bool,
    /// What the last look at the path found (`None`: never looked, a fixed handle).
    seen: Option<OnDisk>,
    /// Where each config that applies is kept (`guard::LAST_GOOD`); `None` keeps nothing.
    last_good: Option<PathBuf>,
    uid: u32,
    /// Unix seconds when the snapshot in force was read from a file; `None`: defaults, no file.
    good_at: Option<u64>,
    /// The snapshot this process started with: what the start-only keys still are.
    started: Arc<Config>,
    /// Start-only keys whose value in force differs from `started` (`restart.rs`).
    restart_pending: Vec<&'static str>,
}

/// How the config in force came to be, for `/health`, `archgate status`, the page and the bar.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConfigStatus {
    /// False while the file on disk is not applied.
    pub ok: bool,
    /// The config file archgate reads.
    pub file: String,
    pub problems: Vec<String>,
    /// Why the file is not applied (the first fatal problem), while it is not.
    pub error: Option<String>,
    /// `the file`, `defaults (no config file)` or `last good from <UTC time>`.
    pub using: String,
    /// Keys read only at start that the config in force changed: they take effect at restart.
    pub restart_pending: Vec<&'static str>,
}

#[derive(Debug, Clone)]
pub struct ConfigHandle {
    path: PathBuf,
    /// Read by every call without a lock all callers share; replaced whole by a reload.
    current: Arc<ArcSwap<Config>>,
    state: Arc<Mutex<ReloadState>>,
}

/// The problem said while a file that existed is missing.
fn missing(path: &std::path::Path) -> Problem {
    Problem {
        line: None,
        key: None,
        message: format!(
            "{} is missing (deleted or moved away); the last good config stays in force \
             (for defaults, leave an empty file)",
            path.display()
        ),
        fatal_to_file: true,
    }
}

/// How long a process starting on an empty file waits before its second look.
pub const SECOND_LOOK: std::time::Duration = std::time::Duration::from_millis(200);

/// True for text with nothing in it but blanks and comments: what a save in place leaves for a
/// moment, so it is judged only when it is still so at the next look.
pub(crate) fn is_empty(seen: &OnDisk) -> bool {
    matches!(seen, OnDisk::Text(t) if t.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#')
    }))
}

/// The path read for a process that starts: an empty file is looked at again after
/// `SECOND_LOOK` (a save in place in progress has written its text by then).
fn first_look(path: &std::path::Path, uid: u32) -> OnDisk {
    let seen = guard::read_guarded(path, uid);
    if !is_empty(&seen) {
        return seen;
    }
    std::thread::sleep(SECOND_LOOK);
    guard::read_guarded(path, uid)
}

impl ConfigHandle {
    /// Loads the file once, keeping no last good copy; never fails: a file that cannot be
    /// applied gives defaults (tests and one-shot tools; what serves uses `open_guarded`).
    pub fn open(path: PathBuf) -> (ConfigHandle, Loaded) {
        let uid = nix::unistd::getuid().as_raw();
        let seen = guard::read_guarded(&path, uid);
        let loaded = loaded_from(&seen);
        let handle = ConfigHandle {
            path,
            current: Arc::new(ArcSwap::from_pointee(loaded.config.clone())),
            state: Arc::new(Mutex::new(ReloadState {
                problems: loaded.problems.clone(),
                broken: !loaded.applies,
                missing_polls: 0,
                empty_pending: false,
                seen: Some(seen),
                last_good: None,
                uid,
                good_at: (loaded.exists && loaded.applies).then(crate::person::now_secs),
                started: Arc::new(loaded.config.clone()),
                restart_pending: Vec::new(),
            })),
        };
        (handle, loaded)
    }

    /// Opens the config fail-closed: a file that applies (and may be applied, `guard.rs`) is
    /// applied and kept at `last_good`; one that cannot be applied, or a missing file while a
    /// copy is kept, gives the config kept there, with the problems saying so. With no file and
    /// no copy (first run): defaults. With a file that cannot be applied and nothing kept: `Err`,
    /// and the caller must not start.
    pub fn open_guarded(
        path: PathBuf,
        last_good: PathBuf,
        uid: u32,
    ) -> Result<(ConfigHandle, Loaded), ConfigRefused> {
        let seen = first_look(&path, uid);
        let mut loaded = loaded_from(&seen);
        let kept = guard::read_last_good(&last_good, uid);
        let mut good_at = (loaded.exists && loaded.applies).then(crate::person::now_secs);
        if let OnDisk::Missing = seen
            && kept != Ok(None)
        {
            // The copy on disk is the evidence that a config existed: its loss is not a reset.
            let mut gone = missing(&path);
            if kept.is_err() {
                gone.message = format!("{} is missing (deleted or moved away)", path.display());
            }
            loaded.problems.push(gone);
            loaded.applies = false;
        }
        if loaded.applies {
            if let OnDisk::Text(t) = &seen {
                guard::save_last_good(&last_good, uid, t);
            }
        } else {
            let problems = loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("; ");
            let refuse = |kept: Option<String>| ConfigRefused {
                file: path.clone(),
                last_good: last_good.clone(),
                problems: problems.clone(),
                kept,
            };
            // A copy that is there but cannot be used is never read as "no copy" (defaults).
            let (kept, at) = kept
                .map_err(|why| refuse(Some(why)))?
                .ok_or_else(|| refuse(None))?;
            let from = super::load_str(&kept);
            if !from.applies {
                return Err(refuse(Some(format!(
                    "{} does not apply; remove it if you did not write it",
                    last_good.display()
                ))));
            }
            loaded.config = from.config;
            good_at = Some(at);
            loaded.problems.push(Problem {
                line: None,
                key: None,
                message: format!(
                    "using the last config that applied, from {} ({})",
                    guard::utc(at),
                    last_good.display()
                ),
                fatal_to_file: false,
            });
        }
        let handle = ConfigHandle {
            path,
            current: Arc::new(ArcSwap::from_pointee(loaded.config.clone())),
            state: Arc::new(Mutex::new(ReloadState {
                problems: loaded.problems.clone(),
                broken: !loaded.applies,
                missing_polls: 0,
                empty_pending: false,
                seen: Some(seen),
                last_good: Some(last_good),
                uid,
                good_at,
                started: Arc::new(loaded.config.clone()),
                restart_pending: Vec::new(),
            })),
        };
        Ok((handle, loaded))
    }

    /// A handle that never touches the disk (for tests and one-shot tools).
    pub fn fixed(config: Config) -> ConfigHandle {
        let config = Arc::new(config);
        ConfigHandle {
            path: PathBuf::new(),
            current: Arc::new(ArcSwap::new(config.clone())),
            state: Arc::new(Mutex::new(ReloadState {
                problems: Vec::new(),
                broken: false,
                missing_polls: 0,
                empty_pending: false,
                seen: None,
                last_good: None,
                uid: 0,
                good_at: None,
                started: config,
                restart_pending: Vec::new(),
            })),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The snapshot in force. Cheap: one read lock and an `Arc` clone.
    pub fn current(&self) -> Arc<Config> {
        self.current.load_full()
    }

    /// Problems of the last load attempt (empty when the file is clean).
    pub fn problems(&self) -> Vec<Problem> {
        self.lock_state().problems.clone()
    }

    /// True while the file on disk is not applied and an older snapshot is in force.
    pub fn is_broken(&self) -> bool {
        self.lock_state().broken
    }

    /// How the config in force came to be (see `ConfigStatus`).
    pub fn status(&self) -> ConfigStatus {
        let st = self.lock_state();
        let problems: Vec<String> = st.problems.iter().map(|p| p.to_string()).collect();
        let using = match (st.broken, st.good_at) {
            (false, Some(_)) => "the file".to_owned(),
            (_, None) => "defaults (no config file)".to_owned(),
            (true, Some(at)) => format!("last good from {}", guard::utc(at)),
        };
        ConfigStatus {
            ok: !st.broken,
            file: self.path.display().to_string(),
            error: st
                .broken
                .then(|| st.problems.iter().find(|p| p.fatal_to_file))
                .flatten()
                .map(|p| p.to_string()),
            problems,
            using,
            restart_pending: st.restart_pending.clone(),
        }
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, ReloadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Re-reads the file. Returns what happened and, when applied, the previous snapshot so the
    /// caller can diff (e.g. to send tools/list_changed only when a visible tool set changed).
    pub fn reload(&self) -> (ReloadOutcome, Option<Arc<Config>>) {
        if self.path.as_os_str().is_empty() {
            return (ReloadOutcome::Unchanged, None);
        }
        let uid = self.lock_state().uid;
        let seen = guard::read_guarded(&self.path, uid);
        let mut st = self.lock_state();
        let empty = is_empty(&seen);
        if !empty {
            st.empty_pending = false;
        }
        let was_there = st
            .seen
            .as_ref()
            .is_some_and(|s| !matches!(s, OnDisk::Missing));
        if seen == OnDisk::Missing && was_there && st.missing_polls == 0 {
            st.missing_polls = 1;
            return (ReloadOutcome::WaitingForFile, None);
        }
        st.missing_polls = 0;
        if empty {
            if !st.empty_pending && st.seen.as_ref() != Some(&seen) {
                // Perhaps a save in place between its truncate and its write: look again.
                st.empty_pending = true;
                return (ReloadOutcome::WaitingForFile, None);
            }
            if st.empty_pending {
                // Still empty at the second look: defaults, on purpose.
                st.empty_pending = false;
                st.seen = None;
            }
        }
        if st.seen.as_ref() == Some(&seen) {
            return (ReloadOutcome::Unchanged, None);
        }
        st.seen = Some(seen.clone());
        if seen == OnDisk::Missing {
            if st.good_at.is_none() {
                // Never a file here (first run): defaults are what is in force, and fine.
                st.broken = false;
                st.problems.clear();
                return (ReloadOutcome::Unchanged, None);
            }
            st.broken = true;
            st.problems = vec![missing(&self.path)];
            tracing::warn!(config = %self.path.display(), "{}", st.problems[0]);
            return (ReloadOutcome::Rejected, None);
        }
        let loaded = loaded_from(&seen);
        st.problems = loaded.problems.clone();
        if !loaded.applies {
            st.broken = true;
            for p in &loaded.problems {
                tracing::warn!(config = %self.path.display(), "config not applied, the previous one stays in force: {p}");
            }
            return (ReloadOutcome::Rejected, None);
        }
        st.broken = false;
        st.good_at = Some(crate::person::now_secs());
        if let (OnDisk::Text(t), Some(lg)) = (&seen, &st.last_good) {
            guard::save_last_good(lg, st.uid, t);
        }
        let new = Arc::new(loaded.config);
        // Replaced under `st`'s lock: reloads do not race one another.
        if **self.current.load() == *new {
            return (ReloadOutcome::Unchanged, None);
        }
        st.restart_pending = super::restart_needed(&st.started, &new);
        let old = self.current.swap(new);
        (ReloadOutcome::Applied, Some(old))
    }
}

/// The config a daemon started now would run on, read without writing anything: the file when
/// it applies; else (it does not apply, may not be applied, or is missing after a config
/// applied) the last good copy when that applies; else defaults. For one-shot commands that
/// must find what the daemon uses (its paths, its port), never a config of their own.
/// An empty file gets its second look (`SECOND_LOOK`) as at a daemon's start.
pub fn in_force(path: &std::path::Path, last_good: &std::path::Path, uid: u32) -> Config {
    let loaded = loaded_from(&first_look(path, uid));
    if loaded.exists && loaded.applies {
        return loaded.config;
    }
    guard::read_last_good(last_good, uid)
        .ok()
        .flatten()
        .map(|(kept, _)| super::load_str(&kept))
        .filter(|l| l.applies)
        .map(|l| l.config)
        .unwrap_or(loaded.config)
}

/// What a look at the path gives, before any last good copy.
fn loaded_from(seen: &OnDisk) -> Loaded {
    match seen {
        OnDisk::Text(t) => super::load_str(t),
        OnDisk::Missing => Loaded {
            config: Config::default(),
            problems: Vec::new(),
            applies: true,
            exists: false,
        },
        OnDisk::Refused(why) => super::refused(why.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_file_keeps_old_config_and_missing_once_is_waited_out() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("config.toml");
        std::fs::write(&f, "[approval]\ntimeout_s = 30\n").unwrap();
        let (h, _) = ConfigHandle::open(f.clone());
        assert_eq!(h.current().approval.timeout.as_secs(), 30);

        std::fs::write(&f, "[approval]\ntimeout_s = 45\n").unwrap();
        let (o, old) = h.reload();
        assert_eq!(o, ReloadOutcome::Applied);
        assert_eq!(old.unwrap().approval.timeout.as_secs(), 30);
        assert_eq!(h.current().approval.timeout.as_secs(), 45);

        std::fs::write(&f, "[approval\n garbage").unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::Rejected);
        assert!(h.is_broken());
        assert_eq!(h.current().approval.timeout.as_secs(), 45);
        assert!(h.problems()[0].line.is_some());

        std::fs::write(&f, "[approval]\ntimeout_s = 45\n").unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::Unchanged);
        assert!(!h.is_broken());

        std::fs::remove_file(&f).unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::WaitingForFile);
        assert_eq!(h.current().approval.timeout.as_secs(), 45);
        std::fs::write(&f, "[approval]\ntimeout_s = 40\n").unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::Applied);
        assert_eq!(h.current().approval.timeout.as_secs(), 40);

        std::fs::remove_file(&f).unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::WaitingForFile);
        assert!(!h.is_broken(), "one missing poll is an editor's rename");
        assert_eq!(h.reload().0, ReloadOutcome::Rejected);
        assert_eq!(
            h.current().approval.timeout.as_secs(),
            40,
            "gone for two polls: still the config that applied, never defaults"
        );
        assert!(h.is_broken());
        let s = h.status();
        assert!(s.error.unwrap().contains("is missing"), "{:?}", s.problems);
        assert!(s.using.starts_with("last good from "), "{}", s.using);
        assert_eq!(h.reload().0, ReloadOutcome::Unchanged, "said once");
    }

    /// Issue 36: a reload that changed a key read only at start said nothing.
    #[test]
    fn a_reload_changing_a_start_only_key_names_it_until_it_is_changed_back() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("config.toml");
        std::fs::write(&f, "[approval]\npage_port = 8800\n").unwrap();
        let (h, _) = ConfigHandle::open(f.clone());
        assert!(h.status().restart_pending.is_empty());
        std::fs::write(
            &f,
            "[approval]\npage_port = 8801\nnotifications = false\ntimeout_s = 40\n",
        )
        .unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::Applied);
        assert_eq!(
            h.status().restart_pending,
            ["approval.notifications", "approval.page_port"]
        );
        let v = serde_json::to_value(h.status()).unwrap();
        assert_eq!(v["restart_pending"][1], "approval.page_port", "{v}");
        // Back to what the process started with: nothing waits for a restart.
        std::fs::write(&f, "[approval]\npage_port = 8800\ntimeout_s = 40\n").unwrap();
        assert_eq!(h.reload().0, ReloadOutcome::Applied);
        assert!(h.status().restart_pending.is_empty());
    }
}

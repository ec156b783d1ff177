//! The config in force, swapped whole on reload.
//!
//! `ConfigHandle::current()` hands out an `Arc<Config>`; a call takes one at its start and is
//! decided under it to the end. `reload()` re-reads the file: a file that parses replaces the
//! snapshot; one that does not leaves the running config in force and records why; a file that
//! is missing once is waited out (editors replace files by rename), and only a second missing
//! poll falls back to defaults.

use super::{Config, Loaded, Problem, load};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReloadOutcome {
    /// The file is unchanged in effect.
    Unchanged,
    /// A new snapshot is in force.
    Applied,
    /// The file did not parse; the previous snapshot stays.
    Rejected,
    /// The file vanished; waiting one poll before treating it as gone.
    WaitingForFile,
}

#[derive(Debug)]
struct ReloadState {
    problems: Vec<Problem>,
    /// Set while a broken file is being ignored.
    broken: bool,
    missing_polls: u32,
    last_text: Option<Option<String>>,
}

#[derive(Debug, Clone)]
pub struct ConfigHandle {
    path: PathBuf,
    current: Arc<RwLock<Arc<Config>>>,
    state: Arc<Mutex<ReloadState>>,
}

impl ConfigHandle {
    /// Loads the file once; never fails (see `config::load`).
    pub fn open(path: PathBuf) -> (ConfigHandle, Loaded) {
        let loaded = load(&path);
        let text = std::fs::read_to_string(&path).ok();
        let handle = ConfigHandle {
            path,
            current: Arc::new(RwLock::new(Arc::new(loaded.config.clone()))),
            state: Arc::new(Mutex::new(ReloadState {
                problems: loaded.problems.clone(),
                broken: !loaded.parsed,
                missing_polls: 0,
                last_text: Some(text),
            })),
        };
        (handle, loaded)
    }

    /// A handle that never touches the disk (for tests and one-shot tools).
    pub fn fixed(config: Config) -> ConfigHandle {
        ConfigHandle {
            path: PathBuf::new(),
            current: Arc::new(RwLock::new(Arc::new(config))),
            state: Arc::new(Mutex::new(ReloadState {
                problems: Vec::new(),
                broken: false,
                missing_polls: 0,
                last_text: None,
            })),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The snapshot in force. Cheap: one read lock and an `Arc` clone.
    pub fn current(&self) -> Arc<Config> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Problems of the last load attempt (empty when the file is clean).
    pub fn problems(&self) -> Vec<Problem> {
        self.lock_state().problems.clone()
    }

    /// True while the file on disk is broken and an older snapshot is in force.
    pub fn is_broken(&self) -> bool {
        self.lock_state().broken
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
        let text = std::fs::read_to_string(&self.path).ok();
        let mut st = self.lock_state();
        if text.is_none()
            && st.last_text.as_ref().is_some_and(|t| t.is_some())
            && st.missing_polls == 0
        {
            st.missing_polls = 1;
            return (ReloadOutcome::WaitingForFile, None);
        }
        st.missing_polls = 0;
        if st.last_text.as_ref() == Some(&text) {
            return (ReloadOutcome::Unchanged, None);
        }
        st.last_text = Some(text.clone());
        let loaded = match &text {
            Some(t) => super::load_str(t),
            None => load(&self.path),
        };
        st.problems = loaded.problems.clone();
        if !loaded.parsed {
            st.broken = true;
            for p in &loaded.problems {
                tracing::warn!(config = %self.path.display(), "config not applied, the previous one stays in force: {p}");
            }
            return (ReloadOutcome::Rejected, None);
        }
        st.broken = false;
        for p in &loaded.problems {
            tracing::warn!(config = %self.path.display(), "{p}");
        }
        let new = Arc::new(loaded.config);
        let mut cur = self.current.write().unwrap_or_else(|p| p.into_inner());
        if **cur == *new {
            return (ReloadOutcome::Unchanged, None);
        }
        let old = std::mem::replace(&mut *cur, new);
        (ReloadOutcome::Applied, Some(old))
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
        assert_eq!(h.reload().0, ReloadOutcome::Applied);
        assert_eq!(
            h.current().approval.timeout.as_secs(),
            50,
            "gone for two polls: defaults"
        );
    }
}

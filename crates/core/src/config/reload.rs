//! The config in force, swapped whole on reload.
//!
//! `ConfigHandle::current()` hands out an `Arc<Config>`; a call takes one at its start and is
//! decided under it to the end. `reload()` re-reads the file: a file that parses replaces the
//! snapshot; one that does not leaves the running config in force and records why; a file that
//! is missing once is waited out (editors replace files by rename), and only a second missing
//! poll falls back to defaults. `open_guarded` starts the same way (see `guard.rs`): a file that
//! cannot be applied at start gives the last config that parsed, never defaults; a file owned by
//! another user or writable by group/others is not applied, at start or on reload.

use super::guard::{self, ConfigRefused};
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
    /// Where each config that parses is kept (`guard::LAST_GOOD`); `None` keeps nothing.
    last_good: Option<PathBuf>,
    uid: u32,
    /// Unix seconds when the snapshot in force was read from a file; `None`: defaults, no file.
    good_at: Option<u64>,
    /// Why the file on disk may not be applied whatever it says (owner, mode), when so.
    refusal: Option<String>,
    /// The snapshot this process started with: what the start-only keys still are.
    started: Arc<Config>,
    /// Start-only keys whose value in force differs from `started` (`restart.rs`).
    restart_pending: Vec<&'static str>,
}

/// How the config in force came to be, for `/health`, the page and the bar.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ConfigStatus {
    /// False while the file on disk is not applied.
    pub ok: bool,
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
                last_good: None,
                uid: nix::unistd::getuid().as_raw(),
                good_at: loaded.exists.then(crate::person::now_secs),
                refusal: None,
                started: Arc::new(loaded.config.clone()),
                restart_pending: Vec::new(),
            })),
        };
        (handle, loaded)
    }

    /// Opens the config fail-closed: a file that parses (and is the person's own, not writable
    /// by group or others) is applied and kept at `last_good`; one that cannot be applied gives
    /// the config kept there, with the problems saying so. With no file: defaults. With a file
    /// that cannot be applied and nothing kept: `Err`, and the caller must not start.
    pub fn open_guarded(
        path: PathBuf,
        last_good: PathBuf,
        uid: u32,
    ) -> Result<(ConfigHandle, Loaded), ConfigRefused> {
        let text = std::fs::read_to_string(&path);
        let refused = if text.is_ok() {
            guard::unsafe_owner(&path, uid)
        } else {
            None
        };
        let mut loaded = match (&text, refused.clone()) {
            (Ok(_), Some(why)) => Loaded {
                config: Config::default(),
                problems: vec![Problem {
                    line: None,
                    key: None,
                    message: why,
                    fatal_to_file: true,
                }],
                parsed: false,
                exists: true,
            },
            (Ok(t), None) => super::load_str(t),
            (Err(_), _) => load(&path),
        };
        let mut good_at = loaded.exists.then(crate::person::now_secs);
        if loaded.parsed {
            if let Ok(t) = &text {
                guard::save_last_good(&last_good, uid, t);
            }
        } else {
            let problems = loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("; ");
            let refuse = || ConfigRefused {
                file: path.clone(),
                last_good: last_good.clone(),
                problems: problems.clone(),
            };
            let (kept, at) = guard::read_last_good(&last_good, uid).ok_or_else(refuse)?;
            let from = super::load_str(&kept);
            if !from.parsed {
                return Err(refuse());
            }
            loaded.config = from.config;
            good_at = Some(at);
            loaded.problems.push(Problem {
                line: None,
                key: None,
                message: format!(
                    "using the last config that parsed, from {} ({})",
                    guard::utc(at),
                    last_good.display()
                ),
                fatal_to_file: false,
            });
        }
        let handle = ConfigHandle {
            path,
            current: Arc::new(RwLock::new(Arc::new(loaded.config.clone()))),
            state: Arc::new(Mutex::new(ReloadState {
                problems: loaded.problems.clone(),
                broken: !loaded.parsed,
                missing_polls: 0,
                last_text: Some(text.ok()),
                last_good: Some(last_good),
                uid,
                good_at,
                refusal: refused,
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
            current: Arc::new(RwLock::new(config.clone())),
            state: Arc::new(Mutex::new(ReloadState {
                problems: Vec::new(),
                broken: false,
                missing_polls: 0,
                last_text: None,
                last_good: None,
                uid: 0,
                good_at: None,
                refusal: None,
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
        // Only a guarded handle checks owner and mode (every poll: they can change alone).
        let refused = match (&text, &st.last_good) {
            (Some(_), Some(_)) => guard::unsafe_owner(&self.path, st.uid),
            _ => None,
        };
        if st.last_text.as_ref() == Some(&text) && st.refusal == refused {
            return (ReloadOutcome::Unchanged, None);
        }
        st.last_text = Some(text.clone());
        st.refusal = refused.clone();
        let loaded = match (&text, refused) {
            (Some(_), Some(why)) => Loaded {
                config: Config::default(),
                problems: vec![Problem {
                    line: None,
                    key: None,
                    message: why,
                    fatal_to_file: true,
                }],
                parsed: false,
                exists: true,
            },
            (Some(t), None) => super::load_str(t),
            (None, _) => load(&self.path),
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
        st.good_at = loaded.exists.then(crate::person::now_secs);
        if let (Some(t), Some(lg)) = (&text, &st.last_good) {
            guard::save_last_good(lg, st.uid, t);
        }
        for p in &loaded.problems {
            tracing::warn!(config = %self.path.display(), "{p}");
        }
        let new = Arc::new(loaded.config);
        let mut cur = self.current.write().unwrap_or_else(|p| p.into_inner());
        if **cur == *new {
            return (ReloadOutcome::Unchanged, None);
        }
        st.restart_pending = super::restart_needed(&st.started, &new);
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

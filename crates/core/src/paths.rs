//! Every location archgate reads or writes, in one place.
//!
//! Locations come from the XDG base-directory variables with the usual fallbacks, and each can be
//! overridden in `config.toml` (`[paths]`). archgate's own directories are private (0700) and may
//! not be symlinks: a symlinked state directory could redirect the token or the audit log, so it
//! is refused at start with an error naming the path.

use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use crate::private_file::{
    OwnDir, PRIVATE_FILE_MAX, lock_own_file, open_private, read_private_file, untrusted_dir,
    write_private_file, write_private_file_creating,
};

/// The process environment as far as paths are concerned; passed in so tests control it.
#[derive(Debug, Clone, Default)]
pub struct PathEnv {
    pub home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub xdg_state_home: Option<PathBuf>,
    pub xdg_cache_home: Option<PathBuf>,
    pub xdg_runtime_dir: Option<PathBuf>,
    pub uid: u32,
    /// True when `xdg_runtime_dir` was not in the environment but found at `/run/user/UID`.
    pub runtime_dir_discovered: bool,
}

/// Where logind puts each user's runtime directory.
pub const RUN_USER: &str = "/run/user";

impl PathEnv {
    /// Reads the variables of the running process. Empty or relative values are ignored, as the
    /// XDG specification asks. Without `XDG_RUNTIME_DIR` (a client that starts archgate with only
    /// HOME, PATH, SHELL and TERM), `/run/user/UID` is used when it is the person's own private
    /// directory ([`runtime_dir_fallback`]), so the control socket lands where the person's
    /// `archgate approvals` looks.
    pub fn from_process() -> Self {
        let var = |k: &str| {
            std::env::var_os(k)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let uid = nix::unistd::getuid().as_raw();
        let mut env = PathEnv {
            home: var("HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            xdg_state_home: var("XDG_STATE_HOME"),
            xdg_cache_home: var("XDG_CACHE_HOME"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            uid,
            runtime_dir_discovered: false,
        };
        if env.xdg_runtime_dir.is_none() {
            env.xdg_runtime_dir = runtime_dir_fallback(Path::new(RUN_USER), uid);
            env.runtime_dir_discovered = env.xdg_runtime_dir.is_some();
        }
        env
    }
}

/// `BASE/UID` when it is a real directory (not a symlink) owned by `uid` with mode 0700 — what
/// logind makes for a logged-in person; anything else is not trusted to be theirs.
pub fn runtime_dir_fallback(base: &Path, uid: u32) -> Option<PathBuf> {
    let dir = base.join(uid.to_string());
    let m = fs::symlink_metadata(&dir).ok()?;
    (m.is_dir() && m.uid() == uid && m.mode() & 0o777 == 0o700).then_some(dir)
}

/// Overrides from `[paths]` in config.toml. Each replaces the derived directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathOverrides {
    pub state_dir: Option<PathBuf>,
    pub runtime_dir: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
}

/// Resolved locations. Built once at start, cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config_dir: PathBuf,
    pub config_file: PathBuf,
    pub state_dir: PathBuf,
    pub runtime_dir: PathBuf,
    pub cache_dir: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("cannot locate a home directory: HOME is unset and no XDG_{which}_HOME is given")]
    NoHome { which: &'static str },
    #[error(
        "{path} is a symbolic link; archgate refuses a symlinked private directory (remove the link or point [paths] elsewhere)"
    )]
    Symlink { path: PathBuf },
    #[error("{path} is owned by uid {owner}, not by this user (uid {uid})")]
    ForeignOwner { path: PathBuf, owner: u32, uid: u32 },
    #[error("{path} exists and is not a directory")]
    NotADirectory { path: PathBuf },
    #[error(
        "{path} is not archgate's to keep its state in: {why}. Another user who controls a directory on the way could swap it for one of theirs (rules that approve, a link archgate writes through); archgate does not start on it (chmod go-w the directory named, or point [paths] elsewhere)"
    )]
    UntrustedChain { path: PathBuf, why: String },
    #[error("cannot prepare {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl PathError {
    pub fn kind(&self) -> &'static str {
        match self {
            PathError::NoHome { .. } => "no_home",
            PathError::Symlink { .. } => "symlinked_directory",
            PathError::ForeignOwner { .. } => "foreign_owner",
            PathError::NotADirectory { .. } => "not_a_directory",
            PathError::UntrustedChain { .. } => "untrusted_chain",
            PathError::Io { .. } => "io",
        }
    }
}

impl Paths {
    /// Derives the config location only (the config file may then override the others).
    pub fn config_dir(env: &PathEnv) -> Result<PathBuf, PathError> {
        base(env, env.xdg_config_home.as_ref(), ".config", "CONFIG").map(|b| b.join("archgate"))
    }

    /// Derives every location from the environment, then applies overrides.
    pub fn resolve(
        env: &PathEnv,
        config_file: Option<PathBuf>,
        ov: &PathOverrides,
    ) -> Result<Paths, PathError> {
        let config_dir = Self::config_dir(env)?;
        let config_file = config_file.unwrap_or_else(|| config_dir.join("config.toml"));
        let state_dir = match &ov.state_dir {
            Some(p) => p.clone(),
            None => {
                base(env, env.xdg_state_home.as_ref(), ".local/state", "STATE")?.join("archgate")
            }
        };
        let cache_dir = match &ov.cache_dir {
            Some(p) => p.clone(),
            None => base(env, env.xdg_cache_home.as_ref(), ".cache", "CACHE")?.join("archgate"),
        };
        let runtime_dir = match (&ov.runtime_dir, &env.xdg_runtime_dir) {
            (Some(p), _) => p.clone(),
            (None, Some(r)) => r.join("archgate"),
            // No runtime dir (a bare ssh session): fall back inside the private state directory
            // rather than a world-writable /tmp.
            (None, None) => state_dir.join("run"),
        };
        Ok(Paths {
            config_dir,
            config_file,
            state_dir,
            runtime_dir,
            cache_dir,
        })
    }

    pub fn token_file(&self) -> PathBuf {
        self.state_dir.join("token")
    }
    pub fn clients_file(&self) -> PathBuf {
        self.state_dir.join("clients.json")
    }
    pub fn audit_log(&self) -> PathBuf {
        self.state_dir.join("activity.jsonl")
    }
    pub fn standing_rules_file(&self) -> PathBuf {
        self.state_dir.join("standing-rules.json")
    }
    pub fn acknowledged_file(&self) -> PathBuf {
        self.state_dir.join("acknowledged-routes.json")
    }
    pub fn wiki_index_dir(&self) -> PathBuf {
        self.state_dir.join("wiki-index")
    }
    pub fn control_socket(&self) -> PathBuf {
        self.runtime_dir.join("control.sock")
    }
    pub fn state_json(&self) -> PathBuf {
        self.runtime_dir.join("state.json")
    }

    /// archgate's own directories: resolution refuses every path under them.
    pub fn private_dirs(&self) -> [&Path; 4] {
        [
            &self.config_dir,
            &self.state_dir,
            &self.runtime_dir,
            &self.cache_dir,
        ]
    }

    /// Creates the state, runtime and cache directories 0700 (the config directory is the
    /// person's and is only checked), refusing symlinks and foreign owners, and refusing a
    /// directory reached through a hop another user controls ([`untrusted_dir`]).
    pub fn prepare(&self, uid: u32) -> Result<(), PathError> {
        for dir in [&self.state_dir, &self.runtime_dir, &self.cache_dir] {
            ensure_private_dir(dir, uid)?;
            if let Some(why) = untrusted_dir(dir, uid) {
                return Err(PathError::UntrustedChain {
                    path: dir.clone(),
                    why,
                });
            }
        }
        refuse_symlink(&self.config_dir)?;
        Ok(())
    }
}

fn base(
    env: &PathEnv,
    xdg: Option<&PathBuf>,
    fallback: &str,
    which: &'static str,
) -> Result<PathBuf, PathError> {
    match (xdg, &env.home) {
        (Some(x), _) => Ok(x.clone()),
        (None, Some(h)) => Ok(h.join(fallback)),
        (None, None) => Err(PathError::NoHome { which }),
    }
}

fn refuse_symlink(path: &Path) -> Result<(), PathError> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(PathError::Symlink {
            path: path.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Creates `dir` (and parents) with mode 0700 if missing; refuses a symlink, a non-directory or a
/// directory owned by someone else; tightens the mode of an existing directory to 0700.
pub fn ensure_private_dir(dir: &Path, uid: u32) -> Result<(), PathError> {
    let io_err = |source| PathError::Io {
        path: dir.to_owned(),
        source,
    };
    match fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(PathError::Symlink {
                path: dir.to_owned(),
            });
        }
        Ok(m) if !m.is_dir() => {
            return Err(PathError::NotADirectory {
                path: dir.to_owned(),
            });
        }
        Ok(m) => {
            if m.uid() != uid {
                return Err(PathError::ForeignOwner {
                    path: dir.to_owned(),
                    owner: m.uid(),
                    uid,
                });
            }
            if m.mode() & 0o777 != 0o700 {
                fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io_err)?;
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(io_err)?;
            // `recursive` applies the mode to every created parent too, but the leaf may have
            // been subject to the umask; set it explicitly.
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).map_err(io_err)?;
        }
        Err(e) => return Err(io_err(e)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> PathEnv {
        PathEnv {
            home: Some(home.to_owned()),
            uid: nix::unistd::getuid().as_raw(),
            ..Default::default()
        }
    }

    #[test]
    fn falls_back_to_home_and_prefers_xdg() {
        let t = tempfile::tempdir().unwrap();
        let mut e = env(t.path());
        let p = Paths::resolve(&e, None, &PathOverrides::default()).unwrap();
        assert_eq!(p.config_file, t.path().join(".config/archgate/config.toml"));
        assert_eq!(p.state_dir, t.path().join(".local/state/archgate"));
        assert_eq!(p.cache_dir, t.path().join(".cache/archgate"));
        assert_eq!(p.runtime_dir, t.path().join(".local/state/archgate/run"));
        e.xdg_state_home = Some(t.path().join("st"));
        e.xdg_runtime_dir = Some(t.path().join("rt"));
        let p = Paths::resolve(&e, None, &PathOverrides::default()).unwrap();
        assert_eq!(p.state_dir, t.path().join("st/archgate"));
        assert_eq!(
            p.control_socket(),
            t.path().join("rt/archgate/control.sock")
        );
        let ov = PathOverrides {
            cache_dir: Some(t.path().join("c")),
            ..Default::default()
        };
        assert_eq!(
            Paths::resolve(&e, None, &ov).unwrap().cache_dir,
            t.path().join("c")
        );
    }

    #[test]
    fn run_user_is_used_only_when_it_is_the_persons_private_dir() {
        let t = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        assert_eq!(runtime_dir_fallback(t.path(), uid), None, "missing");
        let dir = t.path().join(uid.to_string());
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(runtime_dir_fallback(t.path(), uid), Some(dir.clone()));
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(runtime_dir_fallback(t.path(), uid), None, "not 0700");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(runtime_dir_fallback(t.path(), uid + 1), None, "another uid");
        if nix::unistd::geteuid().is_root() {
            nix::unistd::chown(&dir, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
            assert_eq!(
                runtime_dir_fallback(t.path(), uid),
                None,
                "owned by another"
            );
        }
        // A symlink named like the uid is refused, even to a good directory.
        let other = t.path().join("real");
        fs::create_dir(&other).unwrap();
        fs::set_permissions(&other, fs::Permissions::from_mode(0o700)).unwrap();
        let link_base = t.path().join("links");
        fs::create_dir(&link_base).unwrap();
        std::os::unix::fs::symlink(&other, link_base.join(uid.to_string())).unwrap();
        assert_eq!(runtime_dir_fallback(&link_base, uid), None, "symlink");
    }

    #[test]
    fn no_home_is_a_typed_error() {
        let e = PathEnv::default();
        assert_eq!(
            Paths::resolve(&e, None, &PathOverrides::default())
                .unwrap_err()
                .kind(),
            "no_home"
        );
    }

    #[test]
    fn private_dirs_are_0700_and_symlinks_refused() {
        let t = tempfile::tempdir().unwrap();
        let e = env(t.path());
        let p = Paths::resolve(&e, None, &PathOverrides::default()).unwrap();
        p.prepare(e.uid).unwrap();
        let mode = fs::metadata(&p.state_dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A loose existing directory is tightened.
        fs::set_permissions(&p.cache_dir, fs::Permissions::from_mode(0o755)).unwrap();
        p.prepare(e.uid).unwrap();
        assert_eq!(fs::metadata(&p.cache_dir).unwrap().mode() & 0o777, 0o700);
        // A symlinked state directory is refused.
        fs::remove_dir_all(&p.state_dir).unwrap();
        std::os::unix::fs::symlink(t.path(), &p.state_dir).unwrap();
        let err = p.prepare(e.uid).unwrap_err();
        assert_eq!(err.kind(), "symlinked_directory");
        assert!(err.to_string().contains("archgate"));
    }

    #[test]
    fn private_file_is_0600_and_replaced_whole() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("token");
        write_private_file(&f, b"one").unwrap();
        write_private_file(&f, b"two").unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"two");
        assert_eq!(fs::metadata(&f).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            fs::read_dir(t.path()).unwrap().count(),
            1,
            "no temp file left behind"
        );
    }

    /// Class: archgate's own state trusted by its path. A private directory whose parent others
    /// may write is refused at start: whoever may rename the directory swaps it.
    #[test]
    fn a_private_dir_under_a_parent_others_may_write_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        let p = Paths {
            config_dir: t.path().join("c"),
            config_file: t.path().join("c/config.toml"),
            state_dir: dir.clone(),
            runtime_dir: dir.join("run"),
            cache_dir: dir.join("cache"),
        };
        let uid = nix::unistd::getuid().as_raw();
        p.prepare(uid).unwrap();
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let err = p.prepare(uid).unwrap_err();
        assert_eq!(err.kind(), "untrusted_chain");
        assert!(err.to_string().contains("writable"), "{err}");
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o700)).unwrap();
        p.prepare(uid).unwrap();
    }
}

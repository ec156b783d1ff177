//! Client settings: where the AUR is, how long to wait, how much to read, where to cache.

use std::path::PathBuf;
use std::time::Duration;

/// Settings for [`super::AurClient`].
#[derive(Clone, Debug)]
pub struct AurConfig {
    /// Scheme and host of the AUR, without a trailing slash (tests point it at 127.0.0.1).
    pub base_url: String,
    /// Deadline for one whole request, body included.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Largest RPC answer read.
    pub max_rpc_bytes: usize,
    /// Largest single package file read.
    pub max_file_bytes: usize,
    /// Largest package repository fetched (what one fetch receives, `--depth` = `max_history`);
    /// past it the fetch is stopped and the answer is `too_large`.
    pub max_repo_bytes: usize,
    /// Cache directory (e.g. `$XDG_CACHE_HOME/archgate/aur`): RPC answers, and the package
    /// repositories under `git/`. `None`: no RPC cache, and repositories in a directory of this
    /// client's own, removed with it.
    pub cache_dir: Option<PathBuf>,
    /// How long cached answers stay fresh — RPC info and search, and a repository's fetched
    /// head; about 10 minutes, the AUR moves fast. A commit already fetched is read from the
    /// cache whatever its age (its id is the hash of its content).
    pub cache_ttl: Duration,
    pub max_search_results: usize,
    /// How many commits of history are read at most (the depth of the shallow fetch).
    pub max_history: usize,
    pub user_agent: String,
}

impl Default for AurConfig {
    fn default() -> Self {
        AurConfig {
            base_url: "https://aur.archlinux.org".into(),
            timeout: Duration::from_secs(20),
            connect_timeout: Duration::from_secs(8),
            max_rpc_bytes: 8 * 1024 * 1024,
            max_file_bytes: 1024 * 1024,
            max_repo_bytes: 32 * 1024 * 1024,
            cache_dir: None,
            cache_ttl: Duration::from_secs(600),
            max_search_results: 250,
            max_history: 200,
            user_agent: concat!("archgate/", env!("CARGO_PKG_VERSION")).into(),
        }
    }
}

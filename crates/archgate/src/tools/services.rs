//! The domain handles tools use, built from the config snapshot of the call and rebuilt only when
//! the settings they depend on change — so an edit to `[arch]` or `[wiki]` applies to the next
//! call without a restart, while warm caches (parsed pacman databases) survive unrelated edits.

use archgate_core::config::Config;
use archgate_core::paths::Paths;
use std::sync::{Arc, Mutex};

use archgate_core::tool::{ErrorKind, ToolError};

/// One value per settings key; rebuilt when the key changes.
pub struct Cached<K, V> {
    slot: Mutex<Option<(K, V)>>,
}

impl<K, V> Default for Cached<K, V> {
    fn default() -> Self {
        Cached {
            slot: Mutex::new(None),
        }
    }
}

impl<K: PartialEq + Clone, V: Clone> Cached<K, V> {
    /// The value for `key`; the key is cloned only when the value is (re)built, not per call.
    pub fn get(&self, key: &K, build: impl FnOnce(&K) -> V) -> V {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        match &*slot {
            Some((k, v)) if k == key => v.clone(),
            _ => {
                let v = build(key);
                *slot = Some((key.clone(), v.clone()));
                v
            }
        }
    }
}

/// Everything the tools share. One per process.
pub struct Services {
    pub paths: Paths,
    pacman: Cached<archgate_core::config::ArchConfig, archgate_pacman::PacmanDb>,
    aur: Cached<archgate_core::config::ArchConfig, Result<archgate_aur::AurClient, String>>,
    wiki: Cached<archgate_core::config::WikiConfig, Result<Arc<archgate_wiki::Wiki>, String>>,
}

impl Services {
    pub fn new(paths: Paths) -> Services {
        Services {
            paths,
            pacman: Cached::default(),
            aur: Cached::default(),
            wiki: Cached::default(),
        }
    }

    pub fn pacman(&self, config: &Config) -> archgate_pacman::PacmanDb {
        self.pacman.get(&config.arch, |arch| {
            let cache = &self.paths.cache_dir;
            let mut s = archgate_pacman::PacmanSettings {
                conf_path: arch.pacman_conf.clone(),
                log_path: arch.pacman_log.clone(),
                ..Default::default()
            };
            s.remote.base_url = arch.packages_url.clone();
            s.remote.timeout = arch.http_timeout;
            s.remote.ttl = arch.packages_cache_ttl;
            s.remote.cache_dir = Some(cache.join("packages"));
            s.fetch.timeout = arch.http_timeout;
            s.archive.base_url = arch.archive_url.clone();
            s.archive.timeout = arch.http_timeout;
            s.archive.ttl = arch.cache_ttl;
            s.archive.cache_dir = Some(cache.join("archive"));
            archgate_pacman::PacmanDb::new(s)
        })
    }

    pub fn aur(&self, config: &Config) -> Result<archgate_aur::AurClient, ToolError> {
        self.aur
            .get(&config.arch, |arch| {
                let cache = self.paths.cache_dir.join("aur");
                let c = archgate_aur::AurConfig {
                    base_url: arch.aur_url.trim_end_matches('/').to_owned(),
                    timeout: arch.http_timeout,
                    cache_dir: Some(cache),
                    cache_ttl: arch.aur_cache_ttl,
                    ..Default::default()
                };
                archgate_aur::AurClient::new(c).map_err(|e| e.to_string())
            })
            .map_err(|e| ToolError::new(ErrorKind::NotAvailable, e))
    }

    pub fn wiki(&self, config: &Config) -> Result<Arc<archgate_wiki::Wiki>, ToolError> {
        let timeout = config.arch.http_timeout;
        let ttl = config.wiki.cache_ttl;
        self.wiki
            .get(&config.wiki, |w| {
                let cache = self.paths.cache_dir.join("wiki");
                let index = self.paths.wiki_index_dir();
                let mut c = archgate_wiki::WikiConfig::for_base_url(&w.url);
                c.cache_dir = Some(cache);
                c.request_timeout = timeout;
                c.cache_ttl = ttl;
                use archgate_core::config::WikiPrefer;
                let pref = match w.prefer {
                    WikiPrefer::OfflineFirst => archgate_wiki::Preference::OfflineFirst,
                    WikiPrefer::OnlineFirst => archgate_wiki::Preference::OnlineFirst,
                    WikiPrefer::OfflineOnly => archgate_wiki::Preference::OfflineOnly,
                    WikiPrefer::OnlineOnly => archgate_wiki::Preference::OnlineOnly,
                };
                archgate_wiki::Wiki::new(c, &index, pref)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .map_err(|e| ToolError::new(ErrorKind::NotAvailable, e))
    }
}

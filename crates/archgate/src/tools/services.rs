//! The domain handles tools use, built from the config snapshot of the call and rebuilt only when
//! the settings they depend on change — so an edit to `[arch]` or `[wiki]` applies to the next
//! call without a restart, while warm caches (parsed pacman databases) survive unrelated edits.

use archgate_core::config::Config;
use archgate_core::paths::Paths;
use std::sync::Mutex;

/// One value per settings key; rebuilt when the key changes.
pub struct Cached<K, V> {
    slot: Mutex<Option<(K, V)>>,
}

impl<K, V> Default for Cached<K, V> {
    fn default() -> Self {
        Cached { slot: Mutex::new(None) }
    }
}

impl<K: PartialEq, V: Clone> Cached<K, V> {
    pub fn get(&self, key: K, build: impl FnOnce(&K) -> V) -> V {
        let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
        match &*slot {
            Some((k, v)) if *k == key => v.clone(),
            _ => {
                let v = build(&key);
                *slot = Some((key, v.clone()));
                v
            }
        }
    }
}

/// Everything the tools share. One per process.
pub struct Services {
    pub paths: Paths,
    pacman: Cached<archgate_core::config::ArchConfig, archgate_pacman::PacmanDb>,
}

impl Services {
    pub fn new(paths: Paths) -> Services {
        Services { paths, pacman: Cached::default() }
    }

    pub fn pacman(&self, config: &Config) -> archgate_pacman::PacmanDb {
        let cache = self.paths.cache_dir.clone();
        self.pacman.get(config.arch.clone(), |arch| {
            let mut s = archgate_pacman::PacmanSettings { conf_path: arch.pacman_conf.clone(), ..Default::default() };
            s.remote.base_url = arch.packages_url.clone();
            s.remote.timeout = arch.http_timeout;
            s.remote.ttl = arch.cache_ttl;
            s.remote.cache_dir = Some(cache.join("packages"));
            s.fetch.timeout = arch.http_timeout;
            archgate_pacman::PacmanDb::new(s)
        })
    }
}

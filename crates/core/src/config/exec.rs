//! From the config snapshot to what runs programs: the executor's settings (search directories,
//! whose directories are trusted, timeouts, caps) and where Omarchy is installed.

use std::path::{Path, PathBuf};

use archgate_exec::ExecConfig;

use super::types::{Config, ExecTrust};

/// How an Omarchy install was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OmarchySource {
    /// `[desktop] omarchy_path` in config.toml.
    Config,
    /// `$OMARCHY_PATH` of archgate's environment.
    Environment,
    /// `~/.local/share/omarchy` (a git install), found without either.
    GitInstall,
    /// `/usr/share/omarchy` (the package), found without either.
    Package,
}

impl OmarchySource {
    pub fn describe(self) -> &'static str {
        match self {
            OmarchySource::Config => "[desktop] omarchy_path",
            OmarchySource::Environment => "$OMARCHY_PATH",
            OmarchySource::GitInstall => "found at ~/.local/share/omarchy",
            OmarchySource::Package => "found at /usr/share/omarchy",
        }
    }
}

/// `~/x` → `$HOME/x`; anything else as written.
pub fn expand_home(p: &Path, home: Option<&Path>) -> Option<PathBuf> {
    match p.strip_prefix("~") {
        Ok(rest) => home.map(|h| h.join(rest)),
        Err(_) => Some(p.to_owned()),
    }
}

impl Config {
    /// Where Omarchy is: `[desktop] omarchy_path`, else `$OMARCHY_PATH` (`env_path`), else a git
    /// install in `~/.local/share/omarchy`, else the package's `/usr/share/omarchy` (each of the
    /// last two only when its `bin/omarchy` exists). A client that starts archgate with a
    /// stripped environment still finds it.
    pub fn omarchy_install(
        &self,
        home: Option<&Path>,
        env_path: Option<&Path>,
    ) -> Option<(PathBuf, OmarchySource)> {
        if let Some(p) = &self.desktop.omarchy_path {
            return expand_home(p, home)
                .filter(|p| p.is_absolute())
                .map(|p| (p, OmarchySource::Config));
        }
        if let Some(p) = env_path.filter(|p| p.is_absolute()) {
            return Some((p.to_owned(), OmarchySource::Environment));
        }
        let git = home.map(|h| h.join(".local/share/omarchy"));
        let found = |d: &Path| d.join("bin/omarchy").is_file();
        if let Some(g) = git.filter(|g| found(g)) {
            return Some((g, OmarchySource::GitInstall));
        }
        let pkg = PathBuf::from("/usr/share/omarchy");
        found(&pkg).then_some((pkg, OmarchySource::Package))
    }

    /// [`Self::omarchy_install`] for this process's `HOME` and `OMARCHY_PATH`.
    pub fn omarchy_install_from_process(&self) -> Option<(PathBuf, OmarchySource)> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        self.omarchy_install(var("HOME").as_deref(), var("OMARCHY_PATH").as_deref())
    }

    /// The executor's settings under this snapshot: `[exec] search_dirs`, else Omarchy's `bin/`
    /// (see [`Self::omarchy_install`]) and the system's (`ExecConfig::system_search_dirs`);
    /// `[exec] trust`; the
    /// timeout and output cap.
    pub fn executor_config(&self) -> ExecConfig {
        let search_dirs = match &self.exec.search_dirs {
            Some(d) => d.clone(),
            None => {
                let mut dirs = Vec::with_capacity(4);
                if let Some((omarchy, _)) = self.omarchy_install_from_process() {
                    dirs.push(omarchy.join("bin"));
                }
                dirs.extend(ExecConfig::system_search_dirs());
                dirs
            }
        };
        let defaults = ExecConfig::default();
        ExecConfig {
            search_dirs,
            require_root_owned: self.exec.trust != ExecTrust::Off,
            person_uid: match self.exec.trust {
                ExecTrust::Root => None,
                _ => defaults.person_uid,
            },
            default_timeout: self.exec.timeout,
            output_cap: self.exec.output_cap,
            ..defaults
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_str;

    #[test]
    fn trust_and_the_older_key() {
        let t = |text: &str| {
            let l = load_str(text);
            (l.config.executor_config(), l.problems.len())
        };
        let (c, n) = t("");
        assert!(c.require_root_owned && c.person_uid.is_some() && n == 0);
        let (c, n) = t("[exec]\nrequire_root_owned = true\n");
        assert!(c.require_root_owned && c.person_uid.is_some() && n == 0);
        let (c, n) = t("[exec]\nrequire_root_owned = false\n");
        assert!(!c.require_root_owned && n == 0);
        let (c, n) = t("[exec]\ntrust = \"root\"\n");
        assert!(c.require_root_owned && c.person_uid.is_none() && n == 0);
        let (c, n) = t("[exec]\ntrust = \"off\"\n");
        assert!(!c.require_root_owned && n == 0);
        // Disagreeing: trust wins, and the older key is named.
        let l = load_str("[exec]\ntrust = \"root\"\nrequire_root_owned = false\n");
        assert!(l.config.executor_config().require_root_owned);
        assert_eq!(l.problems.len(), 1);
        assert!(
            l.problems[0]
                .to_string()
                .contains("exec.require_root_owned"),
            "{}",
            l.problems[0]
        );
        let l = load_str("[exec]\ntrust = \"everyone\"\n");
        assert!(l.problems[0].to_string().contains("exec.trust"));
        assert_eq!(l.config.exec.trust, ExecTrust::RootOrPerson);
    }

    #[test]
    fn omarchy_is_found_in_order() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path();
        let cfg = load_str("").config;
        assert_eq!(
            cfg.omarchy_install(Some(home), None)
                .map(|x| x.1)
                .filter(|s| *s != OmarchySource::Package),
            None
        );
        std::fs::create_dir_all(home.join(".local/share/omarchy/bin")).unwrap();
        std::fs::write(home.join(".local/share/omarchy/bin/omarchy"), "").unwrap();
        assert_eq!(
            cfg.omarchy_install(Some(home), None),
            Some((home.join(".local/share/omarchy"), OmarchySource::GitInstall))
        );
        assert_eq!(
            cfg.omarchy_install(Some(home), Some(Path::new("/opt/o"))),
            Some((PathBuf::from("/opt/o"), OmarchySource::Environment))
        );
        let cfg = load_str("[desktop]\nomarchy_path = \"~/src/omarchy\"\n").config;
        assert_eq!(
            cfg.omarchy_install(Some(home), Some(Path::new("/opt/o"))),
            Some((home.join("src/omarchy"), OmarchySource::Config))
        );
        // The config's Omarchy leads the default search directories.
        let cfg = load_str("[desktop]\nomarchy_path = \"/opt/omarchy\"\n").config;
        assert_eq!(
            cfg.executor_config().search_dirs,
            vec![
                PathBuf::from("/opt/omarchy/bin"),
                PathBuf::from("/usr/local/bin"),
                PathBuf::from("/usr/bin"),
                PathBuf::from("/usr/sbin")
            ]
        );
    }
}

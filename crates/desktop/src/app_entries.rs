//! Which applications `launch` may start, by an allowlist (attack 18; class: *a denylist where
//! only an allowlist can hold*). A desktop entry in `~/.local/share/applications` is written by
//! whoever runs as the person — the agent's own shell among them — so its `Exec=` line is an
//! arbitrary command: no list of wrappers (`nice`, `timeout`, `xargs`, `gdb -ex shell`…), of
//! interpreters given their code through the environment (`env PYTHONPATH=… python3`) or of
//! session commands (`swaymsg exit`, `busctl … PowerOff`) can be complete. So:
//! - an application is what a desktop entry **root** owns declares — an entry in a system data
//!   directory (`$XDG_DATA_DIRS`, `/usr/local/share`, `/usr/share` by default, and flatpak's
//!   system exports), the file root's all the way from `/` (`archgate_exec::trusted_path`) —
//!   started by that entry's `Exec=` as the package wrote it;
//! - a bare program name launches only when a root's entry's `Exec=` program is that very file;
//! - an entry that is not root's (the person's own) launches only when its `Exec=` is exactly a
//!   shape archgate knows: Omarchy's web apps, `omarchy-launch-webapp URL` and
//!   `omarchy-launch-or-focus-webapp NAME URL`, judged as the `launch webapp` route; anything
//!   else there is refused (the person starts it from their launcher, or installs a system
//!   entry), `env NAME=VALUE` included.

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, Executor};

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::exec_line::desktop_entry_exec;

/// Flatpak's system-wide exports (root's; a person's own flatpaks export under their home).
const FLATPAK_SYSTEM: &str = "/var/lib/flatpak/exports/share";

/// The system data directories when `XDG_DATA_DIRS` is unset (the XDG base-directory default).
const DEFAULT_DATA_DIRS: &str = "/usr/local/share:/usr/share";

/// Whose desktop entry a launch came from, or that it came from none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppSource {
    /// An address, opened with the default handler.
    Url,
    /// A desktop entry root owns, all the way from `/`: an application as its package declares.
    SystemEntry(PathBuf),
    /// A desktop entry that is not root's (the person's, or the agent's): its `Exec=` is an
    /// Omarchy web app's (the only shape such an entry launches with).
    PersonEntry(PathBuf),
    /// A bare program name: started only when a root's entry declares that very file.
    Program,
}

/// A launch's command and where it came from.
#[derive(Debug, Clone)]
pub struct LaunchPlan {
    /// The command, as the entry wrote it (session variables added), or the program alone.
    pub spec: CommandSpec,
    /// Whose entry it came from.
    pub source: AppSource,
}

/// Omarchy's web app programs: the only `Exec=` programs a person's own entry launches.
const WEB_APP_LAUNCHERS: &[&str] = &["omarchy-launch-webapp", "omarchy-launch-or-focus-webapp"];

/// Whether `argv` is exactly an Omarchy web app's command, as Omarchy's web app installer writes
/// it: `omarchy-launch-webapp URL` or `omarchy-launch-or-focus-webapp NAME URL` — the program by
/// its bare name, a checked http(s) address last, no other word.
pub fn is_web_app_exec(argv: &[String]) -> bool {
    let url_ok = |u: &String| u.starts_with("http") && crate::url_check::check_url(u).is_ok();
    match argv {
        [p, url] => p == WEB_APP_LAUNCHERS[0] && url_ok(url),
        [p, name, url] => {
            p == WEB_APP_LAUNCHERS[1] && !name.is_empty() && !name.starts_with('-') && url_ok(url)
        }
        _ => false,
    }
}

/// Whether the file at `path` is root's, every hop from `/` (`archgate_exec::trusted_path`
/// trusting root alone).
fn roots(path: &Path) -> bool {
    archgate_exec::trusted_path(None, path).is_ok()
}

impl Desktop {
    /// The directories a system desktop entry can be in: each of `$XDG_DATA_DIRS` (or its
    /// default) and flatpak's system exports, `/applications` under each. An entry there counts
    /// as root's only when the file is root's all the way (see [`AppSource`]).
    pub fn system_application_dirs(&self) -> Vec<PathBuf> {
        let dirs = self
            .env
            .xdg_data_dirs
            .as_deref()
            .unwrap_or(DEFAULT_DATA_DIRS);
        let mut out: Vec<PathBuf> = dirs
            .split(':')
            .filter(|d| d.starts_with('/'))
            .map(|d| Path::new(d).join("applications"))
            .collect();
        let flatpak = Path::new(FLATPAK_SYSTEM).join("applications");
        if !out.contains(&flatpak) {
            out.push(flatpak);
        }
        out
    }

    /// The desktop entry `id` names, first in the person's own directory, then in the system
    /// ones: its path, its text, and whether it is root's.
    pub(crate) fn find_entry(&self, id: &str) -> Option<(PathBuf, String, bool)> {
        let name = format!("{id}.desktop");
        if let Some(h) = &self.env.home {
            let file = h.join(".local/share/applications").join(&name);
            if let Ok(text) = std::fs::read_to_string(&file) {
                // The person's directory: never root's, whoever owns the file.
                return Some((file, text, false));
            }
        }
        for dir in self.system_application_dirs() {
            let file = dir.join(&name);
            if let Ok(text) = std::fs::read_to_string(&file) {
                let root = roots(&file);
                return Some((file, text, root));
            }
        }
        None
    }

    /// The launch of desktop entry `id` (or of the program `id` when no entry has that id).
    pub(crate) fn plan_app(&self, id: &str) -> Result<LaunchPlan> {
        let Some((file, text, root)) = self.find_entry(id) else {
            return Ok(LaunchPlan {
                spec: self.env.apply_to(CommandSpec::new(id)),
                source: AppSource::Program,
            });
        };
        let argv = desktop_entry_exec(&text).ok_or_else(|| {
            DesktopError::malformed(
                file.display().to_string(),
                "desktop entry without an Exec line",
            )
        })?;
        let spec = self
            .env
            .apply_to(CommandSpec::new(argv[0].clone()).args(argv[1..].iter().cloned()));
        if root {
            return Ok(LaunchPlan {
                spec,
                source: AppSource::SystemEntry(file),
            });
        }
        if !is_web_app_exec(&argv) {
            return Err(DesktopError::Blocked {
                command: spec.display(),
                reason: "it is a desktop entry that is not root's (your own, which any program \
                         running as you can write), and its Exec= is not one archgate knows (an \
                         Omarchy web app); launch starts the applications system desktop \
                         entries declare. Start it from your launcher, or install it as a \
                         system entry (/usr/share/applications)",
            });
        }
        Ok(LaunchPlan {
            spec,
            source: AppSource::PersonEntry(file),
        })
    }

    /// Whether `real` (a program's real file) is the `Exec=` program of a desktop entry root
    /// owns: the only way a bare program name launches.
    pub(crate) fn declared_by_system_entry(&self, exec: &Executor, real: &Path) -> bool {
        self.system_application_dirs().iter().any(|dir| {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return false;
            };
            entries.flatten().any(|e| {
                let path = e.path();
                path.extension().is_some_and(|x| x == "desktop")
                    && roots(&path)
                    && std::fs::read_to_string(&path)
                        .ok()
                        .and_then(|t| desktop_entry_exec(&t))
                        .and_then(|argv| exec.resolve_program(&argv[0]).ok())
                        .is_some_and(|p| p == real)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn only_omarchy_s_web_app_shapes_are_web_apps() {
        assert!(is_web_app_exec(&v(&[
            "omarchy-launch-webapp",
            "https://example.org/"
        ])));
        assert!(is_web_app_exec(&v(&[
            "omarchy-launch-or-focus-webapp",
            "HEY",
            "https://app.hey.example/"
        ])));
        for bad in [
            &["env", "A=1", "omarchy-launch-webapp", "https://e.org/"][..],
            &["nice", "omarchy-launch-webapp", "https://e.org/"],
            &["omarchy-launch-webapp", "https://e.org/", "--flag"],
            &["omarchy-launch-webapp", "mailto:a@b.example"],
            &["/tmp/omarchy-launch-webapp", "https://e.org/"],
            &["omarchy-launch-or-focus-webapp", "-x", "https://e.org/"],
            &["omarchy-launch-webapp", "https://e.org/ ; reboot"],
            &["swaymsg", "exit"],
        ] {
            assert!(!is_web_app_exec(&v(bad)), "{bad:?}");
        }
    }
}

//! A fixture Omarchy for attacks on routes: a dispatcher that prints a registry in Omarchy 4's
//! real shape (`omarchy commands --all --json`, as `crates/desktop/src/omarchy/registry.rs`
//! describes it; our own summaries and usages) and route scripts that record how they were
//! called, so a test sees exactly what ran.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use super::{Env, RunLog};

/// One registry entry: route words after `omarchy`, and its usage (`args`).
pub struct Entry<'a> {
    pub words: &'a str,
    pub args: &'a str,
}

pub struct OmarchyRig {
    pub env: Env,
    ran: RunLog,
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl OmarchyRig {
    /// An Omarchy with these routes; `config` is appended to the config file (after the
    /// `[approval]` and `[exec]` sections this rig writes: add keys under a new section).
    pub fn new(entries: &[Entry<'_>], config: &str) -> OmarchyRig {
        let mut env = Env::with_config("");
        let omarchy = env.path("scratch/omarchy");
        let bin = omarchy.join("bin");
        let ran = env.path("scratch/ran.log");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
        let commands: Vec<Value> = entries
            .iter()
            .map(|e| {
                let binary = format!("omarchy-{}", e.words.replace(' ', "-"));
                let route = format!("omarchy {}", e.words);
                json!({"route": route, "binary": binary,
                       "group": e.words.split(' ').next().unwrap(),
                       "name": e.words.rsplit(' ').next().unwrap(),
                       "summary": format!("Fixture route {}", e.words),
                       "requires_sudo": false, "hidden": false, "args": e.args,
                       "examples": [], "aliases": [], "filename_route": route,
                       "routes": [route]})
            })
            .collect();
        let registry = json!({"ok": true, "commands": commands});
        std::fs::write(omarchy.join("commands.json"), registry.to_string()).unwrap();
        script(
            &bin.join("omarchy"),
            &format!(
                "case \"$1\" in version) echo 4.0.0 ;; commands) /bin/cat {} ;; *) exit 99 ;; esac",
                omarchy.join("commands.json").display()
            ),
        );
        for e in entries {
            let name = format!("omarchy-{}", e.words.replace(' ', "-"));
            script(
                &bin.join(&name),
                &format!(
                    "# omarchy:summary=Fixture for {name}\necho \"${{0##*/}} $*\" >> {}",
                    ran.display()
                ),
            );
        }
        env.write_config(&format!(
            "[approval]\npage = false\nnotifications = false\npresence = \"off\"\ntimeout_s = 60\n\
             [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\n{config}\n",
            bin.display()
        ));
        env.vars
            .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
        OmarchyRig {
            env,
            ran: RunLog::new(ran),
        }
    }

    /// Replaces the script of `words` (a route of this rig, or a helper `omarchy-…` it calls) by
    /// one that first records how it was called, then runs `body`.
    pub fn set_script(&self, name: &str, body: &str) {
        let bin = self.env.path("scratch/omarchy/bin");
        script(
            &bin.join(name),
            &format!(
                "# omarchy:summary=Fixture for {name}\necho \"${{0##*/}} $*\" >> {}\n{body}",
                self.ran.path().display()
            ),
        );
    }

    /// Replaces the script of `name` by `body` alone, in the shape of Omarchy's own scripts:
    /// for a route handed off, which must change no file as the person (recording the call
    /// would be one); whether it ran is then seen only in what `body` does.
    pub fn set_script_unrecorded(&self, name: &str, body: &str) {
        let bin = self.env.path("scratch/omarchy/bin");
        script(
            &bin.join(name),
            &format!(
                "# omarchy:summary=Fixture for {name}
{body}"
            ),
        );
    }

    /// Rewrites the config with the trust rule on (the rig's default turns it off), the rig's
    /// `bin/` then root's `/usr/bin` searched, and `more` appended (a `[policy]` or `[desktop]`
    /// section, or nothing).
    pub fn trust_on(&self, more: &str) {
        let bin = self.env.path("scratch/omarchy/bin");
        self.env.write_config(&format!(
            "[approval]\npage = false\nnotifications = false\npresence = \"off\"\ntimeout_s = 60\n\
             [exec]\nsearch_dirs = [\"{}\", \"/usr/bin\"]\n{more}\n",
            bin.display()
        ));
    }

    /// What ran since the last look, one line per run (`script-name args…`).
    pub fn ran(&self) -> Vec<String> {
        self.ran.take()
    }
}

/// A fixture Omarchy with one route, `toggle nightlight`, whose script the test writes, for tests
/// that bring their own config and server: the registry in the same shape, a dispatcher
/// answering `version` and `commands`, and the route's binary. Returns `scratch/marks`, a
/// directory the script may write to; `OMARCHY_PATH` is set for the sandbox's commands.
pub fn omarchy_with_route(env: &mut Env, script: impl FnOnce(&str) -> String) -> PathBuf {
    let omarchy = env.path("scratch/omarchy");
    let marks = env.path("scratch/marks");
    std::fs::create_dir_all(omarchy.join("bin")).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
    std::fs::write(
        omarchy.join("commands.json"),
        r#"{"ok": true, "commands": [{"route": "omarchy toggle nightlight", "binary": "omarchy-toggle-nightlight", "group": "toggle", "name": "nightlight", "summary": "Warm colours on or off", "requires_sudo": false, "hidden": false, "args": "[--status]", "examples": [], "aliases": [], "filename_route": "omarchy toggle nightlight", "routes": ["omarchy toggle nightlight"]}]}"#,
    )
    .unwrap();
    let dispatcher = format!(
        "#!/bin/sh\ncase \"$1\" in\n  version) echo 4.0.0 ;;\n  commands) cat \"{dir}/commands.json\" ;;\nesac\n",
        dir = omarchy.display()
    );
    let script = script(&marks.display().to_string());
    use std::os::unix::fs::PermissionsExt;
    for (name, text) in [
        ("omarchy", dispatcher),
        ("omarchy-toggle-nightlight", script),
    ] {
        let bin = omarchy.join("bin").join(name);
        std::fs::write(&bin, text).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    env.vars
        .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
    marks
}

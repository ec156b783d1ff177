//! AUR helpers: whether paru or yay is installed, what their configuration says, and which AUR
//! updates they would build now — the list `aur_review_updates` audits before anyone runs them.
//!
//! paru reads `/etc/paru.conf` then `$XDG_CONFIG_HOME/paru/paru.conf` (pacman.conf-style
//! `[options]` with `Key` or `Key = value` lines); yay keeps `$XDG_CONFIG_HOME/yay/config.json`
//! (a flat JSON object). Both upgrade AUR packages with `-Sua`; `--devel` also rebuilds VCS
//! packages (`-git`, `-svn` …) whose upstream moved, which a version comparison cannot see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::client::{AurClient, AurError};
use crate::vercmp::vercmp;

/// One helper found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Helper {
    /// `paru` or `yay`.
    pub name: &'static str,
    /// Where the program is.
    pub program: String,
    /// Configuration files read, in order.
    pub config_files: Vec<String>,
    /// Their settings (later files win); flags without a value are `true`.
    pub settings: BTreeMap<String, serde_json::Value>,
    /// VCS packages are rebuilt on `-Sua` (paru `Devel`, yay `devel`).
    pub devel: bool,
    /// The command that builds the pending AUR updates, for the person after the review.
    pub upgrade_command: String,
}

/// Where to look.
#[derive(Debug, Clone)]
pub struct HelperPaths {
    /// `/` on a real machine: programs and `/etc/paru.conf` are read under it.
    pub root: PathBuf,
    /// `$XDG_CONFIG_HOME` (default `~/.config`).
    pub config_home: Option<PathBuf>,
}

fn find_program(root: &Path, name: &str) -> Option<PathBuf> {
    ["usr/bin", "usr/local/bin"]
        .iter()
        .map(|d| root.join(d).join(name))
        .find(|p| p.is_file())
}

fn paru_conf(text: &str, into: &mut BTreeMap<String, serde_json::Value>) {
    let mut in_options = false;
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            in_options = line == "[options]";
            continue;
        }
        if !in_options {
            continue;
        }
        match line.split_once('=') {
            Some((k, v)) => into.insert(
                k.trim().to_owned(),
                serde_json::Value::String(v.trim().to_owned()),
            ),
            None => into.insert(line.to_owned(), serde_json::Value::Bool(true)),
        };
    }
}

/// paru and yay under `paths`, with their settings.
pub fn helpers(paths: &HelperPaths) -> Vec<Helper> {
    let mut out = Vec::new();
    if let Some(program) = find_program(&paths.root, "paru") {
        let mut files = vec![paths.root.join("etc/paru.conf")];
        if let Some(c) = &paths.config_home {
            files.push(c.join("paru/paru.conf"));
        }
        let mut settings = BTreeMap::new();
        let mut read = Vec::new();
        for f in files {
            if let Ok(text) = std::fs::read_to_string(&f) {
                paru_conf(&text, &mut settings);
                read.push(f.display().to_string());
            }
        }
        let devel = settings.contains_key("Devel");
        out.push(Helper {
            name: "paru",
            program: program.display().to_string(),
            config_files: read,
            settings,
            devel,
            upgrade_command: "paru -Sua".into(),
        });
    }
    if let Some(program) = find_program(&paths.root, "yay") {
        let mut settings = BTreeMap::new();
        let mut read = Vec::new();
        if let Some(c) = &paths.config_home {
            let f = c.join("yay/config.json");
            if let Ok(text) = std::fs::read_to_string(&f)
                && let Ok(serde_json::Value::Object(m)) = serde_json::from_str(&text)
            {
                for (k, v) in m {
                    if !v.is_object() && !v.is_array() {
                        settings.insert(k, v);
                    }
                }
                read.push(f.display().to_string());
            }
        }
        let devel = settings.get("devel").and_then(|v| v.as_bool()) == Some(true);
        out.push(Helper {
            name: "yay",
            program: program.display().to_string(),
            config_files: read,
            settings,
            devel,
            upgrade_command: "yay -Sua".into(),
        });
    }
    out
}

/// One AUR update a helper would build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingBuild {
    /// Package.
    pub name: String,
    /// Installed version.
    pub installed: String,
    /// The AUR's version.
    pub available: String,
}

/// What `-Sua` would build now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pending {
    /// Updates by version.
    pub updates: Vec<PendingBuild>,
    /// Installed VCS packages (`--devel` rebuilds these when upstream moved).
    pub vcs: Vec<String>,
    /// Foreign packages the AUR does not know (local builds, removed from the AUR).
    pub not_in_aur: Vec<String>,
}

/// Compares the installed foreign packages with the AUR.
pub async fn pending(
    client: &AurClient,
    installed: &[(String, String)],
) -> Result<Pending, AurError> {
    let names: Vec<String> = installed
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| crate::client::valid_name(n))
        .collect();
    let info = if names.is_empty() {
        Vec::new()
    } else {
        client.info(&names).await?.packages
    };
    let mut p = Pending {
        updates: Vec::new(),
        vcs: Vec::new(),
        not_in_aur: Vec::new(),
    };
    for (name, ver) in installed {
        if ["-git", "-svn", "-hg", "-bzr", "-darcs", "-fossil"]
            .iter()
            .any(|s| name.ends_with(s))
        {
            p.vcs.push(name.clone());
        }
        match info.iter().find(|i| &i.name == name) {
            None => p.not_in_aur.push(name.clone()),
            Some(i) if vercmp(&i.version, ver) == std::cmp::Ordering::Greater => {
                p.updates.push(PendingBuild {
                    name: name.clone(),
                    installed: ver.clone(),
                    available: i.version.clone(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(p)
}

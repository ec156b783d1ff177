//! `pkg_install_plan`: what `pacman -S` would do, and the exact command for the person.
//!
//! archgate never elevates privilege. Installing needs root, so this answers with the targets,
//! the dependencies pulled in (resolved through provides like pacman: exact name first, then the
//! first provider in repository order; already satisfied ones skipped), conflicts, sizes, and
//! the command to run.

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use crate::db::Snapshot;
use crate::deps::sync_satisfier;
use crate::desc::Package;
use crate::error::PacmanError;
use crate::info::installed_satisfies;
use crate::version::Depend;

/// What happens to one package.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PlanAction {
    /// Not installed yet.
    Install,
    /// Installed in an older version.
    Upgrade,
    /// Installed in a newer version.
    Downgrade,
    /// Installed in the same version.
    Reinstall,
}

/// One package in the plan.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedPackage {
    /// Name.
    pub name: String,
    /// Version that would be installed.
    pub version: String,
    /// Repository.
    pub repo: String,
    /// What happens.
    pub action: PlanAction,
    /// Installed version, if any.
    pub installed_version: Option<String>,
    /// Download size in bytes (0 when already in the cache).
    pub download_size: u64,
    /// Installed size in bytes.
    pub installed_size: u64,
    /// For dependencies: which requirement pulled it in.
    pub required_by: Option<String>,
}

/// A conflict pacman would ask about.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PlanConflict {
    /// The package in the plan.
    pub package: String,
    /// The package it conflicts with (installed or also planned).
    pub conflicts_with: String,
    /// Whether that one is installed (pacman would offer to remove it).
    pub installed: bool,
}

/// The answer to `pkg_install_plan`.
#[derive(Debug, Clone, Serialize)]
pub struct InstallPlan {
    /// The packages asked for.
    pub targets: Vec<PlannedPackage>,
    /// Dependencies pulled in.
    pub dependencies: Vec<PlannedPackage>,
    /// Dependencies nothing in the repositories satisfies.
    pub unresolved: Vec<String>,
    /// Conflicts.
    pub conflicts: Vec<PlanConflict>,
    /// Total download size in bytes.
    pub download_size: u64,
    /// Total installed size of the new packages in bytes.
    pub installed_size: u64,
    /// Change in disk use (new minus replaced installed versions), in bytes.
    pub net_change: i64,
    /// The command for the person to run.
    pub command: String,
    /// Things worth knowing (ignored packages, pending updates, …).
    pub notes: Vec<String>,
}

/// Builds `sudo pacman [--config F] ARGS NAMES`, adding `--config` when not the default file.
pub fn pacman_command(conf: &Path, args: &[&str], names: &[String]) -> String {
    let mut cmd = String::from("sudo pacman");
    if conf != Path::new("/etc/pacman.conf") {
        cmd.push_str(" --config ");
        cmd.push_str(&shell_quote(&conf.to_string_lossy()));
    }
    for a in args {
        cmd.push(' ');
        cmd.push_str(a);
    }
    for n in names {
        cmd.push(' ');
        cmd.push_str(&shell_quote(n));
    }
    cmd
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['-', '.'])
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"@._+-/".contains(&b))
}

fn planned(
    snap: &Snapshot,
    repo: &str,
    pkg: &Package,
    required_by: Option<String>,
) -> PlannedPackage {
    let installed = snap.local.get(&pkg.name);
    let action = match installed {
        None => PlanAction::Install,
        Some(l) => match crate::version::vercmp(&pkg.version, &l.version) {
            std::cmp::Ordering::Greater => PlanAction::Upgrade,
            std::cmp::Ordering::Less => PlanAction::Downgrade,
            std::cmp::Ordering::Equal => PlanAction::Reinstall,
        },
    };
    let cached = pkg
        .filename
        .as_ref()
        .is_some_and(|f| snap.conf.cache_dirs.iter().any(|d| d.join(f).is_file()));
    PlannedPackage {
        name: pkg.name.clone(),
        version: pkg.version.clone(),
        repo: repo.to_owned(),
        action,
        installed_version: installed.map(|l| l.version.clone()),
        download_size: if cached {
            0
        } else {
            pkg.download_size.unwrap_or(0)
        },
        installed_size: pkg.installed_size.unwrap_or(0),
        required_by,
    }
}

/// Plans `pacman -S names`.
pub fn install_plan(snap: &Snapshot, names: &[String]) -> Result<InstallPlan, PacmanError> {
    if names.is_empty() {
        return Err(PacmanError::InvalidArgument {
            argument: "names",
            problem: "at least one package name is needed".to_owned(),
        });
    }
    let mut notes = Vec::new();
    let mut chosen: Vec<(String, &Package)> = Vec::new();
    let mut targets = Vec::new();
    for raw in names {
        if !valid_name(raw) {
            return Err(PacmanError::InvalidArgument {
                argument: "names",
                problem: format!("{raw:?} is not a package name"),
            });
        }
        let (repo, pkg) = match raw.split_once('/') {
            Some((r, n)) => {
                let repo = snap.repo(r)?;
                let pkg = repo.get(n).ok_or_else(|| PacmanError::PackageNotFound {
                    name: raw.clone(),
                    near: snap.near_names(n),
                })?;
                (repo.name.as_str(), pkg)
            }
            None => sync_satisfier(snap, &Depend::parse(raw))
                .map(|(r, p, _)| (r, p))
                .ok_or_else(|| PacmanError::PackageNotFound {
                    name: raw.clone(),
                    near: snap.near_names(raw),
                })?,
        };
        if snap.conf.ignore_pkg.iter().any(|i| i == &pkg.name) {
            notes.push(format!(
                "{} is in IgnorePkg; pacman will ask before installing it",
                pkg.name
            ));
        }
        if chosen.iter().any(|(_, p)| p.name == pkg.name) {
            continue;
        }
        targets.push(planned(snap, repo, pkg, None));
        chosen.push((repo.to_owned(), pkg));
    }
    // Resolve dependencies breadth first, skipping what is installed or already planned.
    let mut dependencies = Vec::new();
    let mut unresolved = Vec::new();
    let mut seen: HashSet<String> = chosen.iter().map(|(_, p)| p.name.clone()).collect();
    let mut queue: Vec<&Package> = chosen.iter().map(|(_, p)| *p).collect();
    while let Some(pkg) = queue.pop() {
        for dep in &pkg.depends {
            let planned_ok = chosen
                .iter()
                .any(|(_, p)| dep.satisfied_by(&p.name, &p.version, &p.provides));
            if planned_ok || installed_satisfies(&snap.local, dep) {
                continue;
            }
            match sync_satisfier(snap, dep) {
                Some((repo, p, _)) => {
                    if seen.insert(p.name.clone()) {
                        dependencies.push(planned(snap, repo, p, Some(pkg.name.clone())));
                        chosen.push((repo.to_owned(), p));
                        queue.push(p);
                    }
                }
                None => unresolved.push(format!("{} (needed by {})", dep.spec(), pkg.name)),
            }
        }
    }
    let mut conflicts = Vec::new();
    for (_, p) in &chosen {
        for c in &p.conflicts {
            for l in &snap.local.packages {
                if l.name != p.name && c.satisfied_by(&l.name, &l.version, &l.provides) {
                    conflicts.push(PlanConflict {
                        package: p.name.clone(),
                        conflicts_with: l.name.clone(),
                        installed: true,
                    });
                }
            }
            for (_, o) in &chosen {
                if o.name != p.name && c.satisfied_by(&o.name, &o.version, &o.provides) {
                    conflicts.push(PlanConflict {
                        package: p.name.clone(),
                        conflicts_with: o.name.clone(),
                        installed: false,
                    });
                }
            }
        }
        // Installed packages that declare a conflict with the new one.
        for l in &snap.local.packages {
            if l.name != p.name
                && l.conflicts
                    .iter()
                    .any(|c| c.satisfied_by(&p.name, &p.version, &p.provides))
                && !conflicts
                    .iter()
                    .any(|x| x.package == p.name && x.conflicts_with == l.name)
            {
                conflicts.push(PlanConflict {
                    package: p.name.clone(),
                    conflicts_with: l.name.clone(),
                    installed: true,
                });
            }
        }
    }
    let all = targets.iter().chain(dependencies.iter());
    let download_size = all.clone().map(|p| p.download_size).sum();
    let installed_size: u64 = all.clone().map(|p| p.installed_size).sum();
    let replaced: u64 = all
        .filter_map(|p| snap.local.get(&p.name))
        .map(|l| l.installed_size.unwrap_or(0))
        .sum();
    if !snap.missing.is_empty() {
        notes.push("some repositories have no database; run pacman -Sy first".to_owned());
    }
    let mut target_names: Vec<String> = Vec::new();
    for raw in names {
        if !target_names.contains(raw) {
            target_names.push(raw.clone());
        }
    }
    Ok(InstallPlan {
        command: pacman_command(&snap.conf.path, &["-S"], &target_names),
        targets,
        dependencies,
        unresolved,
        conflicts,
        download_size,
        installed_size,
        net_change: i64::try_from(installed_size)
            .unwrap_or(i64::MAX)
            .saturating_sub(i64::try_from(replaced).unwrap_or(i64::MAX)),
        notes,
    })
}

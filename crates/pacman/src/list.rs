//! `pkg_list`: installed packages by filter (pacman -Qe, -Qd, -Qdt, -Qm, -Qu).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::db::{LocalDb, Snapshot, SyncRepo};
use crate::info::{InstallReason, Timestamp, dependents};
use crate::version::vercmp;

/// Which installed packages to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ListFilter {
    /// Explicitly installed (pacman -Qe).
    Explicit,
    /// Installed as dependencies (pacman -Qd).
    Deps,
    /// Dependencies nothing needs any more, not even optionally (pacman -Qdt).
    Orphans,
    /// Installed but in no sync repository, e.g. from the AUR (pacman -Qm).
    Foreign,
    /// Newer in the current sync databases (pacman -Qu, without refreshing).
    Upgradable,
}

/// One installed package in a list.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ListedPackage {
    /// Name.
    pub name: String,
    /// Installed version.
    pub version: String,
    /// Install reason.
    pub reason: InstallReason,
    /// Installed size in bytes.
    pub installed_size: Option<u64>,
    /// Install date.
    pub install_date: Option<Timestamp>,
    /// For `upgradable`: the newer version and its repository.
    pub new_version: Option<String>,
    /// For `upgradable`: the repository offering it.
    pub repo: Option<String>,
}

/// The answer to `pkg_list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListResult {
    /// The filter applied.
    pub filter: ListFilter,
    /// Number of packages.
    pub total: usize,
    /// Packages sorted by name.
    pub packages: Vec<ListedPackage>,
    /// For `upgradable`: the comparison is against sync databases as they are on disk.
    pub note: Option<String>,
}

/// One pending upgrade (also used by `pkg_updates`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Upgrade {
    /// Package name.
    pub name: String,
    /// Installed version.
    pub installed: String,
    /// Version in the repository.
    pub available: String,
    /// Repository offering it.
    pub repo: String,
    /// Whether IgnorePkg/IgnoreGroup holds it back.
    pub ignored: bool,
}

/// pacman -Qu: for each installed package, the first repository (in order) with that name;
/// listed when its version is newer.
pub fn upgrades(
    local: &LocalDb,
    repos: &[&SyncRepo],
    ignore_pkg: &[String],
    ignore_group: &[String],
) -> Vec<Upgrade> {
    let mut out = Vec::new();
    for pkg in &local.packages {
        let Some((repo, newer)) = repos
            .iter()
            .find_map(|r| r.get(&pkg.name).map(|p| (r.name.as_str(), p)))
        else {
            continue;
        };
        if vercmp(&newer.version, &pkg.version) == Ordering::Greater {
            let ignored = ignore_pkg.iter().any(|i| glob_match(i, &pkg.name))
                || newer
                    .groups
                    .iter()
                    .any(|g| ignore_group.iter().any(|i| glob_match(i, g)));
            out.push(Upgrade {
                name: pkg.name.clone(),
                installed: pkg.version.clone(),
                available: newer.version.clone(),
                repo: repo.to_owned(),
                ignored,
            });
        }
    }
    out
}

/// IgnorePkg entries are fnmatch patterns.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// Lists installed packages by `filter`.
pub fn list(snap: &Snapshot, filter: ListFilter) -> ListResult {
    let local = &snap.local;
    let mut packages = Vec::new();
    let mut note = None;
    let listed = |p: &crate::desc::Package| ListedPackage {
        name: p.name.clone(),
        version: p.version.clone(),
        reason: if p.reason == Some(1) {
            InstallReason::Dependency
        } else {
            InstallReason::Explicit
        },
        installed_size: p.installed_size,
        install_date: p.install_date.map(Timestamp),
        new_version: None,
        repo: None,
    };
    match filter {
        ListFilter::Upgradable => {
            let repos: Vec<&SyncRepo> = snap.repos.iter().map(AsRef::as_ref).collect();
            for up in upgrades(
                local,
                &repos,
                &snap.conf.ignore_pkg,
                &snap.conf.ignore_group,
            ) {
                if let Some(p) = local.get(&up.name) {
                    let mut row = listed(p);
                    row.new_version = Some(up.available);
                    row.repo = Some(up.repo);
                    packages.push(row);
                }
            }
            note = Some(
                "compared with the sync databases on disk; pkg_updates refreshes a copy first"
                    .to_owned(),
            );
        }
        _ => {
            for p in &local.packages {
                let keep = match filter {
                    ListFilter::Explicit => p.reason != Some(1),
                    ListFilter::Deps => p.reason == Some(1),
                    ListFilter::Orphans => {
                        p.reason == Some(1)
                            && dependents(local, p, false).is_empty()
                            && dependents(local, p, true).is_empty()
                    }
                    ListFilter::Foreign => snap.sync_get(&p.name).is_none(),
                    ListFilter::Upgradable => false,
                };
                if keep {
                    packages.push(listed(p));
                }
            }
        }
    }
    ListResult {
        filter,
        total: packages.len(),
        packages,
        note,
    }
}

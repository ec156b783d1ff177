//! `pkg_info`: every field pacman -Si and -Qi show, for the sync and the installed package.

use serde::Serialize;

use crate::db::{LocalDb, Snapshot};
use crate::desc::Package;
use crate::error::PacmanError;
use crate::search::Source;

/// Seconds since the epoch, serialized as RFC 3339 (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp(pub i64);

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match time::OffsetDateTime::from_unix_timestamp(self.0)
            .ok()
            .and_then(|t| {
                t.format(&time::format_description::well_known::Rfc3339)
                    .ok()
            }) {
            Some(text) => s.serialize_str(&text),
            None => s.serialize_i64(self.0),
        }
    }
}

/// An optional dependency with its reason.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct OptDep {
    /// The dependency (`name[op version]`).
    pub name: String,
    /// Why it is useful.
    pub reason: Option<String>,
    /// Whether something satisfying it is installed.
    pub installed: bool,
}

/// Fields shared by sync and installed packages.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PackageDetails {
    /// Name.
    pub name: String,
    /// Full version `[epoch:]pkgver-pkgrel`.
    pub version: String,
    /// Package base.
    pub base: Option<String>,
    /// Description.
    pub description: String,
    /// Architecture.
    pub architecture: Option<String>,
    /// Upstream URL.
    pub url: Option<String>,
    /// Licenses.
    pub licenses: Vec<String>,
    /// Groups.
    pub groups: Vec<String>,
    /// Provisions.
    pub provides: Vec<String>,
    /// Dependencies.
    pub depends: Vec<String>,
    /// Optional dependencies with reasons.
    pub optdepends: Vec<OptDep>,
    /// Conflicts.
    pub conflicts: Vec<String>,
    /// Replaces.
    pub replaces: Vec<String>,
    /// Installed size in bytes.
    pub installed_size: Option<u64>,
    /// Packager.
    pub packager: Option<String>,
    /// Build date.
    pub build_date: Option<Timestamp>,
}

/// A package as a sync repository offers it.
#[derive(Debug, Clone, Serialize)]
pub struct SyncPackageInfo {
    /// Repository.
    pub repo: String,
    /// Common fields.
    #[serde(flatten)]
    pub details: PackageDetails,
    /// Download size in bytes.
    pub download_size: Option<u64>,
    /// Package file name.
    pub filename: Option<String>,
    /// What the database lets pacman validate it by (`MD5 Sum`, `SHA-256 Sum`, `Signature`).
    pub validated_by: Vec<String>,
}

/// Why a package is installed.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum InstallReason {
    /// Explicitly installed.
    Explicit,
    /// Installed as a dependency for another package.
    Dependency,
}

/// A package as installed.
#[derive(Debug, Clone, Serialize)]
pub struct InstalledPackageInfo {
    /// Common fields.
    #[serde(flatten)]
    pub details: PackageDetails,
    /// Install date.
    pub install_date: Option<Timestamp>,
    /// Install reason.
    pub install_reason: InstallReason,
    /// How it was validated at install time (`none`, `md5`, `sha256`, `pgp`).
    pub validation: Vec<String>,
    /// Installed packages that depend on it.
    pub required_by: Vec<String>,
    /// Installed packages that optionally depend on it.
    pub optional_for: Vec<String>,
    /// Whether it has an install script.
    pub install_script: bool,
    /// Whether no sync repository has a package of this name (foreign, e.g. from the AUR).
    pub foreign: bool,
}

/// The answer to `pkg_info`.
#[derive(Debug, Clone, Serialize)]
pub struct InfoResult {
    /// Local databases or the remote API.
    pub source: Source,
    /// The name asked for.
    pub name: String,
    /// Every sync repository offering it, in pacman.conf order.
    pub sync: Vec<SyncPackageInfo>,
    /// The installed package, when installed.
    pub installed: Option<InstalledPackageInfo>,
}

fn specs(deps: &[crate::version::Depend]) -> Vec<String> {
    deps.iter().map(|d| d.spec()).collect()
}

/// Whether any installed package satisfies a dependency.
pub(crate) fn installed_satisfies(local: &LocalDb, dep: &crate::version::Depend) -> bool {
    if let Some(p) = local.get(&dep.name)
        && dep.satisfied_by(&p.name, &p.version, &p.provides)
    {
        return true;
    }
    local
        .packages
        .iter()
        .any(|p| dep.satisfied_by(&p.name, &p.version, &p.provides))
}

pub(crate) fn details(pkg: &Package, local: &LocalDb) -> PackageDetails {
    PackageDetails {
        name: pkg.name.clone(),
        version: pkg.version.clone(),
        base: pkg.base.clone(),
        description: pkg.description.clone(),
        architecture: pkg.arch.clone(),
        url: pkg.url.clone(),
        licenses: pkg.licenses.clone(),
        groups: pkg.groups.clone(),
        provides: specs(&pkg.provides),
        depends: specs(&pkg.depends),
        optdepends: pkg
            .optdepends
            .iter()
            .map(|d| OptDep {
                name: d.spec(),
                reason: d.description.clone(),
                installed: installed_satisfies(local, d),
            })
            .collect(),
        conflicts: specs(&pkg.conflicts),
        replaces: specs(&pkg.replaces),
        installed_size: pkg.installed_size,
        packager: pkg.packager.clone(),
        build_date: pkg.build_date.map(Timestamp),
    }
}

/// Installed packages whose dependencies (`optional`: optional ones) `pkg` satisfies, sorted.
pub(crate) fn dependents(local: &LocalDb, pkg: &Package, optional: bool) -> Vec<String> {
    let mut out: Vec<String> = local
        .packages
        .iter()
        .filter(|other| {
            let deps = if optional {
                &other.optdepends
            } else {
                &other.depends
            };
            deps.iter()
                .any(|d| d.satisfied_by(&pkg.name, &pkg.version, &pkg.provides))
        })
        .map(|p| p.name.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

pub(crate) fn installed_info(snap: &Snapshot, pkg: &Package) -> InstalledPackageInfo {
    let local = &snap.local;
    let entry = local.dir.join(format!("{}-{}", pkg.name, pkg.version));
    InstalledPackageInfo {
        details: details(pkg, local),
        install_date: pkg.install_date.map(Timestamp),
        install_reason: if pkg.reason == Some(1) {
            InstallReason::Dependency
        } else {
            InstallReason::Explicit
        },
        validation: pkg.validation.clone(),
        required_by: dependents(local, pkg, false),
        optional_for: dependents(local, pkg, true),
        install_script: entry.join("install").exists(),
        foreign: snap.sync_get(&pkg.name).is_none(),
    }
}

/// `pkg_info` over the local databases.
pub fn info(snap: &Snapshot, name: &str) -> Result<InfoResult, PacmanError> {
    let (repo_filter, name) = match name.split_once('/') {
        Some((r, n)) => (Some(r), n),
        None => (None, name),
    };
    if let Some(r) = repo_filter {
        snap.repo(r)?;
    }
    let sync: Vec<SyncPackageInfo> = snap
        .repos
        .iter()
        .filter(|r| repo_filter.is_none_or(|f| f == r.name))
        .filter_map(|r| r.get(name).map(|p| (r, p)))
        .map(|(r, p)| {
            let mut validated_by = Vec::new();
            if p.md5sum.is_some() {
                validated_by.push("MD5 Sum".to_owned());
            }
            if p.sha256sum.is_some() {
                validated_by.push("SHA-256 Sum".to_owned());
            }
            if p.has_signature {
                validated_by.push("Signature".to_owned());
            }
            SyncPackageInfo {
                repo: r.name.clone(),
                details: details(p, &snap.local),
                download_size: p.download_size,
                filename: p.filename.clone(),
                validated_by,
            }
        })
        .collect();
    let installed = if repo_filter.is_none() {
        snap.local.get(name).map(|p| installed_info(snap, p))
    } else {
        None
    };
    if sync.is_empty() && installed.is_none() {
        return Err(PacmanError::PackageNotFound {
            name: name.to_owned(),
            near: snap.near_names(name),
        });
    }
    Ok(InfoResult {
        source: Source::Local,
        name: name.to_owned(),
        sync,
        installed,
    })
}

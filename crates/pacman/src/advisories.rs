//! Security advisories: installed packages with open issues in the Arch security tracker, like
//! `arch-audit`.
//!
//! The tracker publishes every Arch Vulnerability Group at `{base}/all.json`: a JSON array of
//! `{name, packages, status, severity, type, affected, fixed, ticket, issues, advisories}`
//! (`status` one of `Unknown`, `Vulnerable`, `Testing`, `Fixed`, `Not affected`; `severity` one
//! of `Unknown`, `Low`, `Medium`, `High`, `Critical`; `issues` the CVE ids). As arch-audit
//! does, an installed package is affected by a group that is not `Not affected` unless the
//! group names a fixed version and the installed one is at least that (pacman's vercmp).

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::db::LocalDb;
use crate::netjson::Origin;
use crate::version::vercmp;

/// What the tracker JSON is called in errors.
pub const WHAT: &str = "the security tracker's all.json";

/// A group's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub enum Status {
    /// Not triaged yet.
    Unknown,
    /// Affected, no fix released.
    Vulnerable,
    /// A fix is in the testing repositories.
    Testing,
    /// A fixed version is released.
    Fixed,
    /// Arch's packages are not affected.
    #[serde(rename = "Not affected")]
    NotAffected,
}

/// A group's severity, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
pub enum Severity {
    /// Not rated.
    Unknown,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical.
    Critical,
}

/// One Arch Vulnerability Group as the tracker publishes it.
#[derive(Debug, Clone, Deserialize)]
pub struct Avg {
    /// `AVG-1234`.
    pub name: String,
    /// Affected package names.
    pub packages: Vec<String>,
    /// Status.
    pub status: Status,
    /// Severity.
    pub severity: Severity,
    /// Kind of issue (`arbitrary code execution` …).
    #[serde(rename = "type")]
    pub kind: String,
    /// A version known affected.
    pub affected: Option<String>,
    /// The first fixed version, when there is one.
    pub fixed: Option<String>,
    /// CVE ids.
    pub issues: Vec<String>,
    /// Published advisories (`ASA-…`).
    #[serde(default)]
    pub advisories: Vec<String>,
}

/// Parses the tracker's `all.json`.
pub fn parse(body: &[u8], url: &str) -> Result<Vec<Avg>, crate::http::HttpError> {
    crate::http::parse_json(body, url, WHAT)
}

/// The answer of the `advisories` tool.
#[derive(Debug, Clone, Serialize)]
pub struct AdvisoriesReport {
    /// Where the groups came from.
    pub source: String,
    /// How they were read.
    pub origin: Origin,
    /// Groups in the document.
    pub groups_read: usize,
    /// Installed packages affected, most severe first.
    pub affected: Vec<AffectedPackage>,
    /// Affected packages a released update fixes.
    pub fixable: usize,
    /// Commands for the person (empty: nothing to do now).
    pub commands: Vec<String>,
}

/// One installed package with open groups.
#[derive(Debug, Clone, Serialize)]
pub struct AffectedPackage {
    /// Package name.
    pub package: String,
    /// Installed version.
    pub installed: String,
    /// The highest severity of its groups.
    pub severity: Severity,
    /// The newest fixed version over its groups, when every group has one.
    pub fixed: Option<String>,
    /// Its groups.
    pub groups: Vec<GroupRef>,
}

/// One group as it applies to a package.
#[derive(Debug, Clone, Serialize)]
pub struct GroupRef {
    /// `AVG-…`.
    pub name: String,
    /// Its tracker page.
    pub url: String,
    /// Status.
    pub status: Status,
    /// Severity.
    pub severity: Severity,
    /// Kind of issue.
    #[serde(rename = "type")]
    pub kind: String,
    /// A version known affected.
    pub affected: Option<String>,
    /// The fixed version.
    pub fixed: Option<String>,
    /// CVE ids.
    pub cves: Vec<String>,
    /// Advisories.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advisories: Vec<String>,
}

/// Whether `installed` is affected by a group with `fixed` (arch-audit's rule).
pub fn is_affected(installed: &str, status: Status, fixed: Option<&str>) -> bool {
    if status == Status::NotAffected {
        return false;
    }
    match fixed {
        Some(f) => vercmp(installed, f) == Ordering::Less,
        None => true,
    }
}

/// The installed packages of `local` affected by `avgs`; `base` is the tracker's site for links.
pub fn report(
    local: &LocalDb,
    avgs: &[Avg],
    base: &str,
    source: &str,
    origin: Origin,
) -> AdvisoriesReport {
    let base = base.trim_end_matches('/');
    let mut by_pkg: std::collections::BTreeMap<&str, AffectedPackage> = Default::default();
    for g in avgs {
        for name in &g.packages {
            let Some(pkg) = local.get(name) else { continue };
            if !is_affected(&pkg.version, g.status, g.fixed.as_deref()) {
                continue;
            }
            let e = by_pkg
                .entry(name.as_str())
                .or_insert_with(|| AffectedPackage {
                    package: name.clone(),
                    installed: pkg.version.clone(),
                    severity: Severity::Unknown,
                    fixed: None,
                    groups: Vec::new(),
                });
            e.severity = e.severity.max(g.severity);
            e.groups.push(GroupRef {
                name: g.name.clone(),
                url: format!("{base}/{}", g.name),
                status: g.status,
                severity: g.severity,
                kind: g.kind.clone(),
                affected: g.affected.clone(),
                fixed: g.fixed.clone(),
                cves: g.issues.clone(),
                advisories: g.advisories.clone(),
            });
        }
    }
    let mut affected: Vec<AffectedPackage> = by_pkg
        .into_values()
        .map(|mut p| {
            p.groups
                .sort_by(|a, b| b.severity.cmp(&a.severity).then(a.name.cmp(&b.name)));
            // Fixed only when every group has a released fix: the newest of them.
            p.fixed = if p.groups.iter().all(|g| g.fixed.is_some()) {
                p.groups
                    .iter()
                    .filter_map(|g| g.fixed.clone())
                    .max_by(|a, b| vercmp(a, b))
            } else {
                None
            };
            p
        })
        .collect();
    affected.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.package.cmp(&b.package)));
    let fixable = affected
        .iter()
        .filter(|p| {
            p.groups
                .iter()
                .any(|g| g.fixed.is_some() && g.status != Status::Testing)
        })
        .count();
    let commands = if fixable > 0 {
        vec!["sudo pacman -Syu".to_owned()]
    } else {
        Vec::new()
    };
    AdvisoriesReport {
        source: source.to_owned(),
        origin,
        groups_read: avgs.len(),
        affected,
        fixable,
        commands,
    }
}

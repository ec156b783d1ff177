//! `pkg_deps`: dependency tree (like pactree), forward or reverse, with satisfiers via provides.

use std::collections::HashSet;

use serde::Serialize;

use crate::db::Snapshot;
use crate::desc::Package;
use crate::error::PacmanError;
use crate::version::Depend;

/// Most nodes in one answer; deeper parts are cut and `truncated` is set.
pub const MAX_NODES: usize = 2000;

/// The package that satisfies a dependency.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Satisfier {
    /// Package name.
    pub name: String,
    /// Version.
    pub version: String,
    /// `local` when installed, else the repository.
    pub from: String,
    /// True when it satisfies through `provides` rather than by name.
    pub via_provides: bool,
}

/// One node of the tree.
#[derive(Debug, Clone, Serialize)]
pub struct DepNode {
    /// The dependency as written (forward) or the dependent package's name (reverse).
    pub requirement: String,
    /// Who satisfies it; `None` when nothing does (a broken dependency).
    pub satisfied_by: Option<Satisfier>,
    /// Whether the package is already shown higher up (its children are not repeated).
    pub repeated: bool,
    /// Its own dependencies (or dependents, in reverse mode).
    pub children: Vec<DepNode>,
}

/// The answer to `pkg_deps`.
#[derive(Debug, Clone, Serialize)]
pub struct DepsResult {
    /// The root package.
    pub name: String,
    /// Its version.
    pub version: String,
    /// `local` or the repository it came from.
    pub from: String,
    /// Reverse mode: installed packages that depend on it.
    pub reverse: bool,
    /// Depth limit used.
    pub depth: u32,
    /// The tree below the root.
    pub children: Vec<DepNode>,
    /// Whether the node cap cut the tree.
    pub truncated: bool,
}

fn find_satisfier<'a>(snap: &'a Snapshot, dep: &Depend) -> Option<(&'a Package, String, bool)> {
    let local = &snap.local;
    if let Some(p) = local.get(&dep.name)
        && dep.satisfied_by(&p.name, &p.version, &[])
    {
        return Some((p, "local".into(), false));
    }
    if let Some(p) = local
        .packages
        .iter()
        .find(|p| dep.satisfied_by(&p.name, &p.version, &p.provides))
    {
        return Some((p, "local".into(), true));
    }
    sync_satisfier(snap, dep).map(|(r, p, via)| (p, r.to_owned(), via))
}

/// pacman's choice in the sync databases: a package of that exact name first (repository
/// order), then the first provider.
pub(crate) fn sync_satisfier<'a>(
    snap: &'a Snapshot,
    dep: &Depend,
) -> Option<(&'a str, &'a Package, bool)> {
    for r in &snap.repos {
        if let Some(p) = r.get(&dep.name)
            && dep.satisfied_by(&p.name, &p.version, &[])
        {
            return Some((r.name.as_str(), p, false));
        }
    }
    for r in &snap.repos {
        if let Some(p) = r
            .packages
            .iter()
            .find(|p| dep.satisfied_by(&p.name, &p.version, &p.provides))
        {
            return Some((r.name.as_str(), p, true));
        }
    }
    None
}

struct Walk<'a> {
    snap: &'a Snapshot,
    seen: HashSet<String>,
    nodes: usize,
    truncated: bool,
    max_depth: u32,
}

impl<'a> Walk<'a> {
    fn forward(&mut self, pkg: &'a Package, depth: u32) -> Vec<DepNode> {
        let mut out = Vec::new();
        for dep in &pkg.depends {
            if self.nodes >= MAX_NODES {
                self.truncated = true;
                break;
            }
            self.nodes += 1;
            let found = find_satisfier(self.snap, dep);
            let mut node = DepNode {
                requirement: dep.spec(),
                satisfied_by: found.as_ref().map(|(p, from, via)| Satisfier {
                    name: p.name.clone(),
                    version: p.version.clone(),
                    from: from.clone(),
                    via_provides: *via,
                }),
                repeated: false,
                children: Vec::new(),
            };
            if let Some((p, _, _)) = found {
                if !self.seen.insert(p.name.clone()) {
                    node.repeated = true;
                } else if depth < self.max_depth {
                    node.children = self.forward(p, depth + 1);
                }
            }
            out.push(node);
        }
        out
    }

    fn reverse(&mut self, pkg: &'a Package, depth: u32) -> Vec<DepNode> {
        let mut out = Vec::new();
        for user in &self.snap.local.packages {
            if !user
                .depends
                .iter()
                .any(|d| d.satisfied_by(&pkg.name, &pkg.version, &pkg.provides))
            {
                continue;
            }
            if self.nodes >= MAX_NODES {
                self.truncated = true;
                break;
            }
            self.nodes += 1;
            let mut node = DepNode {
                requirement: user.name.clone(),
                satisfied_by: Some(Satisfier {
                    name: user.name.clone(),
                    version: user.version.clone(),
                    from: "local".into(),
                    via_provides: false,
                }),
                repeated: false,
                children: Vec::new(),
            };
            if !self.seen.insert(user.name.clone()) {
                node.repeated = true;
            } else if depth < self.max_depth {
                node.children = self.reverse(user, depth + 1);
            }
            out.push(node);
        }
        out
    }
}

/// The dependency tree of `name` (installed package first, else the sync one), `depth` levels
/// deep; `reverse` lists installed packages that need it instead.
pub fn deps(
    snap: &Snapshot,
    name: &str,
    depth: u32,
    reverse: bool,
) -> Result<DepsResult, PacmanError> {
    let (pkg, from) = match snap.local.get(name) {
        Some(p) => (p, "local".to_owned()),
        None => match snap.sync_get(name) {
            Some((r, p)) => (p, r.name.clone()),
            None => {
                return Err(PacmanError::PackageNotFound {
                    name: name.to_owned(),
                    near: snap.near_names(name),
                });
            }
        },
    };
    let mut walk = Walk {
        snap,
        seen: HashSet::from([pkg.name.clone()]),
        nodes: 0,
        truncated: false,
        max_depth: depth.max(1),
    };
    let children = if reverse {
        walk.reverse(pkg, 1)
    } else {
        walk.forward(pkg, 1)
    };
    Ok(DepsResult {
        name: pkg.name.clone(),
        version: pkg.version.clone(),
        from,
        reverse,
        depth: depth.max(1),
        children,
        truncated: walk.truncated,
    })
}

//! What a pacman hand-off checks before any terminal opens: its configuration is root's alone
//! (it decides what runs as root), an install's whole transaction is known and removes nothing
//! (pacman runs `--noconfirm`), and a package file comes straight from pacman's cache.

use archgate_core::tool::{ErrorKind, ToolError};

use super::pinned;

/// pacman's configuration decides what runs as root (its downloader, hooks, repositories,
/// signature levels, root): every file it reads (the conf and its includes) and every directory
/// it names must be root's alone, else the hand-off is refused with the reason (F4). Directories
/// that do not exist (yet) are judged by the nearest one that does.
pub(super) fn check_conf(c: &archgate_pacman::conf::PacmanConf) -> Result<(), ToolError> {
    let refuse = |why: String| {
        ToolError::new(
            ErrorKind::Refused,
            format!(
                "pacman's configuration is not root's alone, so a hand-off would let whoever can write it run code as root: {why}"
            ),
        )
        .next("tell the person: a hand-off uses only a pacman.conf (and includes and directories) that root alone can write; they can run the step themselves")
    };
    for f in std::iter::once(&c.path).chain(&c.files) {
        pinned::root_file(f).map_err(refuse)?;
    }
    let dirs = [&c.root_dir, &c.db_path]
        .into_iter()
        .chain(&c.cache_dirs)
        .chain(&c.hook_dirs)
        .chain(c.gpg_dir.as_ref());
    for d in dirs {
        let existing = d
            .ancestors()
            .find(|a| a.exists())
            .unwrap_or(std::path::Path::new("/"));
        pinned::root_dir(existing).map_err(refuse)?;
    }
    Ok(())
}

/// What an install's transaction changes, for the person: the packages asked for and those
/// pulled in. A transaction that would remove an installed package (a conflict) is refused: the
/// hand-off runs pacman with `--noconfirm`, so nothing beyond the plan shown can be agreed to.
pub(super) fn transaction(plan: &archgate_pacman::plan::InstallPlan) -> Result<String, ToolError> {
    if !plan.unresolved.is_empty() {
        return Err(ToolError::new(
            ErrorKind::NotFound,
            format!(
                "dependencies nothing provides: {}",
                plan.unresolved.join(", ")
            ),
        ));
    }
    if !plan.conflicts.is_empty() {
        let what: Vec<String> = plan
            .conflicts
            .iter()
            .map(|c| {
                format!(
                    "{} conflicts with {}{}",
                    c.package,
                    c.conflicts_with,
                    if c.installed {
                        " (installed: pacman would remove it)"
                    } else {
                        ""
                    }
                )
            })
            .collect();
        return Err(ToolError::new(
            ErrorKind::Refused,
            format!(
                "the install would also remove or replace packages: {}; a hand-off runs only a transaction that installs, so the person's one confirmation covers all of it",
                what.join("; ")
            ),
        )
        .next("tell the person what conflicts; they can run the install themselves and answer pacman's questions"));
    }
    let names = |v: &[archgate_pacman::plan::PlannedPackage]| {
        v.iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut s = format!("installs {}", names(&plan.targets));
    if !plan.dependencies.is_empty() {
        s.push_str(&format!(
            " and the dependencies {}",
            names(&plan.dependencies)
        ));
    }
    s.push_str("; nothing is removed, and pacman asks no further question");
    Ok(s)
}

/// A package file `pacman -U` may take from a hand-off: a regular file (not a link) directly in
/// one of pacman's cache directories.
pub(super) fn check_cache_file(
    path: &str,
    cache_dirs: &[std::path::PathBuf],
) -> Result<(), ToolError> {
    let refuse = |why: &str| {
        ToolError::new(
            ErrorKind::InvalidTarget,
            format!("{path}: {why}; a hand-off installs only package files in pacman's cache"),
        )
        .next("call pkg_cache with the package's name and use a file it lists from the cache")
    };
    let p = std::path::Path::new(path);
    let meta = std::fs::symlink_metadata(p).map_err(|e| refuse(&e.to_string()))?;
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    let parent = p.parent().and_then(|d| d.canonicalize().ok());
    let in_cache = cache_dirs
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .any(|d| Some(&d) == parent.as_ref());
    if !in_cache {
        return Err(refuse("not in a CacheDir of pacman.conf"));
    }
    Ok(())
}

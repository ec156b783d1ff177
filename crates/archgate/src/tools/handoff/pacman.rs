//! What a pacman hand-off checks before any terminal opens: its configuration is root's alone
//! (it decides what runs as root: `pacman_reads.rs`), an install's whole transaction is known and removes nothing
//! (pacman runs `--noconfirm`), and a package file comes straight from pacman's cache.

use archgate_core::tool::{ErrorKind, ToolError};

use super::pinned;

/// pacman's configuration, all it names, judged root's alone (`pacman_reads.rs`).
pub(crate) use super::pacman_reads::check_conf;

/// The files a `.pacnew` hand-off renames or deletes as root: the `.pacnew`/`.pacsave` itself
/// root's alone, and every directory from `/` to it and to the live file root's alone too, so no
/// one but root can swap a directory for a link between the question and the run (attack 7 F3:
/// a directory of the agent's swapped for a link to `/etc` made root's `mv` replace another
/// file). The live file, when there is one, is a regular file or a link — never a directory
/// (`mv -T` refuses one anyway).
pub(crate) fn check_pacnew_paths(op: &super::ops::Operation) -> Result<(), ToolError> {
    use super::ops::Operation;
    let refuse = |why: String| {
        ToolError::new(
            ErrorKind::Refused,
            format!(
                "the .pacnew hand-off would rename or delete as root where root is not alone: {why}"
            ),
        )
        .next("tell the person: only a .pacnew in root's own directories is handed off; they can merge it themselves")
    };
    let (path, live) = match op {
        Operation::PacnewAdopt { path, live } => (path, Some(live)),
        Operation::PacnewDiscard { path } => (path, None),
        _ => return Ok(()),
    };
    let path = std::path::Path::new(path);
    pinned::root_file(path).map_err(refuse)?;
    let real_parent = |p: &std::path::Path| {
        p.parent()
            .map(std::path::Path::to_path_buf)
            .ok_or_else(|| refuse(format!("{} has no directory", p.display())))
    };
    pinned::root_dir(&real_parent(path)?).map_err(refuse)?;
    if let Some(live) = live {
        let live = std::path::Path::new(live);
        pinned::root_dir(&real_parent(live)?).map_err(refuse)?;
        if let Ok(m) = std::fs::symlink_metadata(live)
            && m.is_dir()
        {
            return Err(refuse(format!("{} is a directory", live.display())));
        }
    }
    Ok(())
}

/// What an install's transaction changes, for the person: the packages asked for and those
/// pulled in. A transaction that would remove an installed package (a conflict) is refused: the
/// hand-off runs pacman with `--noconfirm`, so nothing beyond the plan shown can be agreed to.
pub(crate) fn transaction(plan: &archgate_pacman::plan::InstallPlan) -> Result<String, ToolError> {
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
/// one of pacman's cache directories, and root's alone (attack 29 F8: a person's file in root's
/// cache — what `sudo mv` leaves — was the agent's to rewrite between the question and the run;
/// the helper checks it again after the person's Enter).
pub(crate) fn check_cache_file(
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
    pinned::root_file(p).map_err(|e| refuse(&format!("not root's alone ({e})")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::ops::Operation;
    use super::*;

    /// `etc/x.conf` and its `.pacnew` in a directory of someone else than root: the test's own
    /// (a normal user), or handed to nobody when the test runs as root.
    fn not_roots() -> (tempfile::TempDir, String, String) {
        let d = tempfile::tempdir().unwrap();
        let etc = d.path().join("etc");
        std::fs::create_dir(&etc).unwrap();
        let live = etc.join("x.conf");
        let pacnew = etc.join("x.conf.pacnew");
        std::fs::write(&live, "a\n").unwrap();
        std::fs::write(&pacnew, "b\n").unwrap();
        if nix::unistd::geteuid().is_root() {
            let nobody = Some(nix::unistd::Uid::from_raw(65534));
            nix::unistd::chown(&etc, nobody, None).unwrap();
        }
        let s = |p: &std::path::Path| p.display().to_string();
        (d, s(&pacnew), s(&live))
    }

    #[test]
    fn a_pacnew_where_root_is_not_alone_is_not_renamed_or_deleted_as_root() {
        let (_d, path, live) = not_roots();
        for op in [
            Operation::PacnewAdopt {
                path: path.clone(),
                live: live.clone(),
            },
            Operation::PacnewDiscard { path: path.clone() },
        ] {
            let e = check_pacnew_paths(&op).unwrap_err();
            assert!(e.message.contains("root is not alone"), "{}", e.message);
        }
    }

    #[test]
    fn a_live_file_in_a_directory_root_does_not_own_alone_is_never_replaced() {
        // The .pacnew root's (its own binary stands in: a root file in a root directory), the
        // live path in a directory someone else controls.
        let (_d, _, live) = not_roots();
        let op = Operation::PacnewAdopt {
            path: "/usr/bin/sh".into(),
            live,
        };
        let e = check_pacnew_paths(&op).unwrap_err();
        assert!(e.message.contains("root is not alone"), "{}", e.message);
    }
}

#[cfg(test)]
mod cache_file_tests {
    use super::*;

    /// Attack 29 F8 (B): a package file in root's cache owned by the person (a `sudo mv` into the
    /// cache): the agent rewrote it and `pacman -U` installed its package. It is refused now.
    #[test]
    fn a_package_file_of_the_persons_in_roots_cache_is_not_installed() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pathtest-9-1-any.pkg.tar.zst");
        std::fs::write(&f, "x").unwrap();
        let path = f.display().to_string();
        let caches = [d.path().to_owned()];
        if nix::unistd::geteuid().is_root() {
            check_cache_file(&path, &caches).unwrap();
            nix::unistd::chown(&f, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
        }
        let e = check_cache_file(&path, &caches).unwrap_err();
        assert!(e.message.contains("not root's alone"), "{}", e.message);
    }
}

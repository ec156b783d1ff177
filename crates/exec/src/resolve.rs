//! Finding a program in the fixed search directories and deciding whether it may run.
//!
//! The inherited `PATH` is never consulted for argv\[0\]. With `require_root_owned`, the path to
//! the program is walked one component at a time from `/`, following symbolic links by hand, and
//! every directory passed through (including those that hold a followed link) and the final file
//! must be owned by root or by the person (the uid archgate runs as, [`ExecConfig::person_uid`])
//! and writable by neither group nor others: nobody but root and the person can then swap what
//! runs. A git install of Omarchy in `~/.local/share/omarchy` passes.
//!
//! One exception, a root-owned sticky directory such as `/tmp` (1777): the kernel lets nobody but
//! an entry's owner (or root) rename or remove it, so others can add names there but never swap
//! one that exists. Such a directory may be passed *through*, when the entry taken in it is owned
//! by root or the person (a symbolic link too: whoever owns the link chooses its target). It is
//! never trusted as the final directory, since anyone can add programs to it. So the person's
//! 0700 `/tmp/x/bin` passes, `/tmp` itself and a stranger's `/tmp/y` (or link) do not.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use crate::config::ExecConfig;
use crate::error::{ExecError, UntrustedReason};

/// Symbolic links followed before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// Resolve `program` to the real file that will run, or say why not.
pub(crate) fn resolve(cfg: &ExecConfig, program: &str) -> Result<PathBuf, ExecError> {
    let not_installed = || ExecError::NotInstalled {
        program: program.to_owned(),
        searched: cfg.search_dirs.clone(),
    };
    if program.is_empty() || program.contains('\0') {
        return Err(not_installed());
    }
    let candidate = if program.contains('/') {
        let path = checked_absolute(program).map_err(|reason| ExecError::Untrusted {
            path: PathBuf::from(program),
            reason,
        })?;
        if !in_search_dirs(cfg, &path) {
            return Err(ExecError::Untrusted {
                path,
                reason: UntrustedReason::OutsideSearchDirs {
                    allowed: cfg.search_dirs.clone(),
                },
            });
        }
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(not_installed());
        }
        path
    } else {
        if program == "." || program == ".." {
            return Err(not_installed());
        }
        roots_first(cfg)
            .into_iter()
            .map(|dir| dir.join(program))
            .find(|c| is_executable_file(c))
            .ok_or_else(not_installed)?
    };
    let checked = if cfg.require_root_owned {
        walk_trusted(cfg, &candidate, Want::Executable)
    } else {
        plain_check(&candidate)
    };
    checked.map_err(|reason| ExecError::Untrusted {
        path: candidate,
        reason,
    })
}

/// The search directories in the order a bare name is looked up: those root's all the way first
/// (in the configured order), then the person's. A name a root directory holds resolves there,
/// so a file the agent drops in a search directory of the person's — Omarchy's `bin/` in a git
/// install under the home — never stands in for a system program archgate runs by name (attack
/// 34 F6: the read tool `hardware` ran a `smartctl` planted there; the children's `PATH` is
/// built on the same rule, `env/mod.rs`). Whatever the trust setting says of the person's
/// directories: what decides the order is who could have put a file there.
pub(crate) fn roots_first(cfg: &ExecConfig) -> Vec<&PathBuf> {
    let (roots, persons): (Vec<&PathBuf>, Vec<&PathBuf>) =
        cfg.search_dirs.iter().partition(|d| roots_all_the_way(d));
    roots.into_iter().chain(persons).collect()
}

/// See [`crate::roots_all_the_way`].
pub(crate) fn roots_all_the_way(dir: &Path) -> bool {
    let strict = ExecConfig {
        require_root_owned: true,
        person_uid: None,
        ..ExecConfig::default()
    };
    dir.is_absolute() && walk_trusted(&strict, dir, Want::Directory).is_ok()
}

/// An absolute path without `.`/`..` segments or a trailing slash.
fn checked_absolute(program: &str) -> Result<PathBuf, UntrustedReason> {
    let bad_segment = program.split('/').skip(1).any(|s| s == "." || s == "..");
    if !program.starts_with('/') || program.ends_with('/') || bad_segment {
        return Err(UntrustedReason::RelativePath);
    }
    Ok(PathBuf::from(program))
}

/// Whether an absolute program path lies directly in one of the search directories, compared as
/// written and, failing that, after resolving both directories' symbolic links.
fn in_search_dirs(cfg: &ExecConfig, path: &Path) -> bool {
    let Some(parent) = path.parent() else {
        return false;
    };
    if cfg.search_dirs.iter().any(|d| d == parent) {
        return true;
    }
    let Ok(parent) = parent.canonicalize() else {
        return false;
    };
    cfg.search_dirs
        .iter()
        .filter_map(|d| d.canonicalize().ok())
        .any(|d| d == parent)
}

/// A regular file (after following links) with an execute bit: what a PATH search would take.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
}

/// Without the ownership requirement: the real file, if it is an executable regular file.
fn plain_check(path: &Path) -> Result<PathBuf, UntrustedReason> {
    let real = path.canonicalize().map_err(|e| uninspectable(path, &e))?;
    if is_executable_file(&real) {
        Ok(real)
    } else {
        Err(UntrustedReason::NotExecutable { path: real })
    }
}

/// The interpreter a script's `#!` line names (a program too): an absolute path, trusted like a
/// program (every component owned by root or the person, writable by neither group nor others)
/// but not required to lie in a search directory — the kernel runs it by that path. Also used
/// to check, at the yes, that a pinned program's path is still trusted. The answer is the real
/// file.
pub(crate) fn interpreter(cfg: &ExecConfig, path: &Path) -> Result<PathBuf, UntrustedReason> {
    let path = checked_absolute(&path.to_string_lossy())?;
    if cfg.require_root_owned {
        walk_trusted(cfg, &path, Want::Executable)
    } else {
        plain_check(&path)
    }
}

/// What the end of a trusted walk must be.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    Executable,
    Directory,
    /// A regular file or a directory, whatever its mode bits for execution.
    FileOrDirectory,
}

/// See [`crate::trusted_path`].
pub(crate) fn trusted_path(
    person_uid: Option<u32>,
    path: &Path,
) -> Result<PathBuf, UntrustedReason> {
    if !path.is_absolute() {
        return Err(UntrustedReason::RelativePath);
    }
    let cfg = ExecConfig {
        require_root_owned: true,
        person_uid,
        ..ExecConfig::default()
    };
    walk_trusted(&cfg, path, Want::FileOrDirectory)
}

/// See [`crate::Executor::check_directory`].
pub(crate) fn check_directory(cfg: &ExecConfig, dir: &Path) -> Result<PathBuf, UntrustedReason> {
    if !dir.is_absolute() {
        return Err(UntrustedReason::RelativePath);
    }
    if cfg.require_root_owned {
        return walk_trusted(cfg, dir, Want::Directory);
    }
    let real = dir.canonicalize().map_err(|e| uninspectable(dir, &e))?;
    if real.is_dir() {
        Ok(real)
    } else {
        Err(UntrustedReason::Uninspectable {
            path: real,
            error: std::io::ErrorKind::NotADirectory,
        })
    }
}

/// Walk `path` from `/`, following links by hand; every directory and the final file must be
/// owned by root or the person and not writable by group or others. Returns the real path.
fn walk_trusted(cfg: &ExecConfig, path: &Path, want: Want) -> Result<PathBuf, UntrustedReason> {
    let root = PathBuf::from("/");
    let meta = std::fs::symlink_metadata(&root).map_err(|e| uninspectable(&root, &e))?;
    check_owner_mode(cfg, &root, &meta)?;

    let mut pending: VecDeque<OsString> = normal_components(path);
    let mut current = root;
    let mut links = 0usize;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            // Every ancestor of `current` was checked on the way in.
            current.pop();
            continue;
        }
        let next = current.join(&part);
        let meta = std::fs::symlink_metadata(&next).map_err(|e| uninspectable(&next, &e))?;
        // In a root-owned sticky directory (passed through below, however it was reached: a
        // name, a link's relative target, a `..`) the entry must be owned by root or the person,
        // whatever it is: its owner alone may rename, remove or (for a link) have chosen it.
        let in_sticky = std::fs::symlink_metadata(&current).is_ok_and(|m| is_root_sticky_dir(&m));
        if in_sticky {
            check_owner(cfg, &next, &meta)?;
        }
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_SYMLINKS {
                return Err(UntrustedReason::TooManySymlinks);
            }
            // The link lives in `current`, already checked; its target takes its place.
            let target = std::fs::read_link(&next).map_err(|e| uninspectable(&next, &e))?;
            if target.is_absolute() {
                current = PathBuf::from("/");
            }
            for (i, c) in normal_components(&target).into_iter().enumerate() {
                pending.insert(i, c);
            }
            continue;
        }
        if !pending.is_empty() && is_root_sticky_dir(&meta) {
            // Passed through only; its entry is checked on the next step.
            current = next;
            continue;
        }
        check_owner_mode(cfg, &next, &meta)?;
        if pending.is_empty() {
            let fits = match want {
                Want::Executable => meta.is_file() && meta.mode() & 0o111 != 0,
                Want::Directory => meta.is_dir(),
                Want::FileOrDirectory => meta.is_file() || meta.is_dir(),
            };
            if fits {
                return Ok(next);
            }
            return Err(match want {
                Want::Directory => UntrustedReason::Uninspectable {
                    path: next,
                    error: std::io::ErrorKind::NotADirectory,
                },
                Want::FileOrDirectory => UntrustedReason::NotFileOrDirectory { path: next },
                Want::Executable => UntrustedReason::NotExecutable { path: next },
            });
        }
        if !meta.is_dir() {
            return Err(UntrustedReason::Uninspectable {
                path: next,
                error: std::io::ErrorKind::NotADirectory,
            });
        }
        current = next;
    }
    // Ended by a trailing `..`: `current` may be a sticky directory only passed through so far.
    let meta = std::fs::symlink_metadata(&current).map_err(|e| uninspectable(&current, &e))?;
    check_owner_mode(cfg, &current, &meta)?;
    if want != Want::Executable {
        return Ok(current);
    }
    Err(UntrustedReason::NotExecutable { path: current })
}

/// A directory owned by root with the sticky bit: only an entry's owner (or root) may rename or
/// remove it. Group or other write bits are what it is for.
fn is_root_sticky_dir(meta: &Metadata) -> bool {
    meta.is_dir() && meta.uid() == 0 && meta.mode() & 0o1000 != 0
}

/// The components of a path as names, with `..` kept (as the literal `..`) and `/`, `.` dropped.
fn normal_components(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_owned()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

pub(crate) fn check_owner_mode(
    cfg: &ExecConfig,
    path: &Path,
    meta: &Metadata,
) -> Result<(), UntrustedReason> {
    let judged = check_owner(cfg, path, meta).and_then(|()| {
        if meta.mode() & 0o022 != 0 {
            return Err(UntrustedReason::WritableByOthers {
                path: path.to_owned(),
                mode: meta.mode(),
            });
        }
        Ok(())
    });
    // A file refused now stays refused while it is the same inode: a descriptor another user
    // opened while it was theirs to write outlives the fix of its mode (`once_open.rs`).
    match judged {
        Err(e) => {
            crate::once_open::remember(meta);
            Err(e)
        }
        Ok(()) if crate::once_open::was_open_to_others(meta) => {
            Err(UntrustedReason::WasOpenToOthers {
                path: path.to_owned(),
            })
        }
        Ok(()) => Ok(()),
    }
}

/// Owned by root or the person.
fn check_owner(cfg: &ExecConfig, path: &Path, meta: &Metadata) -> Result<(), UntrustedReason> {
    let uid = meta.uid();
    if uid != 0 && cfg.person_uid != Some(uid) {
        return Err(match cfg.person_uid {
            Some(person) if person != 0 => UntrustedReason::NotTrustedOwner {
                path: path.to_owned(),
                uid,
                person,
            },
            _ => UntrustedReason::NotRootOwned {
                path: path.to_owned(),
                uid,
            },
        });
    }
    Ok(())
}

fn uninspectable(path: &Path, e: &std::io::Error) -> UntrustedReason {
    UntrustedReason::Uninspectable {
        path: path.to_owned(),
        error: e.kind(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dirs: &[&str]) -> ExecConfig {
        ExecConfig {
            search_dirs: dirs.iter().map(PathBuf::from).collect(),
            ..ExecConfig::default()
        }
    }

    #[test]
    fn relative_paths_are_refused() {
        let c = cfg(&["/usr/bin"]);
        for p in [
            "./printf",
            "bin/printf",
            "/usr/bin/../bin/printf",
            "/usr/./bin/printf",
        ] {
            let e = resolve(&c, p).unwrap_err();
            assert!(
                matches!(
                    e,
                    ExecError::Untrusted {
                        reason: UntrustedReason::RelativePath,
                        ..
                    }
                ),
                "{p}: {e}"
            );
        }
    }

    #[test]
    fn the_inherited_path_is_ignored() {
        // `printf` exists in /usr/bin, but the only search directory is /etc.
        let e = resolve(&cfg(&["/etc"]), "printf").unwrap_err();
        assert_eq!(e.kind(), "not_installed");
    }

    #[test]
    fn first_directory_wins_and_links_are_followed() {
        let p = resolve(&cfg(&["/usr/local/bin", "/usr/bin"]), "printf").unwrap();
        assert_eq!(p, Path::new("/usr/bin/printf").canonicalize().unwrap());
    }
}

//! What crosses privilege in a hand-off is root's alone.
//!
//! Class (attack 5b, F1 and F4): *an input that decides what runs as root comes from a place the
//! person's uid can write* — the agent runs as that uid. `sudo` itself, the program sudo runs,
//! the terminal and the helper that take the password, and pacman's configuration (its
//! downloader, hooks, repositories, root) are therefore taken only from places **root-owned all
//! the way**: the file and every directory up to `/` (symbolic links followed, each hop checked)
//! owned by root and writable by neither group nor others (a root-owned sticky directory such as
//! `/tmp` may be passed through to a root-owned entry). Programs are looked up only in
//! [`DIRS`] — never `$OMARCHY_PATH/bin`, never a directory of the person's — and shown by the
//! absolute path that was checked: `/usr/bin/sudo -k -- /usr/bin/pacman …`.

use archgate_core::exec::{ExecConfig, Executor};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where a privileged program (and the terminal that takes the password) is looked up.
pub const DIRS: &[&str] = &["/usr/bin", "/usr/sbin"];

/// An executor that trusts root alone and searches only [`DIRS`].
pub fn executor() -> Executor {
    Executor::new(ExecConfig {
        search_dirs: DIRS.iter().map(PathBuf::from).collect(),
        require_root_owned: true,
        person_uid: None,
        ..ExecConfig::default()
    })
}

/// `program` (a name, or an absolute path in [`DIRS`]) as the absolute path it is shown and run
/// by: `DIR/NAME`, root-owned all the way. The reason when it is not.
pub fn program(program: &str) -> Result<PathBuf, String> {
    let exec = executor();
    exec.resolve_program(program).map_err(|e| {
        format!(
            "{program}: {e} (a hand-off runs only root's programs in {})",
            DIRS.join(", ")
        )
    })?;
    let shown = if program.starts_with('/') {
        PathBuf::from(program)
    } else {
        DIRS.iter()
            .map(|d| Path::new(d).join(program))
            .find(|p| p.exists())
            .ok_or_else(|| format!("{program} is not in {}", DIRS.join(", ")))?
    };
    // The path shown is the one checked (a second look at the found file).
    exec.resolve_program(&shown.to_string_lossy())
        .map_err(|e| format!("{}: {e}", shown.display()))?;
    Ok(shown)
}

/// Whether `path` (any file: a configuration, archgate's own binary) is root-owned all the way:
/// the real file owned by root and writable by neither group nor others, and its directory and
/// every one above it as [`Executor::check_directory`] judges under root alone. The real file.
pub fn root_file(path: &Path) -> Result<PathBuf, String> {
    let real = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", real.display()));
    }
    if meta.uid() != 0 || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is owned by uid {} with mode {:o}: only a file root owns and only root can write is used",
            real.display(),
            meta.uid(),
            meta.mode() & 0o7777
        ));
    }
    // Every directory from the path as written and from the real one: a link's own directory too.
    for p in [path, real.as_path()] {
        if let Some(dir) = p.parent() {
            root_dir(dir)?;
        }
    }
    Ok(real)
}

/// Whether directory `dir` and every one above it are root's alone.
pub fn root_dir(dir: &Path) -> Result<PathBuf, String> {
    executor().check_directory(dir).map_err(|e| {
        format!(
            "{}: {e} (only a place root alone can write is used)",
            dir.display()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A directory of someone else than root: the test's own (a normal user), or handed to
    /// nobody when the test runs as root.
    fn persons_dir() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("pacman.conf"), "[options]\n").unwrap();
        std::fs::write(d.path().join("sudo"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            d.path().join("sudo"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        if nix::unistd::geteuid().is_root() {
            let nobody = Some(nix::unistd::Uid::from_raw(65534));
            for p in [
                d.path().to_owned(),
                d.path().join("pacman.conf"),
                d.path().join("sudo"),
            ] {
                nix::unistd::chown(&p, nobody, None).unwrap();
            }
        }
        d
    }

    #[test]
    fn a_persons_file_or_directory_never_decides_what_runs_as_root() {
        let d = persons_dir();
        assert!(root_file(&d.path().join("pacman.conf")).is_err());
        assert!(root_dir(d.path()).is_err());
        // A program outside the root directories is refused even by absolute path.
        let e = program(&d.path().join("sudo").to_string_lossy()).unwrap_err();
        assert!(e.contains("/usr/bin"), "{e}");
    }

    #[test]
    fn sudo_is_shown_by_the_absolute_path_checked() {
        // The test dependencies install sudo (scripts/test-deps.sh).
        let p = program("sudo").unwrap();
        assert!(p.is_absolute() && p.ends_with("sudo"), "{}", p.display());
        assert!(DIRS.iter().any(|d| p.starts_with(d)), "{}", p.display());
        assert!(root_file(&p).is_ok());
    }
}

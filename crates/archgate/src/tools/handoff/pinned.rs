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
/// walked from `/` one component and one link at a time (`archgate_exec::trusted_path` under root
/// alone), every directory, every link followed and the file itself root's and writable by
/// neither group nor others — whoever controls any hop chooses the file. The real file.
pub fn root_file(path: &Path) -> Result<PathBuf, String> {
    let real = archgate_core::exec::trusted_path(None, path).map_err(|e| {
        format!(
            "{}: {e} (only a file root owns all the way, and only root can write, is used)",
            path.display()
        )
    })?;
    if !real.is_file() {
        return Err(format!("{} is not a regular file", real.display()));
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
        assert!(
            DIRS.iter().any(|d| p == Path::new(d).join("sudo")),
            "{}",
            p.display()
        );
        // The file used is the real one the walk reached, the same the kernel would open.
        assert_eq!(root_file(&p).unwrap(), p.canonicalize().unwrap());
    }

    #[test]
    fn a_link_the_person_controls_never_leads_to_a_root_file() {
        // A link in the person's directory to root's own sudo: the hop is the person's, who
        // could point it anywhere between the check and the use.
        let d = persons_dir();
        let link = d.path().join("to-sudo");
        std::os::unix::fs::symlink(program("sudo").unwrap(), &link).unwrap();
        let e = root_file(&link).unwrap_err();
        assert!(e.contains("owned by uid"), "{e}");
    }
}

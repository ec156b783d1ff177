//! Running instances, so `archgate reload` can reach them: each serving process keeps a file
//! named by its pid in `$XDG_RUNTIME_DIR/archgate/instances/`, removed when it stops.

use std::path::{Path, PathBuf};

pub struct Registration {
    file: PathBuf,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
    }
}

fn dir(runtime_dir: &Path) -> PathBuf {
    runtime_dir.join("instances")
}

pub fn register(runtime_dir: &Path, mode: &str) -> Option<Registration> {
    let d = dir(runtime_dir);
    archgate_core::paths::ensure_private_dir(&d, nix::unistd::getuid().as_raw()).ok()?;
    let file = d.join(std::process::id().to_string());
    // Never through a link planted at the predictable name (`paths::write_private_file`).
    archgate_core::paths::write_private_file(&file, mode.as_bytes()).ok()?;
    Some(Registration { file })
}

/// Pids of live instances (stale files are removed).
pub fn live(runtime_dir: &Path) -> Vec<i32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir(runtime_dir)) else {
        return out;
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok() {
            out.push(pid);
        } else {
            let _ = std::fs::remove_file(e.path());
        }
    }
    out
}

/// How many live instances serve stdio in their own process (not through the daemon).
pub fn in_process(runtime_dir: &Path) -> usize {
    live(runtime_dir)
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(dir(runtime_dir).join(pid.to_string()))
                .is_ok_and(|m| m.trim() == "stdio")
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Class: archgate's own state trusted by its path. A link planted at this process's
    /// registration name (a pid: predictable) is replaced, never written through.
    #[test]
    fn a_registration_is_never_written_through_a_planted_link() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::write(&victim, "mine").unwrap();
        let d = dir(t.path());
        archgate_core::paths::ensure_private_dir(&d, nix::unistd::getuid().as_raw()).unwrap();
        std::os::unix::fs::symlink(&victim, d.join(std::process::id().to_string())).unwrap();
        let r = register(t.path(), "http").expect("registered");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(&r.file).unwrap(), "http");
        assert_eq!(live(t.path()), vec![std::process::id() as i32]);
    }
}

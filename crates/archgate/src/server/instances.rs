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

/// Pids of live instances (stale files are removed); see [`live_checked`].
pub fn live(runtime_dir: &Path) -> Vec<i32> {
    live_checked(runtime_dir).unwrap_or_default()
}

/// Pids of live archgate instances of this user, judged at each read (attack 14 F6; class:
/// *archgate's own state trusted by its path*, its CLI side): the `instances/` directory must
/// be archgate's own ([`archgate_core::paths::untrusted_dir`], `Err` with why otherwise), each
/// entry a regular file of this uid no one else may write (never a link), and each pid a live
/// process of this uid running this very program (`/proc/PID/exe` is `/proc/self/exe`) — so a
/// file another user names after one of the person's processes never has it signalled.
pub fn live_checked(runtime_dir: &Path) -> Result<Vec<i32>, String> {
    let d = dir(runtime_dir);
    let uid = nix::unistd::getuid().as_raw();
    if !d.exists() {
        return Ok(Vec::new());
    }
    if let Some(why) = archgate_core::paths::untrusted_dir(&d, uid) {
        return Err(why);
    }
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(&d) else {
        return Ok(out);
    };
    for e in rd.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if pid <= 0 || archgate_core::paths::open_private(&e.path()).is_err() {
            continue;
        }
        if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
            let _ = std::fs::remove_file(e.path());
        } else if ours(pid, uid) {
            out.push(pid);
        }
    }
    Ok(out)
}

/// Whether `pid` is a process of `uid` running the same program as this process.
fn ours(pid: i32, uid: u32) -> bool {
    use std::os::unix::fs::MetadataExt;
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let Ok(m) = std::fs::metadata(&proc_dir) else {
        return false;
    };
    if m.uid() != uid {
        return false;
    }
    let exe = |p: &Path| {
        std::fs::read_link(p).ok().map(|l| {
            let s = l.to_string_lossy().into_owned();
            s.strip_suffix(" (deleted)").map(str::to_owned).unwrap_or(s)
        })
    };
    match (exe(&proc_dir.join("exe")), exe(Path::new("/proc/self/exe"))) {
        (Some(theirs), Some(mine)) => theirs == mine,
        _ => false,
    }
}

/// How many live instances serve stdio in their own process (not through the daemon).
pub fn in_process(runtime_dir: &Path) -> usize {
    live(runtime_dir)
        .into_iter()
        .filter(|pid| {
            archgate_core::paths::open_private(&dir(runtime_dir).join(pid.to_string()))
                .and_then(std::io::read_to_string)
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

    /// Class: archgate's own state trusted by its path (attack 14 F6). `reload` signals only
    /// archgate processes of this user named in a directory of archgate's own: not a pid named
    /// by a file others may write, not a process running another program, and nothing at all
    /// from an `instances/` directory whose chain another user may write.
    #[test]
    fn only_archgates_of_this_user_in_a_trusted_directory_are_live() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let rt = t.path().join("rt");
        let _r = register(&rt, "http").expect("registered");
        let me = std::process::id() as i32;
        assert_eq!(live_checked(&rt), Ok(vec![me]));

        // The test runner that started this process: the person's, live, another program.
        let other = nix::unistd::getppid().as_raw();
        let d = dir(&rt);
        let named = d.join(other.to_string());
        archgate_core::paths::write_private_file(&named, b"http").unwrap();
        assert_eq!(
            live_checked(&rt),
            Ok(vec![me]),
            "another program is not archgate"
        );
        std::fs::remove_file(&named).unwrap();

        std::fs::set_permissions(
            d.join(me.to_string()),
            std::fs::Permissions::from_mode(0o666),
        )
        .unwrap();
        assert_eq!(live_checked(&rt), Ok(vec![]), "an entry others may write");
        std::fs::set_permissions(
            d.join(me.to_string()),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();

        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = live_checked(&rt).unwrap_err();
        assert!(why.contains("writable"), "{why}");
        assert!(live(&rt).is_empty());
        std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

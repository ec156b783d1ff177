//! archgate's own files, used only when they are archgate's (attack 10 F1; class: *archgate's own
//! state — standing rules, acknowledgements, token and clients, the log, tasks — trusted by its
//! path*). Whoever controls any hop to the state directory (a parent another user may write) can
//! swap the directory for one of theirs, whose standing rules would approve, whose token would
//! authenticate, and whose links archgate would write through. So a directory is judged like the
//! config's chain ([`untrusted_dir`]), a file that decides a yes is read only as archgate's own
//! ([`read_private_file`], [`open_private`]), and nothing is written into a directory that fails
//! or through a link ([`write_private_file`]).

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Why `dir` may not hold archgate's private state: `None` when every hop from `/` to it — each
/// directory, each link — is owned by root or `uid` and writable by no one else (a root sticky
/// directory such as `/tmp` only passed through), and `dir` itself is `uid`'s (others may read
/// a directory; only writing would let them swap what is in it). Judged at start
/// (`Paths::prepare`) and again wherever state that decides approvals or authentication is
/// read ([`read_private_file`]) or any private file is written ([`write_private_file`]).
pub fn untrusted_dir(dir: &Path, uid: u32) -> Option<String> {
    let real = match archgate_exec::trusted_path(Some(uid), dir) {
        Ok(real) => real,
        Err(why) => return Some(format!("{} is not trusted: {why}", dir.display())),
    };
    match fs::symlink_metadata(&real) {
        Ok(m) if !m.is_dir() => Some(format!("{} is not a directory", real.display())),
        Ok(m) if m.uid() != uid => Some(format!(
            "{} is owned by uid {}, not by you (uid {uid})",
            real.display(),
            m.uid()
        )),
        Ok(_) => None,
        Err(e) => Some(format!("cannot inspect {}: {e}", real.display())),
    }
}

/// Opens archgate's own file `path` for reading: never through a link (`O_NOFOLLOW`, and
/// `O_NONBLOCK` so a FIFO in its place cannot hang the reader), and only a regular file of this
/// process's uid that no one else may write (judged on the descriptor) — for the log and the
/// runtime directory's files, read by path where [`read_private_file`] is not (`PermissionDenied`
/// otherwise; `NotFound` when there is none).
pub fn open_private(path: &Path) -> io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() || m.uid() != nix::unistd::getuid().as_raw() || m.mode() & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not archgate's own file (a regular file of this uid no one else may write)",
                path.display()
            ),
        ));
    }
    Ok(f)
}

/// The most a private state file read here may hold (a bigger one is refused, not read).
pub const PRIVATE_FILE_MAX: u64 = 16 << 20;

/// Reads archgate's private file `path` only when it is archgate's: its directory passes
/// [`untrusted_dir`], and the file — opened without following a link, judged on what was opened
/// — is a regular file owned by `uid`, writable by no one else. `Ok(None)`: there is no file.
/// `Err(why)`: something is there that may not be used (say so; never read it as absent when
/// it decides a yes).
pub fn read_private_file(path: &Path, uid: u32) -> Result<Option<Vec<u8>>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(why) = untrusted_dir(dir, uid) {
        return Err(why);
    }
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK).bits())
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Err(format!(
                "{} is a symbolic link; archgate's private files are never read through one",
                path.display()
            ));
        }
        Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
    };
    let m = file
        .metadata()
        .map_err(|e| format!("cannot inspect {}: {e}", path.display()))?;
    if !m.is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if m.uid() != uid || m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is owned by uid {} with mode {:o}: not a file only you (uid {uid}) can change",
            path.display(),
            m.uid(),
            m.mode() & 0o7777
        ));
    }
    if m.len() > PRIVATE_FILE_MAX {
        return Err(format!(
            "{} is {} bytes, more than archgate's {PRIVATE_FILE_MAX}",
            path.display(),
            m.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(PRIVATE_FILE_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(Some(bytes))
}

/// Writes `bytes` to `path` with mode 0600 through a temporary file and a rename, so a reader
/// never sees half a file and a crash leaves the old one. Refused (`PermissionDenied`) when the
/// directory is not archgate's ([`untrusted_dir`], judged for this process's uid): nothing is
/// written into a directory another user controls. The temporary file has an unpredictable name
/// and is created new, never through a link (`O_EXCL|O_NOFOLLOW`): a link planted at a
/// predictable name would have had archgate write the person's file.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(why) = untrusted_dir(dir, nix::unistd::getuid().as_raw()) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
    }
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|e| io::Error::other(e.to_string()))?;
    let tmp = dir.join(format!(
        ".{}.tmp{}.{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id(),
        hex::encode(nonce)
    ));
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(&tmp)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, path)) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Class: archgate's own state trusted by its path. A link planted at the temporary name
    /// archgate used to use (`.NAME.tmpPID`) is never written through, and a directory others
    /// may write is not written into at all.
    #[test]
    fn private_files_are_never_written_through_a_link_or_into_a_directory_others_control() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("state");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let victim = t.path().join("bashrc");
        fs::write(&victim, "mine").unwrap();
        std::os::unix::fs::symlink(
            &victim,
            dir.join(format!(".rules.json.tmp{}", std::process::id())),
        )
        .unwrap();
        write_private_file(&dir.join("rules.json"), b"[]").unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "mine");
        assert_eq!(fs::read(dir.join("rules.json")).unwrap(), b"[]");

        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = write_private_file(&dir.join("rules.json"), b"[1]").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        assert_eq!(fs::read(dir.join("rules.json")).unwrap(), b"[]");
        // Its parent writable by others is as bad: whoever may rename the directory swaps it.
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o777)).unwrap();
        assert!(write_private_file(&dir.join("rules.json"), b"[1]").is_err());
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o700)).unwrap();
    }

    /// Only archgate's own file is read: not through a link, not one others may write, not one
    /// in a directory others control; a missing file is `None`, never an error.
    #[test]
    fn private_files_are_read_only_when_they_are_archgates() {
        let t = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let dir = t.path().join("state");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        let f = dir.join("rules.json");
        assert_eq!(read_private_file(&f, uid), Ok(None));
        fs::write(&f, "[]").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_private_file(&f, uid), Ok(Some(b"[]".to_vec())));
        fs::set_permissions(&f, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_private_file(&f, uid).is_err(), "writable by others");
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        assert!(read_private_file(&f, uid + 1).is_err(), "another uid's");
        let other = t.path().join("planted.json");
        fs::write(&other, "[]").unwrap();
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&other, &link).unwrap();
        let why = read_private_file(&link, uid).unwrap_err();
        assert!(why.contains("symbolic link"), "{why}");
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o777)).unwrap();
        let why = read_private_file(&f, uid).unwrap_err();
        assert!(why.contains("writable"), "{why}");
        fs::set_permissions(t.path(), fs::Permissions::from_mode(0o700)).unwrap();
    }

    /// The log and the runtime directory's files are opened only as archgate's own: not through
    /// a link, not another's file or one others may write, and a FIFO is refused, not waited on.
    #[test]
    fn own_files_are_opened_never_through_a_link_or_a_fifo() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("activity.jsonl");
        fs::write(&f, "x\n").unwrap();
        assert!(open_private(&f).is_ok());
        fs::set_permissions(&f, fs::Permissions::from_mode(0o622)).unwrap();
        assert_eq!(
            open_private(&f).unwrap_err().kind(),
            io::ErrorKind::PermissionDenied
        );
        let link = t.path().join("link.jsonl");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(open_private(&link).is_err());
        let fifo = t.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(open_private(&fifo).is_err());
        assert_eq!(
            open_private(&t.path().join("none")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }
}

//! archgate's own files, used only when they are archgate's (attack 10 F1; class: *archgate's own
//! state — standing rules, acknowledgements, token and clients, the log, tasks — trusted by its
//! path*). Whoever controls any hop to the state directory (a parent another user may write) can
//! swap the directory for one of theirs, whose standing rules would approve, whose token would
//! authenticate, and whose links archgate would write through. So a directory is judged like the
//! config's chain ([`untrusted_dir`]), a file that decides a yes is read only as archgate's own
//! ([`read_private_file`], [`open_private`]), and nothing is written into a directory that fails
//! or through a link ([`write_private_file`]).
//!
//! The helpers themselves live in `archgate_exec::own_file`, where the cache writers of the
//! other crates reach them too; this module is their name inside `archgate-core`.

pub use archgate_exec::own_file::{
    OwnDir, PRIVATE_FILE_MAX, lock_own_file, open_private, read_private_file, untrusted_dir,
    write_private_file, write_private_file_creating,
};

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io;
    use std::os::unix::fs::PermissionsExt;

    /// A directory of archgate's own (0700) under `parent`.
    fn own_dir(parent: &std::path::Path) -> std::path::PathBuf {
        let dir = parent.join("state");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    /// Class: archgate's own state trusted by its path. A link planted at the temporary name
    /// archgate used to use (`.NAME.tmpPID`) is never written through, and a directory others
    /// may write is not written into at all.
    #[test]
    fn private_files_are_never_written_through_a_link_or_into_a_directory_others_control() {
        let t = tempfile::tempdir().unwrap();
        let dir = own_dir(t.path());
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
        let dir = own_dir(t.path());
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

    /// Attack 34 F2 (class: *trust judged from today's mode, while write access granted earlier
    /// outlives it*): a state file archgate refused as others-writable, fixed with `chmod`, is
    /// still refused while it is the same inode — a descriptor opened in the window writes it
    /// still (a stranger's standing rule approved calls) — and archgate's own rewrite, a new
    /// file moved over it, is read again.
    #[test]
    fn a_state_file_once_open_to_others_is_refused_until_it_is_replaced() {
        use std::io::Write;
        let t = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let dir = own_dir(t.path());
        let f = dir.join("standing-rules.json");
        fs::write(&f, "[]").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_private_file(&f, uid).is_err());
        let mut held = fs::OpenOptions::new().write(true).open(&f).unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        let why = read_private_file(&f, uid).unwrap_err();
        assert!(why.contains("was writable by another user"), "{why}");
        held.write_all(b"[{\"planted\":1}]").unwrap();
        assert!(read_private_file(&f, uid).is_err());
        assert!(open_private(&f).is_err());
        write_private_file(&f, b"[]").unwrap();
        assert_eq!(read_private_file(&f, uid), Ok(Some(b"[]".to_vec())));
        held.write_all(b"more").unwrap();
        assert_eq!(read_private_file(&f, uid), Ok(Some(b"[]".to_vec())));
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

    /// The lock a change to archgate's shared files holds (`clients.lock`, `standing-rules.lock`)
    /// is taken only as archgate's own file: not through a link planted at its name (whose
    /// target stays untouched), not in a directory others may write; taken, it is held.
    #[test]
    fn a_change_lock_is_taken_only_as_archgates_own_file() {
        let t = tempfile::tempdir().unwrap();
        let dir = own_dir(t.path());
        let victim = t.path().join("bashrc");
        fs::write(&victim, "mine").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("planted.lock")).unwrap();
        assert!(lock_own_file(&dir, "planted.lock".as_ref()).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "mine");

        let held = lock_own_file(&dir, "clients.lock".as_ref()).unwrap();
        let again = fs::File::open(dir.join("clients.lock")).unwrap();
        assert!(matches!(
            nix::fcntl::Flock::lock(again, nix::fcntl::FlockArg::LockExclusiveNonblock),
            Err((_, nix::errno::Errno::EWOULDBLOCK))
        ));
        drop(held);

        fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
        let err = lock_own_file(&dir, "clients.lock".as_ref()).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{err}");
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
    }
}

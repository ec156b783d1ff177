//! archgate's own files — its state, runtime and cache directories — written and read only as
//! archgate's (attack 10 F1, attack 14 F7/F8). Class: *a file written at a path judged once, or
//! at a predictable name, follows whatever is there at write time*. Whoever controls any hop to
//! one of those directories (a parent another user may write, now or later) can swap it for a
//! directory of theirs, or plant a link at a name archgate is known to use; archgate would then
//! write the person's file of their choosing, or its records into theirs. So every writer goes
//! through [`OwnDir`]: the directory is judged *when it is written* ([`untrusted_dir`]: the whole
//! chain, owner = this uid, writable by no one else), held open as a descriptor matched to what
//! was judged, and a file is created in it under an unpredictable name with
//! `O_CREAT|O_EXCL|O_NOFOLLOW` and renamed into place through that descriptor. Here rather than
//! in `archgate-core` because the cache writers (`archgate-pacman`, `archgate-aur`,
//! `archgate-wiki`) use it too, and the chain judge ([`crate::trusted_path`]) lives here.

use std::ffi::OsStr;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

/// Why `dir` may not hold archgate's own files: `None` when every hop from `/` to it — each
/// directory, each link — is owned by root or `uid` and writable by no one else (a root sticky
/// directory such as `/tmp` only passed through), and `dir` itself is `uid`'s (others may read
/// a directory; only writing would let them swap what is in it). Judged at start
/// (`Paths::prepare`) and again at every write ([`OwnDir::open`]) and every read of state that
/// decides a yes ([`read_private_file`]).
pub fn untrusted_dir(dir: &Path, uid: u32) -> Option<String> {
    judge(dir, uid).err()
}

/// The real path of a trusted `dir` and its metadata, or why not.
fn judge(dir: &Path, uid: u32) -> Result<(PathBuf, fs::Metadata), String> {
    let real = match crate::trusted_path(Some(uid), dir) {
        Ok(real) => real,
        Err(why) => return Err(format!("{} is not trusted: {why}", dir.display())),
    };
    match fs::symlink_metadata(&real) {
        Ok(m) if !m.is_dir() => Err(format!("{} is not a directory", real.display())),
        Ok(m) if m.uid() != uid => Err(format!(
            "{} is owned by uid {}, not by you (uid {uid})",
            real.display(),
            m.uid()
        )),
        Ok(m) => Ok((real, m)),
        Err(e) => Err(format!("cannot inspect {}: {e}", real.display())),
    }
}

fn denied(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, why)
}

fn nix_io(e: nix::errno::Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// A directory of archgate's own, judged and held open: what is written through it lands in the
/// directory that was judged, whatever is renamed over its path afterwards.
#[derive(Debug)]
pub struct OwnDir {
    fd: fs::File,
    path: PathBuf,
}

impl OwnDir {
    /// Opens `dir` and judges it for this process's uid ([`untrusted_dir`]); the descriptor
    /// must be the directory that was judged (same device and inode), so a swap between the
    /// open and the judgement is refused too. `PermissionDenied` with the reason otherwise.
    pub fn open(dir: &Path) -> io::Result<OwnDir> {
        use std::os::unix::fs::OpenOptionsExt;
        let uid = nix::unistd::getuid().as_raw();
        let fd = fs::OpenOptions::new()
            .read(true)
            .custom_flags((OFlag::O_DIRECTORY | OFlag::O_CLOEXEC).bits())
            .open(dir)?;
        let (_, judged) = judge(dir, uid).map_err(denied)?;
        let held = fd.metadata()?;
        if held.dev() != judged.dev() || held.ino() != judged.ino() {
            return Err(denied(format!(
                "{} was replaced while archgate judged it",
                dir.display()
            )));
        }
        Ok(OwnDir {
            fd,
            path: dir.to_owned(),
        })
    }

    /// Creates `dir` and its missing parents (0700) and opens it as [`OwnDir::open`] does: a
    /// directory that exists but fails the judgement is refused, not used.
    pub fn create(dir: &Path) -> io::Result<OwnDir> {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        OwnDir::open(dir)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` as `name` (mode 0600) whole or not at all: a new file of an unpredictable
    /// name, created with `O_EXCL|O_NOFOLLOW` in the held directory, synced, then renamed over
    /// `name` there. A link or anything else planted at any name is never written through.
    pub fn write(&self, name: &OsStr, bytes: &[u8]) -> io::Result<()> {
        self.write_mode(name, bytes, 0o600)
    }

    /// [`OwnDir::write`] with the file's mode (never writable by group or others: `mode` is
    /// masked with 0o755), for a file another program of the person's runs (a plugin script).
    pub fn write_mode(&self, name: &OsStr, bytes: &[u8], mode: u32) -> io::Result<()> {
        use std::io::Write;
        let name = plain_name(name)?;
        let mut nonce = [0u8; 12];
        getrandom::fill(&mut nonce).map_err(|e| io::Error::other(e.to_string()))?;
        let tmp = format!(
            ".{}.tmp.{}",
            name.to_string_lossy(),
            nonce.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let fd = nix::fcntl::openat(
            &self.fd,
            tmp.as_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(nix_io)?;
        let mut f = fs::File::from(fd);
        let written = f
            .write_all(bytes)
            .and_then(|()| {
                use std::os::unix::fs::PermissionsExt;
                f.set_permissions(fs::Permissions::from_mode(mode & 0o755))
            })
            .and_then(|()| f.sync_all());
        drop(f);
        let renamed = written.and_then(|()| {
            nix::fcntl::renameat(&self.fd, tmp.as_str(), &self.fd, name).map_err(nix_io)
        });
        if let Err(e) = renamed {
            let _ = nix::unistd::unlinkat(
                &self.fd,
                tmp.as_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
            return Err(e);
        }
        Ok(())
    }

    /// Opens `name` in the held directory for appending, creating it (0600) when missing; never
    /// through a link, and only a regular file of this uid no one else may write (judged on the
    /// descriptor): another's file at that name is refused, not appended to.
    pub fn open_append(&self, name: &OsStr) -> io::Result<fs::File> {
        self.open_own(name, OFlag::O_WRONLY | OFlag::O_APPEND)
    }

    /// As [`OwnDir::open_append`], and readable too: a log's writer reads its last byte through
    /// the very descriptor it appends to, never by the name, which another process may have
    /// rotated away in between.
    pub fn open_append_read(&self, name: &OsStr) -> io::Result<fs::File> {
        self.open_own(name, OFlag::O_RDWR | OFlag::O_APPEND)
    }

    /// Opens `name` in the held directory for reading and writing (a lock file), creating it
    /// (0600) when missing, never truncated; judged as [`OwnDir::open_append`] judges.
    pub fn open_lock(&self, name: &OsStr) -> io::Result<fs::File> {
        self.open_own(name, OFlag::O_RDWR)
    }

    fn open_own(&self, name: &OsStr, how: OFlag) -> io::Result<fs::File> {
        let name = plain_name(name)?;
        let fd = nix::fcntl::openat(
            &self.fd,
            name,
            how | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(nix_io)?;
        let f = fs::File::from(fd);
        own_regular(&f, &self.path.join(name))?;
        Ok(f)
    }

    /// Renames `from` to `to`, both in the held directory.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        nix::fcntl::renameat(&self.fd, plain_name(from)?, &self.fd, plain_name(to)?).map_err(nix_io)
    }
}

/// A single path component: the helper never walks out of the directory it judged.
fn plain_name(name: &OsStr) -> io::Result<&OsStr> {
    let p = Path::new(name);
    let mut parts = p.components();
    match (parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(n)), None) => Ok(n),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a plain file name", p.display()),
        )),
    }
}

/// `f` is a regular file of this uid that no one else may write (`PermissionDenied` otherwise).
fn own_regular(f: &fs::File, path: &Path) -> io::Result<()> {
    let m = f.metadata()?;
    if !m.is_file() || m.uid() != nix::unistd::getuid().as_raw() || m.mode() & 0o022 != 0 {
        crate::once_open::remember(&m);
        return Err(denied(format!(
            "{} is not archgate's own file (a regular file of this uid no one else may write)",
            path.display()
        )));
    }
    if crate::once_open::was_open_to_others(&m) {
        return Err(denied(format!(
            "{} was writable by another user when archgate looked earlier, and a descriptor opened then can still write it; {}",
            path.display(),
            crate::once_open::replace_hint(path)
        )));
    }
    Ok(())
}

/// Takes, waiting for it, the exclusive `flock` on lock file `name` in archgate's own `dir` —
/// the lock every archgate process takes for one change to the files beside it (class:
/// *read-modify-write of shared state without a lock across the processes that write it*).
/// `dir` is judged now ([`OwnDir::open`]: `PermissionDenied` when it is not archgate's) and the
/// file opened as [`OwnDir::open_lock`] opens it: never through a link, never another's file.
pub fn lock_own_file(dir: &Path, name: &OsStr) -> io::Result<nix::fcntl::Flock<fs::File>> {
    let file = OwnDir::open(dir)?.open_lock(name)?;
    nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive).map_err(|(_, e)| nix_io(e))
}

/// Writes `bytes` to `path` with mode 0600 through [`OwnDir::write`] in `path`'s directory,
/// judged now: refused (`PermissionDenied`) when that directory is not archgate's.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = split(path)?;
    OwnDir::open(dir)?.write(name, bytes)
}

/// As [`write_private_file`], creating the directory (0700, with its parents) when missing —
/// for caches, whose subdirectories come and go.
pub fn write_private_file_creating(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = split(path)?;
    OwnDir::create(dir)?.write(name, bytes)
}

fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names no file", path.display()),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Ok((dir, name))
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
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
        .open(path)?;
    own_regular(&f, path)?;
    Ok(f)
}

/// The most a private state file read here may hold (a bigger one is refused, not read).
pub const PRIVATE_FILE_MAX: u64 = 16 << 20;

/// [`read_private_file`] for this process's uid.
pub fn read_own_file(path: &Path) -> Result<Option<Vec<u8>>, String> {
    read_private_file(path, nix::unistd::getuid().as_raw())
}

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
        .custom_flags((OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK).bits())
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
        // Remembered: a descriptor another user opened while they could write it outlives a
        // later `chmod` (attack 34 F2: a stranger's standing rule approved calls after the fix).
        crate::once_open::remember(&m);
        return Err(format!(
            "{} is owned by uid {} with mode {:o}: not a file only you (uid {uid}) can change; {}",
            path.display(),
            m.uid(),
            m.mode() & 0o7777,
            crate::once_open::replace_hint(path)
        ));
    }
    if crate::once_open::was_open_to_others(&m) {
        return Err(format!(
            "{} was writable by another user when archgate looked earlier, and a descriptor opened then can still write it whatever its mode now; {}",
            path.display(),
            crate::once_open::replace_hint(path)
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

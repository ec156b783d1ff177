//! Pins: a file as it was when it was judged — what is approved is what runs.
//!
//! A [`FilePin`] is taken when a call is judged (before the person is asked): the file is opened
//! (without following a last symbolic link), its device and inode noted and, for a regular file,
//! its content digested (SHA-256) through that descriptor. The descriptor is held until the call
//! ends, so the inode cannot be freed and reused under the pin. [`FilePin::check`] asks, at the
//! yes, whether the path still names that very file with that very content: the path still
//! canonical (no component turned into a link), the same device and inode at the path, the same
//! digest read through the held descriptor. Anything else is a [`Change`], refused with the
//! reason.
//!
//! A [`ProgramPin`] is a program's pin plus its interpreter's (the `#!` line of a script, itself a
//! program, resolved and trusted like one), up to the kernel's four levels. The executor checks
//! the whole chain just before it starts the program, and starts it by the pinned path.
//!
//! Why the path and not the descriptor: a script run through `/proc/self/fd/N` sees that as its
//! `$0` and `${BASH_SOURCE[0]}`, and Omarchy's `omarchy` dispatcher finds its own directory with
//! `dirname "${BASH_SOURCE[0]}"`; a binary run that way is named `N` in `ps`, `pgrep` and
//! `pkill -x`, which Omarchy's scripts use to find what they started. What remains: a swap in the
//! moment between the check and `execve` (a few microseconds, by someone who can already write
//! in a trusted directory, i.e. root or the person's own uid). SECURITY.md says so.

use std::fmt;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::config::ExecConfig;
use crate::error::{Change, ExecError, UntrustedReason};

/// Levels of `#!` interpreters the kernel follows (`BINPRM_MAX_RECURSION`).
const MAX_INTERPRETERS: usize = 4;
/// The longest `#!` line the kernel reads (`BINPRM_BUF_SIZE`).
const SHEBANG_MAX: usize = 256;
/// Bytes read at a time while digesting.
const CHUNK: usize = 64 * 1024;
/// Largest file whose content is digested (twice a call: when judged, at the yes). A larger one
/// is pinned by its inode, size and change times, which any write moves.
pub const DIGEST_LIMIT: u64 = 64 * 1024 * 1024;

/// One file as it was when it was judged; see the module documentation.
#[derive(Clone)]
pub struct FilePin {
    path: PathBuf,
    dev: u64,
    ino: u64,
    /// Size, modification and status-change times (seconds, nanoseconds).
    stamp: (u64, i64, i64, i64, i64),
    /// SHA-256 of the content (regular files up to [`DIGEST_LIMIT`]; a directory is pinned by
    /// its inode).
    digest: Option<[u8; 32]>,
    /// Held so the inode cannot be reused while the pin lives.
    file: Arc<File>,
}

impl FilePin {
    /// Pin the file at `path`, which must be absolute and canonical (no symbolic link in it,
    /// which is checked: a link is refused rather than followed).
    pub fn open(path: &Path) -> std::io::Result<FilePin> {
        if !path.is_absolute() || std::fs::canonicalize(path)? != path {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a canonical absolute path",
            ));
        }
        // A device, FIFO or socket is never opened (an open can have effects of its own).
        let kind = std::fs::symlink_metadata(path)?.file_type();
        if !kind.is_file() && !kind.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "neither a regular file nor a directory",
            ));
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)?;
        let meta = file.metadata()?;
        let at_path = std::fs::symlink_metadata(path)?;
        if (at_path.dev(), at_path.ino()) != (meta.dev(), meta.ino()) {
            return Err(std::io::Error::other(
                "the file changed while it was opened",
            ));
        }
        if !meta.is_file() && !meta.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "neither a regular file nor a directory",
            ));
        }
        // A directory, or a file past the limit, is pinned by its inode and stamps alone.
        let digest = if meta.is_file() && meta.len() <= DIGEST_LIMIT {
            Some(digest(&file)?)
        } else {
            None
        };
        Ok(FilePin {
            path: path.to_owned(),
            dev: meta.dev(),
            ino: meta.ino(),
            stamp: stamp(&meta),
            digest,
            file: Arc::new(file),
        })
    }

    /// The pinned path (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The content's SHA-256, lowercase hex (`None` for a directory).
    pub fn sha256(&self) -> Option<String> {
        self.digest
            .map(|d| d.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Whether the path still names the pinned file with the pinned content.
    pub fn check(&self) -> Result<(), Change> {
        let meta = match std::fs::symlink_metadata(&self.path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Change::Removed),
            Err(_) => return Err(Change::Replaced),
        };
        if (meta.dev(), meta.ino()) != (self.dev, self.ino)
            || std::fs::canonicalize(&self.path).ok().as_deref() != Some(&*self.path)
        {
            return Err(Change::Replaced);
        }
        match self.file.metadata() {
            Ok(held) if stamp(&held) == self.stamp => {}
            _ => return Err(Change::Rewritten),
        }
        if let Some(was) = self.digest {
            match digest(&self.file) {
                Ok(now) if now == was => {}
                _ => return Err(Change::Rewritten),
            }
        }
        Ok(())
    }

    /// The metadata of the held descriptor (what was opened, not what the path names now).
    pub fn metadata(&self) -> std::io::Result<std::fs::Metadata> {
        self.file.metadata()
    }

    /// The first bytes of the held file.
    fn head(&self, n: usize) -> Vec<u8> {
        let mut buf = vec![0u8; n];
        let got = self.file.read_at(&mut buf, 0).unwrap_or(0);
        buf.truncate(got);
        buf
    }
}

impl PartialEq for FilePin {
    fn eq(&self, other: &Self) -> bool {
        (&self.path, self.dev, self.ino, self.stamp, self.digest)
            == (&other.path, other.dev, other.ino, other.stamp, other.digest)
    }
}
impl Eq for FilePin {}

impl fmt::Debug for FilePin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilePin")
            .field("path", &self.path)
            .field("dev", &self.dev)
            .field("ino", &self.ino)
            .field("sha256", &self.sha256())
            .finish()
    }
}

fn stamp(m: &std::fs::Metadata) -> (u64, i64, i64, i64, i64) {
    (
        m.len(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    )
}

/// SHA-256 of everything the descriptor reads, from offset 0 (the descriptor's own offset is
/// neither used nor moved).
fn digest(file: &File) -> std::io::Result<[u8; 32]> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0u64;
    loop {
        let n = match file.read_at(&mut buf, at) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        h.update(&buf[..n]);
        at += n as u64;
    }
    Ok(h.finalize().into())
}

/// A program pinned when it was judged, with the interpreter its `#!` line names (pinned too).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ProgramPin {
    file: FilePin,
    /// The path the kernel is given for it: the real path for a program, the `#!` line's path
    /// for an interpreter (which may pass through links); it must still lead to `file`.
    named: PathBuf,
    interpreter: Option<Box<ProgramPin>>,
}

impl ProgramPin {
    /// The program's real path: what runs.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The interpreter a script's `#!` line names, pinned, if it is a script.
    pub fn interpreter(&self) -> Option<&ProgramPin> {
        self.interpreter.as_deref()
    }

    /// The content's SHA-256, lowercase hex.
    pub fn sha256(&self) -> String {
        self.file.sha256().unwrap_or_default()
    }
}

/// Resolve `program` and pin it (and its interpreters); see [`crate::Executor::pin`].
pub(crate) fn pin_program(cfg: &ExecConfig, program: &str) -> Result<ProgramPin, ExecError> {
    let real = crate::resolve::resolve(cfg, program)?;
    pin_file(cfg, real.clone(), real, 0)
}

/// Pin the resolved, trusted file at `real`, then its interpreter.
fn pin_file(
    cfg: &ExecConfig,
    named: PathBuf,
    real: PathBuf,
    depth: usize,
) -> Result<ProgramPin, ExecError> {
    let untrusted = |path: &Path, reason| ExecError::Untrusted {
        path: path.to_owned(),
        reason,
    };
    let file = FilePin::open(&real).map_err(|e| {
        untrusted(
            &real,
            UntrustedReason::Uninspectable {
                path: real.clone(),
                error: e.kind(),
            },
        )
    })?;
    // What was opened is judged again, not only the path walked before it.
    let meta = file.metadata().map_err(|e| {
        untrusted(
            &real,
            UntrustedReason::Uninspectable {
                path: real.clone(),
                error: e.kind(),
            },
        )
    })?;
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        return Err(untrusted(
            &real,
            UntrustedReason::NotExecutable { path: real.clone() },
        ));
    }
    if cfg.require_root_owned {
        crate::resolve::check_owner_mode(cfg, &real, &meta).map_err(|r| untrusted(&real, r))?;
    }
    let interpreter = match shebang(&file.head(SHEBANG_MAX)) {
        None => None,
        Some(_) if depth + 1 >= MAX_INTERPRETERS => {
            return Err(untrusted(&real, UntrustedReason::TooManyInterpreters));
        }
        Some(named) => {
            let named = PathBuf::from(named);
            let resolved = crate::resolve::interpreter(cfg, &named)
                .map_err(|reason| untrusted(&named, reason))?;
            Some(Box::new(pin_file(cfg, named, resolved, depth + 1)?))
        }
    };
    Ok(ProgramPin {
        file,
        named,
        interpreter,
    })
}

/// The interpreter a `#!` line names: the first word after `#!`, as the kernel reads it.
pub(crate) fn shebang(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next().unwrap_or(rest);
    let word: Vec<u8> = line
        .iter()
        .copied()
        .skip_while(|b| *b == b' ' || *b == b'\t')
        .take_while(|b| !matches!(b, b' ' | b'\t' | b'\0' | b'\r'))
        .collect();
    if word.is_empty() {
        return None;
    }
    Some(String::from_utf8_lossy(&word).into_owned())
}

/// Whether the pinned program (and each interpreter) is still the file judged, still trusted
/// where it is: the answer before it starts.
pub(crate) fn verify(cfg: &ExecConfig, pin: &ProgramPin) -> Result<(), ExecError> {
    let mut next = Some(pin);
    while let Some(p) = next {
        p.file.check().map_err(|change| ExecError::Changed {
            path: p.path().to_owned(),
            change,
        })?;
        // The path the kernel will open still leads to the pinned file, through trusted
        // directories (an interpreter named through a link that now points elsewhere is not it).
        let now =
            crate::resolve::interpreter(cfg, &p.named).map_err(|reason| ExecError::Untrusted {
                path: p.named.clone(),
                reason,
            })?;
        if now != p.path() {
            return Err(ExecError::Changed {
                path: p.named.clone(),
                change: Change::Replaced,
            });
        }
        next = p.interpreter();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::shebang;

    #[test]
    fn shebang_lines_read_as_the_kernel_reads_them() {
        assert_eq!(shebang(b"#!/bin/bash\necho").as_deref(), Some("/bin/bash"));
        assert_eq!(
            shebang(b"#! /usr/bin/env  python3 -u\n").as_deref(),
            Some("/usr/bin/env")
        );
        assert_eq!(shebang(b"#!/bin/sh\r\n").as_deref(), Some("/bin/sh"));
        assert_eq!(shebang(b"#!\n"), None);
        assert_eq!(shebang(b"\x7fELF"), None);
    }
}

//! Typed errors of the executor, each with a stable `kind()` code.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Why running a program did not happen or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// No executable of that name in any search directory.
    #[error("`{program}` is not installed (looked in {})", join_dirs(searched))]
    NotInstalled {
        /// The program as written.
        program: String,
        /// The directories that were searched, in order.
        searched: Vec<PathBuf>,
    },
    /// The program exists but may not be run.
    #[error("refusing to run {}: {reason}", path.display())]
    Untrusted {
        /// The program as found (or as written, for a path outside the search directories).
        path: PathBuf,
        /// What is wrong with it.
        reason: UntrustedReason,
    },
    /// The program ran past its timeout; its process group was ended.
    #[error("`{command}` timed out after {after:?} and was stopped")]
    TimedOut {
        /// The command as written (shell-quoted).
        command: String,
        /// The timeout that applied.
        after: Duration,
    },
    /// The permit was bound to the commands the person (or policy) approved, and this is not
    /// one of them: what runs must be exactly what was approved.
    #[error("refusing to run `{command}`: it is not the command that was approved")]
    NotApproved {
        /// The command as written (shell-quoted).
        command: String,
    },
    /// A file that was pinned when the call was judged (the program, its interpreter) is not
    /// that file any more: what runs must be the file that was approved.
    #[error("refusing to run {}: it changed since it was approved ({change}); ask again", path.display())]
    Changed {
        /// The pinned file.
        path: PathBuf,
        /// How it changed.
        change: Change,
    },
    /// The operating system refused to start the program.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command as written (shell-quoted).
        command: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl ExecError {
    /// Stable snake_case code for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            ExecError::NotInstalled { .. } => "not_installed",
            ExecError::Untrusted { .. } => "untrusted_program",
            ExecError::TimedOut { .. } => "timed_out",
            ExecError::Spawn { .. } => "spawn_failed",
            ExecError::NotApproved { .. } => "not_approved",
            ExecError::Changed { .. } => "changed_since_approval",
        }
    }
}

/// What makes a program untrusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UntrustedReason {
    /// A program path that is neither a bare name nor absolute (`./x`, `bin/x`), or names `.`/`..`.
    RelativePath,
    /// An absolute path whose directory is not one of the search directories.
    OutsideSearchDirs {
        /// The directories a program may come from.
        allowed: Vec<PathBuf>,
    },
    /// A file or directory on the way to the program is not owned by root.
    NotRootOwned {
        /// The offending file or directory.
        path: PathBuf,
        /// Its owner.
        uid: u32,
    },
    /// A file or directory on the way to the program is owned by neither root nor the person
    /// (the uid archgate runs as).
    NotTrustedOwner {
        /// The offending file or directory.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// The person's uid, which would also have been trusted.
        person: u32,
    },
    /// A file or directory on the way to the program is writable by group or others.
    WritableByOthers {
        /// The offending file or directory.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A file archgate refused earlier as writable by (or owned by) another user: still the
    /// same inode, which a descriptor opened then may still write (`once_open.rs`).
    WasOpenToOthers {
        /// The file.
        path: PathBuf,
    },
    /// The program is not a regular executable file.
    NotExecutable {
        /// The file found.
        path: PathBuf,
    },
    /// What is at the end of the path is neither a regular file nor a directory (a device, a
    /// FIFO, a socket).
    NotFileOrDirectory {
        /// What was found.
        path: PathBuf,
    },
    /// More than 40 symbolic links on the way to the program.
    TooManySymlinks,
    /// More than four levels of `#!` interpreters (the kernel's own limit).
    TooManyInterpreters,
    /// A component could not be inspected.
    Uninspectable {
        /// The path that could not be inspected.
        path: PathBuf,
        /// The operating system's answer.
        error: std::io::ErrorKind,
    },
}

impl fmt::Display for UntrustedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UntrustedReason::RelativePath => {
                f.write_str("a program must be a bare name or an absolute path")
            }
            UntrustedReason::OutsideSearchDirs { allowed } => write!(
                f,
                "it is not in one of the allowed directories ({})",
                join_dirs(allowed)
            ),
            UntrustedReason::NotRootOwned { path, uid } => {
                write!(f, "{} is owned by uid {uid}, not root", path.display())
            }
            UntrustedReason::NotTrustedOwner { path, uid, person } => write!(
                f,
                "{} is owned by uid {uid}, neither root nor you (uid {person})",
                path.display()
            ),
            UntrustedReason::WritableByOthers { path, mode } => write!(
                f,
                "{} is writable by group or others (mode {:04o})",
                path.display(),
                mode & 0o7777
            ),
            UntrustedReason::WasOpenToOthers { path } => write!(
                f,
                "{} was writable by another user when archgate looked earlier, and a descriptor opened then can still write it whatever its mode now; {}",
                path.display(),
                crate::once_open::replace_hint(path)
            ),
            UntrustedReason::NotExecutable { path } => {
                write!(f, "{} is not an executable file", path.display())
            }
            UntrustedReason::NotFileOrDirectory { path } => {
                write!(f, "{} is neither a file nor a directory", path.display())
            }
            UntrustedReason::TooManySymlinks => f.write_str("too many symbolic links"),
            UntrustedReason::TooManyInterpreters => {
                f.write_str("more than four levels of #! interpreters")
            }
            UntrustedReason::Uninspectable { path, error } => {
                write!(f, "could not inspect {}: {error}", path.display())
            }
        }
    }
}

fn join_dirs(dirs: &[PathBuf]) -> String {
    let parts: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    parts.join(", ")
}

/// How a pinned file differs from what it was when it was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing is at the path any more.
    Removed,
    /// The path leads elsewhere: another file was put at it (renamed over, recreated), or a
    /// directory on the way became a symbolic link.
    Replaced,
    /// The same file, another content.
    Rewritten,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Change::Removed => "it was removed",
            Change::Replaced => "another file is now at its path",
            Change::Rewritten => "its content was rewritten",
        })
    }
}

//! What the diagnostics (hardware, network, processes) answer when they cannot: one error type,
//! each variant a stable kind, and the small readers they share.
//!
//! "Not there" and "could not look" are different answers: an empty list means the machine has
//! none; [`MachineError::NotAvailable`] says which piece (a bus, a program, a service) is
//! missing; [`MachineError::Unreadable`] says which file could not be read and why.

use std::path::{Path, PathBuf};

/// Why a diagnostic gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// What was asked does not exist (a process id).
    #[error("{what}")]
    NotFound {
        /// What was looked for, in words.
        what: String,
    },
    /// The piece that holds the answer is not on this machine (no USB bus, no smartctl, no
    /// NetworkManager or iwd).
    #[error("{what}")]
    NotAvailable {
        /// What is missing.
        what: String,
    },
    /// An argument no machine could answer (pid 0, a pid above `pid_max`).
    #[error("{what}")]
    Invalid {
        /// What was wrong.
        what: String,
    },
    /// A file that should be there could not be read.
    #[error("could not read {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// The operating system's answer.
        #[source]
        source: std::io::Error,
    },
    /// The program behind the answer could not be run.
    #[error(transparent)]
    Exec(#[from] archgate_exec::ExecError),
    /// A D-Bus service answered with an error.
    #[error("{service} on the system bus: {source}")]
    Bus {
        /// The service asked.
        service: &'static str,
        /// zbus's answer.
        #[source]
        source: zbus::Error,
    },
}

impl MachineError {
    /// Stable snake_case code for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            MachineError::NotFound { .. } => "not_found",
            MachineError::NotAvailable { .. } => "not_available",
            MachineError::Invalid { .. } => "invalid_argument",
            MachineError::Unreadable { .. } => "could_not_read",
            MachineError::Exec(e) => e.kind(),
            MachineError::Bus { .. } => "bus_error",
        }
    }

    pub(crate) fn not_available(what: impl Into<String>) -> MachineError {
        MachineError::NotAvailable { what: what.into() }
    }
}

/// A field of a report that could not be had, in place of its value: `{"kind", "message"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unread {
    /// The stable kind (`could_not_read`, `not_available` …).
    pub kind: &'static str,
    /// What happened.
    pub message: String,
}

impl From<&MachineError> for Unread {
    fn from(e: &MachineError) -> Unread {
        Unread {
            kind: e.kind(),
            message: e.to_string(),
        }
    }
}

/// A value or why it is missing, serialized untagged: the value itself, or `{"error": …}`.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
pub enum Field<T> {
    /// The value.
    Value(T),
    /// Why there is none.
    Error {
        /// What happened.
        error: Unread,
    },
}

impl<T> From<Result<T, MachineError>> for Field<T> {
    fn from(r: Result<T, MachineError>) -> Field<T> {
        match r {
            Ok(v) => Field::Value(v),
            Err(e) => Field::Error { error: (&e).into() },
        }
    }
}

impl<T> Field<T> {
    /// The value, if there is one.
    pub fn value(&self) -> Option<&T> {
        match self {
            Field::Value(v) => Some(v),
            Field::Error { .. } => None,
        }
    }
}

/// Reads a small text file.
pub(crate) fn read(path: &Path) -> Result<String, MachineError> {
    std::fs::read_to_string(path).map_err(|source| MachineError::Unreadable {
        path: path.to_owned(),
        source,
    })
}

/// A sysfs attribute, trimmed; `None` when absent, unreadable or empty (sysfs answers EINVAL or
/// EIO for an attribute the device cannot give right now, such as the speed of a down link).
pub(crate) fn attr(dir: &Path, name: &str) -> Option<String> {
    let s = std::fs::read_to_string(dir.join(name)).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// A numeric sysfs attribute (decimal, or hex with `0x`).
pub(crate) fn attr_num(dir: &Path, name: &str) -> Option<u64> {
    let s = attr(dir, name)?;
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The last component of a symlink's target (`driver` → `amdgpu`).
pub(crate) fn link_name(path: &Path) -> Option<String> {
    let t = std::fs::read_link(path).ok()?;
    Some(t.file_name()?.to_string_lossy().into_owned())
}

/// The entries of a directory, sorted by name; `None` when it does not exist.
pub(crate) fn entries(dir: &Path) -> Option<Vec<(String, PathBuf)>> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut v: Vec<(String, PathBuf)> = rd
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    v.sort_by(|a, b| natural(&a.0, &b.0));
    Some(v)
}

/// Orders `hwmon10` after `hwmon9`: digits compare as numbers.
pub(crate) fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(s: &str) -> (String, u64, String) {
        let i = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
        let (head, rest) = s.split_at(i);
        let j = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n = rest[..j].parse().unwrap_or(0);
        (head.to_owned(), n, rest[j..].to_owned())
    }
    key(a).cmp(&key(b))
}

/// The running kernel's release, for `/lib/modules/RELEASE`.
pub(crate) fn kernel_release(root: &Path) -> Option<String> {
    attr(&root.join("proc/sys/kernel"), "osrelease")
}

//! One probe's answer: a value, or why it could not be had.
//!
//! Each field of a status report is probed on its own, so one failure never hides the others.
//! A failed field serializes as `{"error": {"kind": "...", "message": "..."}}`.

use std::path::PathBuf;
use std::time::Duration;

use serde::ser::{Serialize, SerializeMap, Serializer};

/// Why a probe gave no value.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A file could not be read (or a filesystem not queried).
    #[error("could not read {}: {source}", path.display())]
    Unreadable {
        /// The file or mount point.
        path: PathBuf,
        /// The operating system's answer.
        #[source]
        source: std::io::Error,
    },
    /// A file was read but did not hold what was expected.
    #[error("unexpected contents in {}: {what}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What was missing or wrong.
        what: &'static str,
    },
    /// The fact does not exist on this machine (for example: systemd is not running).
    #[error("{what}")]
    NotAvailable {
        /// Why.
        what: &'static str,
    },
    /// The program behind the probe could not be run.
    #[error(transparent)]
    Exec(#[from] archgate_exec::ExecError),
    /// The program behind the probe ran and failed.
    #[error("`{command}` failed (exit {code:?}): {stderr}")]
    CommandFailed {
        /// The command as written.
        command: String,
        /// Its exit code, if it exited.
        code: Option<i32>,
        /// The start of its stderr.
        stderr: String,
    },
    /// The probe did not finish in time (for example: a hung network filesystem).
    #[error("{what} did not answer within {after:?}")]
    TimedOut {
        /// What was asked.
        what: &'static str,
        /// The time allowed.
        after: Duration,
    },
}

impl ProbeError {
    /// Stable snake_case code for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            ProbeError::Unreadable { .. } => "could_not_read",
            ProbeError::Malformed { .. } => "malformed",
            ProbeError::NotAvailable { .. } => "not_available",
            ProbeError::Exec(e) => e.kind(),
            ProbeError::CommandFailed { .. } => "command_failed",
            ProbeError::TimedOut { .. } => "timed_out",
        }
    }
}

/// The answer of one probe.
#[derive(Debug)]
pub struct Probe<T>(pub Result<T, ProbeError>);

impl<T> Probe<T> {
    /// The value, if the probe succeeded.
    pub fn value(&self) -> Option<&T> {
        self.0.as_ref().ok()
    }

    /// The error, if the probe failed.
    pub fn error(&self) -> Option<&ProbeError> {
        self.0.as_ref().err()
    }
}

impl<T> From<Result<T, ProbeError>> for Probe<T> {
    fn from(r: Result<T, ProbeError>) -> Self {
        Probe(r)
    }
}

impl<T: Serialize> Serialize for Probe<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Ok(v) => v.serialize(s),
            Err(e) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry(
                    "error",
                    &ErrorBody {
                        kind: e.kind(),
                        message: e.to_string(),
                    },
                )?;
                map.end()
            }
        }
    }
}

#[derive(serde::Serialize)]
struct ErrorBody {
    kind: &'static str,
    message: String,
}

/// Read a small text file, mapping failure to [`ProbeError::Unreadable`].
pub(crate) fn read(path: PathBuf) -> Result<String, ProbeError> {
    read_small(&path).map_err(|source| ProbeError::Unreadable { path, source })
}

/// A whole file into one buffer sized for /proc and /sys files. `std::fs::read_to_string` asks
/// the file's size first, which these files do not know (0), then grows from a few bytes,
/// copying at each step: a third of `system_status`'s time went there.
fn read_small(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 4096];
    let mut n = 0;
    loop {
        if n == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

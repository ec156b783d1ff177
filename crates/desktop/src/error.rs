//! The desktop crate's typed errors, each with a stable snake_case `kind()` code.

use std::path::PathBuf;
use std::time::Duration;

use archgate_exec::ExecError;

/// Why a desktop operation did not happen or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// A piece of the desktop is missing (no compositor, no grim, no tesseract…).
    #[error("{what} is not available ({why}); install the Arch package `{package}`")]
    NotAvailable {
        /// The missing piece, as the person would name it.
        what: &'static str,
        /// The Arch package that provides it.
        package: &'static str,
        /// What was looked for and not found.
        why: String,
    },
    /// A socket or file exists (or should) but could not be used.
    #[error("could not reach {what} at {}: {source}", path.display())]
    CouldNotReach {
        /// What was being reached.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A compositor or program did not answer in time.
    #[error("{what} did not answer within {after:?}")]
    TimedOut {
        /// What was asked.
        what: String,
        /// The timeout that applied.
        after: Duration,
    },
    /// An answer that could not be understood.
    #[error("malformed answer from {what}: {detail}")]
    Malformed {
        /// Who answered.
        what: String,
        /// What was wrong with it.
        detail: String,
    },
    /// An answer or input larger than the limit.
    #[error("{what} is larger than {limit} bytes")]
    TooLarge {
        /// What was too large.
        what: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// A name (theme, monitor, window, route, target…) that names nothing.
    #[error("{what} `{name}` not found{}", near_text(near))]
    NotFound {
        /// What kind of thing was looked for.
        what: &'static str,
        /// The name given.
        name: String,
        /// Close names that do exist.
        near: Vec<String>,
    },
    /// An argument that cannot be used as given.
    #[error("invalid {what}: {detail}")]
    InvalidArgument {
        /// Which argument.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A program ran and reported failure.
    #[error("`{command}` failed (exit {}): {stderr}", code.map_or_else(|| "by signal".to_owned(), |c| c.to_string()))]
    CommandFailed {
        /// The command as written.
        command: String,
        /// Its exit code, if it exited.
        code: Option<i32>,
        /// The head of what it wrote to stderr.
        stderr: String,
    },
    /// The compositor refused a command.
    #[error("the compositor refused `{command}`: {message}")]
    Refused {
        /// The command sent.
        command: String,
        /// The compositor's answer.
        message: String,
    },
    /// A call this crate refuses whatever the permit says: it elevates privilege or would stop,
    /// restart, reconfigure or remove archgate or its supervisor.
    #[error("`{command}` is blocked: {reason}")]
    Blocked {
        /// The command as it would have run.
        command: String,
        /// Why.
        reason: &'static str,
    },
    /// A file could not be read or written.
    #[error("{what} at {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The executor did not run the program (untrusted, failed to start, timed out).
    #[error(transparent)]
    Exec(#[from] ExecError),
}

impl DesktopError {
    /// Stable snake_case code for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            DesktopError::NotAvailable { .. } => "not_available",
            DesktopError::CouldNotReach { .. } => "could_not_reach",
            DesktopError::TimedOut { .. } => "timed_out",
            DesktopError::Malformed { .. } => "malformed",
            DesktopError::TooLarge { .. } => "too_large",
            DesktopError::NotFound { .. } => "not_found",
            DesktopError::InvalidArgument { .. } => "invalid_argument",
            DesktopError::CommandFailed { .. } => "command_failed",
            DesktopError::Refused { .. } => "refused",
            DesktopError::Blocked { .. } => "blocked",
            DesktopError::Io { .. } => "io_error",
            DesktopError::Exec(e) => e.kind(),
        }
    }

    pub(crate) fn malformed(what: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        DesktopError::Malformed {
            what: what.into(),
            detail: detail.to_string(),
        }
    }

    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> Self {
        DesktopError::InvalidArgument {
            what,
            detail: detail.into(),
        }
    }
}

fn near_text(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", near.join(", "))
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = DesktopError> = std::result::Result<T, E>;

//! Errors of the AUR client, each with a stable `kind()` code.

use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum AurError {
    #[error("could not reach {url}: {reason}")]
    CouldNotReach { url: String, reason: String },
    #[error("{url} did not answer within {after:?}")]
    TimedOut { url: String, after: Duration },
    /// HTTP 429 or the RPC's "Rate limit reached"; `retry_after` in seconds, from Retry-After
    /// (seconds or an HTTP date).
    #[error("the AUR is rate limiting requests ({url}); try again {}", retry_after.map_or_else(|| "later".to_owned(), |s| format!("after {s} s")))]
    RateLimited {
        url: String,
        retry_after: Option<u64>,
    },
    #[error("{what} was not found")]
    NotFound { what: String },
    #[error("{name} has no version {version} in its history")]
    VersionNotFound { name: String, version: String },
    /// Another status; `retry_after` in seconds when the server said (a 503 may).
    #[error("{url} answered with HTTP {status}{}", retry_after.map_or_else(String::new, |s| format!("; try again after {s} s")))]
    Status {
        url: String,
        status: u16,
        retry_after: Option<u64>,
    },
    #[error("the answer from {url} is larger than {limit} bytes")]
    TooLarge { url: String, limit: usize },
    #[error("the answer from {url} is not what the AUR sends: {reason}")]
    Malformed { url: String, reason: String },
    #[error("the AUR RPC reported an error: {message}")]
    Rpc { message: String },
    #[error("invalid argument: {reason}")]
    InvalidArgument { reason: String },
    /// `git` could not be run (not installed, not trusted where it is, not started).
    #[error("cannot run git to read the AUR repository: {reason}")]
    Git { reason: String },
    /// The repository cache could not be written or read.
    #[error("the AUR repository cache at {path} failed: {reason}")]
    Cache { path: String, reason: String },
}

impl AurError {
    /// Stable snake_case code for agents.
    pub fn kind(&self) -> &'static str {
        match self {
            AurError::CouldNotReach { .. } => "could_not_reach",
            AurError::TimedOut { .. } => "timed_out",
            AurError::RateLimited { .. } => "rate_limited",
            AurError::NotFound { .. } => "not_found",
            AurError::VersionNotFound { .. } => "version_not_found",
            // 5xx: the AUR is down or busy, which is not reaching it.
            AurError::Status { status, .. } if *status >= 500 => "could_not_reach",
            AurError::Status { .. } => "http_error",
            AurError::TooLarge { .. } => "too_large",
            AurError::Malformed { .. } => "malformed",
            AurError::Rpc { .. } => "rpc_error",
            AurError::InvalidArgument { .. } => "invalid_argument",
            AurError::Git { .. } => "not_available",
            AurError::Cache { .. } => "io_error",
        }
    }
}

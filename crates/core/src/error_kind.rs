//! `ErrorKind`: what kind of failure a tool met, one stable snake_case spelling each — what
//! agents read in a tool error, what the audit records, what next steps are chosen by.

/// Declares `ErrorKind` and its one spelling per variant (what agents, the audit and TOOLS.md
/// read).
macro_rules! error_kinds {
    ($($(#[$m:meta])* $v:ident = $s:literal,)*) => {
        /// What kind of failure a tool met: a stable snake_case code on the wire and in the
        /// audit. Domain errors are mapped to it by an exhaustive match where the binary meets
        /// them (`tools/errors.rs`), so a new domain error cannot go unclassified.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind {
            $($(#[$m])* $v,)*
        }
        impl ErrorKind {
            /// Every kind, for tests and documentation.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$v),*];
            /// The kind as agents read it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorKind::$v => $s,)*
                }
            }
        }
    };
}

error_kinds! {
    NotFound = "not_found",
    NotAvailable = "not_available",
    /// A program archgate needs is not installed.
    NotInstalled = "not_installed",
    /// The journal (or another source) exists but this account may not read it.
    NotReadable = "not_readable",
    Unreadable = "unreadable",
    CouldNotRead = "could_not_read",
    CouldNotReach = "could_not_reach",
    /// A path or name could not be looked up (`resolve.rs`).
    CouldNotLook = "could_not_look",
    TimedOut = "timed_out",
    RateLimited = "rate_limited",
    TooLarge = "too_large",
    Malformed = "malformed",
    Truncated = "truncated",
    DbMissing = "db_missing",
    NotSupported = "not_supported",
    UnknownRepo = "unknown_repo",
    VersionNotFound = "version_not_found",
    /// One argument a domain crate refused.
    InvalidArgument = "invalid_argument",
    /// Arguments that do not fit together (an action without its field).
    InvalidArguments = "invalid_arguments",
    InvalidCursor = "invalid_cursor",
    InvalidTarget = "invalid_target",
    OutOfRange = "out_of_range",
    CommandFailed = "command_failed",
    HttpError = "http_error",
    RpcError = "rpc_error",
    BusError = "bus_error",
    IoError = "io_error",
    NoIndex = "no_index",
    IndexFailed = "index_failed",
    Refused = "refused",
    /// The person cancelled a hand-off: nothing ran.
    Cancelled = "cancelled",
    /// Something ran (a hand-off's command) and nobody saw how it ended.
    OutcomeUnknown = "outcome_unknown",
    /// One at a time: another hand-off is waiting for the person.
    Busy = "busy",
    Blocked = "blocked",
    /// A path archgate never reaches (its own files, the person's secrets).
    ProtectedPath = "protected_path",
    UntrustedProgram = "untrusted_program",
    SpawnFailed = "spawn_failed",
    /// A command built again differently from the one approved.
    NotApproved = "not_approved",
    /// A file the call was judged on (its program, an interpreter, a file an argument names)
    /// changed between the question and the yes.
    ChangedSinceApproval = "changed_since_approval",
    /// A background task of the tool failed.
    Internal = "internal",
    InternalError = "internal_error",
    /// A conformance fixture's answer that is a protocol error (`archgate-conformance` only).
    ProtocolError = "protocol_error",
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for ErrorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl From<&archgate_exec::ExecError> for ErrorKind {
    fn from(e: &archgate_exec::ExecError) -> ErrorKind {
        use archgate_exec::ExecError;
        match e {
            ExecError::NotInstalled { .. } => ErrorKind::NotInstalled,
            ExecError::Untrusted { .. } => ErrorKind::UntrustedProgram,
            ExecError::TimedOut { .. } => ErrorKind::TimedOut,
            ExecError::Spawn { .. } => ErrorKind::SpawnFailed,
            ExecError::NotApproved { .. } => ErrorKind::NotApproved,
            ExecError::Changed { .. } => ErrorKind::ChangedSinceApproval,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// The spellings are what clients have always read: snake_case, one per kind, and the same
    /// as the exec crate's own codes for its errors.
    #[test]
    fn every_error_kind_has_one_snake_case_spelling() {
        let mut seen = std::collections::BTreeSet::new();
        for k in ErrorKind::ALL {
            let s = k.as_str();
            assert!(
                !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{s}"
            );
            assert!(seen.insert(s), "{s} spelled twice");
            assert_eq!(serde_json::to_value(k).unwrap(), Value::String(s.into()));
        }
        let e = archgate_exec::ExecError::NotApproved {
            command: "x".into(),
        };
        assert_eq!(ErrorKind::from(&e).as_str(), e.kind());
    }
}

//! Domain errors as the agent reads them: each domain crate's error mapped to a typed
//! `ErrorKind` by an exhaustive match on its variants (a new variant does not compile until it
//! is classified here), and the next step a function of that kind, or the error's own where it
//! knows a more precise one (no databases here, no index, a unit name near the one asked).
//!
//! The domain crates know nothing of MCP or of core; their own `kind()` spellings serve their
//! own reports. `every_mapped_kind_is_spelled_as_its_domain_spells_it` holds the two together.

use archgate_aur::AurError;
use archgate_core::tool::{ErrorKind, ToolError};
use archgate_desktop::DesktopError;
use archgate_pacman::PacmanError;
use archgate_pacman::http::HttpError;
use archgate_sysinfo::{DiagError, MachineError};
use archgate_wiki::WikiError;

/// A domain error's kind, and a next step more precise than its kind's where it has one.
pub trait Kinded: std::fmt::Display {
    fn kind(&self) -> ErrorKind;
    fn next_step(&self) -> Option<&'static str> {
        None
    }
}

/// What an agent can do about an error of this kind.
pub fn next_for(kind: ErrorKind) -> &'static str {
    use ErrorKind::*;
    match kind {
        NotFound => "check the name (search first), then call again",
        CouldNotReach | TimedOut => {
            "the network or the service is unavailable: retry later, or answer from what is known \
             offline; `archgate doctor` shows the person what this machine reaches"
        }
        RateLimited => {
            "the service is rate limiting: wait as long as the message says (its Retry-After, \
             else a minute) before asking it again"
        }
        NotAvailable | NotInstalled => "tell the person what to install (see `archgate doctor`)",
        TooLarge => "narrow the request and call again",
        ChangedSinceApproval => archgate_core::tool::CHANGED_NEXT,
        Malformed => "tell the person; a file or an answer is damaged",
        Cancelled => "ask the person in chat what they want instead",
        OutcomeUnknown => "tell the person; do not run it again before they checked what happened",
        Busy => "wait for the person to finish what is on their screen, then call again",
        NotReadable | Unreadable | CouldNotRead | CouldNotLook | Truncated | DbMissing
        | NotSupported | UnknownRepo | VersionNotFound | InvalidArgument | InvalidArguments
        | InvalidCursor | InvalidTarget | OutOfRange | CommandFailed | HttpError | RpcError
        | BusError | IoError | NoIndex | IndexFailed | Refused | Blocked | ProtectedPath
        | UntrustedProgram | SpawnFailed | NotApproved | Internal | InternalError
        | ProtocolError => "tell the person what happened",
    }
}

/// A domain error as a tool error: its kind, its message, and what to do next.
pub fn domain_err<E: Kinded>(e: E) -> ToolError {
    let kind = e.kind();
    let next = e.next_step().unwrap_or_else(|| next_for(kind));
    ToolError::new(kind, e.to_string()).next(next)
}

impl Kinded for HttpError {
    fn kind(&self) -> ErrorKind {
        match self {
            HttpError::CouldNotReach { .. } | HttpError::Status { .. } => ErrorKind::CouldNotReach,
            HttpError::TimedOut { .. } => ErrorKind::TimedOut,
            HttpError::RateLimited { .. } => ErrorKind::RateLimited,
            HttpError::TooLarge { .. } => ErrorKind::TooLarge,
            HttpError::Malformed { .. } | HttpError::NotAListing { .. } => ErrorKind::Malformed,
            HttpError::BadUrl(_) => ErrorKind::InvalidArgument,
        }
    }
}

impl Kinded for PacmanError {
    fn kind(&self) -> ErrorKind {
        match self {
            PacmanError::ConfUnreadable { source, .. }
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                ErrorKind::NotFound
            }
            PacmanError::ConfUnreadable { .. }
            | PacmanError::DbUnreadable { .. }
            | PacmanError::LogUnreadable { .. }
            | PacmanError::CacheUnreadable { .. } => ErrorKind::Unreadable,
            PacmanError::ConfMalformed { .. }
            | PacmanError::DbCorrupt { .. }
            | PacmanError::MtreeDamaged { .. }
            | PacmanError::MtreeMalformed { .. } => ErrorKind::Malformed,
            PacmanError::DbMissing { .. } => ErrorKind::DbMissing,
            PacmanError::DbTruncated { .. } => ErrorKind::Truncated,
            PacmanError::UnsupportedCompression { .. } => ErrorKind::NotSupported,
            PacmanError::TooLarge { .. } => ErrorKind::TooLarge,
            PacmanError::UnknownRepo { .. } => ErrorKind::UnknownRepo,
            PacmanError::PackageNotFound { .. } | PacmanError::MtreeMissing { .. } => {
                ErrorKind::NotFound
            }
            PacmanError::InvalidArgument { .. } | PacmanError::InvalidRegex { .. } => {
                ErrorKind::InvalidArgument
            }
            PacmanError::FilesUnavailable { .. } | PacmanError::NoRepositories { .. } => {
                ErrorKind::NotAvailable
            }
            PacmanError::Remote(e) => Kinded::kind(e),
            PacmanError::NoDatabases { source, .. } => Kinded::kind(source.as_ref()),
            PacmanError::Task(_) => ErrorKind::Internal,
        }
    }
    fn next_step(&self) -> Option<&'static str> {
        PacmanError::next_step(self)
    }
}

impl Kinded for AurError {
    fn kind(&self) -> ErrorKind {
        match self {
            AurError::CouldNotReach { .. } => ErrorKind::CouldNotReach,
            AurError::TimedOut { .. } => ErrorKind::TimedOut,
            AurError::RateLimited { .. } => ErrorKind::RateLimited,
            AurError::NotFound { .. } => ErrorKind::NotFound,
            AurError::VersionNotFound { .. } => ErrorKind::VersionNotFound,
            AurError::Status { status, .. } if *status >= 500 => ErrorKind::CouldNotReach,
            AurError::Status { .. } => ErrorKind::HttpError,
            AurError::TooLarge { .. } => ErrorKind::TooLarge,
            AurError::Malformed { .. } => ErrorKind::Malformed,
            AurError::Rpc { .. } => ErrorKind::RpcError,
            AurError::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            AurError::Git { .. } => ErrorKind::NotAvailable,
            AurError::Cache { .. } => ErrorKind::IoError,
        }
    }
}

impl Kinded for WikiError {
    fn kind(&self) -> ErrorKind {
        match self {
            WikiError::CouldNotReach { .. } => ErrorKind::CouldNotReach,
            WikiError::Offline { online, .. } => Kinded::kind(&**online),
            WikiError::TimedOut { .. } => ErrorKind::TimedOut,
            WikiError::RateLimited { .. } => ErrorKind::RateLimited,
            WikiError::Status { status, .. } if *status >= 500 => ErrorKind::CouldNotReach,
            WikiError::Status { .. } => ErrorKind::HttpError,
            WikiError::Malformed { .. } => ErrorKind::Malformed,
            WikiError::TooLarge { .. } => ErrorKind::TooLarge,
            WikiError::NotFound { .. } | WikiError::NoSuchSection { .. } => ErrorKind::NotFound,
            WikiError::PageOutOfRange { .. } | WikiError::BadQuery { .. } => {
                ErrorKind::InvalidArgument
            }
            WikiError::NoIndex { .. } | WikiError::NoPages { .. } => ErrorKind::NoIndex,
            WikiError::Index { .. } => ErrorKind::IndexFailed,
            WikiError::Io { .. } => ErrorKind::IoError,
        }
    }
    fn next_step(&self) -> Option<&'static str> {
        WikiError::next_step(self)
    }
}

impl Kinded for DesktopError {
    fn kind(&self) -> ErrorKind {
        match self {
            DesktopError::NotAvailable { .. } => ErrorKind::NotAvailable,
            DesktopError::CouldNotReach { .. } => ErrorKind::CouldNotReach,
            DesktopError::TimedOut { .. } => ErrorKind::TimedOut,
            DesktopError::Malformed { .. } => ErrorKind::Malformed,
            DesktopError::TooLarge { .. } => ErrorKind::TooLarge,
            DesktopError::NotFound { .. } => ErrorKind::NotFound,
            DesktopError::InvalidArgument { .. } => ErrorKind::InvalidArgument,
            DesktopError::CommandFailed { .. } => ErrorKind::CommandFailed,
            DesktopError::Refused { .. } => ErrorKind::Refused,
            DesktopError::Blocked { .. } => ErrorKind::Blocked,
            DesktopError::Io { .. } => ErrorKind::IoError,
            DesktopError::Exec(e) => ErrorKind::from(e),
        }
    }
}

impl Kinded for DiagError {
    fn kind(&self) -> ErrorKind {
        match self {
            DiagError::NotAvailable { .. } => ErrorKind::NotAvailable,
            DiagError::NotReadable { .. } => ErrorKind::NotReadable,
            DiagError::UnknownUnit { .. } => ErrorKind::NotFound,
            DiagError::BootOutOfRange { .. } => ErrorKind::OutOfRange,
            DiagError::InvalidCursor { .. } => ErrorKind::InvalidCursor,
            DiagError::InvalidArgument { .. } => ErrorKind::InvalidArguments,
            DiagError::CommandFailed { .. } => ErrorKind::CommandFailed,
            DiagError::Malformed { .. } => ErrorKind::Malformed,
            // A diagnostic's missing program is a missing facility of this machine.
            DiagError::Exec(e) => match ErrorKind::from(e) {
                ErrorKind::NotInstalled => ErrorKind::NotAvailable,
                k => k,
            },
        }
    }
    fn next_step(&self) -> Option<&'static str> {
        DiagError::next_step(self)
    }
}

impl Kinded for MachineError {
    fn kind(&self) -> ErrorKind {
        match self {
            MachineError::NotFound { .. } => ErrorKind::NotFound,
            MachineError::NotAvailable { .. } => ErrorKind::NotAvailable,
            MachineError::Invalid { .. } => ErrorKind::InvalidArgument,
            MachineError::Unreadable { .. } => ErrorKind::CouldNotRead,
            MachineError::Exec(e) => ErrorKind::from(e),
            MachineError::Bus { .. } => ErrorKind::BusError,
        }
    }
    fn next_step(&self) -> Option<&'static str> {
        Some(match self {
            MachineError::NotFound { .. } => "list processes (no pid) and pick one that exists",
            MachineError::NotAvailable { .. } => {
                "this machine does not have it: answer from the other sections, or tell the \
                 person what is missing"
            }
            MachineError::Invalid { .. } => "fix the argument and call again",
            MachineError::Unreadable { .. } | MachineError::Exec(_) | MachineError::Bus { .. } => {
                "tell the person what happened"
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn io() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::PermissionDenied)
    }

    /// The typed kind is spelled on the wire exactly as the domain crate spells it for its own
    /// reports, so no client sees a change; a sample of every crate's errors.
    #[test]
    fn every_mapped_kind_is_spelled_as_its_domain_spells_it() {
        let exec = || archgate_exec::ExecError::NotInstalled {
            program: "smartctl".into(),
            searched: Vec::new(),
        };
        let pairs: Vec<(ErrorKind, &str)> = vec![
            {
                let e = AurError::RateLimited {
                    url: "u".into(),
                    retry_after: None,
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = AurError::Status {
                    url: "u".into(),
                    status: 500,
                    retry_after: None,
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = AurError::Git {
                    reason: exec().to_string(),
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = AurError::Cache {
                    path: "/x".into(),
                    reason: io().to_string(),
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = DesktopError::Exec(exec());
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = DiagError::Exec(exec());
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = MachineError::Unreadable {
                    path: PathBuf::from("/x"),
                    source: io(),
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = PacmanError::Task("x".into());
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = HttpError::BadUrl("ftp://x".into());
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = WikiError::Io {
                    op: "read",
                    path: PathBuf::from("/x"),
                    source: io(),
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = WikiError::RateLimited {
                    url: "u".into(),
                    retry_after_s: Some(120),
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = WikiError::Status {
                    url: "u".into(),
                    status: 503,
                    retry_after_s: None,
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = WikiError::Status {
                    url: "u".into(),
                    status: 403,
                    retry_after_s: None,
                };
                (Kinded::kind(&e), e.kind())
            },
            {
                let e = AurError::Status {
                    url: "u".into(),
                    status: 403,
                    retry_after: None,
                };
                (Kinded::kind(&e), e.kind())
            },
        ];
        for (typed, domain) in pairs {
            assert_eq!(typed.as_str(), domain);
        }
    }

    #[test]
    fn a_domain_error_carries_its_own_next_step_over_its_kinds() {
        let e = domain_err(WikiError::NoIndex {
            path: PathBuf::from("/x"),
        });
        assert_eq!(e.kind, ErrorKind::NoIndex);
        assert!(e.next.as_deref().unwrap().contains("archgate wiki index"));
        let e = domain_err(AurError::RateLimited {
            url: "u".into(),
            retry_after: None,
        });
        assert_eq!(e.next.as_deref(), Some(next_for(ErrorKind::RateLimited)));
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["kind"], "rate_limited");
    }
}

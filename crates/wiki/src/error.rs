//! Typed errors of the wiki crate, each with a stable snake_case `kind()` code.

use std::path::PathBuf;

/// Everything that can go wrong while answering from the ArchWiki, the offline index or the news feed.
#[derive(Debug, thiserror::Error)]
pub enum WikiError {
    /// The server could not be reached at all (DNS, refused connection, TLS, reset).
    #[error("could not reach {url}: {reason}")]
    CouldNotReach {
        /// The URL that was asked.
        url: String,
        /// What the transport said (connection refused, DNS failure, ...).
        reason: String,
    },
    /// The server did not answer completely within the configured time.
    #[error("{url} did not answer within {timeout_ms} ms")]
    TimedOut {
        /// The URL that was asked.
        url: String,
        /// The deadline that passed.
        timeout_ms: u64,
    },
    /// The server is rate limiting (HTTP 429, or the API's `ratelimited`): ask again after
    /// `retry_after_s` seconds when the server said (Retry-After, in seconds or as an HTTP date).
    #[error("{url} is rate limiting requests (HTTP 429){}", retry_text(*retry_after_s))]
    RateLimited {
        /// The URL that was asked.
        url: String,
        /// Seconds to wait, from Retry-After.
        retry_after_s: Option<u64>,
    },
    /// Another HTTP error status (5xx: the service is unavailable; 4xx: it refused the request).
    #[error("{url} answered HTTP {status}{}", retry_text(*retry_after_s))]
    Status {
        /// The URL that was asked.
        url: String,
        /// The status code.
        status: u16,
        /// Seconds to wait, from Retry-After (a 503 may say).
        retry_after_s: Option<u64>,
    },
    /// The answer could not be understood (bad JSON, bad XML, an unexpected API error).
    #[error("malformed answer from {source_name}: {detail}")]
    Malformed {
        /// Which answer (a URL or a file).
        source_name: String,
        /// What was wrong with it.
        detail: String,
    },
    /// The answer was larger than the configured cap.
    #[error("the answer from {url} is larger than the cap of {cap_bytes} bytes")]
    TooLarge {
        /// The URL that was asked.
        url: String,
        /// The configured cap.
        cap_bytes: u64,
    },
    /// The wiki has no such page.
    #[error("the wiki has no page titled {title:?}")]
    NotFound {
        /// The title that was asked for.
        title: String,
        /// Titles that came close, best first.
        suggestions: Vec<String>,
    },
    /// The page exists but has no such section.
    #[error("page {title:?} has no section {section:?}")]
    NoSuchSection {
        /// The page.
        title: String,
        /// The section that was asked for.
        section: String,
        /// The sections the page does have.
        available: Vec<String>,
    },
    /// A page number past the last page was asked for.
    #[error("page {page} asked for, but {title:?} has {pages} page(s)")]
    PageOutOfRange {
        /// The page.
        title: String,
        /// The page number asked for (1-based).
        page: u32,
        /// How many pages there are.
        pages: u32,
    },
    /// No offline index has been built (run `archgate wiki index`).
    #[error("no offline wiki index in {path} (build one with `archgate wiki index`)")]
    NoIndex {
        /// Where the index was looked for.
        path: PathBuf,
    },
    /// The online wiki could not answer and there is no offline index to answer instead.
    #[error("{online}; and this machine has no offline ArchWiki index ({}) to answer instead (`archgate wiki index` builds one)", index.display())]
    Offline {
        /// Why the online wiki did not answer.
        online: Box<WikiError>,
        /// Where the offline index was looked for.
        index: PathBuf,
    },
    /// The source directory for an index build has no HTML pages.
    #[error("no wiki HTML pages found under {path}")]
    NoPages {
        /// The directory that was scanned.
        path: PathBuf,
    },
    /// The search query could not be parsed.
    #[error("the query {query:?} could not be understood: {detail}")]
    BadQuery {
        /// The query as given.
        query: String,
        /// What the query parser said.
        detail: String,
    },
    /// The full-text index failed.
    #[error("the offline index in {path} failed: {source}")]
    Index {
        /// The index directory.
        path: PathBuf,
        /// The index library's error.
        #[source]
        source: tantivy::TantivyError,
    },
    /// Reading or writing a local file failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`read`, `write`, `create`, ...).
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl WikiError {
    /// The stable snake_case code of this error, for agents and the audit log.
    pub fn kind(&self) -> &'static str {
        match self {
            WikiError::CouldNotReach { .. } => "could_not_reach",
            WikiError::Offline { online, .. } => online.kind(),
            WikiError::TimedOut { .. } => "timed_out",
            WikiError::RateLimited { .. } => "rate_limited",
            WikiError::Status { status, .. } if *status >= 500 => "could_not_reach",
            WikiError::Status { .. } => "http_error",
            WikiError::Malformed { .. } => "malformed",
            WikiError::TooLarge { .. } => "too_large",
            WikiError::NotFound { .. } | WikiError::NoSuchSection { .. } => "not_found",
            WikiError::PageOutOfRange { .. } | WikiError::BadQuery { .. } => "invalid_argument",
            WikiError::NoIndex { .. } | WikiError::NoPages { .. } => "no_index",
            WikiError::Index { .. } => "index_failed",
            WikiError::Io { .. } => "io_error",
        }
    }

    /// What to do about this error, when there is something more precise to say than its kind.
    pub fn next_step(&self) -> Option<&'static str> {
        match self {
            WikiError::RateLimited { .. } => Some(
                "the wiki is rate limiting: wait as long as the message says before asking it \
                 again; meanwhile answer from what is known",
            ),
            WikiError::Offline { online, .. }
                if matches!(**online, WikiError::RateLimited { .. }) =>
            {
                Some(
                    "the wiki is rate limiting: wait as long as the message says before asking \
                     it again; the person can build the offline index (`archgate wiki index`) \
                     to answer meanwhile",
                )
            }
            WikiError::Offline { .. } | WikiError::NoIndex { .. } => Some(
                "the person builds the offline index with `archgate wiki index` (after \
                 `sudo pacman -S arch-wiki-docs`); meanwhile answer from what is known",
            ),
            _ => None,
        }
    }

    /// An online failure that another source might have covered: when it is a transport one and
    /// the offline index is missing, the answer says both.
    pub(crate) fn or_no_index(self, offline: &WikiError) -> WikiError {
        match offline {
            WikiError::NoIndex { path } if self.is_transport() => WikiError::Offline {
                online: Box::new(self),
                index: path.clone(),
            },
            _ => self,
        }
    }

    /// True when the failure was in reaching or understanding a remote server,
    /// so another source (the offline index, a stale cache entry) may answer instead.
    pub fn is_transport(&self) -> bool {
        matches!(
            self,
            WikiError::CouldNotReach { .. }
                | WikiError::TimedOut { .. }
                | WikiError::RateLimited { .. }
                | WikiError::Status { .. }
                | WikiError::Malformed { .. }
                | WikiError::TooLarge { .. }
        )
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        WikiError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// ", retry after N s" when the server said how long to wait.
fn retry_text(retry_after_s: Option<u64>) -> String {
    retry_after_s.map_or_else(String::new, |s| format!("; retry after {s} s"))
}

//! The one way this crate reads over HTTP: the archlinux.org packages API (`remote`), the Arch
//! Linux Archive's listings (`ala`), and the JSON documents of the mirror status and the
//! security tracker (`netjson`). One client builder, one bounded GET (a timeout, a size cap read
//! chunk by chunk, 429 told apart), one cache-freshness check, one error type.

use std::path::Path;
use std::time::Duration;

use serde::de::DeserializeOwned;

/// Errors reading one URL.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// Connection failed.
    #[error("could not reach {url}: {source}")]
    CouldNotReach {
        /// The URL.
        url: String,
        /// The client error.
        #[source]
        source: reqwest::Error,
    },
    /// No answer in time.
    #[error("{url} did not answer within {after:?}")]
    TimedOut {
        /// The URL.
        url: String,
        /// The timeout.
        after: Duration,
    },
    /// HTTP 429.
    #[error("{url} is rate limiting{}", retry_after_s.map_or_else(String::new, |s| format!("; retry after {s} s")))]
    RateLimited {
        /// The URL.
        url: String,
        /// Seconds to wait, from Retry-After (seconds or an HTTP date).
        retry_after_s: Option<u64>,
    },
    /// Another HTTP error status.
    #[error("{url} answered HTTP {status}{}", retry_after_s.map_or_else(String::new, |s| format!("; retry after {s} s")))]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
        /// Seconds to wait, from Retry-After (a 503 may say).
        retry_after_s: Option<u64>,
    },
    /// The body exceeded the cap.
    #[error("{url} answered more than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: u64,
    },
    /// The body is not the JSON expected; `field` is where it broke (`.` for the top).
    #[error("{url} answered something that is not {what}: at `{field}`: {detail}")]
    Malformed {
        /// The URL.
        url: String,
        /// What was expected (`the mirror status JSON`).
        what: &'static str,
        /// The JSON path of the field that broke.
        field: String,
        /// What is wrong there.
        detail: String,
    },
    /// An HTML directory listing (the Arch Linux Archive's) that is not one.
    #[error("{url} answered something that is not a directory listing: {problem}")]
    NotAListing {
        /// The URL.
        url: String,
        /// What is missing or broken.
        problem: &'static str,
    },
    /// The URL (or a configured base URL) is not http(s).
    #[error("invalid URL {0:?}: only http:// and https:// are fetched")]
    BadUrl(String),
}

impl HttpError {
    /// A stable snake_case code.
    pub fn kind(&self) -> &'static str {
        match self {
            HttpError::CouldNotReach { .. } | HttpError::Status { .. } => "could_not_reach",
            HttpError::TimedOut { .. } => "timed_out",
            HttpError::RateLimited { .. } => "rate_limited",
            HttpError::TooLarge { .. } => "too_large",
            HttpError::Malformed { .. } | HttpError::NotAListing { .. } => "malformed",
            HttpError::BadUrl(_) => "invalid_argument",
        }
    }

    /// The service did not answer (as opposed to answering something wrong): a cached copy of
    /// any age may stand in.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            HttpError::CouldNotReach { .. }
                | HttpError::TimedOut { .. }
                | HttpError::RateLimited { .. }
                | HttpError::Status { .. }
        )
    }
}

/// The HTTP client every reader here uses: one timeout for connecting and for the whole
/// request, archgate's user agent.
pub(crate) fn client(url: &str, timeout: Duration) -> Result<reqwest::Client, HttpError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(HttpError::BadUrl(url.to_owned()));
    }
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        .user_agent(concat!("archgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|source| HttpError::CouldNotReach {
            url: url.to_owned(),
            source,
        })
}

/// GET `url`: the body of a 2xx answer, at most `limit` bytes.
pub(crate) async fn get(
    client: &reqwest::Client,
    url: &str,
    timeout: Duration,
    limit: u64,
) -> Result<Vec<u8>, HttpError> {
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            HttpError::TimedOut {
                url: url.to_owned(),
                after: timeout,
            }
        } else {
            // The URL is said once, by this error; reqwest's own text would repeat it.
            HttpError::CouldNotReach {
                url: url.to_owned(),
                source: e.without_url(),
            }
        }
    };
    let mut response = client.get(url).send().await.map_err(failed)?;
    let status = response.status().as_u16();
    if status == 429 {
        return Err(HttpError::RateLimited {
            url: url.to_owned(),
            retry_after_s: retry_after(response.headers(), std::time::SystemTime::now()),
        });
    }
    if !response.status().is_success() {
        return Err(HttpError::Status {
            url: url.to_owned(),
            status,
            retry_after_s: retry_after(response.headers(), std::time::SystemTime::now()),
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > limit {
            return Err(HttpError::TooLarge {
                url: url.to_owned(),
                limit,
            });
        }
    }
    Ok(body)
}

/// Seconds to wait from a Retry-After header: delay-seconds, or an HTTP date (IMF-fixdate,
/// RFC 9110 §5.6.7, read by `httpdate`) counted from `now` (a date already past is 0). Absent or
/// unreadable: `None`.
fn retry_after(headers: &reqwest::header::HeaderMap, now: std::time::SystemTime) -> Option<u64> {
    let v = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    match v.parse::<u64>() {
        Ok(secs) => Some(secs),
        Err(_) => Some(
            httpdate::parse_http_date(v)
                .ok()?
                .duration_since(now)
                .map_or(0, |d| d.as_secs()),
        ),
    }
}

/// Parses `body` as `T`, naming the field that broke (through `serde_path_to_error`).
pub fn parse_json<T: DeserializeOwned>(
    body: &[u8],
    url: &str,
    what: &'static str,
) -> Result<T, HttpError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| HttpError::Malformed {
        url: url.to_owned(),
        what,
        field: e.path().to_string(),
        detail: e.into_inner().to_string(),
    })?;
    de.end().map_err(|e| HttpError::Malformed {
        url: url.to_owned(),
        what,
        field: ".".into(),
        detail: e.to_string(),
    })?;
    Ok(v)
}

/// How old a cached file is, in seconds (`None`: no such file, or no usable time).
pub(crate) fn age_s(file: &Path) -> Option<u64> {
    let modified = std::fs::metadata(file).ok()?.modified().ok()?;
    modified.elapsed().ok().map(|a| a.as_secs())
}

/// Writes a cache file whole or not at all (a temporary beside it, then a rename).
pub(crate) fn write_cache(file: &Path, body: &[u8]) {
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let tmp = file.with_extension("part");
    match std::fs::write(&tmp, body).and_then(|()| std::fs::rename(&tmp, file)) {
        Ok(()) => {}
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            tracing::debug!(error = %e, file = %file.display(), "could not write a cache file");
        }
    }
}

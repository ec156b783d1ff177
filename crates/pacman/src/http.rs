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

/// A cache file's bytes, only when it is archgate's own (its directory judged now, the file
/// this uid's, not a link, writable by no one else): a file planted in a directory that lost
/// trust is not answered as archgate's. `None`: none, or not one to use (a refetch).
pub(crate) fn read_cache(file: &Path) -> Option<Vec<u8>> {
    archgate_exec::own_file::read_own_file(file).ok()?
}

/// Writes a cache file whole or not at all, only into a cache directory judged now
/// (`archgate_exec::own_file`: the chain owned by this uid and writable by no one else, an
/// unpredictable temporary created `O_EXCL|O_NOFOLLOW`, renamed through the held directory).
/// A cache that cannot be written only costs a refetch; it is never written elsewhere.
pub(crate) fn write_cache(file: &Path, body: &[u8]) {
    if let Err(e) = archgate_exec::own_file::write_private_file_creating(file, body) {
        tracing::warn!(error = %e, file = %file.display(), "could not write a cache file");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// Class: a file written at a path judged once, or at a predictable name, follows whatever
    /// is there at write time (attack 14 F8: a link at `FILE.part` had `upkeep` overwrite the
    /// person's file). A link at the old temporary name is not followed, and a cache directory
    /// that lost trust after start (its parent opened to others, the directory swapped) is not
    /// written into at all.
    #[test]
    fn cache_writes_follow_no_planted_link_and_no_swapped_directory() {
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let home = t.path().join("cache");
        std::fs::create_dir(&home).unwrap();
        let victim = t.path().join("authorized_keys");
        std::fs::write(&victim, "mine\n").unwrap();
        let dir = home.join("archgate/upkeep");
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("mirror-status.part")).unwrap();
        let file = dir.join("mirror-status.json");
        write_cache(&file, b"{}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        assert_eq!(std::fs::read(&file).unwrap(), b"{}");
        assert_eq!(read_cache(&file).as_deref(), Some(&b"{}"[..]));

        // Trust lost while running: the cache home opened to others, its directory swapped for
        // one whose link points at the person's file.
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::rename(home.join("archgate"), home.join("moved")).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("mirror-status.json")).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join("mirror-status.part")).unwrap();
        write_cache(&file, b"{\"new\":1}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
        let entries: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(
            entries.len(),
            2,
            "nothing written into the swapped directory"
        );
        assert_eq!(read_cache(&file), None, "a planted cache is not answered");
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
}

//! One JSON document over HTTP, for the Arch mirror status and the security tracker: a
//! configurable URL, a timeout, a size cap and a cache directory with a TTL. When the network
//! fails, a cached copy of any age is the answer (said so in [`Origin`]); without one, the
//! failure is the answer — never an empty list.
//!
//! A document that does not parse is [`NetError::Malformed`] naming the field (`urls[3].last_sync`)
//! that broke, through `serde_path_to_error`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Errors fetching or reading one document.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
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
    /// An HTTP error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The body exceeded the cap.
    #[error("{url} answered more than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: u64,
    },
    /// The body is not the document expected; `field` is where it broke (`.` for the top).
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
    /// The URL is not http(s).
    #[error("invalid URL {0:?}: only http:// and https:// are fetched")]
    BadUrl(String),
}

impl NetError {
    /// A stable snake_case code.
    pub fn kind(&self) -> &'static str {
        match self {
            NetError::CouldNotReach { .. } | NetError::Status { .. } => "could_not_reach",
            NetError::TimedOut { .. } => "timed_out",
            NetError::TooLarge { .. } => "too_large",
            NetError::Malformed { .. } => "malformed",
            NetError::BadUrl(_) => "invalid_argument",
        }
    }
}

/// Where an answer came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum Origin {
    /// Fetched now.
    Network,
    /// A cached copy younger than the TTL.
    Cache {
        /// Its age in seconds.
        age_s: u64,
    },
    /// The network failed; a cached copy older than the TTL was used.
    StaleCache {
        /// Its age in seconds.
        age_s: u64,
        /// Why the network was not used.
        network_error: String,
    },
}

/// How to fetch.
#[derive(Debug, Clone)]
pub struct NetSettings {
    /// Request timeout.
    pub timeout: Duration,
    /// Largest body accepted.
    pub max_bytes: u64,
    /// Cache directory (`None`: no cache).
    pub cache_dir: Option<PathBuf>,
    /// How long a cached copy is used without asking the network.
    pub ttl: Duration,
}

impl Default for NetSettings {
    fn default() -> Self {
        NetSettings {
            timeout: Duration::from_secs(15),
            max_bytes: 32 * 1024 * 1024,
            cache_dir: None,
            ttl: Duration::from_secs(3600),
        }
    }
}

/// Parses `body` as `T`, naming the field that broke.
pub fn parse<T: DeserializeOwned>(
    body: &[u8],
    url: &str,
    what: &'static str,
) -> Result<T, NetError> {
    let mut de = serde_json::Deserializer::from_slice(body);
    let v: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        NetError::Malformed {
            url: url.to_owned(),
            what,
            field: path,
            detail: e.into_inner().to_string(),
        }
    })?;
    de.end().map_err(|e| NetError::Malformed {
        url: url.to_owned(),
        what,
        field: ".".into(),
        detail: e.to_string(),
    })?;
    Ok(v)
}

/// Fetches `url` (cached under `cache_name`) and parses it as `T`.
pub async fn get_json<T: DeserializeOwned>(
    settings: &NetSettings,
    url: &str,
    cache_name: &str,
    what: &'static str,
) -> Result<(T, Origin), NetError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(NetError::BadUrl(url.to_owned()));
    }
    let cache_file = settings.cache_dir.as_ref().map(|d| d.join(cache_name));
    let cached_age = |f: &PathBuf| {
        std::fs::metadata(f)
            .ok()?
            .modified()
            .ok()?
            .elapsed()
            .ok()
            .map(|a| a.as_secs())
    };
    if let Some(file) = &cache_file
        && let Some(age) = cached_age(file)
        && age < settings.ttl.as_secs()
        && let Ok(bytes) = std::fs::read(file)
        && let Ok(v) = parse::<T>(&bytes, url, what)
    {
        return Ok((v, Origin::Cache { age_s: age }));
    }
    match fetch(settings, url).await {
        Ok(body) => {
            let v = parse::<T>(&body, url, what)?;
            if let Some(file) = &cache_file {
                if let Some(dir) = file.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                let tmp = file.with_extension("part");
                if std::fs::write(&tmp, &body).is_ok() {
                    let _ = std::fs::rename(&tmp, file);
                }
            }
            Ok((v, Origin::Network))
        }
        Err(
            e @ (NetError::CouldNotReach { .. }
            | NetError::TimedOut { .. }
            | NetError::Status { .. }),
        ) => {
            if let Some(file) = &cache_file
                && let Some(age) = cached_age(file)
                && let Ok(bytes) = std::fs::read(file)
                && let Ok(v) = parse::<T>(&bytes, url, what)
            {
                return Ok((
                    v,
                    Origin::StaleCache {
                        age_s: age,
                        network_error: e.to_string(),
                    },
                ));
            }
            Err(e)
        }
        Err(e) => Err(e),
    }
}

async fn fetch(settings: &NetSettings, url: &str) -> Result<Vec<u8>, NetError> {
    let client =
        crate::remote::http_client(settings.timeout).map_err(|source| NetError::CouldNotReach {
            url: url.to_owned(),
            source,
        })?;
    let failed = |e: reqwest::Error| {
        if e.is_timeout() {
            NetError::TimedOut {
                url: url.to_owned(),
                after: settings.timeout,
            }
        } else {
            NetError::CouldNotReach {
                url: url.to_owned(),
                source: e.without_url(),
            }
        }
    };
    let mut response = client.get(url).send().await.map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        return Err(NetError::Status {
            url: url.to_owned(),
            status: status.as_u16(),
        });
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failed)? {
        body.extend_from_slice(&chunk);
        if body.len() as u64 > settings.max_bytes {
            return Err(NetError::TooLarge {
                url: url.to_owned(),
                limit: settings.max_bytes,
            });
        }
    }
    Ok(body)
}

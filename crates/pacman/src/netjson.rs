//! One JSON document over HTTP, for the Arch mirror status and the security tracker: a
//! configurable URL, a timeout, a size cap and a cache directory with a TTL. When the network
//! fails, a cached copy of any age is the answer (said so in [`Origin`]); without one, the
//! failure is the answer — never an empty list.
//!
//! A document that does not parse is [`HttpError::Malformed`] naming the field
//! (`urls[3].last_sync`) that broke.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::http::{self, HttpError};

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

/// Fetches `url` (cached under `cache_name`) and parses it as `T`.
pub async fn get_json<T: DeserializeOwned>(
    settings: &NetSettings,
    url: &str,
    cache_name: &str,
    what: &'static str,
) -> Result<(T, Origin), HttpError> {
    let client = http::client(url, settings.timeout)?;
    let cache_file = settings.cache_dir.as_ref().map(|d| d.join(cache_name));
    let cached = |fresh_only: bool| {
        let file = cache_file.as_ref()?;
        let age = http::age_s(file)?;
        if fresh_only && age >= settings.ttl.as_secs() {
            return None;
        }
        let v = http::parse_json::<T>(&http::read_cache(file)?, url, what).ok()?;
        Some((v, age))
    };
    if let Some((v, age)) = cached(true) {
        return Ok((v, Origin::Cache { age_s: age }));
    }
    match http::get(&client, url, settings.timeout, settings.max_bytes).await {
        Ok(body) => {
            let v = http::parse_json::<T>(&body, url, what)?;
            if let Some(file) = &cache_file {
                http::write_cache(file, &body);
            }
            Ok((v, Origin::Network))
        }
        Err(e) if e.is_unreachable() => match cached(false) {
            Some((v, age)) => Ok((
                v,
                Origin::StaleCache {
                    age_s: age,
                    network_error: e.to_string(),
                },
            )),
            None => Err(e),
        },
        Err(e) => Err(e),
    }
}

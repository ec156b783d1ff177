//! Configuration of the wiki clients: where to ask, how long to wait, how much to accept, where to cache.

use std::path::PathBuf;
use std::time::Duration;

/// Where the ArchWiki lives and how the online client behaves.
#[derive(Debug, Clone)]
pub struct WikiConfig {
    /// The MediaWiki API endpoint, e.g. `https://wiki.archlinux.org/api.php`.
    pub api_url: String,
    /// Prefix of human-readable page URLs, e.g. `https://wiki.archlinux.org/title/`.
    pub page_url_prefix: String,
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for one whole request, body included.
    pub request_timeout: Duration,
    /// Largest answer accepted from the network, in bytes.
    pub max_response_bytes: u64,
    /// Directory for the HTTP answer cache; `None` disables caching.
    pub cache_dir: Option<PathBuf>,
    /// How long a cached wiki answer stays fresh.
    pub cache_ttl: Duration,
    /// How long a cached news feed stays fresh.
    pub news_ttl: Duration,
    /// Size of one page of Markdown returned by `page`, in bytes.
    pub page_bytes: usize,
    /// User-Agent sent with every request.
    pub user_agent: String,
}

impl Default for WikiConfig {
    fn default() -> Self {
        WikiConfig {
            api_url: "https://wiki.archlinux.org/api.php".to_owned(),
            page_url_prefix: "https://wiki.archlinux.org/title/".to_owned(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(15),
            max_response_bytes: 8 * 1024 * 1024,
            cache_dir: None,
            cache_ttl: Duration::from_secs(24 * 3600),
            news_ttl: Duration::from_secs(3600),
            page_bytes: 24 * 1024,
            user_agent: concat!("archgate/", env!("CARGO_PKG_VERSION"), " (ArchWiki client)")
                .to_owned(),
        }
    }
}

impl WikiConfig {
    /// A configuration for a wiki at `base` (e.g. `http://127.0.0.1:8080`), with the
    /// ArchWiki's URL layout (`/api.php`, `/title/Page`).
    pub fn for_base_url(base: &str) -> Self {
        let base = base.trim_end_matches('/');
        WikiConfig {
            api_url: format!("{base}/api.php"),
            page_url_prefix: format!("{base}/title/"),
            ..WikiConfig::default()
        }
    }
}

/// The default Arch Linux news feed.
pub const DEFAULT_NEWS_FEED: &str = "https://archlinux.org/feeds/news/";

/// Which source the [`crate::Wiki`] facade asks first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Preference {
    /// The offline index when it exists and has the answer, the network otherwise.
    #[default]
    OfflineFirst,
    /// The network, and the offline index when the network cannot answer.
    OnlineFirst,
    /// Never touch the network.
    OfflineOnly,
    /// Never use the offline index.
    OnlineOnly,
}

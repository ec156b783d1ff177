//! The archlinux.org packages JSON API, for machines without pacman databases.
//!
//! `GET {base}/packages/search/json/?q=TEXT` (name or description) and `?name=NAME` (exact).
//! Base URL, timeout and size cap are configurable; answers are cached in a directory with a
//! TTL. Results say `source: "remote"`.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::http::{self, HttpError};
use crate::info::{InfoResult, OptDep, PackageDetails, SyncPackageInfo, Timestamp};
use crate::search::{SearchHit, SearchResult, Source};

/// Settings for the remote API.
#[derive(Debug, Clone)]
pub struct RemoteSettings {
    /// Base URL (default `https://archlinux.org`).
    pub base_url: String,
    /// Request timeout.
    pub timeout: Duration,
    /// Largest response body accepted.
    pub max_bytes: u64,
    /// Cache directory (`None` disables the cache).
    pub cache_dir: Option<PathBuf>,
    /// How long a cached answer is used.
    pub ttl: Duration,
}

impl Default for RemoteSettings {
    fn default() -> Self {
        RemoteSettings {
            base_url: "https://archlinux.org".to_owned(),
            timeout: Duration::from_secs(10),
            max_bytes: 4 * 1024 * 1024,
            cache_dir: None,
            ttl: Duration::from_secs(3600),
        }
    }
}

#[derive(Debug, Deserialize)]
struct ApiPage {
    results: Vec<ApiPackage>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(default)]
struct ApiPackage {
    pkgname: String,
    pkgbase: Option<String>,
    repo: String,
    arch: Option<String>,
    pkgver: String,
    pkgrel: String,
    epoch: u64,
    pkgdesc: String,
    url: Option<String>,
    filename: Option<String>,
    compressed_size: Option<u64>,
    installed_size: Option<u64>,
    build_date: Option<String>,
    packager: Option<String>,
    groups: Vec<String>,
    licenses: Vec<String>,
    conflicts: Vec<String>,
    provides: Vec<String>,
    replaces: Vec<String>,
    depends: Vec<String>,
    optdepends: Vec<String>,
}

impl ApiPackage {
    fn version(&self) -> String {
        if self.epoch > 0 {
            format!("{}:{}-{}", self.epoch, self.pkgver, self.pkgrel)
        } else {
            format!("{}-{}", self.pkgver, self.pkgrel)
        }
    }
}

/// Client for the packages API.
#[derive(Debug, Clone)]
pub struct RemoteClient {
    settings: RemoteSettings,
    client: reqwest::Client,
}

fn hex(s: &str) -> String {
    s.bytes().take(80).map(|b| format!("{b:02x}")).collect()
}

impl RemoteClient {
    /// Builds a client.
    pub fn new(settings: RemoteSettings) -> Result<RemoteClient, HttpError> {
        let client = http::client(&settings.base_url, settings.timeout)?;
        Ok(RemoteClient { settings, client })
    }

    async fn get(&self, params: &[(&str, &str)], cache_key: &str) -> Result<ApiPage, HttpError> {
        let cache_file = self
            .settings
            .cache_dir
            .as_ref()
            .map(|d| d.join(format!("pkgapi-{}.json", hex(cache_key))));
        if let Some(file) = &cache_file
            && http::age_s(file).is_some_and(|age| age < self.settings.ttl.as_secs())
            && let Some(bytes) = http::read_cache(file)
            && let Ok(page) = serde_json::from_slice::<ApiPage>(&bytes)
        {
            return Ok(page);
        }
        let query: Vec<String> = params
            .iter()
            .map(|(k, v)| format!("{k}={}", encode(v)))
            .collect();
        let url = format!(
            "{}/packages/search/json/?{}",
            self.settings.base_url.trim_end_matches('/'),
            query.join("&")
        );
        let body = http::get(
            &self.client,
            &url,
            self.settings.timeout,
            self.settings.max_bytes,
        )
        .await?;
        let page: ApiPage = http::parse_json(&body, &url, "the packages API JSON")?;
        if let Some(file) = cache_file {
            http::write_cache(&file, &body);
        }
        Ok(page)
    }

    /// Search by name or description (`?q=`), optionally in one repository.
    pub async fn search(
        &self,
        query: &str,
        repo: Option<&str>,
        limit: usize,
    ) -> Result<SearchResult, HttpError> {
        let repo_param = repo.map(capitalize);
        let mut params = vec![("q", query)];
        if let Some(r) = &repo_param {
            params.push(("repo", r.as_str()));
        }
        let page = self
            .get(&params, &format!("q\0{query}\0{}", repo.unwrap_or("")))
            .await?;
        let first = query.split_whitespace().next().unwrap_or("").to_lowercase();
        let mut hits: Vec<(u8, SearchHit)> = page
            .results
            .into_iter()
            .map(|p| {
                let name = p.pkgname.to_lowercase();
                let rank = if name == first {
                    0
                } else if name.starts_with(&first) {
                    1
                } else if name.contains(&first) {
                    2
                } else {
                    3
                };
                let version = p.version();
                (
                    rank,
                    SearchHit {
                        repo: p.repo,
                        name: p.pkgname,
                        version,
                        description: p.pkgdesc,
                        groups: p.groups,
                        installed: None,
                    },
                )
            })
            .collect();
        hits.sort_by(|a, b| (a.0, &a.1.name).cmp(&(b.0, &b.1.name)));
        hits.dedup_by(|a, b| a.1.name == b.1.name && a.1.repo == b.1.repo);
        let total = hits.len();
        Ok(SearchResult {
            source: Source::Remote,
            query: query.to_owned(),
            total,
            truncated: total > limit,
            results: hits.into_iter().take(limit).map(|h| h.1).collect(),
            warnings: vec!["no pacman databases here; answered by the archlinux.org API".into()],
        })
    }

    /// Exact package by name (`?name=`); `None` when the API knows none.
    pub async fn info(&self, name: &str) -> Result<Option<InfoResult>, HttpError> {
        let page = self
            .get(&[("name", name)], &format!("name\0{name}"))
            .await?;
        let sync: Vec<SyncPackageInfo> = page
            .results
            .into_iter()
            .filter(|p| p.pkgname == name)
            .map(|p| {
                let build_date = p.build_date.as_deref().and_then(|d| {
                    time::OffsetDateTime::parse(d, &time::format_description::well_known::Rfc3339)
                        .ok()
                        .map(|t| Timestamp(t.unix_timestamp()))
                });
                SyncPackageInfo {
                    repo: p.repo.clone(),
                    details: PackageDetails {
                        name: p.pkgname.clone(),
                        version: p.version(),
                        base: p.pkgbase.clone(),
                        description: p.pkgdesc.clone(),
                        architecture: p.arch.clone(),
                        url: p.url.clone(),
                        licenses: p.licenses.clone(),
                        groups: p.groups.clone(),
                        provides: p.provides.clone(),
                        depends: p.depends.clone(),
                        optdepends: p
                            .optdepends
                            .iter()
                            .map(|o| {
                                let d = crate::version::Depend::parse(o);
                                OptDep {
                                    name: d.spec(),
                                    reason: d.description,
                                    installed: false,
                                }
                            })
                            .collect(),
                        conflicts: p.conflicts.clone(),
                        replaces: p.replaces.clone(),
                        installed_size: p.installed_size,
                        packager: p.packager.clone(),
                        build_date,
                    },
                    download_size: p.compressed_size,
                    filename: p.filename.clone(),
                    validated_by: Vec::new(),
                }
            })
            .collect();
        if sync.is_empty() {
            return Ok(None);
        }
        Ok(Some(InfoResult {
            source: Source::Remote,
            name: name.to_owned(),
            sync,
            installed: None,
        }))
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters stay).
fn encode(v: &str) -> String {
    v.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

//! GET with a whole-request deadline, a size cap read chunk by chunk, status mapping
//! (404 → not_found, 429 → rate_limited) and the on-disk cache in front.

use reqwest::Url;

use super::cache::Cache;
use super::config::AurConfig;
use super::error::AurError;

#[derive(Debug)]
pub(super) struct Http {
    pub config: AurConfig,
    client: reqwest::Client,
    cache: Option<Cache>,
}

impl Http {
    pub(super) fn new(config: AurConfig) -> Result<Http, AurError> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.connect_timeout)
            .user_agent(config.user_agent.clone())
            .build()
            .map_err(|e| AurError::InvalidArgument {
                reason: format!("cannot build the HTTP client: {e}"),
            })?;
        let cache = config
            .cache_dir
            .clone()
            .map(|d| Cache::new(d, config.cache_ttl));
        Ok(Http {
            config,
            client,
            cache,
        })
    }

    /// `base_url` + `path` with the query pairs encoded.
    pub(super) fn url(&self, path: &str, query: &[(&str, &str)]) -> Result<String, AurError> {
        let base = self.config.base_url.trim_end_matches('/');
        let mut url =
            Url::parse(&format!("{base}{path}")).map_err(|e| AurError::InvalidArgument {
                reason: format!("bad AUR base URL {base}: {e}"),
            })?;
        if !query.is_empty() {
            let mut qp = url.query_pairs_mut();
            for (k, v) in query {
                qp.append_pair(k, v);
            }
        }
        Ok(url.to_string())
    }

    /// Fetches `url` (cached for the TTL).
    pub(super) async fn get(&self, url: &str, limit: usize) -> Result<Vec<u8>, AurError> {
        if let Some(c) = &self.cache
            && let Some(hit) = c.get(url).await
        {
            tracing::debug!(url, "aur cache hit");
            return Ok(hit);
        }
        let deadline = self.config.timeout;
        let body = match tokio::time::timeout(deadline, self.fetch(url, limit)).await {
            Ok(r) => r?,
            Err(_) => {
                return Err(AurError::TimedOut {
                    url: url.to_owned(),
                    after: deadline,
                });
            }
        };
        if let Some(c) = &self.cache {
            c.put(url, &body).await;
        }
        Ok(body)
    }

    async fn fetch(&self, url: &str, limit: usize) -> Result<Vec<u8>, AurError> {
        let mut resp = self
            .client
            .get(url)
            .send()
            .await
            .map_err(|e| self.send_error(url, &e))?;
        let status = resp.status().as_u16();
        match status {
            200 => {}
            404 => {
                return Err(AurError::NotFound {
                    what: url.to_owned(),
                });
            }
            429 => {
                let retry_after = retry_after(resp.headers(), std::time::SystemTime::now());
                return Err(AurError::RateLimited {
                    url: url.to_owned(),
                    retry_after,
                });
            }
            s => {
                return Err(AurError::Status {
                    url: url.to_owned(),
                    status: s,
                    retry_after: retry_after(resp.headers(), std::time::SystemTime::now()),
                });
            }
        }
        if resp.content_length().is_some_and(|n| n > limit as u64) {
            return Err(AurError::TooLarge {
                url: url.to_owned(),
                limit,
            });
        }
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    if body.len() + chunk.len() > limit {
                        return Err(AurError::TooLarge {
                            url: url.to_owned(),
                            limit,
                        });
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(self.send_error(url, &e)),
            }
        }
        Ok(body)
    }

    fn send_error(&self, url: &str, e: &reqwest::Error) -> AurError {
        if e.is_timeout() {
            return AurError::TimedOut {
                url: url.to_owned(),
                after: self.config.timeout,
            };
        }
        let mut reason = e.to_string();
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            reason = format!("{reason}: {s}");
            src = s.source();
        }
        AurError::CouldNotReach {
            url: url.to_owned(),
            reason,
        }
    }
}

/// Seconds to wait from a Retry-After header: delay-seconds, or an HTTP date (IMF-fixdate,
/// RFC 9110 §5.6.7, read by `httpdate`) counted from `now` (a date already past is 0). Absent or
/// unreadable: `None`.
pub(crate) fn retry_after(
    headers: &reqwest::header::HeaderMap,
    now: std::time::SystemTime,
) -> Option<u64> {
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

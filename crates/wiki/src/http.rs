//! One HTTP GET with a deadline, a size cap and typed errors; every network answer of this crate goes through it.

use std::time::Duration;

use crate::config::WikiConfig;
use crate::error::WikiError;

/// A configured HTTP client.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
    timeout: Duration,
    cap: u64,
}

/// A successful answer.
pub(crate) struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Fetcher {
    pub fn new(config: &WikiConfig) -> Result<Self, WikiError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .user_agent(config.user_agent.clone())
            .redirect(reqwest::redirect::Policy::limited(5))
            .build()
            .map_err(|e| WikiError::CouldNotReach {
                url: config.api_url.clone(),
                reason: format!("HTTP client could not start: {e}"),
            })?;
        Ok(Fetcher {
            client,
            timeout: config.request_timeout,
            cap: config.max_response_bytes,
        })
    }

    /// GETs `url` with `query`, reading at most the cap; the whole exchange must end within the timeout.
    pub async fn get(&self, url: &str, query: &[(&str, &str)]) -> Result<Fetched, WikiError> {
        let shown = show_url(url, query);
        match tokio::time::timeout(self.timeout, self.get_inner(&shown)).await {
            Ok(r) => r,
            Err(_) => Err(WikiError::TimedOut {
                url: shown,
                timeout_ms: self.timeout.as_millis() as u64,
            }),
        }
    }

    async fn get_inner(&self, shown: &str) -> Result<Fetched, WikiError> {
        let map = |e: reqwest::Error| self.map_err(shown, e);
        let mut resp = self.client.get(shown).send().await.map_err(map)?;
        let status = resp.status().as_u16();
        // A refusal is said as what it is, never as a damaged answer: 429 is rate limiting,
        // any other status outside 2xx (and the 404 callers read) is the status itself, each
        // with the Retry-After the server gave.
        if status == 429 || !((200..300).contains(&status) || status == 404) {
            let retry_after_s = retry_after(resp.headers(), std::time::SystemTime::now());
            return Err(if status == 429 {
                WikiError::RateLimited {
                    url: shown.to_owned(),
                    retry_after_s,
                }
            } else {
                WikiError::Status {
                    url: shown.to_owned(),
                    status,
                    retry_after_s,
                }
            });
        }
        if resp.content_length().is_some_and(|n| n > self.cap) {
            return Err(WikiError::TooLarge {
                url: shown.to_owned(),
                cap_bytes: self.cap,
            });
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(map)? {
            if body.len() as u64 + chunk.len() as u64 > self.cap {
                return Err(WikiError::TooLarge {
                    url: shown.to_owned(),
                    cap_bytes: self.cap,
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Fetched { status, body })
    }

    fn map_err(&self, url: &str, e: reqwest::Error) -> WikiError {
        // The URL is said once, by our error; reqwest's text would repeat it.
        let e = e.without_url();
        if e.is_timeout() {
            return WikiError::TimedOut {
                url: url.to_owned(),
                timeout_ms: self.timeout.as_millis() as u64,
            };
        }
        if e.is_decode() || e.is_body() && !e.is_connect() && !e.is_request() {
            return WikiError::Malformed {
                source_name: url.to_owned(),
                detail: error_chain(&e),
            };
        }
        WikiError::CouldNotReach {
            url: url.to_owned(),
            reason: error_chain(&e),
        }
    }
}

/// The URL with its query, for messages and cache keys.
pub(crate) fn show_url(url: &str, query: &[(&str, &str)]) -> String {
    if query.is_empty() {
        return url.to_owned();
    }
    let q: Vec<String> = query
        .iter()
        .map(|(k, v)| format!("{k}={}", crate::types::encode_component(v)))
        .collect();
    format!("{url}?{}", q.join("&"))
}

/// An error and its sources on one line ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(src) = cur {
        let t = src.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        cur = src.source();
    }
    s
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

#[cfg(test)]
mod tests {
    use super::retry_after;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
    use std::time::{Duration, SystemTime};

    fn with(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date() {
        // 2026-12-05 18:00:00 UTC.
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_493_600);
        assert_eq!(retry_after(&with("120"), now), Some(120));
        assert_eq!(
            retry_after(&with("Sat, 05 Dec 2026 18:02:30 GMT"), now),
            Some(150)
        );
        assert_eq!(
            retry_after(&with("Sat, 05 Dec 2026 17:00:00 GMT"), now),
            Some(0)
        );
        assert_eq!(retry_after(&with("soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }
}

//! The ArchWiki over the network: MediaWiki `list=search` (opensearch as fallback) and `action=parse`.

use serde_json::Value;
use time::OffsetDateTime;

use crate::args::WikiPageArgs;
use crate::cache::Cache;
use crate::config::WikiConfig;
use crate::convert;
use crate::document;
use crate::error::WikiError;
use crate::http::{Fetcher, show_url};
use crate::lang;
use crate::types::{
    LanguageLink, Origin, SearchHit, SearchResults, Source, WikiPage, normalize_title, page_uri,
    title_from_uri,
};

/// A client of the ArchWiki's MediaWiki API.
#[derive(Debug, Clone)]
pub struct OnlineWiki {
    config: WikiConfig,
    fetcher: Fetcher,
    cache: Option<Cache>,
}

/// A page as the parse API gave it.
#[derive(Debug, Clone)]
pub struct ParsedPage {
    /// Title after redirects.
    pub title: String,
    /// Revision id.
    pub revision: Option<u64>,
    /// The rendered HTML (`.mw-parser-output`).
    pub html: String,
    /// Other languages.
    pub languages: Vec<LanguageLink>,
    /// Source and age.
    pub origin: Origin,
}

impl OnlineWiki {
    /// A client for `config`.
    pub fn new(config: WikiConfig) -> Result<Self, WikiError> {
        let fetcher = Fetcher::new(&config)?;
        let cache = config.cache_dir.as_deref().map(Cache::new);
        Ok(OnlineWiki {
            config,
            fetcher,
            cache,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &WikiConfig {
        &self.config
    }

    /// The web URL of a page.
    pub fn page_url(&self, title: &str) -> String {
        format!(
            "{}{}",
            self.config.page_url_prefix,
            crate::types::encode_component(&normalize_title(title).replace(' ', "_"))
        )
    }

    /// Full-text search with snippets; opensearch (title prefix) when the search API
    /// gives nothing or an answer that cannot be read.
    pub async fn search(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        let limit = limit.clamp(1, 50);
        match self.fulltext(query, limit).await {
            Ok(r) if !r.hits.is_empty() => Ok(r),
            Ok(empty) => match self.opensearch(query, limit).await {
                Ok(o) if !o.hits.is_empty() => Ok(o),
                _ => Ok(empty),
            },
            Err(e @ WikiError::Malformed { .. }) => {
                tracing::warn!(error = %e, "wiki search API failed, trying opensearch");
                self.opensearch(query, limit).await.map_err(|_| e)
            }
            Err(e) => Err(e),
        }
    }

    async fn fulltext(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        let limit_s = limit.to_string();
        let params = [
            ("action", "query"),
            ("list", "search"),
            ("srsearch", query),
            ("srprop", "snippet"),
            ("srlimit", limit_s.as_str()),
            ("format", "json"),
            ("formatversion", "2"),
        ];
        let (v, origin) = self.get_json(&params).await?;
        let source_name = show_url(&self.config.api_url, &params);
        api_error(&v, &source_name)?;
        let list = v
            .pointer("/query/search")
            .and_then(Value::as_array)
            .ok_or_else(|| WikiError::Malformed {
                source_name: source_name.clone(),
                detail: "no query.search list".to_owned(),
            })?;
        let hits = list
            .iter()
            .filter_map(|h| {
                let title = h.get("title")?.as_str()?;
                let snippet = h.get("snippet").and_then(Value::as_str).unwrap_or("");
                Some(SearchHit {
                    title: title.to_owned(),
                    uri: page_uri(title),
                    snippet: strip_html(snippet),
                    url: Some(self.page_url(title)),
                    score: None,
                })
            })
            .take(limit)
            .collect();
        Ok(SearchResults {
            query: query.to_owned(),
            hits,
            api: Some("search"),
            origin,
        })
    }

    /// Title-prefix search (`action=opensearch`).
    pub async fn opensearch(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        let limit_s = limit.clamp(1, 50).to_string();
        let params = [
            ("action", "opensearch"),
            ("search", query),
            ("limit", limit_s.as_str()),
            ("namespace", "0"),
            ("format", "json"),
        ];
        let (v, origin) = self.get_json(&params).await?;
        let source_name = show_url(&self.config.api_url, &params);
        api_error(&v, &source_name)?;
        let malformed = || WikiError::Malformed {
            source_name: source_name.clone(),
            detail: "expected [query, [titles], [descriptions], [urls]]".to_owned(),
        };
        let arr = v.as_array().ok_or_else(malformed)?;
        let titles = arr.get(1).and_then(Value::as_array).ok_or_else(malformed)?;
        let descs = arr.get(2).and_then(Value::as_array);
        let urls = arr.get(3).and_then(Value::as_array);
        let hits = titles
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let title = t.as_str()?;
                Some(SearchHit {
                    title: title.to_owned(),
                    uri: page_uri(title),
                    snippet: descs
                        .and_then(|d| d.get(i))
                        .and_then(Value::as_str)
                        .map(strip_html)
                        .unwrap_or_default(),
                    url: urls
                        .and_then(|u| u.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                        .or_else(|| Some(self.page_url(title))),
                    score: None,
                })
            })
            .collect();
        Ok(SearchResults {
            query: query.to_owned(),
            hits,
            api: Some("opensearch"),
            origin,
        })
    }

    /// Fetches a page through the parse API (redirects followed).
    pub async fn parse(&self, title: &str) -> Result<ParsedPage, WikiError> {
        let params = [
            ("action", "parse"),
            ("page", title),
            ("prop", "text|sections|revid|langlinks"),
            ("redirects", "1"),
            ("disableeditsection", "1"),
            ("format", "json"),
            ("formatversion", "2"),
        ];
        let (v, origin) = self.get_json(&params).await?;
        let source_name = show_url(&self.config.api_url, &params);
        if let Some(code) = v.pointer("/error/code").and_then(Value::as_str)
            && matches!(code, "missingtitle" | "invalidtitle" | "nosuchpageid")
        {
            let suggestions = match self.opensearch(title, 5).await {
                Ok(r) => r.hits.into_iter().map(|h| h.title).collect(),
                Err(_) => Vec::new(),
            };
            return Err(WikiError::NotFound {
                title: title.to_owned(),
                suggestions,
            });
        }
        api_error(&v, &source_name)?;
        let p = v.get("parse").ok_or_else(|| WikiError::Malformed {
            source_name: source_name.clone(),
            detail: "no parse object".to_owned(),
        })?;
        // formatversion=2 gives `text` as a string; version 1 as {"*": "..."}.
        let html = p
            .get("text")
            .and_then(|t| t.as_str().or_else(|| t.get("*").and_then(Value::as_str)))
            .ok_or_else(|| WikiError::Malformed {
                source_name: source_name.clone(),
                detail: "no parse.text".to_owned(),
            })?;
        let languages = p
            .get("langlinks")
            .and_then(Value::as_array)
            .map(|links| {
                links
                    .iter()
                    .filter_map(|l| {
                        Some(LanguageLink {
                            lang: l.get("lang")?.as_str()?.to_owned(),
                            title: l
                                .get("title")
                                .or_else(|| l.get("*"))
                                .and_then(Value::as_str)?
                                .to_owned(),
                            url: l.get("url").and_then(Value::as_str).map(str::to_owned),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(ParsedPage {
            title: p
                .get("title")
                .and_then(Value::as_str)
                .unwrap_or(title)
                .to_owned(),
            revision: p.get("revid").and_then(Value::as_u64),
            html: html.to_owned(),
            languages,
            origin,
        })
    }

    /// A page (or a section of it) as Markdown, one output page at a time.
    pub async fn page(&self, args: &WikiPageArgs) -> Result<WikiPage, WikiError> {
        let base = requested_title(&args.title);
        let code = lang::lang_code(args.lang.as_deref());
        let parsed = match &code {
            None => self.parse(&base).await?,
            Some(code) => self.parse_translation(&base, code).await?,
        };
        let md = convert::page_markdown(&parsed.html);
        let sel = document::select(
            &parsed.title,
            &md,
            args.section.as_ref(),
            args.page,
            args.toc.unwrap_or(false),
            self.config.page_bytes,
        )?;
        Ok(WikiPage {
            uri: page_uri(&parsed.title),
            url: Some(self.page_url(&parsed.title)),
            lang: code.unwrap_or_else(|| lang::lang_of_title(&parsed.title).to_owned()),
            section: sel.section,
            page: sel.page,
            pages: sel.pages,
            next_page: (sel.page < sel.pages).then_some(sel.page + 1),
            total_bytes: sel.total_bytes,
            markdown: sel.markdown,
            toc: sel.toc,
            languages: parsed.languages,
            revision: parsed.revision,
            origin: parsed.origin,
            title: parsed.title,
        })
    }

    /// The `Title (Autonym)` page; failing that, the interlanguage link of the English page
    /// when it points into this wiki.
    async fn parse_translation(&self, base: &str, code: &str) -> Result<ParsedPage, WikiError> {
        let variant = lang::variant_title(base, code);
        match self.parse(&variant).await {
            Err(WikiError::NotFound { .. }) => {
                let english = self.parse(base).await?;
                let link = english.languages.iter().find(|l| l.lang == code);
                match link {
                    Some(l)
                        if l.url
                            .as_deref()
                            .is_none_or(|u| u.starts_with(&self.config.page_url_prefix)) =>
                    {
                        self.parse(&l.title).await
                    }
                    _ => Err(WikiError::NotFound {
                        title: variant,
                        suggestions: english
                            .languages
                            .iter()
                            .filter(|l| l.lang == code)
                            .filter_map(|l| l.url.clone())
                            .chain(std::iter::once(english.title.clone()))
                            .collect(),
                    }),
                }
            }
            other => other,
        }
    }

    /// GETs the API with `params` as JSON, through the cache.
    async fn get_json(&self, params: &[(&str, &str)]) -> Result<(Value, Origin), WikiError> {
        let url = self.config.api_url.clone();
        let ttl = self.config.cache_ttl;
        cached_fetch(
            &self.fetcher,
            self.cache.as_ref(),
            &url,
            params,
            ttl,
            |body| {
                let v: Value = serde_json::from_slice(body).map_err(|e| WikiError::Malformed {
                    source_name: show_url(&url, params),
                    detail: format!("not JSON: {e}"),
                })?;
                let cacheable = v.get("error").is_none();
                Ok((v, cacheable))
            },
        )
        .await
    }
}

/// Fetches `url` through the cache: a fresh entry answers at once; otherwise the network,
/// and when the network fails, a stale entry (marked stale) rather than nothing.
pub(crate) async fn cached_fetch<T>(
    fetcher: &Fetcher,
    cache: Option<&Cache>,
    url: &str,
    params: &[(&str, &str)],
    ttl: std::time::Duration,
    parse: impl Fn(&[u8]) -> Result<(T, bool), WikiError>,
) -> Result<(T, Origin), WikiError> {
    let key = show_url(url, params);
    let cached = cache.and_then(|c| c.get(&key));
    if let Some(hit) = &cached
        && hit.is_fresh(ttl)
        && let Ok((v, _)) = parse(&hit.body)
    {
        return Ok((v, Origin::new(Source::Online, hit.fetched_at, true, false)));
    }
    let fetched_at = OffsetDateTime::now_utc();
    let result = match fetcher.get(url, params).await {
        Ok(f) if f.status == 404 => Err(WikiError::Malformed {
            source_name: key.clone(),
            detail: "HTTP status 404".to_owned(),
        }),
        Ok(f) => parse(&f.body).map(|(v, cacheable)| (v, cacheable, f.body)),
        Err(e) => Err(e),
    };
    match result {
        Ok((v, cacheable, body)) => {
            if cacheable
                && let Some(c) = cache
                && let Err(e) = c.put(&key, &body, fetched_at)
            {
                tracing::warn!(error = %e, "could not write the wiki cache");
            }
            Ok((v, Origin::new(Source::Online, fetched_at, false, false)))
        }
        Err(e) if e.is_transport() => {
            match cached.and_then(|hit| parse(&hit.body).ok().map(|(v, _)| (v, hit.fetched_at))) {
                Some((v, at)) => {
                    tracing::warn!(error = %e, url = %key, "network failed; serving a stale cached answer");
                    Ok((v, Origin::new(Source::Online, at, true, true)))
                }
                None => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// A MediaWiki `{"error": {...}}` answer as a typed error.
fn api_error(v: &Value, source_name: &str) -> Result<(), WikiError> {
    match v.get("error") {
        // MediaWiki's own rate limit (`ratelimited`, and `maxlag` when its replicas lag).
        Some(err)
            if matches!(
                err.get("code").and_then(Value::as_str),
                Some("ratelimited" | "maxlag")
            ) =>
        {
            Err(WikiError::RateLimited {
                url: source_name.to_owned(),
                retry_after_s: None,
            })
        }
        Some(err) => Err(WikiError::Malformed {
            source_name: source_name.to_owned(),
            detail: format!(
                "API error {}: {}",
                err.get("code").and_then(Value::as_str).unwrap_or("unknown"),
                err.get("info").and_then(Value::as_str).unwrap_or("")
            ),
        }),
        None => Ok(()),
    }
}

/// A title argument: a plain title or an `archwiki://page/Title` reference.
pub(crate) fn requested_title(arg: &str) -> String {
    title_from_uri(arg.trim()).unwrap_or_else(|| normalize_title(arg))
}

/// Plain text of an HTML snippet (search matches are `<span class="searchmatch">`).
pub(crate) fn strip_html(s: &str) -> String {
    let frag = scraper::Html::parse_fragment(s);
    let text: String = frag.root_element().text().collect();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

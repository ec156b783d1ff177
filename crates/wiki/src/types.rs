//! The answers this crate gives (serialized to agents as JSON) and the `archwiki://` URI scheme.

use serde::Serialize;
use time::OffsetDateTime;

/// The URI scheme prefix of wiki page references.
pub const PAGE_URI_PREFIX: &str = "archwiki://page/";

/// Which source answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The offline full-text index.
    Offline,
    /// The ArchWiki (or the news feed) over the network, possibly through the cache.
    Online,
}

/// Where an answer came from and how old it is.
#[derive(Debug, Clone, Serialize)]
pub struct Origin {
    /// `offline` or `online`.
    pub source: Source,
    /// When the data was obtained: the index build time, or the fetch time (RFC 3339).
    pub as_of: String,
    /// Seconds between `as_of` and now.
    pub age_seconds: u64,
    /// True when an online answer came from the local cache.
    pub from_cache: bool,
    /// True when a cached answer past its TTL was served because the network failed.
    pub stale: bool,
    /// Why another source answered than the one preferred: the online wiki's failure (rate
    /// limited, with its Retry-After) when the offline index answered instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instead_of_online: Option<String>,
}

impl Origin {
    pub(crate) fn new(
        source: Source,
        as_of: OffsetDateTime,
        from_cache: bool,
        stale: bool,
    ) -> Self {
        let now = OffsetDateTime::now_utc();
        let age = (now - as_of).whole_seconds().max(0) as u64;
        Origin {
            source,
            as_of: rfc3339(as_of),
            age_seconds: age,
            from_cache,
            stale,
            instead_of_online: None,
        }
    }
}

/// One search hit.
#[derive(Debug, Clone, Serialize)]
pub struct SearchHit {
    /// Page title.
    pub title: String,
    /// `archwiki://page/Title` reference for `wiki_page` or the resource.
    pub uri: String,
    /// A short plain-text excerpt around the matches (may be empty).
    pub snippet: String,
    /// The page on the web, when answered online.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The relevance score (offline answers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
}

/// The answer to a search.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    /// The query as asked.
    pub query: String,
    /// Hits, best first.
    pub hits: Vec<SearchHit>,
    /// Which API answered online: `search`, or `opensearch` when the full-text search could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api: Option<&'static str>,
    /// Source and age.
    #[serde(flatten)]
    pub origin: Origin,
}

/// One entry of a page's table of contents. Index 0 is the lead before the first heading.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TocEntry {
    /// Section number, usable as the `section` argument.
    pub index: u32,
    /// Heading level (2 for `==`, 3 for `===` ...); 1 for the lead.
    pub level: u8,
    /// Heading text.
    pub title: String,
}

/// A link to the same page in another language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LanguageLink {
    /// Language code (`es`, `de`, `zh-hans` ...).
    pub lang: String,
    /// Page title in that language.
    pub title: String,
    /// Its URL, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A wiki page (or one section of it) as Markdown, one page of output at a time.
#[derive(Debug, Clone, Serialize)]
pub struct WikiPage {
    /// The page title (after redirects).
    pub title: String,
    /// `archwiki://page/Title`.
    pub uri: String,
    /// The page on the web, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Language code of this page.
    pub lang: String,
    /// The section shown, when one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<TocEntry>,
    /// This output page (1-based).
    pub page: u32,
    /// How many output pages the content has.
    pub pages: u32,
    /// The page number to ask for next, when there is more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_page: Option<u32>,
    /// Size of the whole (section's) Markdown in bytes.
    pub total_bytes: usize,
    /// The Markdown of this output page.
    pub markdown: String,
    /// Table of contents, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toc: Option<Vec<TocEntry>>,
    /// Other languages of this page, when known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<LanguageLink>,
    /// MediaWiki revision id, when answered online.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
    /// Source and age.
    #[serde(flatten)]
    pub origin: Origin,
}

/// One Arch news item.
#[derive(Debug, Clone, Serialize)]
pub struct NewsItem {
    /// Headline.
    pub title: String,
    /// Link to the item on the web.
    pub link: String,
    /// Publication time (RFC 3339).
    pub published: String,
    /// The body as Markdown.
    pub body: String,
    /// True when the item says that a manual intervention is required.
    pub manual_intervention: bool,
}

/// The answer to a news query.
#[derive(Debug, Clone, Serialize)]
pub struct NewsResult {
    /// The feed asked.
    pub feed_url: String,
    /// Only items published after this time (RFC 3339), when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Items, newest first.
    pub items: Vec<NewsItem>,
    /// How many of `items` require manual intervention.
    pub manual_intervention_count: usize,
    /// How many items matched before `limit` was applied.
    pub matched: usize,
    /// Source and age.
    #[serde(flatten)]
    pub origin: Origin,
}

/// RFC 3339 text of a time (UTC).
pub(crate) fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// A title in MediaWiki's canonical form: underscores and runs of blanks become one space,
/// trimmed, first letter upper-cased.
pub fn normalize_title(title: &str) -> String {
    let spaced: String = title
        .replace('_', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The `archwiki://page/Title` reference of a title (an optional `#fragment` is kept).
pub fn page_uri(title: &str) -> String {
    let (title, fragment) = match title.split_once('#') {
        Some((t, f)) => (t, Some(f)),
        None => (title, None),
    };
    let mut uri = String::from(PAGE_URI_PREFIX);
    uri.push_str(&encode_component(&normalize_title(title).replace(' ', "_")));
    if let Some(f) = fragment.filter(|f| !f.is_empty()) {
        uri.push('#');
        uri.push_str(&encode_component(&f.replace(' ', "_")));
    }
    uri
}

/// The title named by an `archwiki://page/Title` reference (fragment dropped), or `None`.
pub fn title_from_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix(PAGE_URI_PREFIX)?;
    let rest = rest.split('#').next().unwrap_or(rest);
    let title = normalize_title(&percent_decode(rest));
    (!title.is_empty()).then_some(title)
}

/// Percent-encodes everything but RFC 3986 unreserved characters and a few safe sub-delimiters.
pub(crate) fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'-'
            | b'.'
            | b'_'
            | b'~'
            | b':'
            | b'/'
            | b'!'
            | b','
            | b';'
            | b'@' => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes `%XX` escapes (invalid escapes are kept as written; invalid UTF-8 is replaced).
pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_round_trip_keeps_unicode_and_parentheses() {
        let uri = page_uri("pacman (Español)");
        assert_eq!(uri, "archwiki://page/Pacman_%28Espa%C3%B1ol%29");
        assert_eq!(title_from_uri(&uri).as_deref(), Some("Pacman (Español)"));
        assert_eq!(
            page_uri("Systemd#Basic usage"),
            "archwiki://page/Systemd#Basic_usage"
        );
        assert_eq!(
            title_from_uri("archwiki://page/Power_management#x").as_deref(),
            Some("Power management")
        );
        assert_eq!(title_from_uri("https://x"), None);
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}

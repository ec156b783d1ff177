//! Arch Linux news: the RSS 2.0 feed read with a real XML parser, items needing manual
//! intervention flagged, filtered by a `since` time (the lead passes the last full upgrade).

use quick_xml::Reader;
use quick_xml::events::Event;
use time::OffsetDateTime;
use time::format_description::well_known::{Rfc2822, Rfc3339};

use crate::cache::Cache;
use crate::config::WikiConfig;
use crate::convert::{clean_html, html_to_markdown};
use crate::error::WikiError;
use crate::http::Fetcher;
use crate::online::cached_fetch;
use crate::types::{NewsItem, NewsResult, rfc3339};

/// A client of the Arch news feed.
#[derive(Debug, Clone)]
pub struct NewsClient {
    fetcher: Fetcher,
    cache: Option<Cache>,
    ttl: std::time::Duration,
}

/// A feed item with its parsed time.
#[derive(Debug, Clone)]
pub struct DatedItem {
    /// Publication time.
    pub published: OffsetDateTime,
    /// The item.
    pub item: NewsItem,
}

impl NewsClient {
    /// A client using the timeouts, size cap and cache of `config` (TTL `news_ttl`).
    pub fn new(config: &WikiConfig) -> Result<Self, WikiError> {
        Ok(NewsClient {
            fetcher: Fetcher::new(config)?,
            cache: config.cache_dir.as_deref().map(Cache::new),
            ttl: config.news_ttl,
        })
    }

    /// Items of the feed at `feed_url`, newest first, published after `since` (when given),
    /// at most `limit`.
    pub async fn news(
        &self,
        feed_url: &str,
        limit: usize,
        since: Option<OffsetDateTime>,
    ) -> Result<NewsResult, WikiError> {
        let (items, origin) = cached_fetch(
            &self.fetcher,
            self.cache.as_ref(),
            feed_url,
            &[],
            self.ttl,
            |body| parse_feed(body, feed_url).map(|items| (items, true)),
        )
        .await?;
        let mut items: Vec<DatedItem> = items
            .into_iter()
            .filter(|i| since.is_none_or(|s| i.published > s))
            .collect();
        items.sort_by_key(|i| std::cmp::Reverse(i.published));
        let matched = items.len();
        items.truncate(limit.max(1));
        let items: Vec<NewsItem> = items.into_iter().map(|d| d.item).collect();
        Ok(NewsResult {
            feed_url: feed_url.to_owned(),
            since: since.map(rfc3339),
            manual_intervention_count: items.iter().filter(|i| i.manual_intervention).count(),
            matched,
            items,
            origin,
        })
    }
}

/// Which element of an item text belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Title,
    Link,
    Date,
    Description,
    Other,
}

#[derive(Default)]
struct Draft {
    title: String,
    link: String,
    date: String,
    description: String,
}

/// Parses an RSS 2.0 feed (`rss/channel/item` with `title`, `link`, `pubDate`, `description`).
/// Items without a readable date are skipped; a document that is not RSS is [`WikiError::Malformed`].
pub fn parse_feed(xml: &[u8], source_name: &str) -> Result<Vec<DatedItem>, WikiError> {
    let malformed = |detail: String| WikiError::Malformed {
        source_name: source_name.to_owned(),
        detail,
    };
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut saw_rss = false;
    let mut depth_names: Vec<String> = Vec::new();
    let mut draft: Option<Draft> = None;
    let mut part = Part::Other;
    let mut items = Vec::new();
    let mut skipped = 0usize;
    loop {
        let ev = reader.read_event_into(&mut buf).map_err(|e| {
            malformed(format!(
                "XML error at byte {}: {e}",
                reader.buffer_position()
            ))
        })?;
        match ev {
            Event::Start(e) => {
                let name = local_name(e.name().as_ref());
                if depth_names.is_empty() {
                    if name != "rss" {
                        return Err(malformed(format!("root element is <{name}>, not <rss>")));
                    }
                    saw_rss = true;
                }
                if name == "item" {
                    draft = Some(Draft::default());
                } else if draft.is_some() && depth_names.last().map(String::as_str) == Some("item")
                {
                    part = match name.as_str() {
                        "title" => Part::Title,
                        "link" => Part::Link,
                        "pubDate" | "date" => Part::Date,
                        "description" => Part::Description,
                        _ => Part::Other,
                    };
                }
                depth_names.push(name);
            }
            Event::End(_) => {
                let name = depth_names.pop().unwrap_or_default();
                if name == "item"
                    && let Some(d) = draft.take()
                {
                    match finish(d) {
                        Some(item) => items.push(item),
                        None => skipped += 1,
                    }
                }
                if depth_names.last().map(String::as_str) == Some("item") {
                    part = Part::Other;
                }
            }
            Event::Text(t) => {
                let s = t
                    .decode()
                    .map_err(|e| malformed(format!("bad text: {e}")))?;
                push_part(&mut draft, part, &s);
            }
            Event::CData(t) => {
                let s = t
                    .decode()
                    .map_err(|e| malformed(format!("bad CDATA: {e}")))?;
                push_part(&mut draft, part, &s);
            }
            Event::GeneralRef(r) => {
                let resolved = if r.is_char_ref() {
                    r.resolve_char_ref()
                        .map_err(|e| malformed(format!("bad character reference: {e}")))?
                        .map(String::from)
                } else {
                    let name = r
                        .decode()
                        .map_err(|e| malformed(format!("bad reference: {e}")))?;
                    quick_xml::escape::resolve_predefined_entity(&name)
                        .map(str::to_owned)
                        // An entity the feed never declared: kept as written, HTML will resolve it.
                        .or_else(|| Some(format!("&{name};")))
                };
                if let Some(s) = resolved {
                    push_part(&mut draft, part, &s);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !saw_rss {
        return Err(malformed("empty document, not an RSS feed".to_owned()));
    }
    if !depth_names.is_empty() {
        return Err(malformed("the feed ends inside an element".to_owned()));
    }
    if items.is_empty() && skipped > 0 {
        return Err(malformed(format!(
            "none of the {skipped} items has a readable title and date"
        )));
    }
    Ok(items)
}

fn push_part(draft: &mut Option<Draft>, part: Part, s: &str) {
    let Some(d) = draft.as_mut() else { return };
    match part {
        Part::Title => d.title.push_str(s),
        Part::Link => d.link.push_str(s),
        Part::Date => d.date.push_str(s),
        Part::Description => d.description.push_str(s),
        Part::Other => {}
    }
}

fn finish(d: Draft) -> Option<DatedItem> {
    let title = d.title.split_whitespace().collect::<Vec<_>>().join(" ");
    let date = d.date.trim();
    let published = OffsetDateTime::parse(date, &Rfc2822)
        .or_else(|_| OffsetDateTime::parse(date, &Rfc3339))
        .ok()?;
    if title.is_empty() {
        return None;
    }
    let clean = clean_html(&format!("<html><body>{}</body></html>", d.description));
    let manual = requires_manual_intervention(&title, &clean.text);
    Some(DatedItem {
        published,
        item: NewsItem {
            title,
            link: d.link.trim().to_owned(),
            published: rfc3339(published),
            body: html_to_markdown(&clean.html),
            manual_intervention: manual,
        },
    })
}

/// True when the title or the body says a manual intervention is required ("no manual
/// intervention is required" does not count).
pub fn requires_manual_intervention(title: &str, body: &str) -> bool {
    let title = title.to_lowercase();
    if title.contains("manual intervention") {
        return true;
    }
    let body = body.to_lowercase();
    let body = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut from = 0;
    while let Some(pos) = body[from..].find("manual intervention") {
        let at = from + pos;
        let before = &body[..at];
        let words: Vec<&str> = before.split_whitespace().rev().take(3).collect();
        let negated = words.iter().any(|w| matches!(*w, "no" | "not" | "without"));
        if !negated {
            return true;
        }
        from = at + "manual intervention".len();
    }
    false
}

fn local_name(qname: &[u8]) -> String {
    let s = String::from_utf8_lossy(qname);
    match s.rsplit_once(':') {
        Some((_, local)) => local.to_owned(),
        None => s.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_intervention_wording() {
        assert!(requires_manual_intervention(
            "foo >= 1.2 update requires manual intervention",
            ""
        ));
        assert!(requires_manual_intervention(
            "Foo changes",
            "Manual intervention is required before upgrading."
        ));
        assert!(!requires_manual_intervention(
            "Foo 2.0 released",
            "No manual intervention is required."
        ));
        assert!(!requires_manual_intervention(
            "Foo 2.0 released",
            "Upgrade as usual; this does not need manual intervention."
        ));
        assert!(!requires_manual_intervention("Foo", "Nothing to do."));
    }
}

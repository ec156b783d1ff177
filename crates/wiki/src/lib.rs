//! archgate-wiki: the ArchWiki online (MediaWiki API) and offline (a tantivy index of the
//! arch-wiki-docs HTML), converted to clean Markdown, and the Arch news feed.
//!
//! The binary wraps this crate as the tools `wiki_search`, `wiki_page`, `arch_news`, the
//! resource `archwiki://page/{title}` and the CLI `archgate wiki index`. The crate knows
//! nothing of MCP: it takes typed arguments and gives typed, serializable answers, each
//! saying which source answered (`offline` / `online`) and how old the answer is.

#![forbid(unsafe_code)]

mod args;
mod cache;
mod config;
mod convert;
mod document;
mod error;
mod facade;
mod http;
mod lang;
mod md_table;
mod news;
mod offline;
mod online;
mod types;

pub use args::{ArchNewsArgs, SectionArg, WikiPageArgs, WikiSearchArgs, parse_since};
pub use config::{DEFAULT_NEWS_FEED, Preference, WikiConfig};
pub use convert::{CleanPage, clean_html, html_to_markdown, page_markdown};
pub use document::{Outline, paginate};
pub use error::WikiError;
pub use facade::Wiki;
pub use lang::{lang_code, lang_of_title, variant_title};
pub use news::{DatedItem, NewsClient, parse_feed, requires_manual_intervention};
pub use offline::{IndexPhase, IndexProgress, IndexReport, OfflineWiki, build_index};
pub use online::{OnlineWiki, ParsedPage};
pub use types::{
    LanguageLink, NewsItem, NewsResult, Origin, PAGE_URI_PREFIX, SearchHit, SearchResults, Source,
    TocEntry, WikiPage, normalize_title, page_uri, title_from_uri,
};

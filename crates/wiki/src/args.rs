//! Argument types that agents send (`wiki_search`, `wiki_page`, `arch_news`), with their JSON schemas.

use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `wiki_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WikiSearchArgs {
    /// Words to search for.
    pub query: String,
    /// Most hits to return (1-50, default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// A section of a page, by its number in the table of contents or by its heading.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SectionArg {
    /// Number in the table of contents (0: the lead).
    Index(u32),
    /// Heading (any case).
    Name(String),
}

/// Arguments of `wiki_page`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WikiPageArgs {
    /// Page title, e.g. "Power management", or an `archwiki://page/...` URI.
    pub title: String,
    /// Only this section.
    #[serde(default)]
    pub section: Option<SectionArg>,
    /// Output page, from 1 (see `next_page`).
    #[serde(default)]
    pub page: Option<u32>,
    /// Include the table of contents.
    #[serde(default)]
    pub toc: Option<bool>,
    /// Translation's language code, e.g. "de" (default English).
    #[serde(default)]
    pub lang: Option<String>,
}

/// Arguments of `arch_news`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArchNewsArgs {
    /// Most items to return (default 10).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only items after this (RFC 3339 or YYYY-MM-DD; default: the last full upgrade).
    #[serde(default)]
    pub since: Option<String>,
}

/// Parses a `since` argument: RFC 3339 (`2025-06-01T10:00:00Z`) or a date (`2025-06-01`, midnight UTC).
pub fn parse_since(s: &str) -> Option<time::OffsetDateTime> {
    let s = s.trim();
    if let Ok(t) = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339) {
        return Some(t);
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(s, &fmt)
        .ok()
        .map(|d| d.midnight().assume_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_arg_accepts_number_or_name_and_unknown_fields_are_refused() {
        let a: WikiPageArgs = serde_json::from_str(r#"{"title":"Pacman","section":3}"#).unwrap();
        assert_eq!(a.section, Some(SectionArg::Index(3)));
        let a: WikiPageArgs =
            serde_json::from_str(r#"{"title":"Pacman","section":"Usage"}"#).unwrap();
        assert_eq!(a.section, Some(SectionArg::Name("Usage".into())));
        assert!(serde_json::from_str::<WikiPageArgs>(r#"{"title":"x","bogus":1}"#).is_err());
        assert!(parse_since("2025-06-01").is_some());
        assert!(parse_since("2025-06-01T10:00:00+02:00").is_some());
        assert!(parse_since("last tuesday").is_none());
    }
}

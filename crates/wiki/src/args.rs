//! Argument types that agents send (`wiki_search`, `wiki_page`, `arch_news`), with their JSON schemas.

use schemars::JsonSchema;
use serde::Deserialize;

/// Arguments of `wiki_search`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WikiSearchArgs {
    /// Words to search the ArchWiki for, e.g. "bluetooth headset pairing".
    pub query: String,
    /// Most hits to return (1-50, default 10).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// A section of a page, by its number in the table of contents or by its heading.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SectionArg {
    /// Section number from the table of contents (0 is the lead).
    Index(u32),
    /// Section heading (case-insensitive), e.g. "Configuration"; a number in a string is an index.
    Name(String),
}

/// Arguments of `wiki_page`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WikiPageArgs {
    /// Page title as on the wiki, e.g. "Systemd-boot" or "Power management"; an `archwiki://page/...` reference works too.
    pub title: String,
    /// Only this section: its heading text or its number from the table of contents.
    #[serde(default)]
    pub section: Option<SectionArg>,
    /// Output page to return (1-based, default 1); long pages come in pages of about 24 KiB, see `next_page`.
    #[serde(default)]
    pub page: Option<u32>,
    /// Include the table of contents (section numbers and headings).
    #[serde(default)]
    pub toc: Option<bool>,
    /// Language code of the wanted translation, e.g. "es", "de", "zh-hans" (default English).
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
    /// Only items published after this time (RFC 3339 or YYYY-MM-DD); default: the last full system upgrade.
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

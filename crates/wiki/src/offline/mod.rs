//! The offline ArchWiki: a tantivy index built from arch-wiki-docs HTML, and its reader.
//!
//! Layout of an index directory: `tantivy/` (the index) and `manifest.json` (what was indexed:
//! source directory, build time, and per page path its mtime, size and SHA-256, so a rebuild
//! touches only what changed).

mod build;
mod manifest;
mod reader;

pub use build::{IndexPhase, IndexProgress, IndexReport, build_index};
pub use reader::OfflineWiki;

use tantivy::schema::{Field, STORED, STRING, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
};

/// Bumped whenever the schema or the cleaning of pages changes; an index of another version is rebuilt.
pub(crate) const SCHEMA_VERSION: u32 = 1;

/// The name of the English stemming analyzer registered on every index.
const ANALYZER: &str = "archgate_en";

/// The fields of one indexed page.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// Path relative to the source directory: the unique key of a page.
    pub path: Field,
    pub title: Field,
    /// Lower-cased canonical title, for exact lookups.
    pub title_key: Field,
    pub lang: Field,
    pub headings: Field,
    pub body: Field,
    /// The cleaned article HTML, converted to Markdown when the page is read.
    pub html: Field,
}

pub(crate) fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            .set_index_option(tantivy::schema::IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED),
        title: b.add_text_field("title", text.clone() | STORED),
        title_key: b.add_text_field("title_key", STRING | STORED),
        lang: b.add_text_field("lang", STRING | STORED),
        headings: b.add_text_field("headings", text.clone()),
        body: b.add_text_field("body", text | STORED),
        html: b.add_text_field("html", STORED),
    };
    (b.build(), fields)
}

pub(crate) fn register_analyzer(index: &tantivy::Index) {
    let analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build();
    index.tokenizers().register(ANALYZER, analyzer);
}

/// The exact-lookup key of a title.
pub(crate) fn title_key(title: &str) -> String {
    crate::types::normalize_title(title).to_lowercase()
}

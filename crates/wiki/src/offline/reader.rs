//! Answering `search` and `page` from a built offline index.

use std::path::{Path, PathBuf};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, Index, IndexReader, ReloadPolicy, Searcher, TantivyDocument, Term};
use time::OffsetDateTime;

use super::manifest::Manifest;
use super::{Fields, register_analyzer, schema, title_key};
use crate::args::WikiPageArgs;
use crate::convert::html_to_markdown;
use crate::document;
use crate::error::WikiError;
use crate::lang;
use crate::online::requested_title;
use crate::types::{Origin, SearchHit, SearchResults, Source, WikiPage, page_uri};

/// An opened offline index.
pub struct OfflineWiki {
    dir: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    built_at: OffsetDateTime,
    page_bytes: usize,
}

impl std::fmt::Debug for OfflineWiki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfflineWiki")
            .field("dir", &self.dir)
            .field("built_at", &self.built_at)
            .finish_non_exhaustive()
    }
}

impl OfflineWiki {
    /// Opens the index in `index_dir`; [`WikiError::NoIndex`] when none has been built.
    pub fn open(index_dir: &Path) -> Result<Self, WikiError> {
        let tantivy_dir = index_dir.join("tantivy");
        let Some(manifest) = Manifest::load(index_dir) else {
            return Err(WikiError::NoIndex {
                path: index_dir.to_owned(),
            });
        };
        if manifest.schema != super::SCHEMA_VERSION || !tantivy_dir.join("meta.json").exists() {
            return Err(WikiError::NoIndex {
                path: index_dir.to_owned(),
            });
        }
        let err = |source| WikiError::Index {
            path: tantivy_dir.clone(),
            source,
        };
        let index = Index::open_in_dir(&tantivy_dir).map_err(err)?;
        register_analyzer(&index);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(err)?;
        let (_, fields) = schema();
        Ok(OfflineWiki {
            dir: index_dir.to_owned(),
            index,
            reader,
            fields,
            built_at: OffsetDateTime::from_unix_timestamp(manifest.built_at)
                .unwrap_or(OffsetDateTime::UNIX_EPOCH),
            page_bytes: crate::config::WikiConfig::default().page_bytes,
        })
    }

    /// Sets the size of one output page of `page` (default 24 KiB).
    pub fn with_page_bytes(mut self, page_bytes: usize) -> Self {
        self.page_bytes = page_bytes;
        self
    }

    /// When the index was last built.
    pub fn built_at(&self) -> OffsetDateTime {
        self.built_at
    }

    /// Number of pages in the index.
    pub fn page_count(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn origin(&self) -> Origin {
        Origin::new(Source::Offline, self.built_at, false, false)
    }

    fn err(&self, source: tantivy::TantivyError) -> WikiError {
        WikiError::Index {
            path: self.dir.join("tantivy"),
            source,
        }
    }

    /// Full-text search over English pages (title, headings, body), best first; a page
    /// whose title is the query itself comes first.
    pub fn search(&self, query: &str, limit: usize) -> Result<SearchResults, WikiError> {
        self.search_lang(query, limit, None)
    }

    /// Full-text search restricted to one language (`None` for English).
    pub fn search_lang(
        &self,
        query: &str,
        limit: usize,
        lang: Option<&str>,
    ) -> Result<SearchResults, WikiError> {
        let limit = limit.clamp(1, 50);
        let searcher = self.reader.searcher();
        let f = self.fields;
        let cleaned = sanitize_query(query);
        let mut parser = QueryParser::for_index(&self.index, vec![f.title, f.headings, f.body]);
        parser.set_field_boost(f.title, 3.0);
        parser.set_field_boost(f.headings, 1.5);
        let (text_query, errors) = parser.parse_query_lenient(&cleaned);
        if !errors.is_empty() {
            tracing::debug!(?errors, query, "offline wiki query parsed leniently");
        }
        let lang_term = Term::from_field_text(f.lang, lang.unwrap_or("en"));
        let lang_query: Box<dyn Query> =
            Box::new(TermQuery::new(lang_term, IndexRecordOption::Basic));
        let full = BooleanQuery::new(vec![
            (Occur::Must, text_query.box_clone()),
            (Occur::Must, lang_query),
        ]);
        let top = searcher
            .search(&full, &TopDocs::with_limit(limit + 5).order_by_score())
            .map_err(|e| self.err(e))?;
        let mut hits: Vec<(f32, DocAddress)> = top;
        // The page named exactly by the query goes first.
        let key = title_key(&cleaned);
        if let Some(exact) = self.lookup(&searcher, &key, lang.unwrap_or("en"))? {
            hits.retain(|(_, a)| *a != exact);
            hits.insert(0, (f32::MAX, exact));
        }
        hits.truncate(limit);
        let mut snippets =
            SnippetGenerator::create(&searcher, &*text_query, f.body).map_err(|e| self.err(e))?;
        snippets.set_max_num_chars(200);
        let stems = self.stems(&cleaned);
        let mut out = Vec::with_capacity(hits.len());
        for (score, addr) in hits {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| self.err(e))?;
            let title = text(&doc, f.title);
            let body = text(&doc, f.body);
            // Only a window around the first match is tokenized: whole pages cost milliseconds.
            let snippet = snippets.snippet(match_window(&body, &stems));
            let mut frag = snippet
                .fragment()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            if frag.is_empty() {
                frag = body.chars().take(160).collect::<String>();
                frag = frag.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            out.push(SearchHit {
                uri: page_uri(&title),
                title,
                snippet: frag,
                url: None,
                score: (score != f32::MAX).then_some(score),
            });
        }
        Ok(SearchResults {
            query: query.to_owned(),
            hits: out,
            api: None,
            origin: self.origin(),
        })
    }

    /// The query's terms as the index analyzer makes them (lower-cased stems).
    fn stems(&self, query: &str) -> Vec<String> {
        let Ok(mut analyzer) = self.index.tokenizer_for_field(self.fields.body) else {
            return Vec::new();
        };
        let mut stream = analyzer.token_stream(query);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    /// The document whose title key is `key` in `lang`.
    fn lookup(
        &self,
        searcher: &Searcher,
        key: &str,
        lang: &str,
    ) -> Result<Option<DocAddress>, WikiError> {
        if key.is_empty() {
            return Ok(None);
        }
        let f = self.fields;
        let q = BooleanQuery::new(vec![
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.title_key, key),
                    IndexRecordOption::Basic,
                )) as Box<dyn Query>,
            ),
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.lang, lang),
                    IndexRecordOption::Basic,
                )),
            ),
        ]);
        let top = searcher
            .search(&q, &TopDocs::with_limit(1).order_by_score())
            .map_err(|e| self.err(e))?;
        Ok(top.first().map(|(_, a)| *a))
    }

    /// A page (or a section of it) as Markdown, one output page at a time.
    pub fn page(&self, args: &WikiPageArgs) -> Result<WikiPage, WikiError> {
        let searcher = self.reader.searcher();
        let base = requested_title(&args.title);
        let code = lang::lang_code(args.lang.as_deref());
        let candidates: Vec<(String, String)> = match &code {
            None => vec![(base.clone(), "en".to_owned())],
            Some(c) => {
                let variant = lang::variant_title(&base, c);
                vec![
                    (variant.clone(), c.clone()),
                    (variant, "en".to_owned()),
                    (base.clone(), c.clone()),
                ]
            }
        };
        let mut found = None;
        for (title, lang) in &candidates {
            if let Some(addr) = self.lookup(&searcher, &title_key(title), lang)? {
                found = Some(addr);
                break;
            }
        }
        let Some(addr) = found else {
            let suggestions = self
                .search_lang(&base, 5, code.as_deref())
                .map(|r| r.hits.into_iter().map(|h| h.title).collect())
                .unwrap_or_default();
            return Err(WikiError::NotFound {
                title: candidates.first().map(|c| c.0.clone()).unwrap_or(base),
                suggestions,
            });
        };
        let doc: TantivyDocument = searcher.doc(addr).map_err(|e| self.err(e))?;
        let f = self.fields;
        let title = text(&doc, f.title);
        let md = html_to_markdown(&text(&doc, f.html));
        let sel = document::select(
            &title,
            &md,
            args.section.as_ref(),
            args.page,
            args.toc.unwrap_or(false),
            self.page_bytes,
        )?;
        Ok(WikiPage {
            uri: page_uri(&title),
            url: None,
            lang: text(&doc, f.lang),
            section: sel.section,
            page: sel.page,
            pages: sel.pages,
            next_page: (sel.page < sel.pages).then_some(sel.page + 1),
            total_bytes: sel.total_bytes,
            markdown: sel.markdown,
            toc: sel.toc,
            languages: Vec::new(),
            revision: None,
            origin: self.origin(),
            title,
        })
    }
}

/// About 1 KiB of `body` around the earliest occurrence of any stem (the start when none occurs).
fn match_window<'a>(body: &'a str, stems: &[String]) -> &'a str {
    let lower = body.to_ascii_lowercase();
    let first = stems
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| lower.find(s.as_str()))
        .min()
        .unwrap_or(0);
    let mut start = first.saturating_sub(300);
    while !body.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (first + 700).min(body.len());
    while !body.is_char_boundary(end) {
        end += 1;
    }
    &body[start..end]
}

fn text(doc: &TantivyDocument, field: tantivy::schema::Field) -> String {
    doc.get_first(field)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Free text for the query parser: its syntax characters become blanks, so an agent's words
/// are words (a `-` inside a word such as `systemd-boot` stays).
fn sanitize_query(q: &str) -> String {
    let mut out = String::with_capacity(q.len());
    let mut prev_alnum = false;
    for ch in q.chars() {
        let keep = ch.is_alphanumeric() || ch == '.' || ch == '_' || (ch == '-' && prev_alnum);
        out.push(if keep { ch } else { ' ' });
        prev_alnum = ch.is_alphanumeric();
    }
    out.split_whitespace()
        .filter(|w| !matches!(*w, "AND" | "OR" | "NOT" | "IN"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_lose_their_syntax() {
        assert_eq!(
            sanitize_query("systemd-boot: (loader) \"entries\" -x AND"),
            "systemd-boot loader entries x"
        );
        assert_eq!(sanitize_query("title:foo^2"), "title foo 2");
    }

    #[test]
    fn snippet_window_surrounds_the_first_match() {
        let body = format!(
            "{}hibernation needs swap{}",
            "a ".repeat(1000),
            " b".repeat(1000)
        );
        let w = match_window(&body, &["hibern".to_owned(), "zzz".to_owned()]);
        assert!(w.contains("hibernation needs swap") && w.len() <= 1001);
        assert!(match_window("é short", &["none".to_owned()]).starts_with('é'));
    }
}

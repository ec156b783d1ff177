//! Building and incrementally updating the offline index from a directory of wiki HTML pages.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest, Sha256};
use tantivy::{Index, IndexWriter, TantivyDocument, Term, doc};
use time::OffsetDateTime;

use super::manifest::{Manifest, Stamp};
use super::{Fields, SCHEMA_VERSION, register_analyzer, schema, title_key};
use crate::cache::create_private_dir;
use crate::convert::{clean_html, is_lang_dir};
use crate::error::WikiError;
use crate::types::{normalize_title, rfc3339};

/// What the build is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexPhase {
    /// Listing the source directory (`total` is 0 until done).
    Scanning,
    /// Reading, comparing and indexing pages (`done` of `total`).
    Indexing,
    /// Writing the index to disk.
    Committing,
    /// Finished.
    Done,
}

/// One progress report, for a progress bar.
#[derive(Debug, Clone, Serialize)]
pub struct IndexProgress {
    /// The phase.
    pub phase: IndexPhase,
    /// Pages handled so far in this phase.
    pub done: usize,
    /// Pages in this phase.
    pub total: usize,
    /// The page being handled (relative path), when there is one.
    pub current: Option<String>,
}

/// What a build did.
#[derive(Debug, Clone, Serialize)]
pub struct IndexReport {
    /// The HTML directory indexed.
    pub source_dir: PathBuf,
    /// The index directory.
    pub index_dir: PathBuf,
    /// Pages in the index now.
    pub pages: usize,
    /// Pages new to the index.
    pub added: usize,
    /// Pages whose content changed and were indexed again.
    pub updated: usize,
    /// Pages gone from the source and removed from the index.
    pub removed: usize,
    /// Pages left as they were.
    pub unchanged: usize,
    /// True when the index was built from scratch.
    pub full_rebuild: bool,
    /// When this build finished (RFC 3339).
    pub built_at: String,
    /// How long it took.
    pub elapsed_ms: u64,
}

/// Title prefixes of pages that are not articles (categories, files, templates, user pages).
const SKIPPED_NAMESPACES: &[&str] = &[
    "Category:",
    "File:",
    "Template:",
    "Special:",
    "User:",
    "Talk:",
];

/// Builds the index of the HTML pages under `from_dir` into `index_dir`, or brings an existing
/// index up to date: only pages whose size, mtime and then content hash changed are read and
/// indexed again, pages gone from `from_dir` are deleted. `progress` is called as work advances.
/// CPU-bound and blocking: call it from a blocking thread.
pub fn build_index(
    from_dir: &Path,
    index_dir: &Path,
    progress: &mut dyn FnMut(&IndexProgress),
) -> Result<IndexReport, WikiError> {
    let started = Instant::now();
    progress(&IndexProgress {
        phase: IndexPhase::Scanning,
        done: 0,
        total: 0,
        current: None,
    });
    let source_dir = from_dir
        .canonicalize()
        .map_err(|e| WikiError::io("open", from_dir, e))?;
    let mut files = Vec::new();
    scan(&source_dir, &source_dir, &mut files)?;
    files.sort();
    if files.is_empty() {
        return Err(WikiError::NoPages { path: source_dir });
    }

    create_private_dir(index_dir)?;
    let tantivy_dir = index_dir.join("tantivy");
    let previous = Manifest::load(index_dir).filter(|m| {
        m.schema == SCHEMA_VERSION
            && m.source_dir == source_dir
            && tantivy_dir.join("meta.json").exists()
    });
    let full_rebuild = previous.is_none();
    let (schema, fields) = schema();
    let index = if full_rebuild {
        if tantivy_dir.exists() {
            std::fs::remove_dir_all(&tantivy_dir)
                .map_err(|e| WikiError::io("remove", &tantivy_dir, e))?;
        }
        create_private_dir(&tantivy_dir)?;
        Index::create_in_dir(&tantivy_dir, schema).map_err(|source| WikiError::Index {
            path: tantivy_dir.clone(),
            source,
        })?
    } else {
        Index::open_in_dir(&tantivy_dir).map_err(|source| WikiError::Index {
            path: tantivy_dir.clone(),
            source,
        })?
    };
    register_analyzer(&index);
    let idx_err = |source| WikiError::Index {
        path: tantivy_dir.clone(),
        source,
    };
    let mut writer: IndexWriter<TantivyDocument> = index
        .writer_with_num_threads(1, 64 * 1024 * 1024)
        .map_err(idx_err)?;

    let old_pages = previous.map(|m| m.pages).unwrap_or_default();
    let mut new_pages = BTreeMap::new();
    let (mut added, mut updated, mut unchanged) = (0, 0, 0);
    let total = files.len();
    for (i, rel) in files.iter().enumerate() {
        let abs = source_dir.join(rel);
        let meta = std::fs::metadata(&abs).map_err(|e| WikiError::io("stat", &abs, e))?;
        let mtime_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let old = old_pages.get(rel);
        if let Some(old) = old
            && old.mtime_ns == mtime_ns
            && old.size == meta.len()
        {
            new_pages.insert(rel.clone(), old.clone());
            unchanged += 1;
        } else {
            let bytes = std::fs::read(&abs).map_err(|e| WikiError::io("read", &abs, e))?;
            let sha256 = hex::encode(Sha256::digest(&bytes));
            let stamp = Stamp {
                mtime_ns,
                size: meta.len(),
                sha256,
            };
            if old.is_some_and(|o| o.sha256 == stamp.sha256) {
                unchanged += 1;
            } else {
                if old.is_some() {
                    writer.delete_term(Term::from_field_text(fields.path, rel));
                    updated += 1;
                } else {
                    added += 1;
                }
                writer
                    .add_document(page_document(&fields, rel, &bytes))
                    .map_err(idx_err)?;
            }
            new_pages.insert(rel.clone(), stamp);
        }
        if i % 16 == 0 || i + 1 == total {
            progress(&IndexProgress {
                phase: IndexPhase::Indexing,
                done: i + 1,
                total,
                current: Some(rel.clone()),
            });
        }
    }
    let mut removed = 0;
    for rel in old_pages.keys().filter(|p| !new_pages.contains_key(*p)) {
        writer.delete_term(Term::from_field_text(fields.path, rel));
        removed += 1;
    }
    progress(&IndexProgress {
        phase: IndexPhase::Committing,
        done: 0,
        total: 1,
        current: None,
    });
    writer.commit().map_err(idx_err)?;
    writer.wait_merging_threads().map_err(idx_err)?;
    let built_at = OffsetDateTime::now_utc();
    Manifest {
        schema: SCHEMA_VERSION,
        source_dir: source_dir.clone(),
        built_at: built_at.unix_timestamp(),
        pages: new_pages,
    }
    .save(index_dir)?;
    progress(&IndexProgress {
        phase: IndexPhase::Done,
        done: total,
        total,
        current: None,
    });
    Ok(IndexReport {
        source_dir,
        index_dir: index_dir.to_owned(),
        pages: total,
        added,
        updated,
        removed,
        unchanged,
        full_rebuild,
        built_at: rfc3339(built_at),
        elapsed_ms: started.elapsed().as_millis() as u64,
    })
}

/// The index document of one page.
fn page_document(fields: &Fields, rel: &str, bytes: &[u8]) -> TantivyDocument {
    let raw = String::from_utf8_lossy(bytes);
    let page = clean_html(&raw);
    let title = page
        .title
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| title_from_path(rel));
    doc!(
        fields.path => rel,
        fields.title => title.as_str(),
        fields.title_key => title_key(&title),
        fields.lang => lang_from_path(rel),
        fields.headings => page.headings.join("\n"),
        fields.body => page.text,
        fields.html => page.html,
    )
}

/// `en/Power_management.html` → `Power management`.
fn title_from_path(rel: &str) -> String {
    let stem = rel.strip_suffix(".html").unwrap_or(rel);
    let mut parts: Vec<&str> = stem.split('/').collect();
    if parts.len() > 1 && is_lang_dir(parts[0]) {
        parts.remove(0);
    }
    normalize_title(&crate::types::percent_decode(&parts.join("/")))
}

/// The language of a page by its first directory (`es/...`), English otherwise.
pub(crate) fn lang_from_path(rel: &str) -> String {
    match rel.split_once('/') {
        Some((dir, _)) if is_lang_dir(dir) => dir.to_owned(),
        _ => "en".to_owned(),
    }
}

/// Collects the relative paths of `*.html` article files under `dir` (symlinked directories are not followed).
fn scan(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), WikiError> {
    let entries = std::fs::read_dir(dir).map_err(|e| WikiError::io("list", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| WikiError::io("list", dir, e))?;
        let path = entry.path();
        let ft = entry
            .file_type()
            .map_err(|e| WikiError::io("stat", &path, e))?;
        if ft.is_dir() {
            scan(root, &path, out)?;
            continue;
        }
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.ends_with(".html") || SKIPPED_NAMESPACES.iter().any(|ns| name.starts_with(ns)) {
            continue;
        }
        if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_and_languages_from_paths() {
        assert_eq!(
            title_from_path("en/Power_management.html"),
            "Power management"
        );
        assert_eq!(title_from_path("Pacman.html"), "Pacman");
        assert_eq!(lang_from_path("es/Pacman_(Español).html"), "es");
        assert_eq!(lang_from_path("Pacman.html"), "en");
    }
}

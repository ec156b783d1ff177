//! Reading cgit's HTML: the tree listing (`/tree/?h=`), the log (`/log/?h=`), and the error
//! page for an unknown branch.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::error::AurError;

/// A file in a package's repository.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepoFile {
    pub name: String,
    /// `file`, `dir` or `submodule`.
    pub kind: &'static str,
    pub mode: String,
    pub size: Option<u64>,
}

/// One commit of a package's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Commit {
    pub id: String,
    pub subject: String,
    pub author: String,
    /// As cgit shows it: `YYYY-MM-DD HH:MM:SS +ZZZZ`.
    pub date: String,
}

fn re(p: &str) -> Regex {
    Regex::new(p).expect("constant regex is valid")
}

static TD: LazyLock<Regex> = LazyLock::new(|| re(r"(?s)<td[^>]*>(.*?)</td>"));
static TAG: LazyLock<Regex> = LazyLock::new(|| re(r"(?s)<[^>]*>"));
static LS: LazyLock<Regex> =
    LazyLock::new(|| re(r#"class=['"](ls-blob|ls-dir|ls-mod)[^'"]*['"][^>]*>([^<]+)</a>"#));
static MODE: LazyLock<Regex> = LazyLock::new(|| re(r#"class=['"]ls-mode['"]>([^<]*)<"#));
static SIZE: LazyLock<Regex> = LazyLock::new(|| re(r#"class=['"]ls-size['"]>\s*(\d*)\s*<"#));
static COMMIT_ID: LazyLock<Regex> =
    LazyLock::new(|| re(r#"/commit/[^'"]*?[?&;]id=([0-9a-f]{7,40})"#));
static TITLE: LazyLock<Regex> = LazyLock::new(|| re(r#"title=['"](\d{4}-\d\d-\d\d [^'"]*)['"]"#));

pub(crate) fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

fn text(html: &str) -> String {
    unescape(TAG.replace_all(html, "").trim())
}

/// An unknown `h=` branch: cgit answers 200 with an error message.
pub(super) fn check_branch(page: &str, pkgbase: &str) -> Result<(), AurError> {
    if page.contains("Invalid branch") || page.contains("Bad object") || page.contains("Bad ref") {
        return Err(AurError::NotFound {
            what: format!("AUR package base {pkgbase}"),
        });
    }
    Ok(())
}

/// Rows of the tree listing.
pub(super) fn parse_tree(page: &str) -> Vec<RepoFile> {
    let mut out = Vec::new();
    for row in page.split("<tr") {
        let Some(ls) = LS.captures(row) else { continue };
        let kind = match &ls[1] {
            "ls-dir" => "dir",
            "ls-mod" => "submodule",
            _ => "file",
        };
        out.push(RepoFile {
            name: unescape(ls[2].trim()),
            kind,
            mode: MODE
                .captures(row)
                .map(|c| c[1].to_owned())
                .unwrap_or_default(),
            size: SIZE.captures(row).and_then(|c| c[1].parse().ok()),
        });
    }
    out
}

/// Rows of the log page, newest first.
pub(super) fn parse_log(page: &str) -> Vec<Commit> {
    let mut out = Vec::new();
    for row in page.split("<tr") {
        let Some(id) = COMMIT_ID.captures(row) else {
            continue;
        };
        let cells: Vec<String> = TD.captures_iter(row).map(|c| c[1].to_owned()).collect();
        if cells.len() < 3 {
            continue;
        }
        let date = TITLE
            .captures(&cells[0])
            .map(|c| c[1].to_owned())
            .unwrap_or_else(|| text(&cells[0]));
        let subject_html = cells[1]
            .split("<span class='decoration'>")
            .next()
            .unwrap_or(&cells[1]);
        out.push(Commit {
            id: id[1].to_owned(),
            subject: text(subject_html),
            author: text(&cells[2]),
            date,
        });
    }
    out
}

/// cgit's pager shows a `[next]` link when older commits exist.
pub(super) fn has_next_page(page: &str) -> bool {
    page.contains("ofs=") && page.contains("[next]")
}

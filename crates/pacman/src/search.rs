//! `pkg_search`: pacman -Ss semantics over the sync databases, ranked for people.
//!
//! pacman (libalpm `_alpm_db_search`) takes every term as a case-insensitive extended regex and
//! keeps a package when, for every term, the name contains the term literally, or the regex
//! matches the name, the description, a provision's name or a group. Terms are ANDed. This
//! module does the same with Rust regexes (ERE syntax shared by both for ordinary patterns).

use regex::{Regex, RegexBuilder};
use serde::Serialize;

use crate::db::Snapshot;
use crate::desc::Package;
use crate::error::PacmanError;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The machine's own pacman databases.
    Local,
    /// The archlinux.org packages API (no pacman databases here).
    Remote,
}

/// How search terms are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TermMode {
    /// Like pacman: a regex when it compiles, else literal text.
    #[default]
    Pacman,
    /// Regex required; an invalid one is an error.
    Regex,
    /// Literal text, case-insensitive.
    Literal,
}

/// One package found.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SearchHit {
    /// Repository.
    pub repo: String,
    /// Package name.
    pub name: String,
    /// Version in that repository.
    pub version: String,
    /// Description.
    pub description: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Installed version, when installed.
    pub installed: Option<String>,
}

/// The answer to a search.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    /// Local databases or the remote API.
    pub source: Source,
    /// The query as given.
    pub query: String,
    /// Number of matches before truncation.
    pub total: usize,
    /// Whether `results` was cut at the limit.
    pub truncated: bool,
    /// Matches, best first: exact name, name prefix, name contains, others.
    pub results: Vec<SearchHit>,
    /// Repositories not searched (database missing), etc.
    pub warnings: Vec<String>,
}

struct Term {
    text: String,
    regex: Regex,
}

fn compile(text: &str, mode: TermMode) -> Result<Term, PacmanError> {
    let build = |pattern: &str| {
        RegexBuilder::new(pattern)
            .case_insensitive(true)
            .size_limit(1 << 20)
            .build()
    };
    let regex = match mode {
        TermMode::Literal => build(&regex::escape(text)),
        TermMode::Regex => build(text),
        TermMode::Pacman => build(text).or_else(|_| build(&regex::escape(text))),
    }
    .map_err(|source| PacmanError::InvalidRegex {
        pattern: text.to_owned(),
        source: Box::new(source),
    })?;
    Ok(Term {
        text: text.to_owned(),
        regex,
    })
}

fn term_matches(term: &Term, pkg: &Package) -> bool {
    pkg.name.contains(&term.text)
        || term.regex.is_match(&pkg.name)
        || term.regex.is_match(&pkg.description)
        || pkg.provides.iter().any(|p| term.regex.is_match(&p.name))
        || pkg.groups.iter().any(|g| term.regex.is_match(g))
}

/// Rank of a name against the first term: 0 exact, 1 prefix, 2 contains, 3 other.
fn rank(name: &str, first: &str) -> u8 {
    let name = name.to_lowercase();
    let first = first.to_lowercase();
    if name == first {
        0
    } else if name.starts_with(&first) {
        1
    } else if name.contains(&first) {
        2
    } else {
        3
    }
}

/// Searches the sync databases (one repository when `repo` is given).
pub fn search(
    snap: &Snapshot,
    query: &str,
    repo: Option<&str>,
    mode: TermMode,
    limit: usize,
) -> Result<SearchResult, PacmanError> {
    let terms = query
        .split_whitespace()
        .map(|t| compile(t, mode))
        .collect::<Result<Vec<_>, _>>()?;
    let repos: Vec<&crate::db::SyncRepo> = match repo {
        Some(name) => vec![snap.repo(name)?.as_ref()],
        None => snap.repos.iter().map(AsRef::as_ref).collect(),
    };
    let first = terms.first().map(|t| t.text.as_str()).unwrap_or("");
    let mut hits: Vec<(u8, usize, usize, SearchHit)> = Vec::new();
    for (ri, r) in repos.iter().enumerate() {
        for (pi, pkg) in r.packages.iter().enumerate() {
            if terms.iter().all(|t| term_matches(t, pkg)) {
                hits.push((
                    rank(&pkg.name, first),
                    ri,
                    pi,
                    SearchHit {
                        repo: r.name.clone(),
                        name: pkg.name.clone(),
                        version: pkg.version.clone(),
                        description: pkg.description.clone(),
                        groups: pkg.groups.clone(),
                        installed: snap.local.get(&pkg.name).map(|l| l.version.clone()),
                    },
                ));
            }
        }
    }
    hits.sort_by_key(|h| (h.0, h.1, h.2));
    let total = hits.len();
    let warnings = if repo.is_none() {
        snap.missing
            .iter()
            .map(|m| {
                format!(
                    "repository {} not searched: no database (pacman -Sy)",
                    m.repo
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(SearchResult {
        source: Source::Local,
        query: query.to_owned(),
        total,
        truncated: total > limit,
        results: hits.into_iter().take(limit).map(|h| h.3).collect(),
        warnings,
    })
}

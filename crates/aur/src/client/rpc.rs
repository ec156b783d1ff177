//! AUR RPC v5: the `search` fields, the JSON answer (`{"type":"search"|"multiinfo"|"error",…}`)
//! and the package records with their trust signals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::AurError;

/// The field an RPC search looks in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SearchBy {
    /// Package name only.
    Name,
    /// Name and description (the default).
    #[default]
    NameDesc,
    /// Maintainer account name.
    Maintainer,
    /// Packages that depend on the query.
    Depends,
    /// Packages that make-depend on the query.
    Makedepends,
    /// Packages that optionally depend on the query.
    Optdepends,
    /// Packages that check-depend on the query.
    Checkdepends,
    /// Account that first submitted the package.
    Submitter,
    /// Packages that provide the query.
    Provides,
    /// Packages that conflict with the query.
    Conflicts,
    /// Packages that replace the query.
    Replaces,
    /// Keywords.
    Keywords,
    /// Groups.
    Groups,
    /// Co-maintainer account name.
    Comaintainers,
}

impl SearchBy {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchBy::Name => "name",
            SearchBy::NameDesc => "name-desc",
            SearchBy::Maintainer => "maintainer",
            SearchBy::Depends => "depends",
            SearchBy::Makedepends => "makedepends",
            SearchBy::Optdepends => "optdepends",
            SearchBy::Checkdepends => "checkdepends",
            SearchBy::Submitter => "submitter",
            SearchBy::Provides => "provides",
            SearchBy::Conflicts => "conflicts",
            SearchBy::Replaces => "replaces",
            SearchBy::Keywords => "keywords",
            SearchBy::Groups => "groups",
            SearchBy::Comaintainers => "comaintainers",
        }
    }
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    results: Vec<Raw>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct Raw {
    name: String,
    package_base: Option<String>,
    version: String,
    description: Option<String>,
    #[serde(rename = "URL")]
    url: Option<String>,
    #[serde(rename = "URLPath")]
    url_path: Option<String>,
    maintainer: Option<String>,
    submitter: Option<String>,
    co_maintainers: Vec<String>,
    num_votes: u64,
    popularity: f64,
    first_submitted: Option<i64>,
    last_modified: Option<i64>,
    out_of_date: Option<i64>,
    depends: Vec<String>,
    make_depends: Vec<String>,
    opt_depends: Vec<String>,
    check_depends: Vec<String>,
    provides: Vec<String>,
    conflicts: Vec<String>,
    replaces: Vec<String>,
    groups: Vec<String>,
    keywords: Vec<String>,
    license: Vec<String>,
}

/// One AUR package with its trust signals.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PackageInfo {
    pub name: String,
    pub package_base: String,
    pub version: String,
    pub description: Option<String>,
    pub url: Option<String>,
    /// Snapshot path on the AUR (`/cgit/aur.git/snapshot/NAME.tar.gz`).
    pub url_path: Option<String>,
    /// `None` when the package is orphaned.
    pub maintainer: Option<String>,
    pub orphaned: bool,
    pub co_maintainers: Vec<String>,
    pub submitter: Option<String>,
    pub votes: u64,
    pub popularity: f64,
    /// RFC 3339.
    pub first_submitted: Option<String>,
    /// RFC 3339.
    pub last_modified: Option<String>,
    /// When it was flagged out of date (RFC 3339), if it is.
    pub out_of_date: Option<String>,
    pub depends: Vec<String>,
    pub makedepends: Vec<String>,
    pub optdepends: Vec<String>,
    pub checkdepends: Vec<String>,
    pub provides: Vec<String>,
    pub conflicts: Vec<String>,
    pub replaces: Vec<String>,
    pub groups: Vec<String>,
    pub keywords: Vec<String>,
    pub license: Vec<String>,
}

pub(crate) fn rfc3339(ts: Option<i64>) -> Option<String> {
    let t = time::OffsetDateTime::from_unix_timestamp(ts?).ok()?;
    t.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

impl From<Raw> for PackageInfo {
    fn from(r: Raw) -> PackageInfo {
        let maintainer = r.maintainer.filter(|m| !m.is_empty());
        PackageInfo {
            package_base: r.package_base.unwrap_or_else(|| r.name.clone()),
            name: r.name,
            version: r.version,
            description: r.description,
            url: r.url,
            url_path: r.url_path,
            orphaned: maintainer.is_none(),
            maintainer,
            co_maintainers: r.co_maintainers,
            submitter: r.submitter,
            votes: r.num_votes,
            popularity: r.popularity,
            first_submitted: rfc3339(r.first_submitted),
            last_modified: rfc3339(r.last_modified),
            out_of_date: rfc3339(r.out_of_date),
            depends: r.depends,
            makedepends: r.make_depends,
            optdepends: r.opt_depends,
            checkdepends: r.check_depends,
            provides: r.provides,
            conflicts: r.conflicts,
            replaces: r.replaces,
            groups: r.groups,
            keywords: r.keywords,
            license: r.license,
        }
    }
}

/// Parses an RPC answer; `{"type":"error"}` becomes [`AurError::Rpc`] (or `rate_limited`).
pub(super) fn parse(url: &str, body: &[u8]) -> Result<Vec<PackageInfo>, AurError> {
    let a: Answer = serde_json::from_slice(body).map_err(|e| AurError::Malformed {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if a.kind == "error" {
        let message = a.error.unwrap_or_else(|| "unknown error".into());
        if message.to_ascii_lowercase().contains("rate limit") {
            return Err(AurError::RateLimited {
                url: url.to_owned(),
                retry_after: None,
            });
        }
        return Err(AurError::Rpc { message });
    }
    if !matches!(a.kind.as_str(), "search" | "multiinfo" | "info") {
        return Err(AurError::Malformed {
            url: url.to_owned(),
            reason: format!("unexpected answer type {:?}", a.kind),
        });
    }
    Ok(a.results
        .into_iter()
        .filter(|r| !r.name.is_empty())
        .map(PackageInfo::from)
        .collect())
}

/// The answer of `aur_search`.
#[derive(Clone, Debug, Serialize)]
pub struct SearchResults {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub query: String,
    pub by: SearchBy,
    /// Matches the AUR returned (before truncation).
    pub total: usize,
    pub truncated: bool,
    /// Most popular first.
    pub packages: Vec<PackageInfo>,
}

/// The answer of `aur_info`.
#[derive(Clone, Debug, Serialize)]
pub struct InfoResults {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub packages: Vec<PackageInfo>,
    /// Names the AUR does not know.
    pub not_found: Vec<String>,
    /// What to know before installing one of them (an official package with the same name).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

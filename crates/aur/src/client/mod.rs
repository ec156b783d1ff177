//! The AUR client: RPC v5 (`search`, `info`) over HTTP with timeouts, size caps and an on-disk
//! cache; and each package base's git repository (file listings, files at any commit, history),
//! fetched into the cache by `git` (see [`git`]).

mod cache;
mod config;
mod error;
pub mod git;
mod http;
mod rpc;

pub use config::AurConfig;
pub use error::AurError;
pub use git::{Commit, PackageRepo, RepoFile, RunGit};
pub use rpc::{InfoResults, PackageInfo, SearchBy, SearchResults};

use std::sync::Arc;

use serde::Serialize;

use crate::AUR_NOTICE;

/// A client for one AUR instance. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AurClient {
    inner: Arc<http::Http>,
    repos: Arc<git::RepoCache>,
}

/// The files of a package as the AUR serves them (for `aur_pkgbuild`).
#[derive(Clone, Debug, Serialize)]
pub struct PackageFiles {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub name: String,
    pub package_base: String,
    /// The full id of the commit the files were read at.
    pub commit: String,
    pub pkgbuild: String,
    pub srcinfo: Option<String>,
    /// Install scripts (any name `install=` gives), hooks and the other files the PKGBUILD
    /// names (local sources, helpers it runs or installs).
    pub install_scripts: Vec<crate::audit::ScriptFile>,
    /// Every file in the package's repository (name and size).
    pub files: Vec<RepoFile>,
    /// Files not fetched because they are binary or too large.
    pub skipped: Vec<String>,
}

/// Names the AUR accepts for packages (also keeps URLs well-formed).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'@' | b'.' | b'_' | b'+' | b'-'))
        && !name.starts_with(['-', '.'])
}

fn check_name(name: &str) -> Result<(), AurError> {
    if valid_name(name) {
        Ok(())
    } else {
        Err(AurError::InvalidArgument {
            reason: format!("{name:?} is not a valid AUR package name"),
        })
    }
}

pub(crate) fn check_commit(c: &str) -> Result<(), AurError> {
    if (4..=40).contains(&c.len()) && c.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(AurError::InvalidArgument {
            reason: format!("{c:?} is not a commit id"),
        })
    }
}

impl AurClient {
    pub fn new(config: AurConfig) -> Result<AurClient, AurError> {
        let repos = Arc::new(git::RepoCache::new(&config)?);
        Ok(AurClient {
            inner: Arc::new(http::Http::new(config)?),
            repos,
        })
    }

    pub fn config(&self) -> &AurConfig {
        &self.inner.config
    }

    /// RPC v5 search by one field (default: name and description).
    pub async fn search(&self, query: &str, by: SearchBy) -> Result<SearchResults, AurError> {
        let q = query.trim();
        if q.is_empty() || q.len() > 256 {
            return Err(AurError::InvalidArgument {
                reason: "the query must be 1 to 256 characters".into(),
            });
        }
        let url = self.inner.url(
            "/rpc/",
            &[
                ("v", "5"),
                ("type", "search"),
                ("by", by.as_str()),
                ("arg", q),
            ],
        )?;
        let body = self
            .inner
            .get(&url, self.inner.config.max_rpc_bytes)
            .await?;
        let mut pkgs = rpc::parse(&url, &body)?;
        let total = pkgs.len();
        let cap = self.inner.config.max_search_results;
        pkgs.sort_by(|a, b| {
            b.popularity
                .total_cmp(&a.popularity)
                .then_with(|| a.name.cmp(&b.name))
        });
        pkgs.truncate(cap);
        Ok(SearchResults {
            notice: AUR_NOTICE,
            query: q.to_owned(),
            by,
            total,
            truncated: total > cap,
            packages: pkgs,
        })
    }

    /// RPC v5 info for many packages at once (sent in batches).
    pub async fn info(&self, names: &[String]) -> Result<InfoResults, AurError> {
        for n in names {
            check_name(n)?;
        }
        let mut packages = Vec::new();
        for chunk in names.chunks(100) {
            let mut q: Vec<(&str, &str)> = vec![("v", "5"), ("type", "info")];
            q.extend(chunk.iter().map(|n| ("arg[]", n.as_str())));
            let url = self.inner.url("/rpc/", &q)?;
            let body = self
                .inner
                .get(&url, self.inner.config.max_rpc_bytes)
                .await?;
            packages.extend(rpc::parse(&url, &body)?);
        }
        let not_found = names
            .iter()
            .filter(|n| !packages.iter().any(|p| &p.name == *n))
            .cloned()
            .collect();
        Ok(InfoResults {
            notice: AUR_NOTICE,
            packages,
            not_found,
            warnings: Vec::new(),
        })
    }

    /// Info for one package, or `not_found`.
    pub async fn info_one(&self, name: &str) -> Result<PackageInfo, AurError> {
        let r = self.info(&[name.to_owned()]).await?;
        r.packages
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| AurError::NotFound {
                what: format!("AUR package {name}"),
            })
    }

    /// The package base's repository, fetched into the cache when missing, older than the TTL
    /// (`cache_ttl`) or without `commit` (a full id or a prefix): the head it was fetched at
    /// and how to read any commit of it.
    pub async fn repo<'a>(
        &self,
        git: &'a dyn RunGit,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<PackageRepo<'a>, AurError> {
        let want = match commit {
            Some(c) => git::Want::HeadAnd(c),
            None => git::Want::Head,
        };
        self.open(git, pkgbase, want).await
    }

    /// The repository holding `commit` when one is given (fetched only if missing: a commit's
    /// content never changes), else with a head fetched within the TTL.
    async fn repo_at<'a>(
        &self,
        git: &'a dyn RunGit,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<PackageRepo<'a>, AurError> {
        let want = match commit {
            Some(c) => git::Want::Commit(c),
            None => git::Want::Head,
        };
        self.open(git, pkgbase, want).await
    }

    async fn open<'a>(
        &self,
        git: &'a dyn RunGit,
        pkgbase: &str,
        want: git::Want<'_>,
    ) -> Result<PackageRepo<'a>, AurError> {
        check_name(pkgbase)?;
        if let git::Want::HeadAnd(c) | git::Want::Commit(c) = want {
            check_commit(c)?;
        }
        self.repos
            .open(git, &self.inner.config, pkgbase, want)
            .await
    }

    /// The files in a package base's repository (at a commit, or the head).
    pub async fn list_files(
        &self,
        git: &dyn RunGit,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<Vec<RepoFile>, AurError> {
        let repo = self.repo_at(git, pkgbase, commit).await?;
        let at = repo.at(commit).await?;
        repo.list_files(&at).await
    }

    /// One file's text (at a commit, or the head).
    pub async fn file(
        &self,
        git: &dyn RunGit,
        pkgbase: &str,
        path: &str,
        commit: Option<&str>,
    ) -> Result<String, AurError> {
        let repo = self.repo_at(git, pkgbase, commit).await?;
        let at = repo.at(commit).await?;
        repo.file(&at, path).await
    }

    /// The package's git history, newest first (up to `max_history` commits).
    pub async fn history(&self, git: &dyn RunGit, pkgbase: &str) -> Result<Vec<Commit>, AurError> {
        self.repo(git, pkgbase, None).await?.history().await
    }

    /// PKGBUILD, .SRCINFO, install scripts and hooks of a package (head, or a commit).
    pub async fn package_files_at(
        &self,
        git: &dyn RunGit,
        name: &str,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<PackageFiles, AurError> {
        let repo = self.repo_at(git, pkgbase, commit).await?;
        let at = repo.at(commit).await?;
        repo.package_files(name, &at).await
    }

    /// PKGBUILD, .SRCINFO, install scripts and hooks of a package by name (for `aur_pkgbuild`).
    pub async fn package_files(
        &self,
        git: &dyn RunGit,
        name: &str,
    ) -> Result<PackageFiles, AurError> {
        let info = self.info_one(name).await?;
        self.package_files_at(git, name, &info.package_base, None)
            .await
    }
}

//! The AUR client: RPC v5 (`search`, `info`) and the cgit web interface (file listings, plain
//! files at any commit, history), with timeouts, size caps and an on-disk cache.

mod cache;
mod cgit;
mod config;
mod error;
mod http;
mod rpc;

pub use cgit::{Commit, RepoFile};
pub use config::AurConfig;
pub use error::AurError;
pub use rpc::{InfoResults, PackageInfo, SearchBy, SearchResults};

use std::sync::Arc;

use serde::Serialize;

use crate::AUR_NOTICE;

/// A client for one AUR instance. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AurClient {
    inner: Arc<http::Http>,
}

/// The files of a package as the AUR serves them (for `aur_pkgbuild`).
#[derive(Clone, Debug, Serialize)]
pub struct PackageFiles {
    /// Reminder that AUR packages are user-made and unreviewed.
    pub notice: &'static str,
    pub name: String,
    pub package_base: String,
    /// The commit the files were read at; `None` means the branch head.
    pub commit: Option<String>,
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

fn check_commit(c: &str) -> Result<(), AurError> {
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
        Ok(AurClient {
            inner: Arc::new(http::Http::new(config)?),
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
            .get(&url, self.inner.config.max_rpc_bytes, false)
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
                .get(&url, self.inner.config.max_rpc_bytes, false)
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

    /// The files in a package base's repository (at a commit, or the head).
    pub async fn list_files(
        &self,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<Vec<RepoFile>, AurError> {
        check_name(pkgbase)?;
        let mut q = vec![("h", pkgbase)];
        if let Some(c) = commit {
            check_commit(c)?;
            q.push(("id", c));
        }
        let url = self.inner.url("/cgit/aur.git/tree/", &q)?;
        let body = self
            .inner
            .get(
                &url,
                self.inner.config.max_page_bytes,
                commit.is_some_and(|c| c.len() == 40),
            )
            .await?;
        let text = String::from_utf8_lossy(&body);
        cgit::check_branch(&text, pkgbase)?;
        Ok(cgit::parse_tree(&text))
    }

    /// One file's text (at a commit, or the head).
    pub async fn file(
        &self,
        pkgbase: &str,
        path: &str,
        commit: Option<&str>,
    ) -> Result<String, AurError> {
        check_name(pkgbase)?;
        if path.is_empty()
            || path.starts_with('/')
            || path.split('/').any(|s| s == ".." || s.is_empty())
        {
            return Err(AurError::InvalidArgument {
                reason: format!("{path:?} is not a file path in a package repository"),
            });
        }
        let mut q = vec![("h", pkgbase)];
        if let Some(c) = commit {
            check_commit(c)?;
            q.push(("id", c));
        }
        let url = self.inner.url(&format!("/cgit/aur.git/plain/{path}"), &q)?;
        let body = self
            .inner
            .get(
                &url,
                self.inner.config.max_file_bytes,
                commit.is_some_and(|c| c.len() == 40),
            )
            .await?;
        if body.contains(&0) {
            return Err(AurError::Malformed {
                url,
                reason: "binary file".into(),
            });
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// The package's git history, newest first (up to `max_history` commits).
    pub async fn history(&self, pkgbase: &str) -> Result<Vec<Commit>, AurError> {
        check_name(pkgbase)?;
        let mut out: Vec<Commit> = Vec::new();
        let mut ofs = 0usize;
        loop {
            let ofs_s = ofs.to_string();
            let mut q = vec![("h", pkgbase)];
            if ofs > 0 {
                q.push(("ofs", ofs_s.as_str()));
            }
            let url = self.inner.url("/cgit/aur.git/log/", &q)?;
            let body = self
                .inner
                .get(&url, self.inner.config.max_page_bytes, false)
                .await?;
            let text = String::from_utf8_lossy(&body);
            cgit::check_branch(&text, pkgbase)?;
            let page = cgit::parse_log(&text);
            let n = page.len();
            let more = cgit::has_next_page(&text);
            for c in page {
                if !out.iter().any(|o| o.id == c.id) {
                    out.push(c);
                }
            }
            if n == 0 || !more || out.len() >= self.inner.config.max_history {
                break;
            }
            ofs += n;
        }
        out.truncate(self.inner.config.max_history);
        Ok(out)
    }

    /// PKGBUILD, .SRCINFO, install scripts and hooks of a package (head, or a commit).
    pub async fn package_files_at(
        &self,
        name: &str,
        pkgbase: &str,
        commit: Option<&str>,
    ) -> Result<PackageFiles, AurError> {
        let files = self.list_files(pkgbase, commit).await?;
        let pkgbuild = self.file(pkgbase, "PKGBUILD", commit).await?;
        let srcinfo = if files.iter().any(|f| f.name == ".SRCINFO") {
            Some(self.file(pkgbase, ".SRCINFO", commit).await?)
        } else {
            None
        };
        let mut install_scripts = Vec::new();
        let mut skipped = Vec::new();
        let available: Vec<String> = files
            .iter()
            .filter(|f| f.kind == "file")
            .map(|f| f.name.clone())
            .collect();
        let wanted = crate::audit::files_to_read(&pkgbuild, &available);
        for name in wanted.into_iter().take(64) {
            match self.file(pkgbase, &name, commit).await {
                Ok(content) => install_scripts.push(crate::audit::ScriptFile { name, content }),
                Err(AurError::TooLarge { .. } | AurError::Malformed { .. }) => skipped.push(name),
                Err(e) => return Err(e),
            }
        }
        Ok(PackageFiles {
            notice: AUR_NOTICE,
            name: name.to_owned(),
            package_base: pkgbase.to_owned(),
            commit: commit.map(str::to_owned),
            pkgbuild,
            srcinfo,
            install_scripts,
            files,
            skipped,
        })
    }

    /// PKGBUILD, .SRCINFO, install scripts and hooks of a package by name (for `aur_pkgbuild`).
    pub async fn package_files(&self, name: &str) -> Result<PackageFiles, AurError> {
        let info = self.info_one(name).await?;
        self.package_files_at(name, &info.package_base, None).await
    }
}

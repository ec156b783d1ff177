//! `pkg_updates`: pending updates without touching pacman's own databases.
//!
//! Like `checkupdates`, fresh copies of every repository's `.db` are fetched from its `Server`
//! lines (`file://`, `http://`, `https://`, with timeouts and a size cap) into a temporary
//! directory and compared with the local database. A repository that cannot be refreshed is
//! compared from its current sync database, and the answer says so.

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::db::{Snapshot, SyncRepo};
use crate::error::PacmanError;
use crate::list::{Upgrade, upgrades};

/// Limits for fetching databases.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// Per-request timeout.
    pub timeout: Duration,
    /// Largest database accepted, in bytes.
    pub max_bytes: u64,
}

impl Default for FetchSettings {
    fn default() -> Self {
        FetchSettings {
            timeout: Duration::from_secs(20),
            max_bytes: 64 * 1024 * 1024,
        }
    }
}

/// How one repository was compared.
#[derive(Debug, Clone, Serialize)]
pub struct RepoRefresh {
    /// Repository.
    pub repo: String,
    /// Whether a fresh copy was fetched.
    pub refreshed: bool,
    /// The server used, when refreshed.
    pub server: Option<String>,
    /// Why not, when not refreshed.
    pub reason: Option<String>,
}

/// The answer to `pkg_updates`.
#[derive(Debug, Clone, Serialize)]
pub struct UpdatesResult {
    /// True when every repository was refreshed.
    pub refreshed: bool,
    /// When not: what went wrong (the first failure).
    pub reason: Option<String>,
    /// Per repository.
    pub repos: Vec<RepoRefresh>,
    /// Pending updates, sorted by name.
    pub updates: Vec<Upgrade>,
    /// The command the person runs to apply them (archgate never elevates).
    pub command: String,
}

async fn fetch(url: &str, settings: &FetchSettings) -> Result<Vec<u8>, String> {
    if let Some(path) = url.strip_prefix("file://") {
        let path = path.to_owned();
        let cap = settings.max_bytes;
        return tokio::task::spawn_blocking(move || {
            let meta = std::fs::metadata(&path).map_err(|e| format!("{path}: {e}"))?;
            if meta.len() > cap {
                return Err(format!("{path} is larger than {cap} bytes"));
            }
            std::fs::read(&path).map_err(|e| format!("{path}: {e}"))
        })
        .await
        .map_err(|e| e.to_string())?;
    }
    let client = crate::http::client(url, settings.timeout).map_err(|e| e.to_string())?;
    crate::http::get(&client, url, settings.timeout, settings.max_bytes)
        .await
        .map_err(|e| e.to_string())
}

/// Refreshes a temporary copy of every sync database and lists pending updates.
pub async fn updates(
    snap: &Snapshot,
    settings: &FetchSettings,
) -> Result<UpdatesResult, PacmanError> {
    let tmp = tempfile::Builder::new()
        .prefix("archgate-updates-")
        .tempdir()
        .map_err(|source| PacmanError::DbUnreadable {
            path: std::env::temp_dir(),
            source,
        })?;
    let mut fresh: Vec<SyncRepo> = Vec::new();
    let mut reports = Vec::new();
    for repo in &snap.conf.repos {
        let mut errors = Vec::new();
        let mut done = None;
        for server in &repo.servers {
            let url = format!("{}/{}.db", server.trim_end_matches('/'), repo.name);
            match fetch(&url, settings).await {
                Ok(bytes) => {
                    let path = tmp.path().join(format!("{}.db", repo.name));
                    match load_fetched(&repo.name, &path, bytes).await {
                        Ok(r) => {
                            done = Some((server.clone(), r));
                            break;
                        }
                        Err(e) => errors.push(format!("{url}: {e}")),
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        match done {
            Some((server, r)) => {
                fresh.push(r);
                reports.push(RepoRefresh {
                    repo: repo.name.clone(),
                    refreshed: true,
                    server: Some(server),
                    reason: None,
                });
            }
            None => {
                let reason = if repo.servers.is_empty() {
                    "no Server configured".to_owned()
                } else {
                    errors.join("; ")
                };
                tracing::info!(repo = %repo.name, %reason, "could not refresh; using current sync db");
                reports.push(RepoRefresh {
                    repo: repo.name.clone(),
                    refreshed: false,
                    server: None,
                    reason: Some(reason),
                });
            }
        }
    }
    // Repositories in pacman.conf order: fresh copies where we have them, current ones else.
    let mut order: Vec<&SyncRepo> = Vec::new();
    for repo in &snap.conf.repos {
        if let Some(r) = fresh.iter().find(|r| r.name == repo.name) {
            order.push(r);
        } else if let Some(r) = snap.repos.iter().find(|r| r.name == repo.name) {
            order.push(r);
        }
    }
    let mut list = upgrades(
        &snap.local,
        &order,
        &snap.conf.ignore_pkg,
        &snap.conf.ignore_group,
    );
    list.sort_by(|a, b| a.name.cmp(&b.name));
    let reason = reports
        .iter()
        .find(|r| !r.refreshed)
        .map(|r| format!("{}: {}", r.repo, r.reason.clone().unwrap_or_default()));
    let command = crate::plan::pacman_command(&snap.conf.path, &["-Syu"], &[]);
    Ok(UpdatesResult {
        refreshed: reason.is_none(),
        reason,
        repos: reports,
        updates: list,
        command,
    })
}

async fn load_fetched(name: &str, path: &Path, bytes: Vec<u8>) -> Result<SyncRepo, PacmanError> {
    let name = name.to_owned();
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        std::fs::write(&path, &bytes).map_err(|source| PacmanError::DbUnreadable {
            path: path.clone(),
            source,
        })?;
        SyncRepo::load(&name, &path)
    })
    .await
    .map_err(|e| PacmanError::Task(e.to_string()))?
}

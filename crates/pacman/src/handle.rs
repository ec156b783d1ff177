//! `PacmanDb`: the shared, cheap-to-query handle the tools call.
//!
//! It holds the current `Snapshot` in an `Arc`; every query first checks the stamps of the files
//! behind it (a handful of `stat` calls, inline) and reloads what changed on a blocking thread.
//! Queries run against one immutable snapshot, so concurrent callers never see a half-loaded
//! state.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::ala::ArchiveClient;
use crate::args::{
    CacheArgs, DepsArgs, FilesArgs, InfoArgs, InstallPlanArgs, ListArgs, LogArgs, OwnerArgs,
    SearchArgs, VerifyArgs,
};
use crate::conf::PacmanConf;
use crate::db::Snapshot;
use crate::deps::DepsResult;
use crate::error::PacmanError;
use crate::files::{FilesResult, OwnerResult};
use crate::info::{InfoResult, Timestamp};
use crate::list::ListResult;
use crate::log::{LogQuery, LogResult};
use crate::plan::InstallPlan;
use crate::remote::{RemoteClient, RemoteSettings};
use crate::search::{SearchResult, TermMode};
use crate::updates::{FetchSettings, UpdatesResult};

/// Where pacman's files are and how to reach the network.
#[derive(Debug, Clone)]
pub struct PacmanSettings {
    /// pacman.conf (config key `arch.pacman_conf`, default `/etc/pacman.conf`).
    pub conf_path: PathBuf,
    /// The archlinux.org packages API, used when there are no pacman databases.
    pub remote: RemoteSettings,
    /// Limits for fetching databases in `updates`.
    pub fetch: FetchSettings,
    /// The pacman log to read (config key `arch.pacman_log`); `None`: `LogFile` of pacman.conf.
    pub log_path: Option<PathBuf>,
    /// The Arch Linux Archive (config key `arch.archive_url`), for `pkg_cache` downgrades.
    pub archive: RemoteSettings,
    /// What one `pkg_verify` of every package may read before it stops and says `next`.
    pub verify_budget: crate::integrity::Budget,
}

impl Default for PacmanSettings {
    fn default() -> Self {
        PacmanSettings {
            conf_path: PathBuf::from("/etc/pacman.conf"),
            remote: RemoteSettings::default(),
            fetch: FetchSettings::default(),
            log_path: None,
            archive: crate::ala::default_settings(),
            verify_budget: crate::integrity::Budget::default(),
        }
    }
}

/// The handle. Clone it freely (it is an `Arc` inside).
#[derive(Debug, Clone)]
pub struct PacmanDb {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    settings: PacmanSettings,
    current: Mutex<Option<Arc<Snapshot>>>,
    reload: tokio::sync::Mutex<()>,
    /// The packages-API client, built once: its connection pool and TLS setup are reused.
    remote: std::sync::OnceLock<RemoteClient>,
    /// The archive client, built once.
    archive: std::sync::OnceLock<ArchiveClient>,
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, PacmanError> + Send + 'static,
) -> Result<T, PacmanError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| PacmanError::Task(e.to_string()))?
}

impl PacmanDb {
    /// A handle; nothing is read until the first query.
    pub fn new(settings: PacmanSettings) -> PacmanDb {
        PacmanDb {
            inner: Arc::new(Inner {
                settings,
                current: Mutex::new(None),
                reload: tokio::sync::Mutex::new(()),
                remote: std::sync::OnceLock::new(),
                archive: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The settings in use.
    pub fn settings(&self) -> &PacmanSettings {
        &self.inner.settings
    }

    fn cached(&self) -> Option<Arc<Snapshot>> {
        self.inner
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The current snapshot, reloading what changed on disk (synchronous; for benchmarks and
    /// callers outside a runtime).
    pub fn snapshot_blocking(&self) -> Result<Arc<Snapshot>, PacmanError> {
        if let Some(s) = self.cached()
            && !s.is_stale()
        {
            return Ok(s);
        }
        let previous = self.cached();
        let conf = Arc::new(PacmanConf::load(&self.inner.settings.conf_path)?);
        let fresh = Arc::new(Snapshot::load(conf, previous.as_deref())?);
        *self
            .inner
            .current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(fresh.clone());
        Ok(fresh)
    }

    /// The current snapshot, reloading on a blocking thread when files changed. The change check
    /// runs inline: it is a handful of `stat`s (pacman.conf, its Includes, one per sync database,
    /// the local database), microseconds on a local disk, cheaper than the hop to a blocking
    /// thread and back, and every call still sees an edit made before it.
    pub async fn snapshot(&self) -> Result<Arc<Snapshot>, PacmanError> {
        if let Some(s) = self.cached()
            && !s.is_stale()
        {
            return Ok(s);
        }
        let _one_reload = self.inner.reload.lock().await;
        let this = self.clone();
        blocking(move || this.snapshot_blocking()).await
    }

    /// This machine's pacman databases, or (`Err`) why there are none: search and info then go
    /// to the remote API, and a failure there names this local fact.
    async fn local_or_remote(&self) -> Result<Result<Arc<Snapshot>, NoLocal>, PacmanError> {
        let conf_path = self.inner.settings.conf_path.clone();
        match self.snapshot().await {
            Ok(s) if !s.is_empty() => Ok(Ok(s)),
            Ok(s) => Ok(Err(NoLocal {
                conf_path,
                db_path: Some(s.conf.db_path.clone()),
            })),
            Err(e @ PacmanError::ConfUnreadable { .. }) if e.kind() == "not_found" => {
                Ok(Err(NoLocal {
                    conf_path,
                    db_path: None,
                }))
            }
            Err(e) => Err(e),
        }
    }

    fn remote(&self) -> Result<RemoteClient, PacmanError> {
        if let Some(c) = self.inner.remote.get() {
            return Ok(c.clone());
        }
        let c = RemoteClient::new(self.inner.settings.remote.clone())?;
        Ok(self.inner.remote.get_or_init(|| c).clone())
    }

    /// `pacman_conf`. Only pacman.conf and its Includes are checked for changes: what the
    /// databases hold is not part of it.
    pub async fn conf(&self) -> Result<Arc<PacmanConf>, PacmanError> {
        if let Some(s) = self.cached()
            && !s.conf_is_stale()
        {
            return Ok(s.conf.clone());
        }
        Ok(self.snapshot().await?.conf.clone())
    }

    /// `pkg_search`.
    pub async fn search(&self, args: &SearchArgs) -> Result<SearchResult, PacmanError> {
        let limit = args.limit.unwrap_or(50).clamp(1, 1000);
        match self.local_or_remote().await? {
            Ok(snap) => {
                let mode = match args.regex {
                    None => TermMode::Pacman,
                    Some(true) => TermMode::Regex,
                    Some(false) => TermMode::Literal,
                };
                crate::search::search(&snap, &args.query, args.repo.as_deref(), mode, limit)
            }
            Err(here) => self
                .remote()?
                .search(&args.query, args.repo.as_deref(), limit)
                .await
                .map_err(|e| here.with(e)),
        }
    }

    /// `pkg_info`.
    pub async fn info(&self, args: &InfoArgs) -> Result<InfoResult, PacmanError> {
        match self.local_or_remote().await? {
            Ok(snap) => crate::info::info(&snap, &args.name),
            Err(here) => self
                .remote()?
                .info(&args.name)
                .await
                .map_err(|e| here.with(e))?
                .ok_or_else(|| PacmanError::PackageNotFound {
                    name: args.name.clone(),
                    near: Vec::new(),
                }),
        }
    }

    /// `pkg_files`.
    pub async fn files(&self, args: &FilesArgs) -> Result<FilesResult, PacmanError> {
        let snap = self.snapshot().await?;
        let (name, limit) = (args.name.clone(), args.limit.unwrap_or(2000).max(1));
        blocking(move || crate::files::files(&snap, &name, limit)).await
    }

    /// `pkg_owner`.
    pub async fn owner(&self, args: &OwnerArgs) -> Result<OwnerResult, PacmanError> {
        let snap = self.snapshot().await?;
        let path = args.path.clone();
        blocking(move || crate::files::owner(&snap, &path)).await
    }

    /// `pkg_deps`.
    pub async fn deps(&self, args: &DepsArgs) -> Result<DepsResult, PacmanError> {
        let snap = self.snapshot().await?;
        crate::deps::deps(
            &snap,
            &args.name,
            args.depth.unwrap_or(3).clamp(1, 16),
            args.reverse.unwrap_or(false),
        )
    }

    /// `pkg_list`.
    pub async fn list(&self, args: &ListArgs) -> Result<ListResult, PacmanError> {
        let snap = self.snapshot().await?;
        let filter = args.filter;
        blocking(move || Ok(crate::list::list(&snap, filter))).await
    }

    /// `pkg_updates`. With no repository configured there is nothing to compare against: that
    /// is said, never "up to date".
    pub async fn updates(&self) -> Result<UpdatesResult, PacmanError> {
        let snap = self.snapshot().await?;
        if snap.conf.repos.is_empty() {
            return Err(PacmanError::NoRepositories {
                path: snap.conf.path.clone(),
            });
        }
        crate::updates::updates(&snap, &self.inner.settings.fetch).await
    }

    /// `pacman_log`.
    pub async fn pacman_log(&self, args: &LogArgs) -> Result<LogResult, PacmanError> {
        let snap = self.snapshot().await?;
        let query = LogQuery {
            package: args.package.clone(),
            action: args.action,
            since: args
                .since
                .as_deref()
                .map(crate::log::parse_since)
                .transpose()?,
            limit: Some(
                args.limit
                    .unwrap_or(crate::log::DEFAULT_LIMIT)
                    .clamp(1, 2000),
            ),
        };
        let path = self.log_path(&snap);
        blocking(move || crate::log::read_log(&path, &query)).await
    }

    /// When the last full system upgrade started (for the news tool).
    pub async fn last_full_upgrade(&self) -> Result<Option<Timestamp>, PacmanError> {
        let snap = self.snapshot().await?;
        let path = self.log_path(&snap);
        blocking(move || crate::log::last_full_upgrade(&path)).await
    }

    /// `arch.pacman_log` when set, else `LogFile` from pacman.conf.
    fn log_path(&self, snap: &Snapshot) -> PathBuf {
        self.inner
            .settings
            .log_path
            .clone()
            .unwrap_or_else(|| snap.conf.log_file.clone())
    }

    /// `pkg_install_plan`.
    pub async fn install_plan(&self, args: &InstallPlanArgs) -> Result<InstallPlan, PacmanError> {
        let snap = self.snapshot().await?;
        crate::plan::install_plan(&snap, &args.names)
    }
}

impl PacmanDb {
    /// `pkg_verify`: one package, or every package from `from` on within the budget.
    pub async fn verify(
        &self,
        args: &VerifyArgs,
    ) -> Result<crate::integrity::VerifyResult, PacmanError> {
        let snap = self.snapshot().await?;
        let args = args.clone();
        let budget = self.inner.settings.verify_budget;
        blocking(move || {
            crate::integrity::verify(
                &snap,
                args.name.as_deref(),
                args.full.unwrap_or(false),
                args.from.as_deref(),
                budget,
            )
        })
        .await
    }

    /// `pkg_pacnew`.
    pub async fn pacnew(&self) -> Result<crate::pacnew::PacnewResult, PacmanError> {
        let snap = self.snapshot().await?;
        blocking(move || crate::pacnew::pacnew(&snap)).await
    }

    /// `pkg_cache` without a name: the overview.
    pub async fn cache(&self, keep: usize) -> Result<crate::cache::CacheResult, PacmanError> {
        let snap = self.snapshot().await?;
        blocking(move || crate::cache::overview(&snap, keep)).await
    }

    /// `pkg_cache` with a name: versions to go back to.
    pub async fn downgrade(
        &self,
        name: &str,
    ) -> Result<crate::cache::DowngradeResult, PacmanError> {
        let snap = self.snapshot().await?;
        let archive = match self.inner.archive.get() {
            Some(c) => c.clone(),
            None => {
                let c = ArchiveClient::new(self.inner.settings.archive.clone())?;
                self.inner.archive.get_or_init(|| c).clone()
            }
        };
        crate::cache::downgrade(&snap, name, &archive).await
    }

    /// `pkg_cache`: the overview, or with a name the versions to go back to.
    pub async fn cache_tool(&self, args: &CacheArgs) -> Result<serde_json::Value, PacmanError> {
        let to_json = |v: Result<serde_json::Value, serde_json::Error>| {
            v.map_err(|e| PacmanError::Task(e.to_string()))
        };
        match &args.name {
            Some(name) => to_json(serde_json::to_value(self.downgrade(name).await?)),
            None => to_json(serde_json::to_value(
                self.cache(args.keep.unwrap_or(3).clamp(0, 100)).await?,
            )),
        }
    }
}

/// Why this machine has no pacman data to answer from.
struct NoLocal {
    conf_path: std::path::PathBuf,
    db_path: Option<std::path::PathBuf>,
}

impl NoLocal {
    fn with(self, source: crate::http::HttpError) -> PacmanError {
        PacmanError::NoDatabases {
            conf_path: self.conf_path,
            db_path: self.db_path,
            source: Box::new(source),
        }
    }
}

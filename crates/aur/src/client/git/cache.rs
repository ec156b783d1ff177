//! The repository cache: one bare repository per package base under `<cache>/git/`, fetched
//! shallow (`--depth` = the history kept), updated by fetch, fresh for the TTL.
//!
//! - **Locked:** a fetch holds `<pkgbase>.lock` (an advisory lock), so concurrent audits of one
//!   package, in one process or several, fetch one at a time and read what the other fetched.
//! - **Never half-written:** a first fetch goes into a staging directory renamed into place only
//!   when it succeeded; a later fetch lands on `refs/archgate/incoming`, and the branch moves
//!   only when that fetch is complete, checked and within the limit. A fetch that fails, is
//!   stopped or is too large is undone: its packs, temporaries and ref removed, `shallow` put
//!   back, so the previous repository is exactly as it was.
//! - **Bounded:** what a fetch receives is measured while git runs; past `max_repo_bytes` git
//!   is stopped and the answer is `too_large`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::super::config::AurConfig;
use super::super::error::AurError;
use super::command::{fetch_error, git, scheme};
use super::{PackageRepo, RunGit, Want, exec_error};

/// The branch the AUR keeps a package base on.
const BRANCH: &str = "refs/heads/master";
/// Where a fetch puts the branch until the fetch is judged complete and within the limit.
const INCOMING: &str = "refs/archgate/incoming";
/// Written (empty) after each successful fetch; its mtime is when the head was last fetched.
const STAMP: &str = "archgate-fetched";

#[derive(Debug)]
pub(crate) struct RepoCache {
    root: PathBuf,
    /// Keeps the per-client directory alive when no cache directory is configured.
    _temp: Option<tempfile::TempDir>,
    counter: AtomicU64,
}

impl RepoCache {
    pub(crate) fn new(config: &AurConfig) -> Result<RepoCache, AurError> {
        let io = |e: std::io::Error, p: &Path| AurError::Cache {
            path: p.display().to_string(),
            reason: e.to_string(),
        };
        let (root, temp) = match &config.cache_dir {
            Some(d) => (d.join("git"), None),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("archgate-aur-git-")
                    .tempdir()
                    .map_err(|e| io(e, &std::env::temp_dir()))?;
                (t.path().to_owned(), Some(t))
            }
        };
        Ok(RepoCache {
            root,
            _temp: temp,
            counter: AtomicU64::new(0),
        })
    }

    fn io(&self, e: std::io::Error, p: &Path) -> AurError {
        AurError::Cache {
            path: p.display().to_string(),
            reason: e.to_string(),
        }
    }

    /// The package base's repository, fetched when it is missing, older than the TTL, or lacks
    /// the commit wanted.
    pub(crate) async fn open<'a>(
        &self,
        git_run: &'a dyn RunGit,
        config: &AurConfig,
        pkgbase: &str,
        want: Want<'_>,
    ) -> Result<PackageRepo<'a>, AurError> {
        let scheme = scheme(&config.base_url)?;
        let url = format!("{}/{pkgbase}.git", config.base_url.trim_end_matches('/'));
        let home = self.root.join(".home");
        let scratch = self.root.join(".scratch");
        // Judged at every open, not once: a cache that lost trust since start (a hop another
        // user may write) is not fetched into, locked in or read (attack 14 F8).
        for d in [&self.root, &home, &scratch] {
            archgate_exec::own_file::OwnDir::create(d).map_err(|e| self.io(e, d))?;
        }
        let dir = self.root.join(format!("{pkgbase}.git"));
        let mut repo = PackageRepo {
            git: git_run,
            dir: dir.clone(),
            home,
            scratch,
            pkgbase: pkgbase.to_owned(),
            url,
            head: String::new(),
            scheme,
            timeout: config.timeout,
            max_file_bytes: config.max_file_bytes,
            max_history: config.max_history,
        };
        let _lock = self.lock(pkgbase).await?;
        let head = repo.rev_parse(BRANCH).await.ok();
        let fresh = stamp_age(&dir).is_some_and(|a| a < config.cache_ttl);
        let has = |c: &str| repo.rev_parse_owned(format!("{c}^{{commit}}"));
        let enough = head.is_some()
            && match want {
                Want::Head => fresh,
                Want::HeadAnd(c) => fresh && has(c).await.is_ok(),
                Want::Commit(c) => has(c).await.is_ok(),
            };
        repo.head = match head {
            Some(h) if enough => h,
            Some(_) => {
                self.fetch_into(&repo, scheme, config, false).await?;
                repo.rev_parse(BRANCH).await?
            }
            None => self.first_fetch(&mut repo, scheme, config).await?,
        };
        Ok(repo)
    }

    /// Fetches into a new staging repository and renames it into place once complete. A
    /// repository left unreadable (someone else's hand, a disk error) is replaced the same way.
    async fn first_fetch(
        &self,
        repo: &mut PackageRepo<'_>,
        scheme: &str,
        config: &AurConfig,
    ) -> Result<String, AurError> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let staging = self.root.join(format!(
            ".staging-{}-{}-{n}",
            repo.pkgbase,
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&staging);
        let mut st = PackageRepo {
            git: repo.git,
            dir: staging.clone(),
            home: repo.home.clone(),
            scratch: repo.scratch.clone(),
            pkgbase: repo.pkgbase.clone(),
            url: repo.url.clone(),
            head: String::new(),
            scheme: repo.scheme,
            timeout: repo.timeout,
            max_file_bytes: repo.max_file_bytes,
            max_history: repo.max_history,
        };
        let result = async {
            let init = git(&staging, &st.home, scheme, config.timeout)
                .arg("init")
                .arg("--bare")
                .arg("--quiet")
                .arg("--template=")
                .arg(staging.to_string_lossy());
            let out = st
                .git
                .run_git(init)
                .await
                .map_err(|e| exec_error(&st.url, e))?;
            if !out.success() {
                return Err(AurError::Cache {
                    path: staging.display().to_string(),
                    reason: format!("git init failed: {}", out.stderr_lossy().trim()),
                });
            }
            self.fetch_into(&st, scheme, config, true).await?;
            st.head = st.rev_parse(BRANCH).await?;
            Ok::<_, AurError>(())
        }
        .await;
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        if repo.dir.exists() {
            let trash = self.root.join(format!(
                ".trash-{}-{}-{n}",
                repo.pkgbase,
                std::process::id()
            ));
            std::fs::rename(&repo.dir, &trash).map_err(|e| self.io(e, &repo.dir))?;
            let _ = std::fs::remove_dir_all(&trash);
        }
        std::fs::rename(&staging, &repo.dir).map_err(|e| {
            let _ = std::fs::remove_dir_all(&staging);
            self.io(e, &repo.dir)
        })?;
        Ok(st.head)
    }

    /// One `git fetch` of the branch, `--depth` = the history kept, its growth measured while it
    /// runs. On any failure the temporary pack is removed and the branch is where it was.
    async fn fetch_into(
        &self,
        repo: &PackageRepo<'_>,
        scheme: &str,
        config: &AurConfig,
        first: bool,
    ) -> Result<(), AurError> {
        let before = if first { 0 } else { dir_size(&repo.dir) };
        remove_temporaries(&repo.dir);
        let kept = Kept::take(&repo.dir);
        let spec = git(&repo.dir, &repo.home, scheme, config.timeout)
            .arg("fetch")
            .arg("--quiet")
            .arg("--no-tags")
            .arg("--no-recurse-submodules")
            .arg("--no-auto-gc")
            .arg("--no-auto-maintenance")
            .arg("--no-write-fetch-head")
            .arg(format!("--depth={}", config.max_history.max(1)))
            .arg("--end-of-options")
            .arg(&repo.url)
            .arg(format!("+{BRANCH}:{INCOMING}"));
        let limit = config.max_repo_bytes as u64;
        // Boxed (so `Unpin`): dropping it below really drops the run, which ends git's group.
        let mut run = repo.git.run_git(spec);
        let out = loop {
            tokio::select! {
                r = &mut run => break r,
                () = tokio::time::sleep(Duration::from_millis(50)) => {
                    if dir_size(&repo.dir).saturating_sub(before) > limit {
                        // Dropping the run ends git's process group (SIGKILL) before the
                        // repository is put back.
                        drop(run);
                        kept.restore(&repo.dir);
                        return Err(AurError::TooLarge { url: repo.url.clone(), limit: config.max_repo_bytes });
                    }
                }
            }
        };
        let result = match out {
            Err(e) => Err(exec_error(&repo.url, e)),
            Ok(o) if !o.success() => Err(fetch_error(
                &repo.url,
                &repo.pkgbase,
                &o.stderr_lossy(),
                config.timeout,
            )),
            Ok(_) if dir_size(&repo.dir).saturating_sub(before) > limit => {
                Err(AurError::TooLarge {
                    url: repo.url.clone(),
                    limit: config.max_repo_bytes,
                })
            }
            Ok(_) => Ok(()),
        };
        if let Err(e) = result {
            kept.restore(&repo.dir);
            return Err(e);
        }
        // Complete, checked and within the limit: the branch moves to what was fetched.
        let incoming = repo.rev_parse(INCOMING).await?;
        let out = repo
            .git
            .run_git(git(&repo.dir, &repo.home, scheme, config.timeout).args([
                "update-ref",
                "--no-deref",
                BRANCH,
                &incoming,
            ]))
            .await
            .map_err(|e| exec_error(&repo.url, e))?;
        let _ = std::fs::remove_file(repo.dir.join(INCOMING));
        if !out.success() {
            kept.restore(&repo.dir);
            return Err(AurError::Cache {
                path: repo.dir.display().to_string(),
                reason: format!("cannot move the branch: {}", out.stderr_lossy().trim()),
            });
        }
        remove_temporaries(&repo.dir);
        let stamp = repo.dir.join(STAMP);
        archgate_exec::own_file::write_private_file(&stamp, b"").map_err(|e| self.io(e, &stamp))?;
        Ok(())
    }

    /// The package base's lock, held while its repository is checked and fetched.
    async fn lock(&self, pkgbase: &str) -> Result<std::fs::File, AurError> {
        let path = self.root.join(format!("{pkgbase}.lock"));
        let name = format!("{pkgbase}.lock");
        let f = archgate_exec::own_file::OwnDir::open(&self.root)
            .and_then(|d| d.open_append(name.as_ref()))
            .map_err(|e| self.io(e, &path))?;
        let p2 = path.clone();
        tokio::task::spawn_blocking(move || f.lock().map(|()| f))
            .await
            .map_err(|e| AurError::Cache {
                path: p2.display().to_string(),
                reason: e.to_string(),
            })?
            .map_err(|e| self.io(e, &path))
    }
}

fn stamp_age(dir: &Path) -> Option<Duration> {
    let m = std::fs::metadata(dir.join(STAMP)).ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(m)
            .unwrap_or(Duration::ZERO),
    )
}

/// Bytes under `dir` (symbolic links not followed).
pub(crate) fn dir_size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                stack.push(e.path());
            } else {
                total += m.len();
            }
        }
    }
    total
}

/// A fetch cut short leaves `tmp_pack_*`, `tmp_idx_*` or `*.lock` files; nothing reads them.
fn remove_temporaries(dir: &Path) {
    for sub in [
        dir.join("objects/pack"),
        dir.join("objects"),
        dir.join("refs/heads"),
        dir.to_owned(),
    ] {
        let Ok(rd) = std::fs::read_dir(&sub) else {
            continue;
        };
        for e in rd.flatten() {
            let n = e.file_name();
            let n = n.to_string_lossy();
            if n.starts_with("tmp_") || n.ends_with(".lock") {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// What a repository was before a fetch: its packs and its `shallow` file. A fetch that fails
/// or is too large is undone to exactly this (new packs, the incoming ref and temporaries
/// removed, `shallow` put back), so the branch and the objects it reaches stay as they were.
struct Kept {
    packs: Vec<std::ffi::OsString>,
    shallow: Option<Vec<u8>>,
}

impl Kept {
    fn take(dir: &Path) -> Kept {
        Kept {
            packs: std::fs::read_dir(dir.join("objects/pack"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name())
                .collect(),
            shallow: std::fs::read(dir.join("shallow")).ok(),
        }
    }

    fn restore(&self, dir: &Path) {
        remove_temporaries(dir);
        let _ = std::fs::remove_file(dir.join(INCOMING));
        for e in std::fs::read_dir(dir.join("objects/pack"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if !self.packs.contains(&e.file_name()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let shallow = dir.join("shallow");
        match &self.shallow {
            Some(b) => {
                let _ = archgate_exec::own_file::write_private_file(&shallow, b);
            }
            None => {
                let _ = std::fs::remove_file(&shallow);
            }
        }
    }
}

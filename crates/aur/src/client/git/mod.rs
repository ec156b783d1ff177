//! AUR packages read the way AUR helpers read them: from the package base's git repository
//! (`<base_url>/<pkgbase>.git`), fetched shallow into archgate's cache by the `git` program run
//! through the executor. The file list, every file's bytes, the history and the commit an audit
//! is bound to come from git objects, whose ids are hashes of their content: exact by
//! construction, where cgit's HTML pages needed regexes that broke when the page changed.
//!
//! A repository is untrusted input. `git` runs with no configuration but archgate's (see
//! [`command`]): nothing it fetches can make it run a program (no checkout, so no hooks,
//! filters, LFS or submodules; no config from the repository, the person or the system), only
//! the AUR's own scheme is allowed, and every received object is checked by `fsck` (names like
//! `..` or `.git` refuse the fetch). See SECURITY.md, "AUR repositories".

mod cache;
mod command;
mod read;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use archgate_exec::{CommandSpec, ExecError, Output, Permit};

pub(crate) use cache::RepoCache;
pub use read::{Commit, RepoFile};

use super::error::AurError;

/// Runs one `git` command under the executor's rules. The tools pass the permit the gate issued
/// for the call; `archgate audit PACKAGE` (the person's own command) runs it for the person.
pub trait RunGit: Send + Sync {
    fn run_git(
        &self,
        spec: CommandSpec,
    ) -> Pin<Box<dyn Future<Output = Result<Output, ExecError>> + Send + '_>>;
}

impl RunGit for Permit {
    fn run_git(
        &self,
        spec: CommandSpec,
    ) -> Pin<Box<dyn Future<Output = Result<Output, ExecError>> + Send + '_>> {
        Box::pin(self.run(spec))
    }
}

/// One package base's repository in the cache, as fetched: its newest commit (the branch head
/// at the fetch) and how to read any commit of it.
pub struct PackageRepo<'a> {
    pub(crate) git: &'a dyn RunGit,
    pub(crate) dir: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) scratch: PathBuf,
    pub(crate) pkgbase: String,
    pub(crate) url: String,
    /// The full id of the branch head when it was fetched.
    pub head: String,
    pub(crate) scheme: &'static str,
    pub(crate) timeout: std::time::Duration,
    pub(crate) max_file_bytes: usize,
    pub(crate) max_history: usize,
}

impl std::fmt::Debug for PackageRepo<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PackageRepo")
            .field("pkgbase", &self.pkgbase)
            .field("dir", &self.dir)
            .field("head", &self.head)
            .finish()
    }
}

/// An executor error as the AUR client's: git missing or untrusted is `not_installed`-like
/// (the message says which), a timeout is `timed_out`.
pub(crate) fn exec_error(url: &str, e: ExecError) -> AurError {
    match e {
        ExecError::TimedOut { after, .. } => AurError::TimedOut {
            url: url.to_owned(),
            after,
        },
        other => AurError::Git {
            reason: other.to_string(),
        },
    }
}

/// What a caller needs of the cached repository; anything missing is fetched.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Want<'w> {
    /// A head fetched within the TTL.
    Head,
    /// A head fetched within the TTL, and this commit.
    HeadAnd(&'w str),
    /// This commit, whatever the head's age (a commit's content never changes).
    Commit(&'w str),
}

impl PackageRepo<'_> {
    /// The full id of `commit` (a prefix is resolved), or the fetched head.
    pub async fn at(&self, commit: Option<&str>) -> Result<String, AurError> {
        match commit {
            Some(c) => self.resolve(c).await,
            None => Ok(self.head.clone()),
        }
    }

    /// PKGBUILD, .SRCINFO, install scripts and hooks of `name` at `commit` (a full id): every
    /// file read from the git objects of that commit.
    pub async fn package_files(
        &self,
        name: &str,
        commit: &str,
    ) -> Result<super::PackageFiles, AurError> {
        let files = self.list_files(commit).await?;
        let get = |n: &str| files.iter().find(|f| f.name == n);
        let pkgbuild = match get("PKGBUILD") {
            Some(f) => self.read(f).await?,
            None => {
                return Err(AurError::NotFound {
                    what: format!("PKGBUILD at commit {commit} of {}", self.pkgbase),
                });
            }
        };
        let srcinfo = match get(".SRCINFO") {
            Some(f) => Some(self.read(f).await?),
            None => None,
        };
        let available: Vec<String> = files
            .iter()
            .filter(|f| f.kind == "file" || f.kind == "symlink")
            .map(|f| f.name.clone())
            .collect();
        let wanted = crate::audit::files_to_read(&pkgbuild, &available);
        let mut install_scripts = Vec::new();
        let mut skipped = Vec::new();
        for want in wanted.into_iter().take(64) {
            let Some(f) = get(&want) else { continue };
            match self.read(f).await {
                Ok(content) => install_scripts.push(crate::audit::ScriptFile {
                    name: want,
                    content,
                }),
                Err(AurError::TooLarge { .. } | AurError::Malformed { .. }) => skipped.push(want),
                Err(e) => return Err(e),
            }
        }
        Ok(super::PackageFiles {
            notice: crate::AUR_NOTICE,
            name: name.to_owned(),
            package_base: self.pkgbase.clone(),
            commit: commit.to_owned(),
            pkgbuild,
            srcinfo,
            install_scripts,
            files,
            skipped,
        })
    }
}

//! Reading a fetched repository: the tree of a commit (`ls-tree`), one blob's exact bytes
//! (`unpack-file`: no filter, no attribute, no checkout applies), and the history (`log`).

use archgate_exec::{CommandSpec, Output};
use serde::Serialize;

use super::super::error::AurError;
use super::command::git;
use super::{PackageRepo, exec_error};

/// A file in a package's repository, as its tree at one commit lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RepoFile {
    /// The path from the repository's root (`/` between directories).
    pub name: String,
    /// `file`, `symlink`, `dir` or `submodule`.
    pub kind: &'static str,
    /// git's mode: `100644`, `100755` (executable), `120000` (symlink), `040000`, `160000`.
    pub mode: String,
    /// Bytes (`null` for a directory or submodule).
    pub size: Option<u64>,
    /// The git object id: the hash of the bytes, so a file with the same id is the same file.
    pub object: String,
}

/// One commit of a package's history.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Commit {
    pub id: String,
    pub subject: String,
    pub author: String,
    /// The author date: `YYYY-MM-DD HH:MM:SS +ZZZZ`.
    pub date: String,
}

fn is_commit_id(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A path git listed, checked again (fetch's fsck already refuses `..` and `.git`): relative,
/// no empty, `.`, `..` or `.git` component, no control character.
fn safe_path(p: &str) -> bool {
    !p.is_empty()
        && !p.starts_with('/')
        && !p.chars().any(char::is_control)
        && p.split('/')
            .all(|c| !c.is_empty() && c != "." && c != ".." && !c.eq_ignore_ascii_case(".git"))
}

impl PackageRepo<'_> {
    fn cmd(&self) -> CommandSpec {
        git(&self.dir, &self.home, self.scheme, self.timeout)
    }

    async fn run(&self, spec: CommandSpec) -> Result<Output, AurError> {
        let out = self
            .git
            .run_git(spec)
            .await
            .map_err(|e| exec_error(&self.url, e))?;
        if out.truncated {
            // More than the executor keeps of a program's output (a tree of very many files).
            return Err(AurError::TooLarge {
                url: self.url.clone(),
                limit: out.stdout.len() + out.stderr.len(),
            });
        }
        Ok(out)
    }

    fn malformed(&self, reason: impl Into<String>) -> AurError {
        AurError::Malformed {
            url: self.url.clone(),
            reason: reason.into(),
        }
    }

    /// The full commit id `rev` names in the cached repository.
    pub(crate) async fn rev_parse(&self, rev: &str) -> Result<String, AurError> {
        let out = self
            .run(
                self.cmd()
                    .args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
                    .arg(rev),
            )
            .await?;
        let id = out.stdout_lossy().trim().to_owned();
        if out.success() && is_commit_id(&id) {
            Ok(id)
        } else {
            Err(AurError::NotFound {
                what: format!("{rev} in the repository of {}", self.pkgbase),
            })
        }
    }

    pub(crate) async fn rev_parse_owned(&self, rev: String) -> Result<String, AurError> {
        self.rev_parse(&rev).await
    }

    /// The full id of a commit given in full or as a prefix of 4 to 40 hex digits.
    pub async fn resolve(&self, commit: &str) -> Result<String, AurError> {
        super::super::check_commit(commit)?;
        self.rev_parse(&format!("{}^{{commit}}", commit.to_ascii_lowercase()))
            .await
    }

    /// Every entry of the tree at `commit` (a full id), directories included, in git's order.
    pub async fn list_files(&self, commit: &str) -> Result<Vec<RepoFile>, AurError> {
        let out = self
            .run(
                self.cmd()
                    .args(["ls-tree", "-r", "-t", "-l", "-z", "--full-tree"])
                    .arg("--end-of-options")
                    .arg(commit),
            )
            .await?;
        if !out.success() {
            return Err(AurError::NotFound {
                what: format!("commit {commit} of {}", self.pkgbase),
            });
        }
        let mut files = Vec::new();
        for rec in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = std::str::from_utf8(rec)
                .map_err(|_| self.malformed("a file name in the repository is not UTF-8"))?;
            let (meta, name) = rec
                .split_once('\t')
                .ok_or_else(|| self.malformed(format!("unexpected ls-tree line {rec:?}")))?;
            let mut m = meta.split_whitespace();
            let (Some(mode), Some(_ty), Some(object), Some(size)) =
                (m.next(), m.next(), m.next(), m.next())
            else {
                return Err(self.malformed(format!("unexpected ls-tree line {rec:?}")));
            };
            if !safe_path(name) {
                return Err(self.malformed(format!("the repository holds the path {name:?}")));
            }
            let kind = match mode {
                "100644" | "100755" | "100664" => "file",
                "120000" => "symlink",
                "040000" => "dir",
                "160000" => "submodule",
                other => return Err(self.malformed(format!("unknown file mode {other}"))),
            };
            files.push(RepoFile {
                name: name.to_owned(),
                kind,
                mode: mode.to_owned(),
                size: size.parse().ok(),
                object: object.to_owned(),
            });
        }
        Ok(files)
    }

    /// One file's text at `commit` (a full id).
    pub async fn file(&self, commit: &str, path: &str) -> Result<String, AurError> {
        if !safe_path(path) {
            return Err(AurError::InvalidArgument {
                reason: format!("{path:?} is not a file path in a package repository"),
            });
        }
        let files = self.list_files(commit).await?;
        let entry = files
            .iter()
            .find(|f| f.name == path)
            .ok_or_else(|| AurError::NotFound {
                what: format!("{path} at commit {commit} of {}", self.pkgbase),
            })?;
        self.read(entry).await
    }

    /// The text of one listed entry: a regular file no larger than `max_file_bytes`, not
    /// binary. A symbolic link is never followed (its target is a path, not content here).
    pub(crate) async fn read(&self, entry: &RepoFile) -> Result<String, AurError> {
        match entry.kind {
            "file" => {}
            "symlink" => {
                return Err(self.malformed(format!(
                    "{} is a symbolic link; it is not followed",
                    entry.name
                )));
            }
            _ => {
                return Err(AurError::InvalidArgument {
                    reason: format!("{} is a {}, not a file", entry.name, entry.kind),
                });
            }
        }
        if entry.size.is_none_or(|s| s > self.max_file_bytes as u64) {
            return Err(AurError::TooLarge {
                url: format!("{}#{}", self.url, entry.name),
                limit: self.max_file_bytes,
            });
        }
        let out = self
            .run(
                self.cmd()
                    .cwd(&self.scratch)
                    .arg("unpack-file")
                    .arg(&entry.object),
            )
            .await?;
        let name = out.stdout_lossy().trim().to_owned();
        if !out.success() || !name.starts_with(".merge_file_") || name.contains('/') {
            return Err(self.malformed(format!(
                "cannot read {}: {}",
                entry.name,
                out.stderr_lossy().trim()
            )));
        }
        let p = self.scratch.join(&name);
        let body = std::fs::read(&p);
        let _ = std::fs::remove_file(&p);
        let body = body.map_err(|e| AurError::Cache {
            path: p.display().to_string(),
            reason: e.to_string(),
        })?;
        if body.len() as u64 != entry.size.unwrap_or(0) {
            return Err(self.malformed(format!("{} is not the size its tree says", entry.name)));
        }
        if body.contains(&0) {
            return Err(self.malformed(format!("{} is a binary file", entry.name)));
        }
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// The history from the fetched head, newest first (up to `max_history` commits; the
    /// fetch's depth is the same number).
    pub async fn history(&self) -> Result<Vec<Commit>, AurError> {
        let out = self
            .run(
                self.cmd()
                    .args(["log", "-z", "--no-color", "--format=%H%x00%an%x00%ai%x00%s"])
                    .arg(format!("--max-count={}", self.max_history))
                    .arg("--end-of-options")
                    .arg(&self.head)
                    .arg("--"),
            )
            .await?;
        if !out.success() {
            return Err(self.malformed(format!(
                "cannot read the history: {}",
                out.stderr_lossy().trim()
            )));
        }
        let fields: Vec<String> = out
            .stdout
            .split(|&b| b == 0)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let mut commits = Vec::new();
        for c in fields.chunks(4) {
            let [id, author, date, subject] = c else {
                break;
            };
            let id = id.trim_start_matches('\n').to_owned();
            if !is_commit_id(&id) {
                return Err(self.malformed(format!("unexpected log record {id:?}")));
            }
            commits.push(Commit {
                id,
                subject: subject.clone(),
                author: author.clone(),
                date: date.clone(),
            });
        }
        Ok(commits)
    }
}

//! `pkg_files` (pacman -Ql / -Fl) and `pkg_owner` (pacman -Qo).

use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::db::Snapshot;
use crate::error::PacmanError;

/// Where a file list came from.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FilesSource {
    /// The local database (the package is installed; what pacman -Ql shows).
    Local,
    /// A repository's `.files` database (what pacman -Fl shows).
    FilesDb {
        /// Repository.
        repo: String,
    },
}

/// The answer to `pkg_files`.
#[derive(Debug, Clone, Serialize)]
pub struct FilesResult {
    /// Package name.
    pub name: String,
    /// Version the list belongs to.
    pub version: String,
    /// Where the list came from.
    pub source: FilesSource,
    /// Absolute paths under the configured root; directories end with `/`.
    pub files: Vec<String>,
    /// Files pacman keeps as `.pacnew`/`.pacsave` (installed packages only).
    pub backup: Vec<String>,
    /// Number of paths before truncation.
    pub total: usize,
    /// Whether `files` was cut at the limit.
    pub truncated: bool,
}

fn absolute(root: &Path, rel: &str) -> String {
    let root = root.to_string_lossy();
    format!("{}/{}", root.trim_end_matches('/'), rel)
}

/// File list of a package: the installed one's (local database) when installed, else the
/// first repository's `.files` database that has it.
pub fn files(snap: &Snapshot, name: &str, limit: usize) -> Result<FilesResult, PacmanError> {
    let root = &snap.conf.root_dir;
    let (version, source, list) = if let Some(pkg) = snap.local.get(name) {
        let list = snap.local.read_files(name)?.unwrap_or_default();
        (pkg.version.clone(), FilesSource::Local, list)
    } else {
        let Some((repo, pkg)) = snap.sync_get(name) else {
            return Err(PacmanError::PackageNotFound {
                name: name.to_owned(),
                near: snap.near_names(name),
            });
        };
        if !repo.has_files_db() {
            return Err(PacmanError::FilesUnavailable {
                name: name.to_owned(),
            });
        }
        let lists = repo.file_lists()?;
        let list = lists.get(name).cloned().unwrap_or_default();
        (
            pkg.version.clone(),
            FilesSource::FilesDb {
                repo: repo.name.clone(),
            },
            list,
        )
    };
    let total = list.files.len();
    Ok(FilesResult {
        name: name.to_owned(),
        version,
        source,
        files: list
            .files
            .iter()
            .take(limit)
            .map(|f| absolute(root, f))
            .collect(),
        backup: list.backup.iter().map(|f| absolute(root, f)).collect(),
        total,
        truncated: total > limit,
    })
}

/// One owner of a path.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Owner {
    /// Package name.
    pub name: String,
    /// Installed version.
    pub version: String,
}

/// The answer to `pkg_owner`.
#[derive(Debug, Clone, Serialize)]
pub struct OwnerResult {
    /// The path as asked.
    pub path: String,
    /// The path as looked up, relative to the root.
    pub resolved: String,
    /// Installed packages owning it (several for shared directories).
    pub owners: Vec<Owner>,
}

/// Lexically normalises `path` and makes it relative to the configured root.
fn relative_to_root(root: &Path, path: &str) -> Result<String, PacmanError> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(PacmanError::InvalidArgument {
            argument: "path",
            problem: "must be an absolute path".to_owned(),
        });
    }
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    let mut rel = parts.join("/");
    let root_rel: Vec<String> = root
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if !root_rel.is_empty() && parts.starts_with(&root_rel) {
        rel = parts[root_rel.len()..].join("/");
    }
    Ok(rel)
}

/// Which installed packages own `path` (absolute, on the system or under the configured root).
/// Like pacman -Qo, a symlinked parent directory is resolved when it exists.
pub fn owner(snap: &Snapshot, path: &str) -> Result<OwnerResult, PacmanError> {
    let root = &snap.conf.root_dir;
    let mut candidates = vec![relative_to_root(root, path)?];
    // pacman resolves the parent directory (e.g. /bin -> usr/bin) but not the file itself.
    let full = PathBuf::from(absolute(root, &candidates[0]));
    if let (Some(parent), Some(file)) = (full.parent(), full.file_name())
        && let Ok(real) = std::fs::canonicalize(parent)
    {
        let resolved = real.join(file);
        if let Ok(rel) = relative_to_root(root, &resolved.to_string_lossy())
            && !candidates.contains(&rel)
        {
            candidates.push(rel);
        }
    }
    let finders: Vec<memchr::memmem::Finder<'_>> = candidates
        .iter()
        .map(|c| memchr::memmem::Finder::new(c.as_bytes()))
        .collect();
    let texts = snap.local.all_files_text()?;
    let mut owners = Vec::new();
    for (pkg, text) in snap.local.packages.iter().zip(texts.iter()) {
        // Paths are whole lines of the %FILES% section (the only section with such lines).
        if finders.iter().any(|f| has_path_line(text.as_bytes(), f)) {
            owners.push(Owner {
                name: pkg.name.clone(),
                version: pkg.version.clone(),
            });
        }
    }
    Ok(OwnerResult {
        path: path.to_owned(),
        resolved: format!("/{}", candidates[0]),
        owners,
    })
}

/// Whether one line of `text` (as `str::lines` splits it) is the finder's path, or the path
/// with a `/` (a directory). One substring search instead of comparing every line.
fn has_path_line(text: &[u8], path: &memchr::memmem::Finder<'_>) -> bool {
    let needle = path.needle();
    if needle.contains(&b'\n') {
        return false;
    }
    let line_ends = |rest: &[u8]| rest.is_empty() || rest[0] == b'\n' || rest.starts_with(b"\r\n");
    path.find_iter(text).any(|at| {
        // (An empty path also "matches" after a final newline, where `lines` sees no line.)
        if at == text.len() || (at > 0 && text[at - 1] != b'\n') {
            return false;
        }
        let rest = &text[at + needle.len()..];
        line_ends(rest) || (rest.first() == Some(&b'/') && line_ends(&rest[1..]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines_way(text: &str, path: &str) -> bool {
        let dir = format!("{path}/");
        text.lines().any(|l| l == path || l == dir)
    }

    #[test]
    fn path_lines_match_like_comparing_lines() {
        let texts = [
            "%FILES%\nusr/\nusr/bin/\nusr/bin/foo\n\n%BACKUP%\netc/foo.conf\tabc\n",
            "usr/bin/foo",
            "usr/bin/foo\r\nusr/bin/foobar\n",
            "xusr/bin/foo\nusr/bin/foo.d/\nusr/bin/foo\r",
            "%FILES%\nusr/bin/foo/\r\n",
            "%FILES%\n\nusr/bin/foo/x\n",
            "",
            "a\n",
            "a\n/",
            "\r\n",
        ];
        let paths = [
            "usr/bin/foo",
            "usr/bin",
            "usr",
            "",
            "usr/bin/foo/x",
            "usr/bin/foo\nusr",
        ];
        for text in texts {
            for path in paths {
                let finder = memchr::memmem::Finder::new(path.as_bytes());
                assert_eq!(
                    has_path_line(text.as_bytes(), &finder),
                    lines_way(text, path),
                    "{text:?} {path:?}"
                );
            }
        }
    }
}

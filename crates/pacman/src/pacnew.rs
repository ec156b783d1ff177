//! `pkg_pacnew`: the `.pacnew` and `.pacsave` files pacman left, each with the package that owns
//! the live file and a unified diff from the live file to the waiting one.
//!
//! pacman writes `X.pacnew` when it upgrades a backup file (`%BACKUP%`) the person changed, and
//! `X.pacsave` when it removes (or, with NoUpgrade, replaces) one. Where they are looked for:
//! next to every backup file of every installed package, and under `RootDir/etc` (a bounded walk
//! that does not follow symlinks, for the `.pacsave` of packages no longer installed). Diffs are
//! capped per file and in all; binary and oversized files are named, not diffed.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::db::Snapshot;
use crate::error::PacmanError;
use crate::info::Timestamp;

/// Files larger than this are not diffed.
pub const MAX_DIFF_INPUT: u64 = 1024 * 1024;
/// Longest diff kept per file.
pub const MAX_DIFF_PER_FILE: usize = 8 * 1024;
/// Diff bytes kept in all; later files are listed without their diff.
pub const MAX_DIFF_TOTAL: usize = 96 * 1024;
/// Most files listed.
pub const MAX_FILES: usize = 200;
/// How deep and how wide the walk of `etc` goes.
const WALK_DEPTH: usize = 12;
const WALK_ENTRIES: usize = 100_000;

/// One waiting file.
#[derive(Debug, Clone, Serialize)]
pub struct Waiting {
    /// The `.pacnew`/`.pacsave` file.
    pub path: String,
    /// `pacnew` or `pacsave`.
    pub kind: &'static str,
    /// The live file it belongs to.
    pub live: String,
    /// The installed package that has the live file as a backup file or owns it; `None` when no
    /// installed package does (a `.pacsave` of a removed package).
    pub owner: Option<String>,
    /// Whether the live file exists.
    pub live_exists: bool,
    /// When the waiting file was written.
    pub modified: Option<Timestamp>,
    /// Unified diff, live file → waiting file (`None`: see `diff_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why there is no diff or it is cut: `identical`, `binary`, `too_large`, `truncated`,
    /// `budget` (the answer's diff budget was spent), `unreadable: …`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_note: Option<String>,
    /// The person's command to take the new file (after merging what they changed).
    pub adopt: String,
    /// The person's command to keep their file and drop this one.
    pub discard: String,
}

/// The answer to `pkg_pacnew`.
#[derive(Debug, Clone, Serialize)]
pub struct PacnewResult {
    /// Where it looked: the backup files of installed packages and this directory tree.
    pub walked: String,
    /// Backup files of installed packages looked next to.
    pub backup_files: usize,
    /// The waiting files, by path.
    pub files: Vec<Waiting>,
    /// More were found than listed, or the walk stopped at its bound.
    pub truncated: bool,
}

/// Finds `.pacnew`/`.pacsave` files for the snapshot's root.
pub fn pacnew(snap: &Snapshot) -> Result<PacnewResult, PacmanError> {
    let root = snap.conf.root_dir.clone();
    let texts = snap.local.all_files_text()?;
    let mut backup_owner: HashMap<String, String> = HashMap::new();
    let mut lists: Vec<(String, Vec<String>)> = Vec::new();
    for (pkg, text) in snap.local.packages.iter().zip(texts.iter()) {
        let list = crate::desc::parse_files(text.as_bytes()).map_err(|problem| {
            PacmanError::DbCorrupt {
                path: snap.local.dir.clone(),
                entry: format!("{}-{}/files", pkg.name, pkg.version),
                problem,
            }
        })?;
        for b in list.backup {
            backup_owner.insert(b, pkg.name.clone());
        }
        lists.push((pkg.name.clone(), list.files));
    }
    // Candidates: path → (kind, live path relative to root).
    let mut found: BTreeMap<PathBuf, (&'static str, String)> = BTreeMap::new();
    for rel in backup_owner.keys() {
        for (suffix, kind) in [(".pacnew", "pacnew"), (".pacsave", "pacsave")] {
            let p = root.join(format!("{rel}{suffix}"));
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
                found.insert(p, (kind, rel.clone()));
            }
        }
    }
    let etc = root.join("etc");
    let mut truncated = walk(&etc, &mut |p| {
        if let Some((kind, live)) = waiting_kind(p)
            && let Ok(rel) = live.strip_prefix(&root)
        {
            found
                .entry(p.to_owned())
                .or_insert((kind, rel.to_string_lossy().into_owned()));
        }
    });
    if found.len() > MAX_FILES {
        truncated = true;
    }
    let mut budget = MAX_DIFF_TOTAL;
    let mut files = Vec::new();
    for (path, (kind, rel)) in found.into_iter().take(MAX_FILES) {
        let live = root.join(&rel);
        let owner = backup_owner.get(&rel).cloned().or_else(|| {
            lists
                .iter()
                .find(|(_, files)| files.contains(&rel))
                .map(|(n, _)| n.clone())
        });
        let modified = std::fs::metadata(&path)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| Timestamp(d.as_secs() as i64));
        let live_exists = std::fs::symlink_metadata(&live).is_ok();
        let (diff, diff_note) = if budget == 0 {
            (None, Some("budget".to_owned()))
        } else {
            diff_files(&live, &path, live_exists)
        };
        if let Some(d) = &diff {
            budget = budget.saturating_sub(d.len());
        }
        let (p, l) = (quote(&path), quote(&live));
        files.push(Waiting {
            adopt: format!("sudo mv -- {p} {l}"),
            discard: format!("sudo rm -- {p}"),
            path: path.display().to_string(),
            kind,
            live: live.display().to_string(),
            owner,
            live_exists,
            modified,
            diff,
            diff_note,
        });
    }
    Ok(PacnewResult {
        walked: etc.display().to_string(),
        backup_files: backup_owner.len(),
        files,
        truncated,
    })
}

/// `X.pacnew` → ("pacnew", X); `X.pacsave` and `X.pacsave.N` → ("pacsave", X).
fn waiting_kind(p: &Path) -> Option<(&'static str, PathBuf)> {
    let name = p.file_name()?.to_str()?;
    let (kind, live) = if let Some(live) = name.strip_suffix(".pacnew") {
        ("pacnew", live)
    } else if let Some(live) = name.strip_suffix(".pacsave") {
        ("pacsave", live)
    } else {
        let (head, n) = name.rsplit_once('.')?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ("pacsave", head.strip_suffix(".pacsave")?)
    };
    (!live.is_empty()).then(|| (kind, p.with_file_name(live)))
}

/// Visits the regular files under `dir` (not following symlinks); `true` when a bound was hit.
fn walk(dir: &Path, visit: &mut dyn FnMut(&Path)) -> bool {
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((d, depth)) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > WALK_ENTRIES {
                return true;
            }
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                if depth < WALK_DEPTH {
                    stack.push((p, depth + 1));
                }
            } else if ft.is_file() {
                visit(&p);
            }
        }
    }
    false
}

/// The unified diff live → new, or why there is none.
fn diff_files(live: &Path, new: &Path, live_exists: bool) -> (Option<String>, Option<String>) {
    let read = |p: &Path| -> Result<Vec<u8>, String> {
        let meta = std::fs::metadata(p).map_err(|e| format!("unreadable: {}: {e}", p.display()))?;
        if meta.len() > MAX_DIFF_INPUT {
            return Err("too_large".to_owned());
        }
        std::fs::read(p).map_err(|e| format!("unreadable: {}: {e}", p.display()))
    };
    let new_bytes = match read(new) {
        Ok(b) => b,
        Err(note) => return (None, Some(note)),
    };
    let live_bytes = if live_exists {
        match read(live) {
            Ok(b) => b,
            Err(note) => return (None, Some(note)),
        }
    } else {
        Vec::new()
    };
    let text = |b: Vec<u8>| {
        if b.contains(&0) {
            None
        } else {
            String::from_utf8(b).ok()
        }
    };
    let (Some(old), Some(new_text)) = (text(live_bytes), text(new_bytes)) else {
        return (None, Some("binary".to_owned()));
    };
    if old == new_text {
        return (None, Some("identical".to_owned()));
    }
    let diff = similar::TextDiff::from_lines(&old, &new_text)
        .unified_diff()
        .context_radius(3)
        .header(&live.display().to_string(), &new.display().to_string())
        .to_string();
    if diff.len() > MAX_DIFF_PER_FILE {
        let mut end = MAX_DIFF_PER_FILE;
        while !diff.is_char_boundary(end) {
            end -= 1;
        }
        // Whole lines only.
        let cut = diff[..end].rfind('\n').map_or(0, |i| i + 1);
        return (Some(diff[..cut].to_owned()), Some("truncated".to_owned()));
    }
    (Some(diff), None)
}

/// A path as one shell word.
fn quote(p: &Path) -> String {
    let s = p.display().to_string();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:@%,=".contains(&b))
    {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_quoting() {
        let k = |s: &str| waiting_kind(Path::new(s)).map(|(k, l)| (k, l.display().to_string()));
        assert_eq!(
            k("/etc/a.conf.pacnew"),
            Some(("pacnew", "/etc/a.conf".into()))
        );
        assert_eq!(k("/etc/a.pacsave.2"), Some(("pacsave", "/etc/a".into())));
        assert_eq!(k("/etc/a.conf.2"), None);
        assert_eq!(k("/etc/.pacnew"), None);
        assert_eq!(quote(Path::new("/etc/a b'c")), "'/etc/a b'\\''c'");
        assert_eq!(quote(Path::new("/etc/x.conf")), "/etc/x.conf");
    }
}

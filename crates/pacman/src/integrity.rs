//! `pkg_verify`: installed files against the package, like `pacman -Qk` (quick: every listed
//! file exists, directories are directories) and `pacman -Qkk` (full: type, owner, mode, symlink
//! target, mtime, size, MD5 and SHA-256 from the local database's `mtree`), with pacman's rules:
//! `NoExtract` paths may be absent, backup files (`%BACKUP%`) may differ in content and time
//! (reported apart, not counted as altered), `.INSTALL`/`.CHANGELOG` are the database's copies,
//! other dot entries (`.PKGINFO`, `.BUILDINFO`, `.MTREE`) are skipped.
//!
//! Checking every package is bounded: packages are taken in name order until a byte and time
//! budget is spent; the answer then says where to continue (`next`).

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use md5::Digest as _;
use serde::Serialize;

use crate::db::Snapshot;
use crate::error::PacmanError;
use crate::mtree::{EntryType, MtreeEntry};

/// Most findings listed per package (its `altered` count stays exact): a package whose every
/// file is gone would otherwise fill the answer.
pub const MAX_FINDINGS: usize = 50;

/// How much one call may read before it stops at a package boundary.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// File bytes hashed.
    pub bytes: u64,
    /// Wall time.
    pub time: Duration,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            bytes: 2 << 30,
            time: Duration::from_secs(40),
        }
    }
}

/// One way a file differs from its package.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Problem {
    /// Not there.
    Missing,
    /// There but cannot be examined (permission denied…).
    Unreadable,
    /// A file where a directory was, a directory where a link was…
    Type,
    /// Owner differs.
    Uid,
    /// Group differs.
    Gid,
    /// Permission bits differ.
    Mode,
    /// The symbolic link points elsewhere.
    Link,
    /// Modification time differs.
    Mtime,
    /// Size differs.
    Size,
    /// MD5 differs.
    Md5,
    /// SHA-256 differs.
    Sha256,
}

/// One file with what differs.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Finding {
    /// Absolute path (under `RootDir`; the database's copy for `.INSTALL`).
    pub path: String,
    /// What differs, in pacman's order.
    pub problems: Vec<Problem>,
}

/// One package's report.
#[derive(Debug, Clone, Serialize)]
pub struct PackageReport {
    /// Package name.
    pub name: String,
    /// Installed version.
    pub version: String,
    /// Files checked (pacman's "total files").
    pub files: usize,
    /// Files with a problem (pacman's "missing"/"altered files").
    pub altered: usize,
    /// What differs, file by file.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Findings not listed (past `MAX_FINDINGS`).
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: usize,
    /// Backup files (configuration) whose content or time changed: expected after editing.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub backup_changed: Vec<Finding>,
    /// Why this package could not be checked (missing or damaged mtree…).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<CheckError>,
}

/// A package that could not be checked, with the error's kind and message.
#[derive(Debug, Clone, Serialize)]
pub struct CheckError {
    /// Stable code (`not_found`, `malformed`, `unreadable`).
    pub kind: &'static str,
    /// The error, naming the file.
    pub message: String,
}

/// The answer to `pkg_verify`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyResult {
    /// `quick` (like `pacman -Qk`) or `full` (like `pacman -Qkk`).
    pub mode: &'static str,
    /// Installed packages in all.
    pub installed: usize,
    /// Packages checked by this call.
    pub checked: usize,
    /// Files checked.
    pub files: usize,
    /// Packages with altered files or errors, and packages with changed backup files.
    pub packages: Vec<PackageReport>,
    /// Set when the budget ran out: call again with `from` = this name to continue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// The person's command to restore altered files of packages from the repositories.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// Checks one package (`name`) or every installed package from `from` on.
pub fn verify(
    snap: &Snapshot,
    name: Option<&str>,
    full: bool,
    from: Option<&str>,
    budget: Budget,
) -> Result<VerifyResult, PacmanError> {
    let local = &snap.local;
    let names: Vec<&str> = match name {
        Some(n) => {
            if local.get(n).is_none() {
                return Err(PacmanError::PackageNotFound {
                    name: n.to_owned(),
                    near: snap.near_names(n),
                });
            }
            vec![n]
        }
        None => local
            .packages
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| from.is_none_or(|f| *n >= f))
            .collect(),
    };
    let started = Instant::now();
    let mut spent = 0u64;
    let mut result = VerifyResult {
        mode: if full { "full" } else { "quick" },
        installed: local.packages.len(),
        checked: 0,
        files: 0,
        packages: Vec::new(),
        next: None,
        command: None,
    };
    for (i, n) in names.iter().enumerate() {
        if i > 0 && (spent >= budget.bytes || started.elapsed() >= budget.time) {
            result.next = Some((*n).to_owned());
            break;
        }
        let checked = if full {
            check_full(snap, n, &mut spent)
        } else {
            check_quick(snap, n)
        };
        let report = match checked {
            Ok(r) => r,
            // One package asked for: its error is the answer.
            Err(e) if name.is_some() => return Err(e),
            Err(e) => PackageReport {
                name: (*n).to_owned(),
                version: local.get(n).map(|p| p.version.clone()).unwrap_or_default(),
                files: 0,
                altered: 0,
                findings: Vec::new(),
                omitted: 0,
                backup_changed: Vec::new(),
                error: Some(CheckError {
                    kind: e.kind(),
                    message: e.to_string(),
                }),
            },
        };
        result.checked += 1;
        result.files += report.files;
        if report.altered > 0 || report.error.is_some() || !report.backup_changed.is_empty() {
            result.packages.push(report);
        }
    }
    let restorable: Vec<&str> = result
        .packages
        .iter()
        .filter(|p| p.altered > 0 || p.error.is_some())
        .filter(|p| snap.sync_get(&p.name).is_some())
        .map(|p| p.name.as_str())
        .collect();
    if !restorable.is_empty() {
        result.command = Some(format!("sudo pacman -S {}", restorable.join(" ")));
    }
    Ok(result)
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl PackageReport {
    fn push(&mut self, f: Finding) {
        self.altered += 1;
        if self.findings.len() < MAX_FINDINGS {
            self.findings.push(f);
        } else {
            self.omitted += 1;
        }
    }
}

fn root_path(snap: &Snapshot, rel: &str) -> PathBuf {
    snap.conf.root_dir.join(rel)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// pacman's NoExtract test: the last matching pattern decides, `!` negates.
fn no_extract(snap: &Snapshot, rel: &str) -> bool {
    for pattern in snap.conf.no_extract.iter().rev() {
        let (negated, p) = match pattern.strip_prefix('!') {
            Some(p) => (true, p),
            None => (false, pattern.as_str()),
        };
        if crate::list::glob_match(p, rel) {
            return !negated;
        }
    }
    false
}

/// lstat, with a trailing slash stripped so a symlink is looked at itself (pacman's llstat).
fn lstat(path: &Path) -> std::io::Result<std::fs::Metadata> {
    use std::os::unix::ffi::OsStrExt;
    let text = path.as_os_str().as_bytes();
    match text.strip_suffix(b"/") {
        Some(head) if !head.is_empty() => {
            std::fs::symlink_metadata(Path::new(std::ffi::OsStr::from_bytes(head)))
        }
        _ => std::fs::symlink_metadata(path),
    }
}

fn missing_problem(e: &std::io::Error) -> Problem {
    if e.kind() == std::io::ErrorKind::NotFound {
        Problem::Missing
    } else {
        Problem::Unreadable
    }
}

fn report(name: &str, version: &str) -> PackageReport {
    PackageReport {
        name: name.to_owned(),
        version: version.to_owned(),
        files: 0,
        altered: 0,
        findings: Vec::new(),
        omitted: 0,
        backup_changed: Vec::new(),
        error: None,
    }
}

fn check_quick(snap: &Snapshot, name: &str) -> Result<PackageReport, PacmanError> {
    let pkg = snap.local.get(name).expect("listed package");
    let list = snap.local.read_files(name)?.unwrap_or_default();
    let mut r = report(name, &pkg.version);
    for rel in &list.files {
        r.files += 1;
        let path = root_path(snap, rel);
        let problem = match lstat(&path) {
            Err(_) if no_extract(snap, rel) => None,
            Err(e) => Some(missing_problem(&e)),
            Ok(meta) if rel.ends_with('/') != meta.is_dir() => Some(Problem::Type),
            Ok(_) => None,
        };
        if let Some(p) = problem {
            r.push(Finding {
                path: shown(&path),
                problems: vec![p],
            });
        }
    }
    Ok(r)
}

fn check_full(snap: &Snapshot, name: &str, spent: &mut u64) -> Result<PackageReport, PacmanError> {
    let pkg = snap.local.get(name).expect("listed package");
    let entry_dir = snap.local.entry_path(name).expect("listed package");
    let entries = crate::mtree::read(&entry_dir.join("mtree"))?;
    let backup = snap.local.read_files(name)?.unwrap_or_default().backup;
    let mut r = report(name, &pkg.version);
    for e in &entries {
        let path = match e.path.as_str() {
            ".INSTALL" => entry_dir.join("install"),
            ".CHANGELOG" => entry_dir.join("changelog"),
            p if p.starts_with('.') => continue,
            p => root_path(snap, p),
        };
        r.files += 1;
        let meta = match lstat(&path) {
            Ok(m) => m,
            Err(_) if no_extract(snap, &e.path) => continue,
            Err(err) => {
                r.push(Finding {
                    path: shown(&path),
                    problems: vec![missing_problem(&err)],
                });
                continue;
            }
        };
        let is_backup = backup.contains(&e.path);
        let (errors, backup_diffs) = compare(e, &path, &meta, is_backup, spent);
        if !errors.is_empty() {
            r.push(Finding {
                path: shown(&path),
                problems: errors,
            });
        }
        if !backup_diffs.is_empty() && r.backup_changed.len() >= MAX_FINDINGS {
            r.omitted += 1;
        } else if !backup_diffs.is_empty() {
            r.backup_changed.push(Finding {
                path: shown(&path),
                problems: backup_diffs,
            });
        }
    }
    Ok(r)
}

/// pacman's checks of one existing entry: (problems, backup file differences).
fn compare(
    e: &MtreeEntry,
    path: &Path,
    meta: &std::fs::Metadata,
    is_backup: bool,
    spent: &mut u64,
) -> (Vec<Problem>, Vec<Problem>) {
    let ft = meta.file_type();
    let same_type = match e.kind {
        EntryType::File => ft.is_file(),
        EntryType::Dir => ft.is_dir(),
        EntryType::Link => ft.is_symlink(),
        EntryType::Other => return (Vec::new(), Vec::new()),
    };
    if !same_type {
        return (vec![Problem::Type], Vec::new());
    }
    let mut errors = Vec::new();
    let mut soft = Vec::new();
    if meta.uid() != e.uid.unwrap_or(0) {
        errors.push(Problem::Uid);
    }
    if meta.gid() != e.gid.unwrap_or(0) {
        errors.push(Problem::Gid);
    }
    if let Some(mode) = e.mode
        && meta.permissions().mode() & 0o7777 != mode & 0o7777
    {
        errors.push(Problem::Mode);
    }
    if e.kind == EntryType::Link {
        let target = std::fs::read_link(path).ok();
        if target.as_deref().map(Path::as_os_str) != e.link.as_deref().map(std::ffi::OsStr::new) {
            errors.push(Problem::Link);
        }
    }
    // Content and time of a backup file may change: pacman says so but does not count it.
    let mut differs = |p: Problem| {
        if is_backup {
            soft.push(p);
        } else {
            errors.push(p);
        }
    };
    if e.kind != EntryType::Dir && e.time.is_some_and(|t| meta.mtime() != t) {
        differs(Problem::Mtime);
    }
    if e.kind == EntryType::File {
        if e.size.is_some_and(|s| meta.size() != s) {
            differs(Problem::Size);
        }
        if e.md5.is_some() || e.sha256.is_some() {
            match digests(path, spent) {
                Ok((md5, sha256)) => {
                    if e.md5.as_ref().is_some_and(|m| *m != md5) {
                        differs(Problem::Md5);
                    }
                    if e.sha256.as_ref().is_some_and(|s| *s != sha256) {
                        differs(Problem::Sha256);
                    }
                }
                // pacman: "failed to calculate … checksum" counts even for backup files.
                Err(_) => errors.push(Problem::Unreadable),
            }
        }
    }
    (errors, soft)
}

/// MD5 and SHA-256 of a file in one read, as lowercase hex.
fn digests(path: &Path, spent: &mut u64) -> std::io::Result<(String, String)> {
    let mut file = std::fs::File::open(path)?;
    let mut md5 = md5::Md5::new();
    let mut sha = sha2::Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        md5.update(&buf[..n]);
        sha.update(&buf[..n]);
        *spent += n as u64;
    }
    Ok((
        hex(md5.finalize().as_slice()),
        hex(sha.finalize().as_slice()),
    ))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

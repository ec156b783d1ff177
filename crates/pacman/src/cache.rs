//! `pkg_cache`: pacman's package cache (`CacheDir`), what `paccache -rk3` would remove, and for
//! one package the versions to go back to — from the cache, and from the Arch Linux Archive
//! (`ala`) — each with the exact `pacman -U` command for the person (never run here).
//!
//! Cache files are read by name as pacman and paccache name them:
//! `<name>-<[epoch:]version>-<release>-<arch>.pkg.tar[.<compression>]` (signatures `.sig` and
//! partial downloads `.part` beside them are not packages). paccache keeps the newest `keep`
//! versions of each name and architecture, ordered by vercmp, and removes a package's `.sig`
//! with it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::ala::{ArchiveClient, ArchiveListing};
use crate::db::Snapshot;
use crate::error::PacmanError;
pub use crate::pkg_file::parse_file_name;

/// Most per-package rows and removable files listed.
pub const MAX_ROWS: usize = 300;

/// One package file in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheFile {
    /// Package name.
    pub name: String,
    /// `[epoch:]version-release`.
    pub version: String,
    /// Architecture (`x86_64`, `any`).
    pub arch: String,
    /// Full path.
    pub path: String,
    /// Bytes, with its `.sig` when there is one.
    pub size: u64,
}

/// Every package file in the cache directories; a missing directory holds nothing, an
/// unreadable one is an error naming it.
pub fn scan(dirs: &[PathBuf]) -> Result<(Vec<CacheFile>, Vec<CacheDirInfo>), PacmanError> {
    let mut files = Vec::new();
    let mut infos = Vec::new();
    for dir in dirs {
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                infos.push(CacheDirInfo {
                    path: dir.display().to_string(),
                    exists: false,
                    files: 0,
                    bytes: 0,
                });
                continue;
            }
            Err(source) => {
                return Err(PacmanError::CacheUnreadable {
                    path: dir.clone(),
                    source,
                });
            }
        };
        let mut info = CacheDirInfo {
            path: dir.display().to_string(),
            exists: true,
            files: 0,
            bytes: 0,
        };
        for entry in rd {
            let entry = entry.map_err(|source| PacmanError::CacheUnreadable {
                path: dir.clone(),
                source,
            })?;
            let file_name = entry.file_name();
            let Some(file_name) = file_name.to_str() else {
                continue;
            };
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            info.bytes += meta.len();
            let Some((name, version, arch)) = parse_file_name(file_name) else {
                continue;
            };
            let sig = std::fs::metadata(dir.join(format!("{file_name}.sig")))
                .map(|m| m.len())
                .unwrap_or(0);
            info.files += 1;
            files.push(CacheFile {
                name: name.to_owned(),
                version,
                arch: arch.to_owned(),
                path: dir.join(file_name).display().to_string(),
                size: meta.len() + sig,
            });
        }
        infos.push(info);
    }
    files.sort_by(|a, b| {
        (&a.name, &a.arch)
            .cmp(&(&b.name, &b.arch))
            .then_with(|| crate::vercmp(&b.version, &a.version))
            .then_with(|| a.path.cmp(&b.path))
    });
    Ok((files, infos))
}

/// One cache directory.
#[derive(Debug, Clone, Serialize)]
pub struct CacheDirInfo {
    /// The directory.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// Package files in it.
    pub files: usize,
    /// Bytes of every file in it (packages, signatures, partial downloads).
    pub bytes: u64,
}

/// Versions of one package in the cache, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct CachedPackage {
    /// Package name.
    pub name: String,
    /// Versions, newest first.
    pub versions: Vec<String>,
    /// Installed version, if installed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
}

/// What a paccache run would remove.
#[derive(Debug, Clone, Serialize)]
pub struct Removal {
    /// Package files (with their signatures).
    pub files: usize,
    /// Bytes freed.
    pub bytes: u64,
    /// The person's command.
    pub command: String,
    /// The files, first `MAX_ROWS`.
    pub paths: Vec<String>,
}

/// The answer to `pkg_cache` without a name.
#[derive(Debug, Clone, Serialize)]
pub struct CacheResult {
    /// The cache directories (pacman.conf `CacheDir`).
    pub dirs: Vec<CacheDirInfo>,
    /// Package files in all.
    pub files: usize,
    /// Bytes in all.
    pub bytes: u64,
    /// Versions per package, by name (first `MAX_ROWS`).
    pub packages: Vec<CachedPackage>,
    /// More packages than listed.
    pub truncated: bool,
    /// `paccache -rk<keep>`: all but the newest `keep` versions of each package.
    pub keep_newest: Removal,
    /// `paccache -ruk0`: every cached file of packages no longer installed.
    pub uninstalled: Removal,
}

/// Files paccache would remove, keeping the newest `keep` of each (name, arch); `files` must be
/// sorted as `scan` sorts them.
pub fn paccache_removals(files: &[CacheFile], keep: usize) -> Vec<&CacheFile> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < files.len() {
        let mut j = i;
        while j < files.len() && files[j].name == files[i].name && files[j].arch == files[i].arch {
            j += 1;
        }
        out.extend(files[i..j].iter().skip(keep));
        i = j;
    }
    out
}

fn removal<'a>(files: impl Iterator<Item = &'a CacheFile>, command: String) -> Removal {
    let mut r = Removal {
        files: 0,
        bytes: 0,
        command,
        paths: Vec::new(),
    };
    for f in files {
        r.files += 1;
        r.bytes += f.size;
        if r.paths.len() < MAX_ROWS {
            r.paths.push(f.path.clone());
        }
    }
    r
}

/// The cache overview.
pub fn overview(snap: &Snapshot, keep: usize) -> Result<CacheResult, PacmanError> {
    let (files, dirs) = scan(&snap.conf.cache_dirs)?;
    let mut by_name: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in &files {
        by_name.entry(&f.name).or_default().push(f.version.clone());
    }
    let truncated = by_name.len() > MAX_ROWS;
    let packages = by_name
        .into_iter()
        .take(MAX_ROWS)
        .map(|(name, mut versions)| {
            versions.dedup();
            CachedPackage {
                installed: snap.local.get(name).map(|p| p.version.clone()),
                name: name.to_owned(),
                versions,
            }
        })
        .collect();
    let keep_newest = removal(
        paccache_removals(&files, keep).into_iter(),
        format!("sudo paccache -rk{keep}"),
    );
    let uninstalled = removal(
        files.iter().filter(|f| snap.local.get(&f.name).is_none()),
        "sudo paccache -ruk0".to_owned(),
    );
    Ok(CacheResult {
        files: files.len(),
        bytes: dirs.iter().map(|d| d.bytes).sum(),
        dirs,
        packages,
        truncated,
        keep_newest,
        uninstalled,
    })
}

/// A version one can go back to.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// `[epoch:]version-release`.
    pub version: String,
    /// Architecture.
    pub arch: String,
    /// The cached file or the archive URL.
    pub location: String,
    /// The person's command.
    pub command: String,
}

/// The archive's part of a downgrade answer: versions, or why it could not be asked.
#[derive(Debug, Clone, Serialize)]
pub struct ArchivePart {
    /// The listing asked for.
    pub url: String,
    /// Older versions there, newest first (empty: the archive has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub versions: Option<Vec<Candidate>>,
    /// Why the archive gave no answer (offline, timed out, malformed listing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::integrity::CheckError>,
}

/// The answer to `pkg_cache` with a name.
#[derive(Debug, Clone, Serialize)]
pub struct DowngradeResult {
    /// Package name.
    pub name: String,
    /// Installed version.
    pub installed: Option<String>,
    /// Older versions in the cache, newest first (all cached versions if not installed).
    pub cache: Vec<Candidate>,
    /// Older versions in the Arch Linux Archive.
    pub archive: ArchivePart,
    /// A downgrade is undone by the next `pacman -Syu` unless the package is held.
    pub note: &'static str,
}

const HOLD_NOTE: &str = "the next `pacman -Syu` upgrades it again unless the person adds it \
                         to IgnorePkg in /etc/pacman.conf";

/// Most archive versions listed.
const MAX_ARCHIVE_ROWS: usize = 30;

/// Versions of `name` to go back to.
pub async fn downgrade(
    snap: &Snapshot,
    name: &str,
    archive: &ArchiveClient,
) -> Result<DowngradeResult, PacmanError> {
    crate::ala::check_name(name)?;
    let installed = snap
        .local
        .get(name)
        .map(|p| (p.version.clone(), p.arch.clone()));
    let dirs = snap.conf.cache_dirs.clone();
    let (files, _) = tokio::task::spawn_blocking(move || scan(&dirs))
        .await
        .map_err(|e| PacmanError::Task(e.to_string()))??;
    let older = |v: &str| {
        installed
            .as_ref()
            .is_none_or(|(iv, _)| crate::vercmp(v, iv).is_lt())
    };
    let arch_fits = |a: &str| {
        a == "any"
            || installed
                .as_ref()
                .and_then(|(_, ia)| ia.as_deref())
                .is_none_or(|ia| ia == a || ia == "any")
    };
    let cache: Vec<Candidate> = files
        .iter()
        .filter(|f| f.name == name && older(&f.version) && arch_fits(&f.arch))
        .map(|f| Candidate {
            version: f.version.clone(),
            arch: f.arch.clone(),
            command: format!("sudo pacman -U {}", f.path),
            location: f.path.clone(),
        })
        .collect();
    let url = archive.listing_url(name);
    let archive = match archive.listing(name).await {
        Ok(ArchiveListing { files, .. }) => {
            let mut versions: Vec<Candidate> = files
                .into_iter()
                .filter(|f| older(&f.version) && arch_fits(&f.arch))
                .map(|f| Candidate {
                    command: format!("sudo pacman -U {}", f.url),
                    version: f.version,
                    arch: f.arch,
                    location: f.url,
                })
                .collect();
            versions.sort_by(|a, b| crate::vercmp(&b.version, &a.version));
            versions.truncate(MAX_ARCHIVE_ROWS);
            ArchivePart {
                url,
                versions: Some(versions),
                error: None,
            }
        }
        Err(e) => ArchivePart {
            url,
            versions: None,
            error: Some(crate::integrity::CheckError {
                kind: e.kind(),
                message: e.to_string(),
            }),
        },
    };
    Ok(DowngradeResult {
        name: name.to_owned(),
        installed: installed.map(|(v, _)| v),
        cache,
        archive,
        note: HOLD_NOTE,
    })
}

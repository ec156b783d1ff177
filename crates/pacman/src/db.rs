//! Loaded databases: sync repositories and the local database, as one immutable snapshot.
//!
//! A `Snapshot` is built from files and never changes; `PacmanDb` (in `handle.rs`) keeps the
//! current one behind an `Arc` and swaps in a new one when a file's mtime or size changes.
//! File lists (local `files`, sync `.files`) are loaded on first use and kept with the snapshot.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use crate::archive;
use crate::conf::PacmanConf;
use crate::desc::{self, FileList, Package};
use crate::entry_file::EntryDir;
use crate::error::{EntryProblem, PacmanError};

/// (mtime, size) of a file, or `None` when it does not exist.
pub type Stamp = Option<(SystemTime, u64)>;

/// Reads the stamp of a path.
pub fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// One sync repository's database.
#[derive(Debug)]
pub struct SyncRepo {
    /// Repository name.
    pub name: String,
    /// The `.db` file.
    pub db_file: PathBuf,
    /// Packages in database order.
    pub packages: Vec<Package>,
    by_name: HashMap<String, usize>,
    pub(crate) stamp: Stamp,
    files_file: PathBuf,
    files: OnceLock<Arc<HashMap<String, FileList>>>,
}

impl SyncRepo {
    /// Loads `<name>.db`; its `.files` companion is read on demand.
    pub fn load(name: &str, db_file: &Path) -> Result<SyncRepo, PacmanError> {
        let stamp = stamp(db_file);
        if stamp.is_none() {
            return Err(PacmanError::DbMissing {
                repo: name.to_owned(),
                path: db_file.to_owned(),
            });
        }
        let contents = archive::read_archive(db_file, false)?;
        Ok(SyncRepo::from_packages(
            name,
            db_file,
            contents.packages,
            stamp,
        ))
    }

    pub(crate) fn from_packages(
        name: &str,
        db_file: &Path,
        packages: Vec<Package>,
        stamp: Stamp,
    ) -> SyncRepo {
        let by_name = index(&packages);
        SyncRepo {
            name: name.to_owned(),
            db_file: db_file.to_owned(),
            files_file: db_file.with_extension("files"),
            packages,
            by_name,
            stamp,
            files: OnceLock::new(),
        }
    }

    /// A package by exact name.
    pub fn get(&self, name: &str) -> Option<&Package> {
        self.by_name.get(name).map(|&i| &self.packages[i])
    }

    /// Whether a `.files` database sits next to the `.db`.
    pub fn has_files_db(&self) -> bool {
        self.files_file.exists()
    }

    /// File lists from the `.files` database (loaded once).
    pub fn file_lists(&self) -> Result<Arc<HashMap<String, FileList>>, PacmanError> {
        if let Some(files) = self.files.get() {
            return Ok(files.clone());
        }
        if !self.files_file.exists() {
            return Err(PacmanError::DbMissing {
                repo: self.name.clone(),
                path: self.files_file.clone(),
            });
        }
        let contents = archive::read_archive(&self.files_file, true)?;
        let files = Arc::new(contents.files);
        Ok(self.files.get_or_init(|| files).clone())
    }
}

fn index(packages: &[Package]) -> HashMap<String, usize> {
    let mut map = HashMap::with_capacity(packages.len());
    for (i, p) in packages.iter().enumerate() {
        // pacman keeps the first of duplicate names.
        map.entry(p.name.clone()).or_insert(i);
    }
    map
}

/// A local entry that could not be read (skipped, like pacman does).
#[derive(Debug, Clone, serde::Serialize)]
pub struct SkippedEntry {
    /// Entry directory name.
    pub entry: String,
    /// Why.
    pub problem: String,
}

/// The local database (installed packages).
#[derive(Debug)]
pub struct LocalDb {
    /// `DBPath/local`.
    pub dir: PathBuf,
    /// Installed packages, sorted by name.
    pub packages: Vec<Package>,
    /// Entry directory of each package (same order).
    entries: Vec<String>,
    by_name: HashMap<String, usize>,
    /// Entries that could not be parsed.
    pub skipped: Vec<SkippedEntry>,
    pub(crate) stamp: (Stamp, Stamp),
    files: OnceLock<Arc<Vec<String>>>,
}

impl LocalDb {
    /// Reads every `DBPath/local/*/desc`. A missing directory is an empty database.
    pub fn load(db_path: &Path) -> Result<LocalDb, PacmanError> {
        let dir = db_path.join("local");
        let stamp = (self::stamp(&dir), self::stamp(db_path));
        let mut rows: Vec<(String, Package)> = Vec::new();
        let mut skipped = Vec::new();
        let read = match std::fs::read_dir(&dir) {
            Ok(r) => Some(r),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(PacmanError::DbUnreadable { path: dir, source }),
        };
        let mut dirs = Vec::new();
        for entry in read.into_iter().flatten() {
            let entry = entry.map_err(|source| PacmanError::DbUnreadable {
                path: dir.clone(),
                source,
            })?;
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                dirs.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        let entry_dir = EntryDir::open(&dir).ok();
        let parsed = parallel_map(&dirs, |name| {
            Ok::<_, PacmanError>(match &entry_dir {
                Some(d) => d
                    .read(name, "desc", desc::parse_desc)
                    .unwrap_or(Err(EntryProblem::MissingSection("NAME"))),
                None => read_local_entry(&dir.join(name)),
            })
        })?;
        for (name, result) in dirs.into_iter().zip(parsed) {
            match result {
                Ok(pkg) => rows.push((name, pkg)),
                Err(problem) => {
                    tracing::warn!(entry = %name, %problem, "skipping unreadable local entry");
                    skipped.push(SkippedEntry {
                        entry: name,
                        problem: problem.to_string(),
                    });
                }
            }
        }
        rows.sort_by(|a, b| a.1.name.cmp(&b.1.name));
        let (entries, packages): (Vec<String>, Vec<Package>) = rows.into_iter().unzip();
        Ok(LocalDb {
            by_name: index(&packages),
            dir,
            packages,
            entries,
            skipped,
            stamp,
            files: OnceLock::new(),
        })
    }

    /// An installed package by name.
    pub fn get(&self, name: &str) -> Option<&Package> {
        self.by_name.get(name).map(|&i| &self.packages[i])
    }

    /// The entry directory of an installed package (`DBPath/local/<name>-<version>`).
    pub fn entry_path(&self, name: &str) -> Option<PathBuf> {
        self.position(name).map(|i| self.dir.join(&self.entries[i]))
    }

    pub(crate) fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The `files` entry of one installed package.
    pub fn read_files(&self, name: &str) -> Result<Option<FileList>, PacmanError> {
        let Some(i) = self.position(name) else {
            return Ok(None);
        };
        let text = match self.files.get() {
            Some(all) => all[i].clone(),
            None => self.read_files_text(EntryDir::open(&self.dir).ok().as_ref(), i)?,
        };
        desc::parse_files(text.as_bytes())
            .map(Some)
            .map_err(|problem| PacmanError::DbCorrupt {
                entry: format!("{}/files", self.entries[i]),
                path: self.dir.clone(),
                problem,
            })
    }

    /// One package's `files` entry, through `entry_dir` when the directory could be opened.
    fn read_files_text(
        &self,
        entry_dir: Option<&EntryDir>,
        i: usize,
    ) -> Result<String, PacmanError> {
        let read = match entry_dir {
            Some(d) => d.read(&self.entries[i], "files", |b| {
                std::str::from_utf8(b).map(str::to_owned)
            }),
            None => std::fs::read(self.dir.join(&self.entries[i]).join("files"))
                .map(|bytes| String::from_utf8(bytes).map_err(|e| e.utf8_error())),
        };
        match read {
            Ok(text) => text.map_err(|_| PacmanError::DbCorrupt {
                entry: format!("{}/files", self.entries[i]),
                path: self.dir.clone(),
                problem: EntryProblem::NotUtf8,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(source) => Err(PacmanError::DbUnreadable {
                path: self.dir.join(&self.entries[i]).join("files"),
                source,
            }),
        }
    }

    /// Every installed package's `files` entry as text, index-aligned with `packages`
    /// (read once, on worker threads; kept as text because owner lookups only scan lines).
    pub fn all_files_text(&self) -> Result<Arc<Vec<String>>, PacmanError> {
        if let Some(all) = self.files.get() {
            return Ok(all.clone());
        }
        let indices: Vec<usize> = (0..self.packages.len()).collect();
        let entry_dir = EntryDir::open(&self.dir).ok();
        let texts = parallel_map(&indices, |&i| self.read_files_text(entry_dir.as_ref(), i))?;
        let texts = Arc::new(texts);
        Ok(self.files.get_or_init(|| texts).clone())
    }

    /// Whether the file lists are already in memory.
    pub fn files_loaded(&self) -> bool {
        self.files.get().is_some()
    }
}

/// Maps `f` over `items` on up to `available_parallelism` scoped threads, keeping order.
pub(crate) fn parallel_map<T: Sync, R: Send, E: Send>(
    items: &[T],
    f: impl Fn(&T) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads <= 1 || items.len() < 64 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let results: Vec<Result<Vec<R>, E>> = std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| scope.spawn(|| part.iter().map(&f).collect::<Result<Vec<R>, E>>()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for part in results {
        out.extend(part?);
    }
    Ok(out)
}

/// Reads one local entry directory's `desc`.
pub fn read_local_entry(dir: &Path) -> Result<Package, crate::error::EntryProblem> {
    let bytes = std::fs::read(dir.join("desc"))
        .map_err(|_| crate::error::EntryProblem::MissingSection("NAME"))?;
    desc::parse_desc(&bytes)
}

/// A sync repository the configuration names but whose database is not on disk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct MissingRepo {
    /// Repository name.
    pub repo: String,
    /// Expected file.
    pub path: PathBuf,
}

/// Everything loaded, immutable.
#[derive(Debug)]
pub struct Snapshot {
    /// The configuration the databases were found through.
    pub conf: Arc<PacmanConf>,
    /// Sync repositories with a database on disk, in pacman.conf order.
    pub repos: Vec<Arc<SyncRepo>>,
    /// Configured repositories without a database file (`pacman -Sy` never ran for them).
    pub missing: Vec<MissingRepo>,
    /// The local database.
    pub local: Arc<LocalDb>,
    pub(crate) conf_stamps: Vec<(PathBuf, Stamp)>,
}

impl Snapshot {
    /// Loads everything named by `conf`, reusing parts of `previous` whose files did not change.
    pub fn load(
        conf: Arc<PacmanConf>,
        previous: Option<&Snapshot>,
    ) -> Result<Snapshot, PacmanError> {
        let conf_stamps = conf.files.iter().map(|p| (p.clone(), stamp(p))).collect();
        let (repos, missing) = load_repos(&conf, previous)?;
        let local_stamp = (stamp(&conf.local_db_dir()), stamp(&conf.db_path));
        let local = match previous {
            Some(p) if p.local.stamp == local_stamp && p.local.dir == conf.local_db_dir() => {
                p.local.clone()
            }
            _ => Arc::new(LocalDb::load(&conf.db_path)?),
        };
        Ok(Snapshot {
            conf,
            repos,
            missing,
            local,
            conf_stamps,
        })
    }

    /// Whether pacman.conf or one of its Includes changed since this snapshot was loaded.
    pub fn conf_is_stale(&self) -> bool {
        self.conf_stamps.iter().any(|(p, s)| stamp(p) != *s)
    }

    /// Whether any file behind this snapshot changed since it was loaded.
    pub fn is_stale(&self) -> bool {
        if self.conf_is_stale() {
            return true;
        }
        for repo in &self.conf.repos {
            let path = self.conf.sync_db_path(&repo.name, "db");
            let now = stamp(&path);
            match self.repos.iter().find(|r| r.name == repo.name) {
                Some(r) if r.stamp == now => {}
                None if now.is_none() => {}
                _ => return true,
            }
        }
        (stamp(&self.conf.local_db_dir()), stamp(&self.conf.db_path)) != self.local.stamp
    }

    /// A loaded sync repository by name: unknown and missing are different errors.
    pub fn repo(&self, name: &str) -> Result<&Arc<SyncRepo>, PacmanError> {
        self.conf.repo(name)?;
        self.repos
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| PacmanError::DbMissing {
                repo: name.to_owned(),
                path: self.conf.sync_db_path(name, "db"),
            })
    }

    /// The first sync package by name, in repository order.
    pub fn sync_get(&self, name: &str) -> Option<(&SyncRepo, &Package)> {
        self.repos
            .iter()
            .find_map(|r| r.get(name).map(|p| (r.as_ref(), p)))
    }

    /// Whether there is any pacman data at all (else the remote API answers).
    pub fn is_empty(&self) -> bool {
        self.repos.is_empty() && self.local.packages.is_empty()
    }

    /// Names close to `name` (for not-found answers), best first.
    pub fn near_names(&self, name: &str) -> Vec<String> {
        let needle = name.to_lowercase();
        let needle_chars = needle.chars().count();
        let mut scored: Vec<(usize, &str)> = self
            .local
            .packages
            .iter()
            .chain(self.repos.iter().flat_map(|r| r.packages.iter()))
            .filter_map(|p| {
                let n = p.name.as_str();
                let score = if n.contains(&needle) || needle.contains(n) {
                    n.len().abs_diff(needle.len())
                } else if n.len().abs_diff(needle_chars) > 2 {
                    // The distance is at least the difference in length (package names are
                    // ASCII, so bytes are characters): skip the full comparison.
                    return None;
                } else {
                    let d = edit_distance(&needle, n);
                    if d > 2 {
                        return None;
                    }
                    d + 100
                };
                Some((score, n))
            })
            .collect();
        scored.sort();
        scored.dedup_by(|a, b| a.1 == b.1);
        scored
            .into_iter()
            .take(5)
            .map(|(_, n)| n.to_owned())
            .collect()
    }
}

/// Loads every configured sync database in parallel (one thread per repository), reusing those
/// of `previous` whose file did not change. Returns the loaded ones and the missing ones.
pub fn load_repos(
    conf: &PacmanConf,
    previous: Option<&Snapshot>,
) -> Result<(Vec<Arc<SyncRepo>>, Vec<MissingRepo>), PacmanError> {
    let mut present = Vec::new();
    let mut missing = Vec::new();
    for repo in &conf.repos {
        let path = conf.sync_db_path(&repo.name, "db");
        let now = stamp(&path);
        if now.is_none() {
            missing.push(MissingRepo {
                repo: repo.name.clone(),
                path,
            });
            continue;
        }
        let reused = previous.and_then(|p| {
            p.repos
                .iter()
                .find(|r| r.name == repo.name && r.db_file == path && r.stamp == now)
                .cloned()
        });
        present.push((repo.name.clone(), path, reused));
    }
    // Each repository decompresses and parses on its own thread.
    let repos: Vec<Arc<SyncRepo>> = std::thread::scope(|scope| {
        let handles: Vec<_> = present
            .iter()
            .map(|(name, path, reused)| {
                scope.spawn(move || match reused {
                    Some(r) => Ok(r.clone()),
                    None => SyncRepo::load(name, path).map(Arc::new),
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect::<Result<Vec<_>, PacmanError>>()
    })?;
    Ok((repos, missing))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

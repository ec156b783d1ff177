//! pacman.conf: `[options]`, repositories in order, their servers, and `Include` files.
//!
//! Follows pacman 6/7's `conf.c`: `Include` may name a glob, later values of single-valued options
//! win, list options accumulate, `RootDir` moves the default `DBPath` and `LogFile` under it, and
//! `$repo` / `$arch` in `Server` are substituted (with the first `Architecture`, `auto` meaning the
//! machine's).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{ConfProblem, PacmanError};

mod glob;
use glob::expand_glob;

/// Include nesting beyond this is treated as a loop.
const MAX_INCLUDE_DEPTH: usize = 10;

/// One repository section.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RepoConf {
    /// Section name (`core`, `extra`, …).
    pub name: String,
    /// `Server` URLs in order, `$repo`/`$arch` already substituted.
    pub servers: Vec<String>,
    /// `SigLevel` words for this repository, when set.
    pub sig_level: Vec<String>,
    /// `Usage` words, when set.
    pub usage: Vec<String>,
    /// `CacheServer` URLs in order (pacman 7), `$repo`/`$arch` already substituted.
    pub cache_servers: Vec<String>,
    /// Directives of the section that are none of the above (pacman warns and ignores them;
    /// kept so that a caller can refuse what it does not judge).
    pub unknown: Vec<String>,
}

/// The parsed configuration, with pacman's defaults applied.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PacmanConf {
    /// The file that was read.
    pub path: PathBuf,
    /// Every file read (the conf and its includes), in order.
    pub files: Vec<PathBuf>,
    /// `RootDir` (default `/`).
    pub root_dir: PathBuf,
    /// `DBPath` (default `/var/lib/pacman/`, or under `RootDir` when that is set).
    pub db_path: PathBuf,
    /// `CacheDir` values (default `/var/cache/pacman/pkg/`).
    pub cache_dirs: Vec<PathBuf>,
    /// `LogFile` (default `/var/log/pacman.log`, or under `RootDir`).
    pub log_file: PathBuf,
    /// `GPGDir`, when set.
    pub gpg_dir: Option<PathBuf>,
    /// `HookDir` values.
    pub hook_dirs: Vec<PathBuf>,
    /// `XferCommand`, as written: the program pacman runs (as root) for every download, with
    /// its arguments (`%u`, `%o` left for pacman).
    pub xfer_command: Option<String>,
    /// `Architecture` values as written (`auto` kept).
    pub architectures: Vec<String>,
    /// The architecture used for `$arch` (first value, `auto` resolved).
    pub arch: String,
    /// `IgnorePkg`.
    pub ignore_pkg: Vec<String>,
    /// `IgnoreGroup`.
    pub ignore_group: Vec<String>,
    /// `HoldPkg`.
    pub hold_pkg: Vec<String>,
    /// `NoUpgrade`.
    pub no_upgrade: Vec<String>,
    /// `NoExtract`.
    pub no_extract: Vec<String>,
    /// Global `SigLevel`.
    pub sig_level: Vec<String>,
    /// Every other `[options]` directive, verbatim (flags have an empty list).
    pub options: BTreeMap<String, Vec<String>>,
    /// Repositories in the order pacman uses them.
    pub repos: Vec<RepoConf>,
    /// Repositories named by more than one section. pacman registers the first and reports an
    /// error for each later one (`database already registered`), then goes on with the first
    /// alone: a later section's directives are in no repository here either (`pacman-conf`
    /// shows the first section's). A hand-off refuses such a file (attack 26 F5).
    pub duplicate_repos: Vec<String>,
}

impl PacmanConf {
    /// Reads and parses a pacman.conf with its includes.
    pub fn load(path: &Path) -> Result<PacmanConf, PacmanError> {
        let mut raw = Raw::default();
        read_file(path, &mut raw, 0)?;
        Ok(raw.finish(path))
    }

    /// Parses pacman.conf text (includes are read from disk, relative paths as pacman: as given).
    pub fn parse(path: &Path, text: &str) -> Result<PacmanConf, PacmanError> {
        let mut raw = Raw {
            files: vec![path.to_owned()],
            ..Raw::default()
        };
        parse_text(path, text, &mut raw, 0)?;
        Ok(raw.finish(path))
    }

    /// The repository by name.
    pub fn repo(&self, name: &str) -> Result<&RepoConf, PacmanError> {
        self.repos
            .iter()
            .find(|r| r.name == name)
            .ok_or_else(|| PacmanError::UnknownRepo {
                repo: name.to_owned(),
                known: self.repos.iter().map(|r| r.name.clone()).collect(),
            })
    }

    /// Where pacman keeps the sync database of a repository.
    pub fn sync_db_path(&self, repo: &str, ext: &str) -> PathBuf {
        self.db_path.join("sync").join(format!("{repo}.{ext}"))
    }

    /// The local database directory.
    pub fn local_db_dir(&self) -> PathBuf {
        self.db_path.join("local")
    }
}

#[derive(Default)]
struct Raw {
    files: Vec<PathBuf>,
    section: Option<String>,
    options: BTreeMap<String, Vec<String>>,
    /// Repositories with `Server` values not yet substituted.
    repos: Vec<RepoConf>,
    /// Names of a later section for a repository already named, in order.
    duplicates: Vec<String>,
    /// The current section is such a later one: its directives reach no repository.
    in_duplicate: bool,
}

fn read_file(path: &Path, raw: &mut Raw, depth: usize) -> Result<(), PacmanError> {
    let text = std::fs::read(path).map_err(|source| PacmanError::ConfUnreadable {
        path: path.to_owned(),
        source,
    })?;
    raw.files.push(path.to_owned());
    // Read as bytes by pacman: text that is not UTF-8 is refused, never replaced (attack 26 F11:
    // `[r\xff]` and `[r\xfe]`, two repositories to pacman, were one `[r\u{fffd}]` here).
    let text = String::from_utf8(text).map_err(|e| {
        let line = 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        PacmanError::ConfMalformed {
            path: path.to_owned(),
            line,
            problem: ConfProblem::NotUtf8,
        }
    })?;
    parse_text(path, &text, raw, depth)
}

/// C's `isspace` in the C locale, which pacman's `strtrim` uses: ASCII space, `\t`, `\n`, `\v`,
/// `\f`, `\r` (Rust's `is_ascii_whitespace` leaves out `\v`: attack 26 F10, `SigLevel = Never`
/// and a vertical tab was `Never` to pacman and an unknown word here).
fn c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

fn parse_text(path: &Path, text: &str, raw: &mut Raw, depth: usize) -> Result<(), PacmanError> {
    let err = |line: usize, problem: ConfProblem| PacmanError::ConfMalformed {
        path: path.to_owned(),
        line,
        problem,
    };
    for (index, full) in text.lines().enumerate() {
        let line_no = index + 1;
        // As pacman's `parse_ini` reads a line (attack 22 F5; class: *a parser that
        // re-implements another program's and differs on input that program accepts*): read
        // with a buffer of PATH_MAX, so a longer line is two to pacman (refused here); a comment
        // only when the trimmed line starts with `#` — `HookDir = /etc/hooks/ # see ~/hooks/`
        // gives pacman four hook directories, the person's among them; a section only when
        // the line starts with `[` and ends with `]` (else it is a directive).
        if full.len() >= PACMAN_LINE_MAX {
            return Err(err(line_no, ConfProblem::LineTooLong(PACMAN_LINE_MAX - 1)));
        }
        // pacman's line is a C string: a NUL ends it (attack 27 F7: `SigLevel = Never` NUL
        // `Required` is `Never` to pacman).
        let full = full.split('\0').next().unwrap_or("");
        // pacman's `strtrim` trims what C's `isspace` calls space: ASCII only (attack 25 F6:
        // `[testrepo` + a no-break space + `]` is another repository to pacman).
        let line = full.trim_matches(c_space);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            // pacman takes what is between the brackets as it is (`[testrepo ]` is the
            // repository `testrepo `): a name with space in it is refused below.
            let name = rest;
            if name.is_empty() {
                return Err(err(line_no, ConfProblem::EmptySectionName));
            }
            if name != "options" {
                if name == "local" || name.contains('/') || name.contains(c_space) {
                    return Err(err(line_no, ConfProblem::BadRepoName(name.to_owned())));
                }
                raw.in_duplicate = raw.repos.iter().any(|r| r.name == name);
                if raw.in_duplicate {
                    raw.duplicates.push(name.to_owned());
                } else {
                    raw.repos.push(RepoConf {
                        name: name.to_owned(),
                        servers: Vec::new(),
                        sig_level: Vec::new(),
                        usage: Vec::new(),
                        cache_servers: Vec::new(),
                        unknown: Vec::new(),
                    });
                }
            } else {
                raw.in_duplicate = false;
            }
            raw.section = Some(name.to_owned());
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim_matches(c_space), Some(v.trim_matches(c_space))),
            None => (line, None),
        };
        let Some(section) = raw.section.clone() else {
            return Err(err(line_no, ConfProblem::OutsideSection));
        };
        if key == "Include" {
            let value = value
                .filter(|v| !v.is_empty())
                .ok_or_else(|| err(line_no, ConfProblem::MissingValue(key.to_owned())))?;
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(err(line_no, ConfProblem::IncludeTooDeep(MAX_INCLUDE_DEPTH)));
            }
            for file in expand_glob(value).map_err(|p| err(line_no, p))? {
                read_file(&file, raw, depth + 1)?;
            }
            // As pacman: the section an included file ends in goes on in the including file
            // (attack 24 F5 — `pacman-conf` shows a `Server` after `Include` in the included
            // file's last section).
            continue;
        }
        if raw.in_duplicate {
            // A section pacman registers no database for (see `PacmanConf::duplicate_repos`).
            continue;
        }
        let words: Vec<String> = value
            // pacman's `setrepeatingoption`: words between single spaces (`strtok_r(…, " ")`).
            .map(|v| {
                v.split(' ')
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if section == "options" {
            let entry = raw.options.entry(key.to_owned()).or_default();
            if is_list_option(key) || is_word_list(key) {
                // Each line adds: `SigLevel = Never` then `SigLevel = Required` is Required.
                entry.extend(words);
            } else if is_first_wins(key) && !entry.is_empty() {
                // pacman keeps the first (a value from its command line would come first).
            } else {
                // Single values keep inner spaces (paths may contain them).
                *entry = value.map(|v| vec![v.to_owned()]).unwrap_or_default();
            }
        } else if let Some(repo) = raw.repos.iter_mut().find(|r| r.name == section) {
            match key {
                "Server" => {
                    let v = value
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| err(line_no, ConfProblem::MissingValue(key.to_owned())))?;
                    repo.servers.push(v.to_owned());
                }
                "CacheServer" => {
                    let v = value
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| err(line_no, ConfProblem::MissingValue(key.to_owned())))?;
                    repo.cache_servers.push(v.to_owned());
                }
                "SigLevel" => repo.sig_level.extend(words),
                "Usage" => repo.usage = words,
                other => repo.unknown.push(other.to_owned()),
            }
        }
    }
    Ok(())
}

fn is_list_option(key: &str) -> bool {
    matches!(
        key,
        "CacheDir"
            | "HookDir"
            | "IgnorePkg"
            | "IgnoreGroup"
            | "HoldPkg"
            | "NoUpgrade"
            | "NoExtract"
            | "Architecture"
    )
}

/// Options of which pacman keeps the first value given (`pacman-conf` shows it: its
/// `_parse_options` sets them only when unset).
fn is_first_wins(key: &str) -> bool {
    matches!(key, "RootDir" | "DBPath" | "LogFile" | "GPGDir")
}

/// pacman reads its configuration a line at a time into a buffer of `PATH_MAX` bytes.
const PACMAN_LINE_MAX: usize = 4096;

fn is_word_list(key: &str) -> bool {
    matches!(
        key,
        "SigLevel" | "LocalFileSigLevel" | "RemoteFileSigLevel" | "CleanMethod"
    )
}

impl Raw {
    fn finish(mut self, path: &Path) -> PacmanConf {
        let mut take = |key: &str| self.options.remove(key);
        let single = |v: Option<Vec<String>>| v.and_then(|v| v.into_iter().next());
        let root = single(take("RootDir"));
        let root_dir = PathBuf::from(root.clone().unwrap_or_else(|| "/".to_owned()));
        let under_root = |default: &str| match &root {
            Some(r) => PathBuf::from(format!(
                "{}/{}",
                r.trim_end_matches('/'),
                default.trim_start_matches('/')
            )),
            None => PathBuf::from(default),
        };
        let db_path = single(take("DBPath"))
            .map(PathBuf::from)
            .unwrap_or_else(|| under_root("/var/lib/pacman/"));
        let log_file = single(take("LogFile"))
            .map(PathBuf::from)
            .unwrap_or_else(|| under_root("/var/log/pacman.log"));
        let cache_dirs: Vec<PathBuf> = match take("CacheDir") {
            Some(v) if !v.is_empty() => v.into_iter().map(PathBuf::from).collect(),
            _ => vec![PathBuf::from("/var/cache/pacman/pkg/")],
        };
        let gpg_dir = single(take("GPGDir")).map(PathBuf::from);
        let hook_dirs = take("HookDir")
            .unwrap_or_default()
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let xfer_command = single(take("XferCommand"));
        let architectures = take("Architecture").unwrap_or_default();
        let arch = match architectures.first().map(String::as_str) {
            None | Some("auto") => std::env::consts::ARCH.to_owned(),
            Some(a) => a.to_owned(),
        };
        let ignore_pkg = take("IgnorePkg").unwrap_or_default();
        let ignore_group = take("IgnoreGroup").unwrap_or_default();
        let hold_pkg = take("HoldPkg").unwrap_or_default();
        let no_upgrade = take("NoUpgrade").unwrap_or_default();
        let no_extract = take("NoExtract").unwrap_or_default();
        let sig_level = take("SigLevel").unwrap_or_default();
        let repos = self
            .repos
            .into_iter()
            .map(|repo| {
                let subst = |v: &[String]| -> Vec<String> {
                    v.iter()
                        .map(|s| s.replace("$repo", &repo.name).replace("$arch", &arch))
                        .collect()
                };
                RepoConf {
                    servers: subst(&repo.servers),
                    cache_servers: subst(&repo.cache_servers),
                    ..repo
                }
            })
            .collect();
        PacmanConf {
            path: path.to_owned(),
            files: self.files,
            root_dir,
            db_path,
            cache_dirs,
            log_file,
            gpg_dir,
            hook_dirs,
            xfer_command,
            architectures,
            arch,
            ignore_pkg,
            ignore_group,
            hold_pkg,
            no_upgrade,
            no_extract,
            sig_level,
            options: self.options,
            repos,
            duplicate_repos: self.duplicates,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn options_repos_and_includes() {
        let dir = tempfile::tempdir().unwrap();
        let mirrors = dir.path().join("mirrorlist");
        std::fs::write(
            &mirrors,
            "# comment\nServer = https://a.invalid/$repo/os/$arch\nServer = file:///srv/$repo\n",
        )
        .unwrap();
        let text = format!(
            "[options]\nRootDir = /mnt\nArchitecture = x86_64 x86_64_v3\nIgnorePkg = a b\n\
             IgnorePkg = c\nColor\nParallelDownloads = 5\n\n[core]\nInclude = {m}\n\n\
             [extra]\nSigLevel = Optional TrustAll\nInclude = {d}/mirror*\n",
            m = mirrors.display(),
            d = dir.path().display()
        );
        let conf = PacmanConf::parse(Path::new("/x/pacman.conf"), &text).unwrap();
        assert_eq!(conf.db_path, PathBuf::from("/mnt/var/lib/pacman/"));
        assert_eq!(conf.log_file, PathBuf::from("/mnt/var/log/pacman.log"));
        assert_eq!(conf.arch, "x86_64");
        assert_eq!(conf.ignore_pkg, ["a", "b", "c"]);
        assert_eq!(conf.options.get("Color"), Some(&vec![]));
        assert_eq!(
            conf.options.get("ParallelDownloads"),
            Some(&vec!["5".into()])
        );
        assert_eq!(
            conf.repos
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            ["core", "extra"]
        );
        assert_eq!(
            conf.repos[0].servers,
            ["https://a.invalid/core/os/x86_64", "file:///srv/core"]
        );
        assert_eq!(conf.repos[1].servers[1], "file:///srv/extra");
        assert_eq!(conf.repos[1].sig_level, ["Optional", "TrustAll"]);
        assert_eq!(conf.repo("nope").unwrap_err().kind(), "unknown_repo");
    }

    #[test]
    fn the_downloader_cache_servers_and_unknown_directives_are_kept() {
        // pacman.conf(5)'s own XferCommand example, and pacman 7's CacheServer.
        let conf = PacmanConf::parse(
            Path::new("/p"),
            "[options]\nXferCommand = /usr/bin/curl -L -C - -f -o %o %u\n\n[custom]\n\
             CacheServer = file:///srv/$repo/cache\nServer = file:///srv/$repo\nFrobnicate = 1\n",
        )
        .unwrap();
        assert_eq!(
            conf.xfer_command.as_deref(),
            Some("/usr/bin/curl -L -C - -f -o %o %u")
        );
        assert!(!conf.options.contains_key("XferCommand"));
        assert_eq!(conf.repos[0].cache_servers, ["file:///srv/custom/cache"]);
        assert_eq!(conf.repos[0].unknown, ["Frobnicate"]);
    }

    #[test]
    fn malformed_lines_are_typed() {
        let bad = PacmanConf::parse(Path::new("/p"), "Server = x\n").unwrap_err();
        assert!(matches!(
            bad,
            PacmanError::ConfMalformed {
                line: 1,
                problem: ConfProblem::OutsideSection,
                ..
            }
        ));
        let bad = PacmanConf::parse(Path::new("/p"), "[core\n").unwrap_err();
        assert_eq!(bad.kind(), "malformed");
        let missing = PacmanConf::load(Path::new("/nonexistent/pacman.conf")).unwrap_err();
        assert_eq!(missing.kind(), "not_found");
    }

    #[test]
    fn include_loops_stop() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.conf");
        std::fs::write(&a, format!("[options]\nInclude = {}\n", a.display())).unwrap();
        assert!(matches!(
            PacmanConf::load(&a).unwrap_err(),
            PacmanError::ConfMalformed {
                problem: ConfProblem::IncludeTooDeep(_),
                ..
            }
        ));
    }

    proptest! {
        #[test]
        fn garbage_conf_never_panics(text in "(\\PC{0,30}\n){0,30}") {
            let _ = PacmanConf::parse(Path::new("/garbage"), &text);
        }

        #[test]
        fn conf_shaped_garbage_never_panics(
            lines in proptest::collection::vec(
                prop_oneof![
                    Just("[options]".to_owned()), Just("[core]".to_owned()), Just("[".to_owned()),
                    Just("[]".to_owned()), Just("Server =".to_owned()), Just("Include =".to_owned()),
                    Just("RootDir = /r".to_owned()), Just("Architecture = auto".to_owned()),
                    "[A-Za-z]{1,8} ?= ?\\PC{0,10}",
                ],
                0..30,
            )
        ) {
            let _ = PacmanConf::parse(Path::new("/garbage"), &lines.join("\n"));
        }
    }
}

//! sudo's PAM `auth` stack as libpam builds it: the service's file (`/etc/pam.d/sudo`, then the
//! distribution's `/usr/lib/pam.d`), else `other`'s; lines assembled (comments, `\` joins),
//! tokens split (a `[...]` control is one token), `include`, `substack` and Debian's `@include`
//! followed, `-` modules kept, controls turned into the action each return code takes.
//! The rules are Linux-PAM's own (`libpam/pam_handlers.c`, `pam.conf(5)`); every file read must
//! be root's all the way, since whoever can write one decides whether sudo asks.

use std::path::{Path, PathBuf};

use super::codes::{self, Action, CODES};

/// Where libpam looks for a service's file, in its order (`PAM_CONFIG_DF`, `PAM_CONFIG_DIST_DF`,
/// and the vendor directory some distributions build with).
pub const DIRS: [&str; 3] = ["/etc/pam.d", "/usr/lib/pam.d", "/usr/share/pam.d"];

/// libpam's limit on nested includes (`PAM_SUBSTACK_MAX_LEVEL`).
const MAX_DEPTH: usize = 16;

/// One entry of the flattened `auth` chain, in libpam's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// How deep in substacks (0 for the service's own level).
    pub level: usize,
    pub what: What,
    /// Where it was written, for the person: `FILE:LINE`.
    pub at: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A `substack` line: skipped when run, counted as one module by a jump.
    Substack,
    /// A module, with the action for each return code and its arguments.
    Module {
        name: String,
        args: Vec<String>,
        actions: [Action; CODES],
    },
    /// A line libpam could not use: it fails whenever run (`PAM_HT_MUST_FAIL`).
    MustFail { actions: [Action; CODES] },
}

/// Reads the files of a PAM configuration: a seam for tests, which give their own tree.
pub trait Files {
    /// The text of the file libpam would open for `name` (a service or an included file), and
    /// where it is; `Ok(None)` when no directory has it; `Err` when it is there but may not be
    /// trusted or read.
    fn open(&self, name: &str) -> Result<Option<(PathBuf, String)>, String>;
}

/// The machine's files: `/etc/pam.d` and the distribution's directories, each file root's all
/// the way (`pinned::root_file`).
pub struct System;

impl Files for System {
    fn open(&self, name: &str) -> Result<Option<(PathBuf, String)>, String> {
        let candidates: Vec<PathBuf> = if name.starts_with('/') {
            vec![PathBuf::from(name)]
        } else {
            DIRS.iter().map(|d| Path::new(d).join(name)).collect()
        };
        for path in candidates {
            match std::fs::symlink_metadata(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(format!("{}: {e}", path.display())),
                Ok(_) => {}
            }
            let real = crate::tools::handoff::pinned::root_file(&path)?;
            let text =
                std::fs::read_to_string(&real).map_err(|e| format!("{}: {e}", real.display()))?;
            return Ok(Some((path, text)));
        }
        Ok(None)
    }
}

/// The `auth` chain libpam runs for `service`: the service's own lines when it has any, else
/// `other`'s. `Ok(None)` when neither file exists (libpam then fails every authentication).
pub fn auth_chain(files: &dyn Files, service: &str) -> Result<Option<Vec<Entry>>, String> {
    for name in [service, "other"] {
        if let Some((path, text)) = files.open(name)? {
            let mut chain = Vec::new();
            read_file(files, &path, &text, 0, 0, &mut chain)?;
            if !chain.is_empty() {
                return Ok(Some(chain));
            }
        }
    }
    Ok(None)
}

/// Appends the `auth` entries of one file (already opened) at `level`.
fn read_file(
    files: &dyn Files,
    path: &Path,
    text: &str,
    depth: usize,
    level: usize,
    chain: &mut Vec<Entry>,
) -> Result<(), String> {
    if depth >= MAX_DEPTH {
        return Err(format!(
            "{}: includes nested deeper than libpam allows",
            path.display()
        ));
    }
    for (line_no, line) in logical_lines(text) {
        let at = format!("{}:{line_no}", path.display());
        let tokens = tokenize(&line);
        let Some(first) = tokens.first() else {
            continue;
        };
        if first.eq_ignore_ascii_case("@include") {
            // Debian's directive: every line of the named file, at this level.
            let Some(name) = tokens.get(1) else {
                chain.push(must_fail(level, at));
                continue;
            };
            include(files, name, depth, level, &at, chain)?;
            continue;
        }
        let kind = first.strip_prefix('-').unwrap_or(first);
        if !kind.eq_ignore_ascii_case("auth") {
            // Another type: not part of authentication. (An unknown type would be installed as
            // a failing `auth` entry by libpam; failing entries never let anyone through.)
            continue;
        }
        let Some(control) = tokens.get(1) else {
            chain.push(must_fail(level, at));
            continue;
        };
        let control_lc = control.to_ascii_lowercase();
        if control_lc == "include" || control_lc == "substack" {
            let Some(name) = tokens.get(2) else {
                chain.push(must_fail(level, at));
                continue;
            };
            let inner = if control_lc == "substack" {
                chain.push(Entry {
                    level,
                    what: What::Substack,
                    at: at.clone(),
                });
                level + 1
            } else {
                level
            };
            include(files, name, depth, inner, &at, chain)?;
            continue;
        }
        let actions = match codes::control_actions(control) {
            Ok(a) => a,
            Err(why) => return Err(format!("{at}: {why}")),
        };
        match tokens.get(2) {
            Some(module) => chain.push(Entry {
                level,
                what: What::Module {
                    name: module_name(module),
                    args: tokens[3..].to_vec(),
                    actions,
                },
                at,
            }),
            None => chain.push(Entry {
                level,
                what: What::MustFail { actions },
                at,
            }),
        }
    }
    Ok(())
}

fn include(
    files: &dyn Files,
    name: &str,
    depth: usize,
    level: usize,
    at: &str,
    chain: &mut Vec<Entry>,
) -> Result<(), String> {
    match files.open(name)? {
        Some((path, text)) => read_file(files, &path, &text, depth + 1, level, chain),
        // libpam would install a failing entry; a file sudo's stack names and that is not
        // there is a machine archgate does not understand, and it says so.
        None => Err(format!(
            "{at}: includes `{name}`, which is in none of {DIRS:?}"
        )),
    }
}

fn must_fail(level: usize, at: String) -> Entry {
    Entry {
        level,
        what: What::MustFail {
            actions: [Action::Bad; CODES],
        },
        at,
    }
}

/// A module's name as libpam logs it: the file name without its directory and extension.
fn module_name(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    match base.rfind('.') {
        Some(dot) => base[..dot].to_owned(),
        None => base.to_owned(),
    }
}

/// The file's logical lines, numbered by where each starts: `#` starts a comment to the end of
/// the line, a `\` at the end joins the next line, blank lines are dropped.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut start = 0;
    for (i, raw) in text.lines().enumerate() {
        if pending.is_empty() {
            start = i + 1;
        }
        let line = match raw.find('#') {
            Some(hash) => &raw[..hash],
            None => raw,
        };
        if let Some(joined) = line.strip_suffix('\\') {
            pending.push_str(joined);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        if !pending.trim().is_empty() {
            out.push((start, std::mem::take(&mut pending)));
        }
        pending.clear();
    }
    if !pending.trim().is_empty() {
        out.push((start, pending));
    }
    out
}

/// Splits a line on blanks; a token starting with `[` runs to its `]` whatever it holds.
fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let end = if rest.starts_with('[') {
            rest.find(']').map_or(rest.len(), |i| i + 1)
        } else {
            rest.find(char::is_whitespace).unwrap_or(rest.len())
        };
        out.push(rest[..end].to_owned());
        rest = rest[end..].trim_start();
    }
    out
}

#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use std::collections::BTreeMap;

    /// A PAM tree given in full by a test: name → text.
    pub struct Tree(pub BTreeMap<String, String>);

    impl Tree {
        pub fn new(files: &[(&str, &str)]) -> Tree {
            Tree(
                files
                    .iter()
                    .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
                    .collect(),
            )
        }
    }

    impl Files for Tree {
        fn open(&self, name: &str) -> Result<Option<(PathBuf, String)>, String> {
            Ok(self
                .0
                .get(name)
                .map(|t| (Path::new("/etc/pam.d").join(name), t.clone())))
        }
    }

    #[test]
    fn lines_are_assembled_and_tokens_keep_brackets_whole() {
        let lines = logical_lines("# c\nauth [success=1 \\\n default=ignore] pam_unix.so # x\n\n");
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].0, 2);
        let tokens = tokenize(&lines[0].1);
        assert_eq!(tokens.len(), 3, "{tokens:?}");
        assert_eq!(
            (tokens[0].as_str(), tokens[2].as_str()),
            ("auth", "pam_unix.so")
        );
        let actions = codes::control_actions(&tokens[1]).unwrap();
        assert_eq!(actions[codes::SUCCESS], Action::Jump(1));
        assert_eq!(module_name("/usr/lib/security/pam_wheel.so"), "pam_wheel");
    }
}

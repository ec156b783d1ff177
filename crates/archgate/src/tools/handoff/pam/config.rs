//! sudo's PAM `auth` stack as libpam builds it: the service's file (`/etc/pam.d/sudo`, then the
//! distribution's `/usr/lib/pam.d`), else `other`'s; lines assembled (comments, `\` joins),
//! tokens split (a `[...]` control is one token), `include`, `substack` and Debian's `@include`
//! followed, `-` modules kept, controls turned into the action each return code takes.
//! The rules are Linux-PAM's own (`libpam/pam_handlers.c`, `pam.conf(5)`); every file read must
//! be root's all the way, since whoever can write one decides whether sudo asks.

use std::path::{Path, PathBuf};

use super::args;
use super::codes::{self, Action, CODES};
use super::lines;

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
        /// Why its arguments or where its secret lives let it succeed with no credential
        /// (`args.rs`); such a module may return anything.
        open: Option<String>,
    },
    /// A line libpam could not use: it fails whenever run (`PAM_HT_MUST_FAIL`).
    MustFail { actions: [Action; CODES] },
}

/// Reads the files of a PAM configuration: a seam for tests, which give their own tree.
pub trait Files: args::Places {
    /// The text of the file libpam would open for `name` (a service or an included file), and
    /// where it is; `Ok(None)` when no directory has it; `Err` when it is there but may not be
    /// trusted or read.
    fn open(&self, name: &str) -> Result<Option<(PathBuf, String)>, String>;
}

/// The machine's files: `/etc/pam.d` and the distribution's directories, each file root's all
/// the way (`pinned::root_file`).
pub struct System;

impl args::Places for System {
    fn person(&self) -> (String, String) {
        args::System.person()
    }

    fn reached_by_person(&self, path: &Path, secret: bool) -> Option<String> {
        args::System.reached_by_person(path, secret)
    }
}

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
            read_file(files, &path, &text, Requested::Any, 0, 0, &mut chain)?;
            if !chain.is_empty() {
                return Ok(Some(chain));
            }
        }
    }
    Ok(None)
}

/// The type a file is read for: the service's own file and Debian's `@include` take every
/// line (libpam's `PAM_T_ANY`), an `auth include`/`substack` only `auth` lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Requested {
    Any,
    Auth,
}

/// Appends the `auth` entries of one file (already opened) at `level`, line by line as
/// `_pam_parse_conf_file` installs them.
fn read_file(
    files: &dyn Files,
    path: &Path,
    text: &str,
    requested: Requested,
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
    let lines = lines::assemble(text).map_err(|why| format!("{}: {why}", path.display()))?;
    for line in lines {
        let at = format!("{}:{}", path.display(), line.number);
        let tokens = lines::tokens(&line.text);
        let mut tokens = tokens.iter().map(String::as_str);
        // The type. (With no token at all libpam installs a failing `auth` entry.)
        let Some(first) = tokens.next() else {
            chain.push(must_fail(level, at));
            continue;
        };
        if first.eq_ignore_ascii_case("@include") {
            // Debian's directive: every line of the named file, for the type asked, here.
            let Some(name) = tokens.next() else {
                return Err(format!("{at}: `@include` names no file"));
            };
            include(files, name, requested, depth, level, &at, chain)?;
            continue;
        }
        let kind = first.strip_prefix('-').unwrap_or(first);
        if kind.starts_with('@') {
            return Err(format!(
                "{at}: `{first}` is a directive archgate does not know"
            ));
        }
        // An unknown type is installed as a failing entry of the type asked for, `auth` in the
        // service's own file ("most sensitive") — and it counts in jumps (attack 16 F1.4).
        let known = ["auth", "session", "account", "password"]
            .iter()
            .any(|k| kind.eq_ignore_ascii_case(k));
        if known && !kind.eq_ignore_ascii_case("auth") {
            continue;
        }
        let fails = !known;
        let Some(control) = tokens.next() else {
            chain.push(must_fail(level, at));
            continue;
        };
        let control_lc = control.to_ascii_lowercase();
        if control_lc == "include" || control_lc == "substack" {
            let name = tokens.next();
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
            match name {
                Some(name) => include(files, name, Requested::Auth, depth, inner, &at, chain)?,
                // No file named: libpam installs a failing entry after the substack's.
                None => chain.push(must_fail(level, at)),
            }
            continue;
        }
        let actions = codes::control_actions(control).map_err(|why| format!("{at}: {why}"))?;
        let module = tokens.next();
        let args: Vec<String> = tokens.map(str::to_owned).collect();
        match module {
            Some(module) if !fails => {
                let name = module_name(module).ok_or_else(|| {
                    format!("{at}: `{module}` is a module name libpam refuses to load")
                })?;
                let open = args::grants_anyway(&name, &args, files);
                chain.push(Entry {
                    level,
                    what: What::Module {
                        name,
                        args,
                        actions,
                        open,
                    },
                    at,
                })
            }
            _ => chain.push(Entry {
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
    requested: Requested,
    depth: usize,
    level: usize,
    at: &str,
    chain: &mut Vec<Entry>,
) -> Result<(), String> {
    match files.open(name)? {
        Some((path, text)) => read_file(files, &path, &text, requested, depth + 1, level, chain),
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

/// The directories distributions install PAM modules in (libpam's `DEFAULT_MODULE_PATH` and
/// the multiarch ones): root's on any machine.
const MODULE_DIRS: [&str; 6] = [
    "/usr/lib/security/",
    "/lib/security/",
    "/usr/lib64/security/",
    "/lib64/security/",
    "/usr/lib/x86_64-linux-gnu/security/",
    "/lib/x86_64-linux-gnu/security/",
];

/// A module's name as libpam's `extract_modulename` makes it (the file name without its
/// directory and last extension), when the file is one of the system's modules: a path
/// elsewhere (`/home/alice/pam_deny.so`) is whatever that file is, so it keeps the whole path
/// and counts as a module archgate does not know. `None` where libpam refuses to load.
fn module_name(path: &str) -> Option<String> {
    let base = path.rsplit('/').next().unwrap_or(path);
    let name = match base.rfind('.') {
        Some(dot) => &base[..dot],
        None => base,
    };
    if name.is_empty() || name == "?" {
        return None;
    }
    let system = !path.contains('/')
        || MODULE_DIRS
            .iter()
            .any(|d| path.strip_prefix(d).is_some_and(|rest| !rest.contains('/')));
    Some(if system {
        name.to_owned()
    } else {
        path.to_owned()
    })
}

#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use std::collections::BTreeMap;

    /// A PAM tree given in full by a test: name → text; the person is `alice` at
    /// `/home/alice`, and only the paths in `root_only` are out of her reach.
    pub struct Tree {
        pub files: BTreeMap<String, String>,
        pub root_only: Vec<String>,
    }

    impl Tree {
        pub fn new(files: &[(&str, &str)]) -> Tree {
            Tree::with_root_only(files, &[])
        }

        pub fn with_root_only(files: &[(&str, &str)], root_only: &[&str]) -> Tree {
            Tree {
                files: files
                    .iter()
                    .map(|(n, t)| ((*n).to_owned(), (*t).to_owned()))
                    .collect(),
                root_only: root_only.iter().map(|p| (*p).to_owned()).collect(),
            }
        }
    }

    impl Files for Tree {
        fn open(&self, name: &str) -> Result<Option<(PathBuf, String)>, String> {
            Ok(self
                .files
                .get(name)
                .map(|t| (Path::new("/etc/pam.d").join(name), t.clone())))
        }
    }

    impl args::Places for Tree {
        fn person(&self) -> (String, String) {
            ("alice".into(), "/home/alice".into())
        }

        fn reached_by_person(&self, path: &Path, _secret: bool) -> Option<String> {
            let path = path.to_string_lossy();
            (!self.root_only.iter().any(|p| *p == path)).then(|| format!("{path} is alice's"))
        }
    }
}

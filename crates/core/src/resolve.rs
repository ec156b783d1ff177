//! Resolution: what the agent named, checked against live state before anyone is asked.
//!
//! The answer is a `Target` (the value the program receives and a human name for logs and
//! questions) or a `Refusal` that keeps `not_found` (with up to five near misses, never silently
//! corrected) apart from `could_not_look` (with why). File paths are canonicalized and refused
//! when they reach archgate's own directories — the token, the control socket and the standing
//! rules live there — or, by default, the person's keys and browser profiles.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error_kind::ErrorKind;
use crate::tool_error::ToolError;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Target {
    /// What the program receives.
    pub value: String,
    /// What the person and the log are shown.
    pub human: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no {what} named {given:?}{}", near_text(.near))]
    NotFound {
        what: &'static str,
        given: String,
        near: Vec<String>,
    },
    #[error("could not look up {what}: {why}")]
    CouldNotLook { what: &'static str, why: String },
    #[error("{path} is protected: {why}")]
    Protected { path: String, why: &'static str },
    #[error("{given:?} is not a valid {what}: {why}")]
    Invalid {
        what: &'static str,
        given: String,
        why: String,
    },
}

fn near_text(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; did you mean: {}", near.join(", "))
    }
}

impl Refusal {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Refusal::NotFound { .. } => ErrorKind::NotFound,
            Refusal::CouldNotLook { .. } => ErrorKind::CouldNotLook,
            Refusal::Protected { .. } => ErrorKind::ProtectedPath,
            Refusal::Invalid { .. } => ErrorKind::InvalidTarget,
        }
    }
}

impl From<Refusal> for ToolError {
    fn from(r: Refusal) -> ToolError {
        let next = match &r {
            Refusal::NotFound { near, .. } if !near.is_empty() => {
                "call again with one of the near misses if it is what the person meant"
            }
            Refusal::NotFound { .. } => "list what exists first, then call again",
            Refusal::CouldNotLook { .. } => "retry later, or tell the person what is missing",
            Refusal::Protected { .. } => "give up: this path is never reachable through archgate",
            Refusal::Invalid { .. } => "correct the argument and call again",
        };
        let details = match &r {
            Refusal::NotFound { near, .. } => Some(serde_json::json!({ "near_misses": near })),
            _ => None,
        };
        let mut e = ToolError::new(r.kind(), r.to_string()).next(next);
        e.details = details;
        e
    }
}

/// Entries of archgate's directories compared with a hard-linked file before giving up.
const PRIVATE_SCAN: usize = 20_000;
/// Levels of archgate's directories compared with a hard-linked file.
const PRIVATE_DEPTH: usize = 4;

fn private_link(given: &str) -> Refusal {
    Refusal::Protected {
        path: given.into(),
        why: "it is a hard link to one of archgate's own files, which are never reachable through a tool",
    }
}

/// The per-call resolver, built from the config snapshot and the paths.
#[derive(Debug, Clone)]
pub struct Resolver {
    /// archgate's own directories (config, state, runtime, cache): always refused.
    private: Arc<[PathBuf]>,
    /// The person's secrets (refused unless `resolve.protect_sensitive = false`) and extra paths.
    /// Shared: every call's context holds the snapshot's resolver.
    sensitive: Arc<[PathBuf]>,
}

impl Resolver {
    pub fn new(
        private_dirs: &[&Path],
        home: Option<&Path>,
        protect_sensitive: bool,
        extra: &[PathBuf],
    ) -> Resolver {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        // `~/x` in `resolve.protected` is the person's home; without one it names nothing, and
        // is kept as written (it can match nothing, and protects nothing less than before).
        let mut sensitive: Vec<PathBuf> = extra
            .iter()
            .map(|p| canon(&crate::config::expand_home(p, home).unwrap_or_else(|| p.clone())))
            .collect();
        if protect_sensitive && let Some(h) = home {
            for rel in [
                ".ssh",
                ".gnupg",
                ".password-store",
                ".mozilla",
                ".librewolf",
                ".config/chromium",
                ".config/google-chrome",
                ".config/BraveSoftware",
                ".config/vivaldi",
                ".config/microsoft-edge",
                ".local/share/keyrings",
                ".aws",
                ".kube",
                ".docker/config.json",
                ".netrc",
                ".git-credentials",
            ] {
                sensitive.push(canon(&h.join(rel)));
            }
        }
        // Keep both the given and the canonical form: a directory that does not exist yet may be
        // created later under either.
        let mut private = Vec::new();
        for p in private_dirs {
            private.push(p.to_path_buf());
            private.push(canon(p));
        }
        Resolver {
            private: private.into(),
            sensitive: sensitive.into(),
        }
    }

    /// Whether a canonical path lies in archgate's own directories.
    pub fn is_private(&self, canonical: &Path) -> bool {
        self.private.iter().any(|d| canonical.starts_with(d))
    }

    /// Why `p` (a canonical or lexical path) is refused, if it is.
    fn protection(&self, p: &Path) -> Option<&'static str> {
        if self.is_private(p) {
            Some("archgate's own files are never reachable through a tool")
        } else if self.sensitive.iter().any(|d| p.starts_with(d)) {
            Some("keys, passwords and browser profiles are refused (resolve.protect_sensitive)")
        } else {
            None
        }
    }

    /// An existing file or directory, canonicalized (symlinks and `..` resolved).
    pub fn existing_path(&self, given: &str) -> Result<Target, Refusal> {
        if given.is_empty() || given.contains('\0') {
            return Err(Refusal::Invalid {
                what: "path",
                given: given.into(),
                why: "empty or contains NUL".into(),
            });
        }
        let path = Path::new(given);
        if !path.is_absolute() {
            return Err(Refusal::Invalid {
                what: "path",
                given: given.into(),
                why: "must be absolute (archgate has no working directory of yours)".into(),
            });
        }
        // Refuse by the literal path too, so a dangling link into a private dir is refused
        // as protected rather than reported missing.
        if self.is_private(&lexical(path)) {
            return Err(Refusal::Protected {
                path: given.into(),
                why: "archgate's own files are never reachable through a tool",
            });
        }
        let canonical = match std::fs::canonicalize(path) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Where the missing name would be, through links: a miss inside a protected
                // directory is refused as protected, and never answered with what is in it.
                let dir = lexical(path)
                    .parent()
                    .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_owned()));
                if let Some(dir) = &dir
                    && let Some(why) =
                        self.protection(&dir.join(path.file_name().unwrap_or_default()))
                {
                    return Err(Refusal::Protected {
                        path: given.into(),
                        why,
                    });
                }
                let near = dir
                    .and_then(|dir| std::fs::read_dir(dir).ok())
                    .map(|rd| {
                        let names: Vec<String> = rd
                            .flatten()
                            .map(|e| e.path())
                            // A near miss is never a protected file, nor a link to one.
                            .filter(|p| {
                                self.protection(p).is_none()
                                    && std::fs::canonicalize(p)
                                        .map_or(true, |c| self.protection(&c).is_none())
                            })
                            .map(|p| p.display().to_string())
                            .collect();
                        near_misses(given, names.iter().map(String::as_str))
                    })
                    .unwrap_or_default();
                return Err(Refusal::NotFound {
                    what: "file",
                    given: given.into(),
                    near,
                });
            }
            Err(e) => {
                return Err(Refusal::CouldNotLook {
                    what: "file",
                    why: e.to_string(),
                });
            }
        };
        if self.is_private(&canonical) {
            return Err(Refusal::Protected {
                path: given.into(),
                why: "archgate's own files are never reachable through a tool",
            });
        }
        if self.sensitive.iter().any(|d| canonical.starts_with(d)) {
            return Err(Refusal::Protected {
                path: given.into(),
                why: "keys, passwords and browser profiles are refused (resolve.protect_sensitive)",
            });
        }
        if let Ok(meta) = std::fs::metadata(&canonical)
            && self.is_private_file(&meta)
        {
            return Err(private_link(given));
        }
        let human = canonical.display().to_string();
        Ok(Target {
            value: human.clone(),
            human,
        })
    }

    /// [`existing_path`](Self::existing_path), and the file pinned as it is now (opened, its
    /// inode noted, its content digested): a tool whose action acts on the file keeps the pin in
    /// `Action::files`, and the gate refuses the call at the yes if the path no longer names
    /// that file with that content (`changed_since_approval`).
    pub fn pinned_path(&self, given: &str) -> Result<(Target, archgate_exec::FilePin), Refusal> {
        let t = self.existing_path(given)?;
        let pin = archgate_exec::FilePin::open(Path::new(&t.value)).map_err(|e| {
            if e.kind() == std::io::ErrorKind::InvalidInput {
                Refusal::Invalid {
                    what: "path",
                    given: given.into(),
                    why: e.to_string(),
                }
            } else {
                Refusal::CouldNotLook {
                    what: "file",
                    why: e.to_string(),
                }
            }
        })?;
        // What was opened, which may not be what was looked at a moment before.
        if pin.metadata().is_ok_and(|m| self.is_private_file(&m)) {
            return Err(private_link(given));
        }
        Ok((t, pin))
    }

    /// Whether a file outside archgate's directories is one of archgate's own files under
    /// another name: a hard link (a regular file with more than one name) to a file in them —
    /// the token, the clients or rules file. Only such files are compared, against what archgate's
    /// directories hold (at most [`PRIVATE_SCAN`] entries, [`PRIVATE_DEPTH`] levels down; past
    /// that, a linked file is refused as one that cannot be told apart).
    fn is_private_file(&self, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        if !meta.is_file() || meta.nlink() < 2 {
            return false;
        }
        let want = (meta.dev(), meta.ino());
        let mut seen = 0usize;
        let mut stack: Vec<(PathBuf, usize)> =
            self.private.iter().map(|d| (d.clone(), 0)).collect();
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > PRIVATE_SCAN {
                    return true;
                }
                let Ok(m) = e.metadata() else { continue };
                if m.is_file() && (m.dev(), m.ino()) == want {
                    return true;
                }
                if m.is_dir() && depth + 1 < PRIVATE_DEPTH {
                    stack.push((e.path(), depth + 1));
                }
            }
        }
        false
    }

    /// An http(s) URL, nothing else (no file:, javascript:, or custom schemes).
    pub fn url(&self, given: &str) -> Result<Target, Refusal> {
        let lower = given.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"));
        let Some(rest) = rest else {
            return Err(Refusal::Invalid {
                what: "URL",
                given: given.into(),
                why: "only http and https URLs are opened".into(),
            });
        };
        let host = rest.split(['/', '?', '#']).next().unwrap_or("");
        if host.is_empty() || given.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Refusal::Invalid {
                what: "URL",
                given: given.into(),
                why: "no host, or whitespace in it".into(),
            });
        }
        Ok(Target {
            value: given.into(),
            human: given.into(),
        })
    }
}

/// `.` and `..` removed without touching the disk.
fn lexical(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Matches `given` against `candidates` after `normalize`; exact (normalized) match only.
/// On a miss, up to five near misses ranked by edit distance and shared prefix.
pub fn match_name<'a>(
    what: &'static str,
    given: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
    normalize: impl Fn(&str) -> String,
) -> Result<Target, Refusal> {
    let want = normalize(given);
    for c in candidates.clone() {
        if normalize(c) == want {
            return Ok(Target {
                value: c.to_owned(),
                human: c.to_owned(),
            });
        }
    }
    Err(Refusal::NotFound {
        what,
        given: given.into(),
        near: near_misses(&want, candidates),
    })
}

/// Omarchy's theme-name rule: lowercased, spaces to dashes.
pub fn omarchy_name(s: &str) -> String {
    s.trim().to_lowercase().replace(' ', "-")
}

/// Up to five candidates closest to `given`.
pub fn near_misses<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let g = given.to_lowercase();
    let mut scored: Vec<(usize, String)> = candidates
        .into_iter()
        .filter_map(|c| {
            let cl = c.to_lowercase();
            let d = strsim::levenshtein(&g, &cl);
            let contains = cl.contains(&g) || g.contains(&cl);
            let limit = (g.chars().count().max(3) / 2).max(2);
            (d <= limit || contains).then(|| (if contains { d / 2 } else { d }, c.to_owned()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests;

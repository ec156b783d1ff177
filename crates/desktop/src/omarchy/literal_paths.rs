//! The paths a route's scripts spell literally, where a value may be read as a file (attack 37
//! F2, F5; attack 38 F1, F4): a directory a script moves to or prefixes a value with (`cd /tmp`,
//! `env -C /tmp`, `"/tmp/$1"`, `${TMPDIR-/tmp}`), and a file name it builds around a value
//! (`"/tmp/theme-$1.sh"`). Read from the text alone: a directory or name computed at run time
//! (`mktemp`, a config file, a download) is no literal, and SECURITY.md says so.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// A file name a script builds from one expansion: `dir/prefix$Xsuffix`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct NameTemplate {
    pub dir: PathBuf,
    pub prefix: String,
    pub suffix: String,
}

impl NameTemplate {
    /// The file this template names for `value`.
    pub fn with(&self, value: &str) -> PathBuf {
        self.dir
            .join(format!("{}{value}{}", self.prefix, self.suffix))
    }
}

/// Every word of `text` that spells a path from `/` or the home (`$HOME/`, `${HOME}/`, `~/`,
/// the home this process's `HOME` names), including an expansion's default
/// (`${TMPDIR:-/tmp}`, `${TMPDIR-/tmp}`, `${X:=/tmp}`: attack 38 F4): its base and the rest.
fn path_words(text: &str) -> Vec<(PathBuf, &str)> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let words = text.split(|c: char| {
        c.is_whitespace() || matches!(c, '"' | '\'' | ';' | '|' | '&' | '(' | ')' | '`' | '=')
    });
    let defaults = words.clone().filter(|w| w.contains("${")).flat_map(|w| {
        w.match_indices('/')
            .filter(|(i, _)| *i > 0 && w[..*i].ends_with(['-', '=', '+', '?']))
            .map(|(i, _)| w[i..].trim_end_matches('}'))
            .collect::<Vec<_>>()
    });
    let mut out = Vec::new();
    for word in words.chain(defaults) {
        if let Some(r) = word
            .strip_prefix("$HOME/")
            .or_else(|| word.strip_prefix("${HOME}/"))
            .or_else(|| word.strip_prefix("~/"))
        {
            if let Some(h) = &home {
                out.push((h.clone(), r));
            }
        } else if let Some(r) = word.strip_prefix('/') {
            out.push((PathBuf::from("/"), r));
        }
    }
    out
}

fn climbs(p: &Path) -> bool {
    p.components().any(|c| c == Component::ParentDir)
}

/// The directories `text` names literally: each path word up to its first expansion — `cd /tmp`
/// gives `/tmp`, `"/tmp/$1"` and `"$HOME/x/$1"` give `/tmp` and `$HOME/x` — and each one's
/// parent (a word may be a file in one).
pub fn dirs(text: &str) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for (base, rest) in path_words(text) {
        let fixed = rest.split(['$', '*', '?', '[', '{']).next().unwrap_or("");
        let dir = if fixed.len() < rest.len() {
            match fixed.rfind('/') {
                Some(i) => base.join(&fixed[..i]),
                None => base.clone(),
            }
        } else {
            base.join(fixed)
        };
        if climbs(&dir) {
            continue;
        }
        if let Some(parent) = dir.parent() {
            out.insert(parent.to_path_buf());
        }
        out.insert(dir);
    }
    out
}

/// The file names `text` builds around one expansion in a literal directory, with literal text
/// beside it (`"/tmp/$1.sh"`, `"/tmp/theme-$1"`: attack 38 F1); a bare expansion is a directory's
/// entry, which [`dirs`] covers.
pub fn names(text: &str) -> BTreeSet<NameTemplate> {
    let mut out = BTreeSet::new();
    for (base, rest) in path_words(text) {
        let (dir, seg) = match rest.rfind('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => ("", rest),
        };
        if dir.contains(['$', '*', '?', '[', '{']) {
            continue;
        }
        let Some((prefix, after)) = seg.split_once('$') else {
            continue;
        };
        let after = after.strip_prefix('{').unwrap_or(after);
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 {
            continue;
        }
        let suffix = after[name_len..]
            .strip_prefix('}')
            .unwrap_or(&after[name_len..]);
        let plain = |t: &str| !t.contains(['$', '*', '?', '[', '{', '}', '/']);
        if (prefix.is_empty() && suffix.is_empty()) || !plain(prefix) || !plain(suffix) {
            continue;
        }
        let dir = base.join(dir);
        if climbs(&dir) {
            continue;
        }
        out.insert(NameTemplate {
            dir,
            prefix: prefix.to_owned(),
            suffix: suffix.to_owned(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directories_a_script_names_literally() {
        let d = dirs(
            "cd /tmp/a || exit\ncp \"/var/tmp/$1.sh\" x\nT=\"${TMPDIR-/run/t}\"\nU=${X:-/srv/u}\nls ../up",
        );
        for want in ["/tmp/a", "/tmp", "/var/tmp", "/run/t", "/srv/u"] {
            assert!(d.contains(Path::new(want)), "{want}: {d:?}");
        }
        assert!(!d.iter().any(|p| climbs(p)), "{d:?}");
    }

    #[test]
    fn the_names_a_script_builds_around_a_value() {
        let n = names(
            "cp \"/tmp/theme-$1.sh\" x\ncat \"/tmp/${NAME}.conf\"\nrm \"/tmp/$1\"\nls /tmp/$a/$b",
        );
        let with: Vec<PathBuf> = n.iter().map(|t| t.with("v")).collect();
        assert!(with.contains(&PathBuf::from("/tmp/theme-v.sh")), "{with:?}");
        assert!(with.contains(&PathBuf::from("/tmp/v.conf")), "{with:?}");
        // A bare expansion is a directory's entry (`dirs`), and one under a computed directory
        // is no literal.
        assert_eq!(with.len(), 2, "{with:?}");
    }
}

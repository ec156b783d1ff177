//! The names of archgate's tools, for judging the config's lists of them (attack 10 F5; class:
//! *an entry that cannot be applied is dropped and the rest applies*). An entry of `[tools]
//! disabled`, `[clients.NAME] tools`, `[policy] deny` or `ask` that names no tool of archgate's
//! (`"pkg-search"`, `"pkg_serch"`, `"nosuch_*"`) can never apply: the file used to apply, become
//! the last good copy and say `ok` while the tool it meant ran unrestricted. Such an entry now
//! keeps the file from applying, named with what it could have meant.
//!
//! The binary says which tools it has ([`know_tools`], before any config is read); core knows
//! nothing of the catalogue. Without it (core's own tests, a binary built on the library with
//! tools of its own) entries are judged by their shape only, as before. A policy entry is
//! judged only when its first word is tool-shaped (holds `_`), is a tool's name with `-` for
//! `_`, or is one letter off a tool whose name has no `_` (`"proceses"`, attack 14 F2): other
//! words are routes (an Omarchy route not installed here may still be named). A
//! `[tools.timeouts]` key must be one tool's whole name.

use std::collections::BTreeSet;
use std::sync::OnceLock;

static PROVIDER: OnceLock<fn() -> BTreeSet<String>> = OnceLock::new();
static NAMES: OnceLock<BTreeSet<String>> = OnceLock::new();

/// The binary's tools, asked for the first time a config's lists are judged.
pub fn know_tools(names: fn() -> BTreeSet<String>) {
    let _ = PROVIDER.set(names);
}

fn names() -> Option<&'static BTreeSet<String>> {
    let f = PROVIDER.get()?;
    Some(NAMES.get_or_init(f))
}

/// Why `word` — a tool name, or a `word*` prefix of tool names — names no tool of archgate's;
/// `None` when it names one, or when the tools are not known here.
pub(crate) fn names_no_tool(word: &str) -> Option<String> {
    let names = names()?;
    let w = word.trim();
    let found = match w.strip_suffix('*') {
        Some(stem) => names.iter().any(|n| {
            n.get(..stem.len())
                .is_some_and(|s| s.eq_ignore_ascii_case(stem))
        }),
        None => names.iter().any(|n| n.eq_ignore_ascii_case(w)),
    };
    if found {
        return None;
    }
    let near = near_miss(w.trim_end_matches('*'), names);
    Some(match near {
        Some(n) => format!("names no tool of archgate's (did you mean {n:?}?)"),
        None => "names no tool of archgate's (`archgate tools` lists them)".to_owned(),
    })
}

/// For a `[policy]` entry: its first word, when tool-shaped, must name a tool. A word with `-`
/// for `_` that would name one (`"pkg-search"`) is a misspelt tool, not a route, and is named.
pub(crate) fn rule_names_no_tool(entry: &str) -> Option<String> {
    let first = entry.split_whitespace().next()?;
    if first.contains('_') {
        return names_no_tool(first);
    }
    if first.contains('-') && names_no_tool(&first.replace('-', "_")).is_none() {
        return Some(format!(
            "names no tool of archgate's (did you mean {:?}? tool names are written with _)",
            first.replace('-', "_").to_lowercase()
        ));
    }
    // A word one letter off one of the tools whose name has no `_` (`"proceses"`,
    // `"jounral"`) is that tool misspelt, not a route (attack 14 F2): taken as a route it
    // restricted nothing while the file said `ok`.
    let names = names()?;
    let w = first.trim_end_matches('*');
    if names.iter().any(|n| n.eq_ignore_ascii_case(w)) {
        return None;
    }
    names
        .iter()
        .filter(|n| !n.contains('_'))
        .find(|n| one_apart(&n.to_lowercase(), &w.to_lowercase()))
        .map(|n| format!("names no tool of archgate's (did you mean {n:?}?)"))
}

/// For a `[tools.timeouts]` key: exactly one tool's name (the timeout is looked up by name; a
/// `*` or a misspelt name would apply to nothing while the file said `ok`).
pub(crate) fn timeout_names_no_tool(key: &str) -> Option<String> {
    if key.contains('*') {
        return Some("a timeout names one tool, written whole (no *)".to_owned());
    }
    names_no_tool(key)
}

/// The tool `w` was likely meant to be: the same letters with `-` for `_`, or one letter off.
fn near_miss<'a>(w: &str, names: &'a BTreeSet<String>) -> Option<&'a str> {
    let norm = |s: &str| s.to_lowercase().replace('-', "_");
    let target = norm(w);
    names
        .iter()
        .find(|n| norm(n) == target)
        .or_else(|| names.iter().find(|n| one_apart(&norm(n), &target)))
        .map(String::as_str)
}

/// Whether `a` and `b` differ by one letter inserted, removed or changed, or by two
/// neighbouring letters swapped (`"jounral"`).
fn one_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len() == b.len() {
        let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
        if let [i, j] = diff[..]
            && j == i + 1
            && a[i] == b[j]
            && a[j] == b[i]
        {
            return true;
        }
    }
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match long.len() - short.len() {
        0 => a.iter().zip(&b).filter(|(x, y)| x != y).count() == 1,
        1 => (0..long.len())
            .any(|i| long[..i] == short[..i.min(short.len())] && long[i + 1..] == short[i..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_misses_are_one_letter_or_a_dash_apart() {
        let names: BTreeSet<String> = ["pkg_search", "system_status"]
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(near_miss("pkg-search", &names), Some("pkg_search"));
        assert_eq!(near_miss("pkg_serch", &names), Some("pkg_search"));
        assert_eq!(near_miss("system_stauts", &names), Some("system_status"));
        assert!(one_apart("jounral", "journal") && !one_apart("jorunla", "journal"));
        assert_eq!(near_miss("nosuch", &names), None);
        assert!(one_apart("abc", "abd") && one_apart("abc", "ab") && !one_apart("abc", "a"));
    }
}

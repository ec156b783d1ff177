//! The Omarchy plugin (plugin/*.qml) and its contract with the daemon, read as text: every
//! archgate command, frame event, /health field and state.json field the QML uses exists in the
//! real binary; the plugin writes only under archgate's runtime and state directories; the
//! manifest passes the checks `omarchy plugin add` makes; qmllint is clean.
//!
//! Shared here: the QML and manifest as text, and what the QML names (strings, lists, members,
//! blocks, archgate command lines).

mod contract;
mod files;
mod lint;

use serde_json::Value;
use std::collections::BTreeSet;

use crate::support::repo;

fn qml(name: &str) -> String {
    std::fs::read_to_string(repo().join("plugin").join(name)).expect("plugin file")
}

fn manifest() -> Value {
    serde_json::from_str(&qml("manifest.json")).expect("manifest.json is JSON")
}

/// Every double-quoted string in `s`.
fn strings(s: &str) -> Vec<String> {
    s.split('"')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t.to_owned())
        .collect()
}

/// The text of every `[ ... ]` that starts right after `prefix` (e.g. `[root.bin, `).
fn lists_after(src: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find(prefix) {
        let after = &rest[i + prefix.len()..];
        let end = after.find(']').expect("closing bracket");
        out.push(after[..end].to_owned());
        rest = &after[end..];
    }
    out
}

/// Identifiers following `prefix` (e.g. `health.` → `status`, `version`, …).
fn members_after(src: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = src;
    while let Some(i) = rest.find(prefix) {
        let before = rest[..i].chars().last();
        let after = &rest[i + prefix.len()..];
        let word: String = after
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && !word.is_empty()
        {
            out.insert(word);
        }
        rest = after;
    }
    out
}

/// The `{ ... }` block that follows the first occurrence of `head`.
fn block(src: &str, head: &str) -> String {
    let start = src.find(head).unwrap_or_else(|| panic!("no {head:?}"));
    let open = start + src[start..].find('{').unwrap();
    let mut depth = 0;
    for (i, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return src[open..=open + i].to_owned();
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced block after {head:?}")
}

/// Every archgate command line the QML runs.
fn archgate_commands() -> Vec<Vec<String>> {
    let mut cmds = Vec::new();
    for file in ["Service.qml", "BarWidget.qml"] {
        let src = qml(file);
        for l in lists_after(&src, "root.bin, ")
            .into_iter()
            .chain(lists_after(&src, "[\"archgate\", "))
        {
            cmds.push(strings(&l));
        }
    }
    cmds
}

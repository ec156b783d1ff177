//! The code's layering: no two source files of a crate import each other. A pair that does is a
//! small circle (`a` needs `b` needs `a`): neither can be read, tested or moved alone, and the
//! next change tends to make the circle wider. Each dependency between two files goes one way;
//! what both need lives in a third file (ARCHITECTURE.md, "Invariants").
//!
//! A file's imports are the paths it names from `crate::`, `super::` or `self::` (`use` lines
//! and paths written in place), outside comments and its `#[cfg(test)] mod tests`. A path is
//! taken to the deepest file it names; a file naming its own module's parent is not counted
//! (a child module may use what its parent declares).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `src`, by its module path (`crate` first).
fn modules(krate: &str, src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("a source directory") {
            let p = e.expect("a directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(src).expect("under src").with_extension("");
                let mut m: Module = vec![krate.to_owned()];
                m.extend(rel.iter().map(|c| c.to_string_lossy().into_owned()));
                if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    m.pop();
                }
                out.insert(m, p);
            }
        }
    }
    out
}

/// The text of a file that counts: no comments, no unit tests at its end.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths `crate::a::b`, `super::x`, `self::y` named in `code`, as their segments; a group
/// (`use super::{a, b::{c, d}}`) gives one path per leaf.
fn paths(code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if !ident(b[i]) || (i > 0 && (ident(b[i - 1]) || b[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let (next, found) = path_at(code, i, Vec::new());
        for segs in found {
            if segs.len() > 1 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
                out.push(segs);
            }
        }
        i = next.max(i + 1);
    }
    out
}

fn ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The path starting at `i` (after `prefix`), with every leaf of its groups; and where it ends.
fn path_at(code: &str, mut i: usize, mut prefix: Vec<String>) -> (usize, Vec<Vec<String>>) {
    let b = code.as_bytes();
    loop {
        let start = i;
        while i < b.len() && ident(b[i]) {
            i += 1;
        }
        prefix.push(code[start..i].to_owned());
        if !code[i..].starts_with("::") {
            return (i, vec![prefix]);
        }
        i += 2;
        if b.get(i) == Some(&b'{') {
            let mut leaves = Vec::new();
            i += 1;
            loop {
                while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                    i += 1;
                }
                match b.get(i) {
                    None => return (i, leaves),
                    Some(b'}') => return (i + 1, leaves),
                    Some(&c) if ident(c) => {
                        let (next, found) = path_at(code, i, prefix.clone());
                        leaves.extend(found);
                        i = next;
                        // `as name` and anything else up to the next item.
                        while i < b.len() && b[i] != b',' && b[i] != b'}' {
                            i += 1;
                        }
                    }
                    Some(_) => i += 1,
                }
            }
        }
        if !b.get(i).is_some_and(|&c| ident(c)) {
            return (i, vec![prefix]);
        }
    }
}

/// The file a path names, from the file `from`: the deepest module file on its way.
fn target(from: &Module, path: &[String], files: &BTreeMap<Module, PathBuf>) -> Option<Module> {
    let (mut base, rest): (Module, &[String]) = match path[0].as_str() {
        "crate" => (vec![from[0].clone()], &path[1..]),
        "self" => (from.clone(), &path[1..]),
        _ => {
            let mut base = from.clone();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
    };
    let mut found = None;
    for seg in rest {
        base.push(seg.clone());
        if files.contains_key(&base) {
            found = Some(base.clone());
        }
    }
    found
}

/// Pairs of files of one crate that import each other.
fn circles(krate: &str, src: &Path) -> Vec<(Module, Module)> {
    let files = modules(krate, src);
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, p) in &files {
        let text = std::fs::read_to_string(p).expect("a source file");
        for path in paths(&code(&text)) {
            if let Some(t) = target(m, &path, &files)
                && &t != m
                && !m.starts_with(&t)
            {
                edges.entry(m.clone()).or_default().insert(t);
            }
        }
    }
    let mut out = Vec::new();
    for (a, to) in &edges {
        for b in to {
            if a < b && edges.get(b).is_some_and(|back| back.contains(a)) {
                out.push((a.clone(), b.clone()));
            }
        }
    }
    out
}

fn workspace_crates() -> Vec<(String, PathBuf)> {
    let crates = crate::manifest_dir().join("..");
    let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&crates)
        .expect("crates/")
        .filter_map(|e| {
            let p = e.ok()?.path();
            let src = p.join("src");
            let name = p.file_name()?.to_string_lossy().into_owned();
            src.is_dir().then_some((name, src))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let all = workspace_crates();
    assert!(
        all.iter().any(|(k, _)| k == "core") && all.len() >= 8,
        "the workspace's crates were not found: {all:?}"
    );
    let mut found = Vec::new();
    for (krate, src) in &all {
        for (a, b) in circles(krate, src) {
            found.push(format!("{} <-> {}", a.join("/"), b.join("/")));
        }
    }
    assert!(
        found.is_empty(),
        "files that import each other (move what both need into a third file):\n{}",
        found.join("\n")
    );
}

/// The check itself finds a circle, follows `super::`, and leaves a child's use of its parent
/// and comments alone: a crate written for the purpose, in a temporary directory.
#[test]
fn a_circle_is_found_and_what_is_not_one_is_not() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |rel: &str, text: &str| {
        let p = src.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\nmod e;\nmod f;\n");
    // A group names each of its leaves.
    write("e.rs", "use super::{a, f::{self as g, X}};\n");
    write("f.rs", "use crate::e::Y;\n");
    write("a.rs", "use crate::b::Thing;\n");
    write("b.rs", "pub struct Thing;\nfn f() { super::a::g() }\n");
    // A comment and a unit test name c from d: not imports.
    write("c.rs", "// crate::d::x\nfn f() {}\n");
    write(
        "d.rs",
        "pub mod inner;\nuse crate::c::f;\n#[cfg(test)]\nmod tests {\n    use crate::c::f;\n}\n",
    );
    // A child naming its parent is not a circle.
    write("d/inner.rs", "use super::super::d::X;\n");
    let got = circles("t", src);
    let names: Vec<String> = got
        .iter()
        .map(|(a, b)| format!("{} <-> {}", a.join("/"), b.join("/")))
        .collect();
    assert_eq!(names, ["t/a <-> t/b", "t/e <-> t/f"]);
}

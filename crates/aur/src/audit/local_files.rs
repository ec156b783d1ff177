//! Which of a package's files the audit reads: every file the PKGBUILD names — `install=`,
//! local `source=` entries, hooks, files its commands read or run — under whatever name it
//! has (`foo.install`, `foo-install`, `.foo.install`, `helper`), plus every `*.install` and
//! `*.hook`. Both loaders use it: the AUR client on the repository listing, `load_path` on a
//! directory.

use std::collections::BTreeSet;

use super::names::basename;
use super::shell;

/// Files never read as package files (the PKGBUILD and .SRCINFO are read on their own).
fn never(name: &str) -> bool {
    matches!(name, "PKGBUILD" | ".SRCINFO")
}

/// The names among `available` that the audit must read for `pkgbuild`, sorted.
pub fn files_to_read(pkgbuild: &str, available: &[String]) -> Vec<String> {
    let an = shell::analyze(pkgbuild, &[]);
    let mut named: BTreeSet<String> = BTreeSet::new();
    for v in an.all_values("install") {
        named.insert(basename(&v.text).to_owned());
    }
    for (k, v) in &an.global {
        if k == "source" || k.starts_with("source_") {
            for s in v.items() {
                let entry = s.text.rsplit("::").next().unwrap_or(&s.text);
                if !entry.contains("://") && !entry.contains('+') {
                    named.insert(basename(entry).to_owned());
                }
            }
        }
    }
    // Files the commands mention (read, run, install, source …).
    for c in &an.cmds {
        for w in c
            .argv
            .iter()
            .chain(c.redirs.iter().map(|r| &r.target))
            .chain(c.env.iter().map(|(_, w)| w))
        {
            named.insert(basename(&w.text).to_owned());
        }
    }
    let mut out: Vec<String> = available
        .iter()
        .filter(|n| !never(n))
        .filter(|n| n.ends_with(".install") || n.ends_with(".hook") || named.contains(basename(n)))
        .cloned()
        .collect();
    out.sort();
    out.dedup();
    out
}

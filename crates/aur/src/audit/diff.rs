//! Auditing a change: what an update *adds*. Findings present in the old version are not
//! repeated; change-only signals are added — maintainer and contributor lines rewritten, an
//! install script that is new or renamed, a package manager newly in depends, url= changed.

use std::collections::HashSet;

use serde::Serialize;

use super::report::{AuditReport, Finding, Severity, Verdict};
use super::rules::Outcome;
use super::shell::Analysis;
use super::{AuditInput, audit_full, names};

/// The audit of one change (from an old version to a new one).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChangeAudit {
    /// Findings the change introduces (and change-only signals), with their verdict.
    pub report: AuditReport,
    /// The verdict on the new version as a whole.
    pub new_version_verdict: Verdict,
    /// The highest severity in the new version as a whole.
    pub new_version_max_severity: Option<Severity>,
    /// How many findings of the old version are gone in the new one.
    pub findings_removed: usize,
    /// Names on `# Maintainer:` / `# Contributor:` lines, before and after.
    pub credits_before: Vec<String>,
    pub credits_after: Vec<String>,
}

fn key(f: &Finding) -> (&'static str, String, String) {
    let s: String = f.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = if s.is_empty() { f.why.clone() } else { s };
    (f.id, f.file.clone(), s)
}

/// `# Maintainer: Name <mail>` / `# Contributor: …` lines: (line, role, name).
pub(crate) fn credits(pkgbuild: &str) -> Vec<(u32, String, String)> {
    let mut out = Vec::new();
    for (i, l) in pkgbuild.lines().enumerate() {
        let t = l.trim_start();
        let Some(c) = t.strip_prefix('#') else {
            continue;
        };
        let Some((role, name)) = c.split_once(':') else {
            continue;
        };
        let role = role.trim().to_ascii_lowercase();
        if matches!(
            role.as_str(),
            "maintainer" | "contributor" | "co-maintainer" | "comaintainer"
        ) {
            let name = name.trim().to_owned();
            if !name.is_empty() {
                out.push((i as u32 + 1, role, name));
            }
        }
    }
    out
}

fn person(s: &str) -> String {
    s.split('<').next().unwrap_or(s).trim().to_ascii_lowercase()
}

/// Audits the change from `before` to `after`.
pub fn audit_change(before: &AuditInput, after: &AuditInput) -> ChangeAudit {
    let old = audit_full(before);
    let new = audit_full(after);
    let old_keys: HashSet<_> = old.findings.iter().map(key).collect();
    let new_keys: HashSet<_> = new.findings.iter().map(key).collect();
    let mut added: Vec<Finding> = new
        .findings
        .iter()
        .filter(|f| !old_keys.contains(&key(f)))
        .cloned()
        .collect();
    let findings_removed = old
        .findings
        .iter()
        .filter(|f| !new_keys.contains(&key(f)))
        .count();
    let cb = credits(&before.pkgbuild);
    let ca = credits(&after.pkgbuild);
    change_signals(before, after, &old, &new, &cb, &ca, &mut added);
    let whole = new.report();
    ChangeAudit {
        report: AuditReport::from_findings(added),
        new_version_verdict: whole.verdict,
        new_version_max_severity: whole.max_severity,
        findings_removed,
        credits_before: cb
            .into_iter()
            .map(|(_, r, n)| format!("{r}: {n}"))
            .collect(),
        credits_after: ca
            .into_iter()
            .map(|(_, r, n)| format!("{r}: {n}"))
            .collect(),
    }
}

fn finding(id: &'static str, severity: Severity, line: u32, snippet: &str, why: String) -> Finding {
    Finding {
        id,
        severity,
        line: line.max(1),
        column: 1,
        snippet: snippet.to_owned(),
        why,
        check: super::checks::for_id(id),
        file: "PKGBUILD".into(),
    }
}

fn list(an: &Analysis, name: &str) -> Vec<String> {
    an.all_values(name)
        .into_iter()
        .map(|s| s.text)
        .filter(|s| !s.is_empty())
        .collect()
}

fn line_of(an: &Analysis, name: &str) -> u32 {
    an.assigns
        .iter()
        .find(|a| a.file == 0 && a.name == name)
        .map_or(1, |a| a.pos.line)
}

#[allow(clippy::too_many_arguments)]
fn change_signals(
    before: &AuditInput,
    after: &AuditInput,
    old: &Outcome,
    new: &Outcome,
    cb: &[(u32, String, String)],
    ca: &[(u32, String, String)],
    out: &mut Vec<Finding>,
) {
    // Credits: a previous maintainer or contributor who disappears entirely.
    let after_people: HashSet<String> = ca.iter().map(|(_, _, n)| person(n)).collect();
    let gone: Vec<&str> = cb
        .iter()
        .filter(|(_, _, n)| !after_people.contains(&person(n)))
        .map(|(_, _, n)| n.as_str())
        .collect();
    let first_line = ca.first().map_or(1, |(l, _, _)| *l);
    if !gone.is_empty() {
        out.push(finding(
            "AUR-DIFF-CREDITS-REWRITTEN",
            Severity::Medium,
            first_line,
            &ca.first().map(|(_, r, n)| format!("# {r}: {n}")).unwrap_or_default(),
            format!(
                "the change removes earlier maintainer/contributor credits ({}); adopters normally keep them, hijackers rewrite them",
                gone.join(", ")
            ),
        ));
    } else {
        let mb: Vec<String> = cb
            .iter()
            .filter(|(_, r, _)| r == "maintainer")
            .map(|(_, _, n)| person(n))
            .collect();
        let ma: Vec<String> = ca
            .iter()
            .filter(|(_, r, _)| r == "maintainer")
            .map(|(_, _, n)| person(n))
            .collect();
        if !mb.is_empty() && mb != ma {
            out.push(finding(
                "AUR-DIFF-MAINTAINER-CHANGED",
                Severity::Info,
                first_line,
                "",
                "the package has a new maintainer; earlier credits are kept".into(),
            ));
        }
    }
    // Install scripts.
    let ib = list(&old.an, "install");
    let ia = list(&new.an, "install");
    let install_line = line_of(&new.an, "install");
    for i in &ia {
        if ib.contains(i) {
            continue;
        }
        let (id, why) = if ib.is_empty() {
            (
                "AUR-DIFF-INSTALL-NEW",
                format!("the change adds the install script {i}, which will run as root"),
            )
        } else {
            (
                "AUR-DIFF-INSTALL-RENAMED",
                format!("the install script changes from {} to {i}", ib.join(", ")),
            )
        };
        out.push(finding(
            id,
            Severity::Medium,
            install_line,
            &format!("install={i}"),
            why,
        ));
    }
    let names_before: HashSet<&str> = before
        .install_scripts
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    for s in &after.install_scripts {
        // New patches and other data files are not scripts; install= names are handled above.
        let script = s.name.ends_with(".install") || s.name.ends_with(".hook");
        if script && !names_before.contains(s.name.as_str()) && !ia.contains(&s.name) {
            out.push(Finding {
                id: "AUR-DIFF-INSTALL-NEW",
                severity: Severity::Medium,
                line: 1,
                column: 1,
                snippet: String::new(),
                why: format!("the change adds the script {}", s.name),
                check: super::checks::for_id("AUR-DIFF-INSTALL-NEW"),
                file: s.name.clone(),
            });
        }
    }
    // Package managers newly in depends.
    let db = list(&old.an, "depends");
    for d in list(&new.an, "depends") {
        if names::is_pkg_manager_package(&d) && !db.contains(&d) {
            out.push(finding(
                "AUR-DIFF-DEPENDS-PKGMGR",
                Severity::High,
                line_of(&new.an, "depends"),
                &d,
                format!("the change adds the package manager {d} to depends, as the 2026 hijacks did before running it as root"),
            ));
        }
    }
    // url= changed.
    let ub = list(&old.an, "url");
    let ua = list(&new.an, "url");
    if !ub.is_empty() && ub != ua {
        out.push(finding(
            "AUR-DIFF-URL-CHANGED",
            Severity::Low,
            line_of(&new.an, "url"),
            &ua.join(" "),
            format!(
                "the upstream URL changes from {} to {}",
                ub.join(" "),
                ua.join(" ")
            ),
        ));
    }
}

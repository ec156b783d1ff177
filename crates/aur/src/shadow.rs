//! An AUR package whose name is also an official package's (in a sync database): installing it
//! replaces the official one, and an AUR helper keeps building it in its place. The AUR client
//! cannot see the sync databases; the caller (the binary, which reads them) says which names are
//! shadowed, and the answers of `aur_info` and `aur_audit` warn and flag it.

use serde::Serialize;

use crate::audit::{AuditReport, Finding, Severity};
use crate::client::InfoResults;
use crate::ops::{PackageAudit, TrustSignal};

/// The finding's identifier in an audit.
pub const SHADOWS_OFFICIAL: &str = "AUR-SHADOWS-OFFICIAL";

/// An official package with the same name as an AUR package.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Shadowed {
    /// The name both have.
    pub name: String,
    /// The sync repository that has it (`extra`).
    pub repo: String,
    /// Its version there.
    pub version: String,
}

impl Shadowed {
    /// One sentence for the person and the agent.
    pub fn warning(&self) -> String {
        format!(
            "{name} shadows the official package {repo}/{name} {version}: installing the AUR one \
             replaces it, and an AUR helper would keep building this one instead of the \
             repository's; prefer the official package",
            name = self.name,
            repo = self.repo,
            version = self.version
        )
    }
}

impl InfoResults {
    /// Warns about each AUR package whose name an official package has.
    pub fn note_shadowing(&mut self, shadowed: &[Shadowed]) {
        for s in shadowed {
            if self.packages.iter().any(|p| p.name == s.name) {
                self.warnings.push(s.warning());
            }
        }
    }
}

impl PackageAudit {
    /// Warns in the trust signals and flags the audit (medium: the verdict is at least
    /// `review`) when the audited package's name is an official package's.
    pub fn note_shadowing(&mut self, shadowed: &Shadowed) {
        if self.package.name != shadowed.name {
            return;
        }
        let warning = shadowed.warning();
        self.trust.push(TrustSignal {
            level: "warning",
            signal: warning.clone(),
        });
        let mut findings = std::mem::take(&mut self.report.findings);
        findings.push(Finding {
            id: SHADOWS_OFFICIAL,
            severity: Severity::Medium,
            line: 0,
            column: 0,
            snippet: format!("pkgname = {}", shadowed.name),
            why: warning,
            check: crate::audit::checks::for_id(SHADOWS_OFFICIAL),
            file: ".SRCINFO".to_owned(),
        });
        self.report = AuditReport::from_findings(findings);
    }
}

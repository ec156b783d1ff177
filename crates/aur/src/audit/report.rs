//! Findings, severities and the verdict, in the JSON shape tools and the CLI print.

use serde::Serialize;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Low,
    Medium,
    High,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Low => "low",
            Severity::Medium => "medium",
            Severity::High => "high",
            Severity::Critical => "critical",
        }
    }
}

/// The audit's conclusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Nothing above low severity.
    Ok,
    /// Something a person should look at before building.
    Review,
    /// Do not build or install without understanding every finding.
    Dangerous,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Review => "review",
            Verdict::Dangerous => "dangerous",
        }
    }
}

/// One thing the audit found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Stable identifier, e.g. `AUR-EXEC-REMOTE`.
    pub id: &'static str,
    pub severity: Severity,
    /// 1-based line in `file` (0: about the package as a whole, e.g. its name).
    pub line: u32,
    /// 1-based column (characters) in `file` (0 with line 0).
    pub column: u32,
    /// The source text the finding is about (shortened).
    pub snippet: String,
    /// One sentence: why this matters.
    pub why: String,
    /// What a reviewer should check (one sentence per finding id).
    pub check: &'static str,
    /// `PKGBUILD`, `.SRCINFO`, or the install script / hook name.
    pub file: String,
}

/// The audit of one package version (or of one change).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditReport {
    pub verdict: Verdict,
    /// The highest severity among the findings; `null` if there are none.
    pub max_severity: Option<Severity>,
    /// Most severe first, then in file order.
    pub findings: Vec<Finding>,
    /// Why the verdict is what it is, one line per reason.
    pub reasons: Vec<String>,
}

impl AuditReport {
    /// Builds the report: sorts findings and derives the verdict.
    pub(crate) fn from_findings(mut findings: Vec<Finding>) -> AuditReport {
        findings.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| (a.line, a.column).cmp(&(b.line, b.column)))
                .then_with(|| a.id.cmp(b.id))
        });
        let max_severity = findings.iter().map(|f| f.severity).max();
        let mut reasons = Vec::new();
        let serious: Vec<&Finding> = findings
            .iter()
            .filter(|f| f.severity >= Severity::High)
            .collect();
        let mut medium_ids: Vec<&str> = findings
            .iter()
            .filter(|f| f.severity == Severity::Medium)
            .map(|f| f.id)
            .collect();
        medium_ids.sort_unstable();
        medium_ids.dedup();
        let verdict = if !serious.is_empty() {
            for f in serious.iter().take(8) {
                reasons.push(format!(
                    "{} ({}, {} line {}): {}",
                    f.id,
                    f.severity.as_str(),
                    f.file,
                    f.line,
                    f.why
                ));
            }
            Verdict::Dangerous
        } else if medium_ids.len() >= 3 {
            reasons.push(format!(
                "several independent warning signs together: {}",
                medium_ids.join(", ")
            ));
            Verdict::Dangerous
        } else if !medium_ids.is_empty() {
            for f in findings
                .iter()
                .filter(|f| f.severity == Severity::Medium)
                .take(8)
            {
                reasons.push(format!("{} ({} line {}): {}", f.id, f.file, f.line, f.why));
            }
            Verdict::Review
        } else {
            reasons.push("no finding above low severity".into());
            Verdict::Ok
        };
        AuditReport {
            verdict,
            max_severity,
            findings,
            reasons,
        }
    }

    /// The CLI's `--json` shape: `{"verdict","max_severity","findings":[…]}` (plus `reasons`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A plain-text rendering for people.
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "verdict: {} (max severity: {})\n",
            self.verdict.as_str(),
            self.max_severity.map_or("none", Severity::as_str)
        );
        for r in &self.reasons {
            s.push_str(&format!("  - {r}\n"));
        }
        for f in &self.findings {
            s.push_str(&format!(
                "[{}] {} {}:{}:{}\n    {}\n    {}\n    check: {}\n",
                f.severity.as_str(),
                f.id,
                f.file,
                f.line,
                f.column,
                f.snippet,
                f.why,
                f.check
            ));
        }
        s
    }
}

//! The evaluation corpus: `malicious/*` samples must be judged `dangerous`, `benign/*` must not.
//! A sample is a directory with a PKGBUILD (plus .SRCINFO and install scripts), or with
//! `before/` and `after/` directories for an update, which is judged by what it adds.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::audit::{self, Verdict};
use crate::local::{LocalError, load_path};

/// One sample the audit got wrong.
#[derive(Clone, Debug, Serialize)]
pub struct Miss {
    /// `malicious/NAME` or `benign/NAME`.
    pub sample: String,
    pub verdict: Verdict,
    /// The most severe findings (`ID@file:line`), for a quick look.
    pub top_findings: Vec<String>,
}

/// Detection and false-positive rates over a corpus.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    pub malicious: usize,
    pub detected: usize,
    pub detection_rate: f64,
    pub benign: usize,
    pub false_positives: usize,
    pub false_positive_rate: f64,
    /// Malicious samples not judged dangerous, and benign samples judged dangerous.
    pub misses: Vec<Miss>,
    /// Samples that could not be loaded: (sample, error).
    pub errors: Vec<(String, String)>,
}

impl EvalReport {
    pub fn to_text(&self) -> String {
        let mut s = format!(
            "detection: {}/{} = {:.1}%\nfalse positives: {}/{} = {:.1}%\n",
            self.detected,
            self.malicious,
            self.detection_rate * 100.0,
            self.false_positives,
            self.benign,
            self.false_positive_rate * 100.0
        );
        for m in &self.misses {
            s.push_str(&format!(
                "MISS {} -> {} [{}]\n",
                m.sample,
                m.verdict.as_str(),
                m.top_findings.join(", ")
            ));
        }
        for (n, e) in &self.errors {
            s.push_str(&format!("ERROR {n}: {e}\n"));
        }
        s
    }
}

/// The verdict for one sample directory (an update if it has `before/` and `after/`).
pub fn judge_sample(dir: &Path) -> Result<audit::AuditReport, LocalError> {
    let (b, a) = (dir.join("before"), dir.join("after"));
    if b.is_dir() && a.is_dir() {
        let before = load_path(&b)?;
        let after = load_path(&a)?;
        Ok(audit::audit_change(&before, &after).report)
    } else {
        Ok(audit::audit(&load_path(dir)?))
    }
}

fn samples(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Evaluates `dir/malicious/*` and `dir/benign/*`.
pub fn evaluate_corpus(dir: &Path) -> EvalReport {
    let mut r = EvalReport {
        malicious: 0,
        detected: 0,
        detection_rate: 0.0,
        benign: 0,
        false_positives: 0,
        false_positive_rate: 0.0,
        misses: Vec::new(),
        errors: Vec::new(),
    };
    for (class, bad) in [("malicious", true), ("benign", false)] {
        for s in samples(&dir.join(class)) {
            let name = format!(
                "{class}/{}",
                s.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            let rep = match judge_sample(&s) {
                Ok(r) => r,
                Err(e) => {
                    r.errors.push((name, e.to_string()));
                    continue;
                }
            };
            let dangerous = rep.verdict == Verdict::Dangerous;
            if bad {
                r.malicious += 1;
                r.detected += usize::from(dangerous);
            } else {
                r.benign += 1;
                r.false_positives += usize::from(dangerous);
            }
            if dangerous != bad {
                r.misses.push(Miss {
                    sample: name,
                    verdict: rep.verdict,
                    top_findings: rep
                        .findings
                        .iter()
                        .take(6)
                        .map(|f| format!("{}({})@{}:{}", f.id, f.severity.as_str(), f.file, f.line))
                        .collect(),
                });
            }
        }
    }
    r.detection_rate = if r.malicious == 0 {
        0.0
    } else {
        r.detected as f64 / r.malicious as f64
    };
    r.false_positive_rate = if r.benign == 0 {
        0.0
    } else {
        r.false_positives as f64 / r.benign as f64
    };
    r
}

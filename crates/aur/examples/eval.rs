//! Evaluates the audit on a corpus: `cargo run -p archgate-aur --example eval -- DIR [-v]`.
//! Prints detection and false-positive rates, each miss, and the time the whole corpus took.
#![allow(clippy::print_stdout)]

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus")));
    let verbose = args.any(|a| a == "-v");
    let start = Instant::now();
    let report = archgate_aur::corpus::evaluate_corpus(&dir);
    let took = start.elapsed();
    print!("{}", report.to_text());
    println!(
        "audited {} samples in {:.1} ms",
        report.malicious + report.benign,
        took.as_secs_f64() * 1000.0
    );
    if verbose {
        for class in ["malicious", "benign"] {
            let mut v: Vec<_> = std::fs::read_dir(dir.join(class))
                .map(|r| r.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default();
            v.sort();
            for s in v {
                if let Ok(r) = archgate_aur::corpus::judge_sample(&s) {
                    let top: Vec<String> = r
                        .findings
                        .iter()
                        .filter(|f| f.severity >= archgate_aur::audit::Severity::Medium)
                        .map(|f| format!("{}({})@{}:{}", f.id, f.severity.as_str(), f.file, f.line))
                        .collect();
                    println!(
                        "{class}/{} {} {}",
                        s.file_name().unwrap_or_default().to_string_lossy(),
                        r.verdict.as_str(),
                        top.join(" ")
                    );
                }
            }
        }
    }
    if report.detection_rate < 1.0 || report.false_positive_rate > 0.05 {
        std::process::exit(1);
    }
}

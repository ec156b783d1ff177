//! Evaluates the audit on a corpus: `cargo run -p archgate-aur --example eval -- DIR [-v]`.
//! Prints detection and false-positive rates, each miss, and the time the whole corpus took.
//!
//! `eval -- --real DIR… [-v]` audits every package directory (one holding a PKGBUILD) found
//! under the DIRs — real, legitimate PKGBUILDs checked out locally, never committed — and
//! counts verdicts: ok / review / dangerous, the findings behind each non-ok verdict, and the
//! time per audit.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn package_dirs(dir: &Path, out: &mut Vec<PathBuf>, depth: u32) {
    if depth > 6 {
        return;
    }
    if dir.join("PKGBUILD").is_file() {
        out.push(dir.to_owned());
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subs: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    subs.sort();
    for s in subs {
        package_dirs(&s, out, depth + 1);
    }
}

fn real(dirs: &[PathBuf], verbose: bool) {
    let mut pkgs = Vec::new();
    for d in dirs {
        package_dirs(d, &mut pkgs, 0);
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut times = Vec::new();
    for p in &pkgs {
        let Ok(input) = archgate_aur::load_path(p) else {
            *counts.entry("error").or_default() += 1;
            continue;
        };
        let t = Instant::now();
        let r = archgate_aur::audit(&input);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        *counts.entry(r.verdict.as_str()).or_default() += 1;
        if r.verdict != archgate_aur::Verdict::Ok {
            let top: Vec<String> = r
                .findings
                .iter()
                .filter(|f| f.severity >= archgate_aur::audit::Severity::Medium)
                .map(|f| format!("{}({})@{}:{}", f.id, f.severity.as_str(), f.file, f.line))
                .collect();
            for f in r
                .findings
                .iter()
                .filter(|f| f.severity >= archgate_aur::audit::Severity::Medium)
            {
                *by_id
                    .entry(format!("{} {}", r.verdict.as_str(), f.id))
                    .or_default() += 1;
            }
            println!("{} {} {}", r.verdict.as_str(), p.display(), top.join(" "));
            if verbose {
                for f in &r.findings {
                    if f.severity >= archgate_aur::audit::Severity::Medium {
                        println!(
                            "    {} {}:{} `{}` {}",
                            f.id, f.file, f.line, f.snippet, f.why
                        );
                    }
                }
            }
        }
    }
    let n = pkgs.len().max(1) as f64;
    println!("packages: {}", pkgs.len());
    for (k, v) in &counts {
        println!("  {k}: {v} ({:.1}%)", *v as f64 * 100.0 / n);
    }
    for (k, v) in &by_id {
        println!("  finding {k}: {v}");
    }
    times.sort_by(f64::total_cmp);
    if !times.is_empty() {
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        println!(
            "audit time: mean {mean:.3} ms, median {:.3} ms, p95 {:.3} ms, max {:.3} ms",
            times[times.len() / 2],
            times[times.len() * 95 / 100],
            times[times.len() - 1]
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    if args.first().is_some_and(|a| a == "--real") {
        let dirs: Vec<PathBuf> = args[1..]
            .iter()
            .filter(|a| *a != "-v")
            .map(PathBuf::from)
            .collect();
        real(&dirs, verbose);
        return;
    }
    let dir = args
        .iter()
        .find(|a| *a != "-v")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus")));
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

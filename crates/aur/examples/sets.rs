//! The audit on a set of real packages, per repository (not a test; bench/aur/README.md):
//!
//! `cargo run --release -p archgate-aur --example sets -- SETDIR [-v] [--show ID]`
//!
//! SETDIR holds one directory per repository, each holding package directories (a directory,
//! or a symlink to one, with a PKGBUILD) — the shape `bench/aur/corpus.sh` builds. Prints
//! ok / review / dangerous per repository and in all, how often each finding at medium or above
//! stands behind a non-ok verdict, every real malicious sample's verdict (the committed corpus's
//! `malicious/`), and the median and p95 time of one audit. `-v` lists every non-ok package
//! with its findings; `--show ID` lists only the packages with finding ID at medium or above.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use archgate_aur::Verdict;
use archgate_aur::audit::Severity;

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .filter(|p| {
                    !p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[derive(Default)]
struct Tally {
    ok: usize,
    review: usize,
    dangerous: usize,
    errors: usize,
}

impl Tally {
    fn add(&mut self, v: Verdict) {
        match v {
            Verdict::Ok => self.ok += 1,
            Verdict::Review => self.review += 1,
            Verdict::Dangerous => self.dangerous += 1,
        }
    }
    fn line(&self, name: &str) -> String {
        let n = (self.ok + self.review + self.dangerous).max(1) as f64;
        format!(
            "| {name:<32} | {:>6} | {:>6} ({:>4.1}%) | {:>6} ({:>4.1}%) | {:>6} ({:>4.1}%) |{}",
            self.ok + self.review + self.dangerous,
            self.ok,
            self.ok as f64 * 100.0 / n,
            self.review,
            self.review as f64 * 100.0 / n,
            self.dangerous,
            self.dangerous as f64 * 100.0 / n,
            if self.errors > 0 {
                format!(" {} unreadable", self.errors)
            } else {
                String::new()
            }
        )
    }
}

fn serious(r: &archgate_aur::AuditReport) -> Vec<String> {
    r.findings
        .iter()
        .filter(|f| f.severity >= Severity::Medium)
        .map(|f| format!("{}({})@{}:{}", f.id, f.severity.as_str(), f.file, f.line))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let show = args
        .iter()
        .position(|a| a == "--show")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let Some(set) = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with('-') && (*i == 0 || args[i - 1] != "--show"))
        .map(|(_, a)| PathBuf::from(a))
    else {
        eprintln!("usage: sets SETDIR [-v] [--show ID]");
        std::process::exit(2);
    };
    let mut all = Tally::default();
    let mut rows = Vec::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut times = Vec::new();
    for repo in subdirs(&set) {
        let name = repo
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .replace('+', "/");
        let mut t = Tally::default();
        for pkg in subdirs(&repo) {
            let Ok(input) = archgate_aur::load_path(&pkg) else {
                t.errors += 1;
                all.errors += 1;
                continue;
            };
            let start = Instant::now();
            let r = archgate_aur::audit(&input);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            times.push(ms);
            // A package that takes long is named: the audit must stay fast on every input.
            if ms > 1000.0 {
                eprintln!("slow: {} took {ms:.0} ms", pkg.display());
            }
            t.add(r.verdict);
            all.add(r.verdict);
            if r.verdict == Verdict::Ok {
                continue;
            }
            let mut ids: Vec<(&str, &str)> = r
                .findings
                .iter()
                .filter(|f| f.severity >= Severity::Medium)
                .map(|f| (f.id, f.severity.as_str()))
                .collect();
            ids.sort_unstable();
            ids.dedup();
            for (id, sev) in &ids {
                *by_id
                    .entry(format!("{} {id}({sev})", r.verdict.as_str()))
                    .or_default() += 1;
            }
            let shown = show
                .as_deref()
                .is_some_and(|s| ids.iter().any(|(id, _)| *id == s));
            if verbose || shown {
                println!(
                    "{} {}/{} {}",
                    r.verdict.as_str(),
                    name,
                    pkg.file_name().unwrap_or_default().to_string_lossy(),
                    serious(&r).join(" ")
                );
                for f in r.findings.iter().filter(|f| f.severity >= Severity::Medium) {
                    if show.as_deref().is_none_or(|s| s == f.id) {
                        println!("    {} {}:{} `{}`", f.id, f.file, f.line, f.snippet);
                        if show.is_some() {
                            println!("      {}", f.why);
                        }
                    }
                }
            }
        }
        rows.push(t.line(&name));
    }
    println!(
        "\n| repository                       | pkgs   | ok              | review          | dangerous       |"
    );
    println!(
        "|----------------------------------|--------|-----------------|-----------------|-----------------|"
    );
    for r in &rows {
        println!("{r}");
    }
    println!("{}", all.line("all"));
    println!("\nfindings (medium or above) behind non-ok verdicts, packages per finding:");
    let mut ids: Vec<_> = by_id.into_iter().collect();
    ids.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    for (k, v) in ids {
        println!("  {v:>5}  {k}");
    }
    times.sort_by(f64::total_cmp);
    if !times.is_empty() {
        println!(
            "\naudit time over {} packages: median {:.3} ms, p95 {:.3} ms, max {:.3} ms",
            times.len(),
            times[times.len() / 2],
            times[times.len() * 95 / 100],
            times[times.len() - 1]
        );
    }
    let mal = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/malicious");
    let (mut n, mut caught) = (0, 0);
    let mut missed = Vec::new();
    for s in subdirs(&mal) {
        n += 1;
        match archgate_aur::corpus::judge_sample(&s) {
            Ok(r) if r.verdict == Verdict::Dangerous => caught += 1,
            Ok(r) => missed.push(format!(
                "{} -> {}",
                s.file_name().unwrap_or_default().to_string_lossy(),
                r.verdict.as_str()
            )),
            Err(e) => missed.push(format!("{}: {e}", s.display())),
        }
    }
    println!("malicious samples dangerous: {caught}/{n}");
    for m in missed {
        println!("  MISSED {m}");
    }
}

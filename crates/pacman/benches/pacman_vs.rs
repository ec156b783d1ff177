//! archgate-pacman against real pacman on a generated world (see bench/pacman/README.md).
//!
//!     python3 bench/pacman/generate.py /tmp/agbench
//!     cargo bench -p archgate-pacman --bench pacman_vs -- /tmp/agbench
//!
//! Prints a table: cold load of every sync DB, warm `search` vs `pacman -Ss` (same results
//! checked), cold `owner` vs `pacman -Qo`. Real pacman is run as a process for comparison,
//! which is why this file may spawn (only tests and benchmarks do, outside crates/exec).
#![allow(clippy::disallowed_methods, clippy::print_stdout)]

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use archgate_pacman::search::TermMode;
use archgate_pacman::{LocalDb, PacmanConf, Snapshot, SyncRepo};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(n);
    let mut last = None;
    for _ in 0..n {
        let start = Instant::now();
        let out = f();
        times.push(start.elapsed());
        last = Some(out);
    }
    (median(times), last.expect("n > 0"))
}

fn pacman(conf: &Path, args: &[&str]) -> String {
    let out = Command::new("pacman")
        .arg("--config")
        .arg(conf)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .expect("run pacman");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// CPU time of the calling thread (Linux `/proc/thread-self/schedstat`, nanoseconds).
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = text
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Duration::from_nanos(ns)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn row(what: &str, ours: Duration, theirs: Option<Duration>, check: &str) {
    let (t, ratio) = match theirs {
        Some(t) => (
            ms(t),
            format!("{:.1}x", t.as_secs_f64() / ours.as_secs_f64()),
        ),
        None => ("-".into(), "-".into()),
    };
    println!(
        "| {what:<44} | {:>11} | {t:>11} | {ratio:>8} | {check:<14} |",
        ms(ours)
    );
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("BENCH_DIR").map(PathBuf::from))
        .expect("usage: pacman_vs OUTDIR (made by bench/pacman/generate.py)");
    let conf_path = dir.join("pacman.conf");
    let conf = PacmanConf::load(&conf_path).expect("pacman.conf");
    let repos: Vec<(String, PathBuf)> = conf
        .repos
        .iter()
        .map(|r| (r.name.clone(), conf.sync_db_path(&r.name, "db")))
        .collect();

    println!(
        "| {:<44} | {:>11} | {:>11} | {:>8} | {:<14} |",
        "measure (median)", "archgate", "pacman", "ratio", "same result"
    );
    println!(
        "|{:-<46}|{:-<13}|{:-<13}|{:-<10}|{:-<16}|",
        "", "", "", "", ""
    );

    let (load, count) = time(10, || {
        let (repos, _) = archgate_pacman::db::load_repos(&conf, None).expect("sync dbs");
        repos.iter().map(|r| r.packages.len()).sum::<usize>()
    });
    row(
        &format!("cold load of all sync DBs ({count} pkgs)"),
        load,
        None,
        "-",
    );
    let (serial, _) = time(5, || {
        repos
            .iter()
            .map(|(name, path)| SyncRepo::load(name, path).expect("sync db").packages.len())
            .sum::<usize>()
    });
    row(
        "  the same, one repository after another",
        serial,
        None,
        "-",
    );
    // Wall time on a busy machine overstates the work; this thread's CPU time does not.
    let cpu_before = thread_cpu();
    for (name, path) in &repos {
        SyncRepo::load(name, path).expect("sync db");
    }
    row(
        "  the same, CPU time of the loading thread",
        thread_cpu() - cpu_before,
        None,
        "-",
    );
    let (inflate, bytes) = time(5, || {
        repos
            .iter()
            .map(|(_, path)| {
                let file = std::fs::File::open(path).expect("db");
                let mut out = Vec::new();
                flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file))
                    .read_to_end(&mut out)
                    .expect("gzip");
                out.len()
            })
            .sum::<usize>()
    });
    row(
        &format!("  of which gunzip only ({} MiB)", bytes >> 20),
        inflate,
        None,
        "-",
    );
    let (local_load, local) = time(10, || LocalDb::load(&conf.db_path).expect("local db"));
    row(
        &format!("cold load of the local DB ({} pkgs)", local.packages.len()),
        local_load,
        None,
        "-",
    );

    let snap = Snapshot::load(Arc::new(conf.clone()), None).expect("snapshot");
    for query in ["python", "audio video", "^gtk-", "lib.*so", "editor-1234"] {
        let (ours_t, ours) = time(100, || {
            archgate_pacman::search::search(&snap, query, None, TermMode::Pacman, usize::MAX)
                .expect("search")
        });
        let terms: Vec<&str> = query.split_whitespace().collect();
        let mut args = vec!["-Ss"];
        args.extend(&terms);
        let (theirs_t, out) = time(5, || pacman(&conf_path, &args));
        let theirs: BTreeSet<String> = out
            .lines()
            .filter(|l| !l.starts_with(' ') && !l.is_empty())
            .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
            .collect();
        let got: BTreeSet<String> = ours
            .results
            .iter()
            .map(|h| format!("{}/{}", h.repo, h.name))
            .collect();
        let check = if got == theirs {
            format!("yes ({})", got.len())
        } else {
            "NO".into()
        };
        row(
            &format!("warm search {query:?} vs pacman -Ss"),
            ours_t,
            Some(theirs_t),
            &check,
        );
    }

    // Cold owner: a fresh local database (desc + every files entry) per query, as the first
    // call after start would do; sync databases are not needed for it.
    let mut local_conf = conf.clone();
    local_conf.repos.clear();
    let local_conf = Arc::new(local_conf);
    let target = local
        .packages
        .get(local.packages.len() / 2)
        .map(|p| format!("{}/usr/bin/{}", dir.join("root").display(), p.name))
        .expect("an installed package");
    let (owner_t, owner) = time(10, || {
        let snap = Snapshot::load(local_conf.clone(), None).expect("local snapshot");
        archgate_pacman::files::owner(&snap, &target).expect("owner")
    });
    let (qo_t, qo) = time(5, || pacman(&conf_path, &["-Qo", &target]));
    let ours = owner
        .owners
        .iter()
        .map(|o| format!("{} {}", o.name, o.version))
        .collect::<Vec<_>>()
        .join(",");
    let check = if qo.contains(&format!("is owned by {ours}")) {
        "yes"
    } else {
        "NO"
    };
    row(
        "cold owner (1,500 pkgs) vs pacman -Qo",
        owner_t,
        Some(qo_t),
        check,
    );
    let warm = Snapshot::load(local_conf, None).expect("local snapshot");
    archgate_pacman::files::owner(&warm, &target).expect("owner");
    let (warm_t, _) = time(50, || {
        archgate_pacman::files::owner(&warm, &target).expect("owner")
    });
    row("warm owner vs pacman -Qo", warm_t, Some(qo_t), "-");
}

//! The fuzz targets on stable: each is fed every seed of its corpus (fuzz/seeds.conf), then
//! `FUZZ_SMOKE_CASES` (default 10,000) inputs that proptest makes by mutating seeds (byte flips,
//! inserts, deletions, splices of two seeds, repeated chunks) or from scratch. A panic fails the
//! test with the shrunk input. This is a smoke run, not coverage-guided fuzzing: that needs
//! nightly and `fuzz/run.sh`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/ has a parent")
        .to_owned()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        panic!("seed directory {} is missing", dir.display());
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The seeds of `target`, as seeds.conf lists them.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = repo_root();
    let conf = std::fs::read_to_string(root.join("fuzz/seeds.conf")).expect("seeds.conf");
    let line = conf
        .lines()
        .find(|l| l.split_whitespace().next() == Some(target))
        .unwrap_or_else(|| panic!("{target} is not in seeds.conf"));
    let mut files = Vec::new();
    for dir in line.split_whitespace().skip(1) {
        files_under(&root.join(dir), &mut files);
    }
    files.sort();
    let seeds: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).expect("read seed"))
        .collect();
    assert!(!seeds.is_empty(), "{target} has no seeds");
    seeds
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Splice(usize, usize, usize),
    Repeat(usize, usize, u8),
    Truncate(usize),
}

/// Bytes that matter to the parsers under test.
fn interesting_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        any::<u8>(),
        prop::sample::select(b"\0\n\r\t \"'\\{}[]:,=%$`;|&<>()#-/.0123456789".to_vec()),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), interesting_byte()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        (
            any::<usize>(),
            prop::collection::vec(interesting_byte(), 1..16)
        )
            .prop_map(|(i, v)| Mutation::Insert(i, v)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
        (any::<usize>(), any::<usize>(), 1usize..256)
            .prop_map(|(other, at, n)| Mutation::Splice(other, at, n)),
        (any::<usize>(), 1usize..32, 1u8..20).prop_map(|(i, n, k)| Mutation::Repeat(i, n, k)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(seeds: &[Vec<u8>], base: usize, muts: &[Mutation]) -> Vec<u8> {
    let mut d = seeds[base % seeds.len()].clone();
    for m in muts {
        let len = d.len();
        match m {
            Mutation::Flip(i, b) if len > 0 => d[i % len] = *b,
            Mutation::Insert(i, v) => {
                let at = i % (len + 1);
                d.splice(at..at, v.iter().copied());
            }
            Mutation::Delete(i, n) if len > 0 => {
                let at = i % len;
                d.drain(at..(at + n).min(len));
            }
            Mutation::Splice(other, at, n) => {
                let o = &seeds[other % seeds.len()];
                if !o.is_empty() {
                    let from = at % o.len();
                    let chunk = &o[from..(from + n).min(o.len())];
                    let to = at % (len + 1);
                    d.splice(to..to, chunk.iter().copied());
                }
            }
            Mutation::Repeat(i, n, k) if len > 0 => {
                let at = i % len;
                let chunk = d[at..(at + n).min(len)].to_vec();
                for _ in 0..*k {
                    d.splice(at..at, chunk.iter().copied());
                }
            }
            Mutation::Truncate(i) => d.truncate(i % (len + 1)),
            _ => {}
        }
    }
    d
}

fn input(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let n = seeds.len();
    prop_oneof![
        8 => (0..n, prop::collection::vec(mutation(), 1..8))
            .prop_map(move |(b, m)| apply(&seeds, b, &m)),
        1 => prop::collection::vec(any::<u8>(), 0..512),
        1 => prop::collection::vec(interesting_byte(), 0..512),
    ]
}

fn cases() -> u32 {
    std::env::var("FUZZ_SMOKE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn smoke(name: &str) {
    let target = archgate_fuzz::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("target")
        .1;
    let seeds = seeds(name);
    for s in &seeds {
        target(s);
    }
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..Config::default()
    });
    let result = runner.run(&input(seeds.clone()), |data| {
        std::panic::catch_unwind(|| target(&data)).map_err(|e| {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            TestCaseError::fail(format!("{name} panicked: {msg}"))
        })
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    eprintln!(
        "{name}: {} seeds and {} generated inputs, no crash",
        seeds.len(),
        cases()
    );
}

#[test]
fn mcp_message() {
    smoke("mcp_message");
}

#[test]
fn pkgbuild_audit() {
    smoke("pkgbuild_audit");
}

#[test]
fn config() {
    smoke("config");
}

#[test]
fn sync_db() {
    smoke("sync_db");
}

#[test]
fn hyprland_ipc() {
    smoke("hyprland_ipc");
}

#[test]
fn desktop_text() {
    smoke("desktop_text");
}

#[test]
fn audit_line() {
    smoke("audit_line");
}

#[test]
fn every_target_has_a_test_and_a_seed_line() {
    let conf = std::fs::read_to_string(repo_root().join("fuzz/seeds.conf")).expect("seeds.conf");
    let src = std::fs::read_to_string(file!()).unwrap_or_default();
    for (name, _) in archgate_fuzz::TARGETS {
        assert!(
            conf.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name} has no line in seeds.conf"
        );
        assert!(
            repo_root()
                .join(format!("fuzz/fuzz_targets/{name}.rs"))
                .exists(),
            "{name} has no cargo-fuzz target"
        );
        assert!(
            src.is_empty() || src.contains(&format!("smoke(\"{name}\")")),
            "{name} has no smoke test"
        );
    }
}

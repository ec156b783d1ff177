//! Invariants of the source tree, checked under `cargo test` (rust-analyzer's tidy, in small).

use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    crate::manifest_dir().join("../..").canonicalize().unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name();
        let name = name.to_string_lossy();
        if p.is_dir() {
            if name != "target"
                && !name.starts_with('.')
                && name != "node_modules"
                && name != "fuzz"
            {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&workspace().join("crates"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect()
}

fn rel(p: &Path) -> String {
    p.strip_prefix(workspace()).unwrap().display().to_string()
}

/// Only the gate issues permits: without one no tool can start a program.
#[test]
fn permits_are_issued_only_by_the_gate() {
    let needle = ["__issued", "_by_gate("].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            let r = rel(p);
            t.contains(&needle)
                && r != "crates/core/src/gate/mod.rs"
                && !r.starts_with("crates/exec/")
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "permits issued outside the gate: {offenders:?}"
    );
}

/// Every source file says what it is about in its first line.
#[test]
fn every_source_file_starts_with_a_module_doc() {
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, t)| {
            let first = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("#!["))
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "files without a //! header: {offenders:?}"
    );
}

/// Only archgate-exec may depend on spawning; no crate silences the lint wholesale.
#[test]
fn spawn_lint_is_allowed_only_in_exec_and_tests() {
    let needle = ["allow(clippy::", "disallowed_methods)"].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            let r = rel(p);
            t.contains(&needle)
                && !r.starts_with("crates/exec/src/")
                && !r.contains("/tests/")
                && !r.contains("/benches/")
                && !r.contains("/examples/")
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "process spawning allowed outside exec: {offenders:?}"
    );
}

/// No unsafe anywhere: each crate root forbids it (the workspace lint does too).
#[test]
fn no_unsafe_blocks() {
    let needle = ["unsafe", " {"].concat();
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(_, t)| t.contains(&needle))
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(offenders.is_empty(), "{offenders:?}");
}

/// The body of `pub struct NAME { … }` in `src` (to its first closing brace at line start).
fn struct_body<'a>(src: &'a str, name: &str) -> &'a str {
    let head = format!("pub struct {name} {{");
    let start = src.find(&head).unwrap_or_else(|| panic!("no {head}")) + head.len();
    let len = src[start..].find("\n}").expect("the struct's end");
    &src[start..start + len]
}

/// `Gate` is no service locator: none of its fields is public (the binary reads through
/// accessors and cannot swap the audit log, the broker or the person's state).
#[test]
fn the_gate_has_no_public_field() {
    let src = std::fs::read_to_string(workspace().join("crates/core/src/gate/mod.rs")).unwrap();
    let body = struct_body(&src, "Gate");
    let public: Vec<&str> = body
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("pub ") || l.starts_with("pub("))
        .collect();
    assert!(public.is_empty(), "public fields of Gate: {public:?}");
    // The check itself sees fields.
    assert!(body.contains("person: Arc<PersonState>"), "{body}");
}

/// The person's setters are reached only from the person's channels: the CLI's commands, the
/// control socket, the approval page and what they share (`person/`), through the
/// `PersonChannel` the binary takes from the gate once (`app/mod.rs`). No tool, no server module.
#[test]
fn only_the_persons_channels_hold_the_person_channel() {
    let allowed = |r: &str| {
        ["crates/core/src/", "crates/core/tests/"]
            .iter()
            .chain(&[
                "crates/archgate/src/commands/",
                "crates/archgate/src/channels/",
                "crates/archgate/src/person/",
            ])
            .any(|dir| r.starts_with(dir))
            || r == "crates/archgate/src/app/mod.rs"
    };
    let offenders: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            (t.contains("PersonChannel")
                || t.contains("person_channel")
                || t.contains(".state().acknowledge"))
                && !allowed(&rel(p))
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        offenders.is_empty(),
        "the person's channel reached outside the person's channels: {offenders:?}"
    );
    // Nor does anything open the person's state beside the gate's own: a tool reads what it
    // may know of it (the acknowledged routes) from its `CallCx`.
    let load = ["PersonState", "::load("].concat();
    let opened: Vec<String> = sources()
        .into_iter()
        .filter(|(p, t)| {
            let r = rel(p);
            t.contains(&load)
                && !r.starts_with("crates/core/")
                && r != "crates/archgate/src/app/mod.rs"
        })
        .map(|(p, _)| rel(&p))
        .collect();
    assert!(
        opened.is_empty(),
        "the person's state opened by: {opened:?}"
    );
}

/// The binary's modules are layered by role: each uses only those before it in this list (no
/// circle in the binary crate). `crate::X` names are what count; `lib.rs` states the same order.
#[test]
fn the_binarys_modules_are_layered_by_role() {
    const ORDER: [&str; 7] = [
        "cli", "tools", "app", "server", "person", "channels", "commands",
    ];
    let src = workspace().join("crates/archgate/src");
    let mut offenders = Vec::new();
    let mut seen = 0;
    for (p, t) in sources() {
        let Ok(inside) = p.strip_prefix(&src) else {
            continue;
        };
        let top = inside
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs");
        let Some(level) = ORDER.iter().position(|m| *m == top) else {
            continue;
        };
        seen += 1;
        for (i, _) in t.match_indices("crate::") {
            let name: String = t[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if let Some(used) = ORDER.iter().position(|m| *m == name)
                && used > level
            {
                offenders.push(format!("{} uses crate::{name}", rel(&p)));
            }
        }
    }
    assert!(seen > 50, "only {seen} files of the binary were read");
    assert!(
        offenders.is_empty(),
        "a module uses a later role: {offenders:#?}"
    );
}

/// The integration-test binaries cargo builds for the crate at `dir`: each `tests/NAME.rs`, each
/// `tests/NAME/main.rs` and each `[[test]]` of its Cargo.toml with a path of its own.
fn test_binaries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir.join("tests")) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_file() && p.extension().is_some_and(|x| x == "rs") {
                found.push(rel(&p));
            } else if p.join("main.rs").is_file() {
                found.push(rel(&p.join("main.rs")));
            }
        }
    }
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    for section in manifest.split("[[test]]").skip(1) {
        let section = section.split("\n[").next().unwrap_or("");
        let path = section
            .lines()
            .find_map(|l| l.trim().strip_prefix("path"))
            .map(|v| {
                v.trim_start_matches([' ', '='])
                    .trim()
                    .trim_matches('"')
                    .to_owned()
            });
        let path = path.map(|p| rel(&dir.join(p)));
        if !path.as_ref().is_some_and(|p| found.contains(p)) {
            found.push(path.unwrap_or_else(|| format!("[[test]] in {}", rel(dir))));
        }
    }
    found.sort();
    found
}

/// One integration-test binary per crate: every test of a crate links once, shares one harness
/// and one set of timeouts (a second `tests/*.rs` or `tests/*/main.rs` would be a second binary).
#[test]
fn every_crate_has_at_most_one_integration_test_binary() {
    let mut seen = 0;
    let mut offenders = Vec::new();
    for e in std::fs::read_dir(workspace().join("crates"))
        .unwrap()
        .flatten()
    {
        let dir = e.path();
        if !dir.join("Cargo.toml").is_file() {
            continue;
        }
        let bins = test_binaries(&dir);
        seen += bins.len();
        if bins.len() > 1 {
            offenders.push(bins);
        }
    }
    assert!(
        offenders.is_empty(),
        "crates with more than one test binary: {offenders:?}"
    );
    // The check itself sees the binaries (this file is in one).
    assert!(seen >= 5, "found only {seen} test binaries");
}

/// archgate's own binary assembles no extension (`crates/archgate/src/app/extension.rs`): nothing
/// in its crate implements `Extension`, and the daemon takes one only through
/// `serve_http_extended`, which only other binaries call (the conformance suite's).
#[test]
fn the_shipped_binary_builds_no_extension() {
    let src = workspace().join("crates/archgate/src");
    let mut implemented = Vec::new();
    let mut extended = Vec::new();
    for (p, t) in sources() {
        if !p.starts_with(&src) {
            continue;
        }
        for line in t.lines() {
            if line.trim_start().starts_with("impl") && line.contains("Extension for ") {
                implemented.push(format!("{}: {line}", rel(&p)));
            }
            if line.contains("serve_http_extended(")
                && !line.contains("pub fn serve_http_extended(")
                || line.contains("run_daemon_extended(")
                    && !line.contains("pub async fn run_daemon_extended(")
                    && !p.ends_with("lib.rs")
            {
                extended.push(format!("{}: {line}", rel(&p)));
            }
        }
    }
    assert!(implemented.is_empty(), "{implemented:#?}");
    assert!(extended.is_empty(), "{extended:#?}");
}

/// The names a crate's manifest depends on (normal, dev and build), comments left out.
fn dependencies(krate: &str) -> Vec<String> {
    let toml =
        std::fs::read_to_string(workspace().join("crates").join(krate).join("Cargo.toml")).unwrap();
    let mut in_deps = false;
    let mut out = Vec::new();
    for line in toml.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.contains("dependencies");
            continue;
        }
        if in_deps && !line.starts_with('#') && !line.is_empty() {
            let name: String = line
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            out.push(name);
        }
    }
    out
}

/// The code lines of a crate's sources (comment lines left out).
fn code_lines(krate: &str) -> Vec<(String, String)> {
    let dir = workspace().join("crates").join(krate).join("src");
    sources()
        .into_iter()
        .filter(|(p, _)| p.starts_with(&dir))
        .flat_map(|(p, t)| {
            let file = rel(&p);
            t.lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| (file.clone(), l.to_owned()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// policy is pure: no I/O, no async, no clock (time is passed in), and nothing beneath it but
/// serde and thiserror.
#[test]
fn the_policy_crate_does_no_io_no_async_and_reads_no_clock() {
    let deps = dependencies("policy");
    assert!(deps.contains(&"serde".to_owned()), "{deps:?}");
    for d in &deps {
        assert!(
            ["serde", "serde_json", "thiserror", "toml"].contains(&d.as_str()),
            "policy depends on {d}"
        );
    }
    const FORBIDDEN: [&str; 9] = [
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "std::thread",
        "SystemTime",
        "Instant",
        "async ",
        ".await",
    ];
    let lines = code_lines("policy");
    assert!(
        lines.len() > 500,
        "only {} lines of policy read",
        lines.len()
    );
    let found: Vec<_> = lines
        .iter()
        .filter(|(_, l)| FORBIDDEN.iter().any(|f| l.contains(f)))
        .collect();
    assert!(
        found.is_empty(),
        "policy does I/O or reads time: {found:#?}"
    );
}

/// core knows nothing of MCP or HTTP, the domain crates nothing of MCP (nor of core).
#[test]
fn core_and_the_domain_crates_know_nothing_of_mcp() {
    for krate in ["core", "sysinfo", "pacman", "aur", "wiki", "desktop"] {
        let deps = dependencies(krate);
        assert!(!deps.is_empty(), "{krate}: no dependencies read");
        let mut banned = vec!["rmcp", "archgate-core"];
        if krate == "core" {
            banned = vec!["rmcp", "axum", "hyper", "http", "reqwest", "tower"];
        }
        for b in &banned {
            assert!(!deps.iter().any(|d| d == b), "{krate} depends on {b}");
        }
        let found: Vec<_> = code_lines(krate)
            .into_iter()
            .filter(|(_, l)| {
                banned
                    .iter()
                    .any(|b| l.contains(&format!("{}::", b.replace('-', "_"))))
            })
            .collect();
        assert!(found.is_empty(), "{krate} reaches {banned:?}: {found:#?}");
    }
}

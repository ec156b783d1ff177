//! The fuzz targets, as plain functions over bytes: cargo-fuzz drives them with libFuzzer
//! (`fuzz_targets/*.rs`, nightly), and `tests/smoke.rs` feeds them the seed corpora and proptest
//! mutations on stable. Each must never panic on any input, and checks what must hold of what it
//! parsed (round trips, idempotence, line numbers inside the text).
//!
//! | target | what it reaches |
//! | --- | --- |
//! | `mcp_message` | an HTTP request body as the server reads it: rmcp's `ClientJsonRpcMessage`, then a `tools/call`'s `arguments` as every domain argument type, the privilege scan over its words, schema compaction |
//! | `pkgbuild_audit` | `archgate_aur::audit` of a PKGBUILD (and the same text as an install script and .SRCINFO) |
//! | `config` | `archgate_core::config::load_str` (both stages) |
//! | `sync_db` | `archgate_pacman::desc` entries (`desc`, `files`), dependency strings, `vercmp`, and a sync DB's tar stream (`archive::parse_tar`) |
//! | `hyprland_ipc` | the real `HyprlandClient` reading fuzzed replies from a Unix socket (`state`, `version`) |
//! | `desktop_text` | the other text parsers of `archgate_desktop`: `qs ipc show`, the Omarchy command registry, `wpctl`, `brightnessctl`, `playerctl` output |
//! | `audit_line` | a line of archgate's activity log (`audit::reader::parse_line`), as `archgate log` reads it |

#![forbid(unsafe_code)]

mod hypr;

use serde_json::Value;

pub use hypr::hyprland_ipc;

/// An HTTP request body (JSON-RPC) as far as archgate parses it before a tool runs.
pub fn mcp_message(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(msg) = serde_json::from_str::<rmcp::model::ClientJsonRpcMessage>(text) {
        // What the server understood serializes, and reads back as the same message.
        let v = serde_json::to_value(&msg).expect("a parsed message serializes");
        let again: rmcp::model::ClientJsonRpcMessage = serde_json::from_value(v.clone())
            .unwrap_or_else(|e| panic!("re-parsing a serialized message failed: {e}: {v}"));
        assert_eq!(
            serde_json::to_value(&again).expect("serializes"),
            v,
            "message round trip"
        );
    }
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let args = v
        .pointer("/params/arguments")
        .cloned()
        .unwrap_or_else(|| v.clone());
    tool_args(&args);
    // The privilege scan sees every string in the arguments.
    let mut words = Vec::new();
    strings(&args, &mut words);
    let _ = archgate_policy::elevates_privilege(&words);
    let _ = archgate_desktop::targets_archgate(archgate_desktop::Invocation::Route {
        words: &words,
        args: &[],
    });
    // Schema compaction never changes a compacted schema again.
    let mut once = v;
    archgate_core::tool::compact(&mut once);
    let mut twice = once.clone();
    archgate_core::tool::compact(&mut twice);
    assert_eq!(once, twice, "compact is idempotent");
}

fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}

/// Every argument type the domain crates give agents, deserialized from one value.
fn tool_args(args: &Value) {
    fn try_as<T: serde::de::DeserializeOwned>(v: &Value) -> bool {
        serde_json::from_value::<T>(v.clone()).is_ok()
    }
    use archgate_aur::args as aur;
    use archgate_pacman::args as pac;
    try_as::<aur::SearchArgs>(args);
    try_as::<aur::InfoArgs>(args);
    try_as::<aur::PackageArgs>(args);
    try_as::<aur::DiffArgs>(args);
    try_as::<pac::SearchArgs>(args);
    try_as::<pac::InfoArgs>(args);
    try_as::<pac::FilesArgs>(args);
    try_as::<pac::OwnerArgs>(args);
    try_as::<pac::DepsArgs>(args);
    try_as::<pac::ListArgs>(args);
    try_as::<pac::LogArgs>(args);
    try_as::<pac::InstallPlanArgs>(args);
    try_as::<archgate_desktop::AudioAction>(args);
    try_as::<archgate_desktop::LaunchTarget>(args);
    try_as::<archgate_desktop::CaptureTarget>(args);
    try_as::<archgate_desktop::ThemeAction>(args);
    try_as::<archgate_desktop::BackgroundAction>(args);
    try_as::<archgate_desktop::BrightnessAction>(args);
    try_as::<archgate_desktop::MediaAction>(args);
    // A small PKGBUILD audit input goes all the way through the audit.
    if let Ok(input) = serde_json::from_value::<archgate_aur::AuditInput>(args.clone())
        && input.pkgbuild.len() < 4096
    {
        let _ = archgate_aur::audit(&input);
    }
}

/// A PKGBUILD (and the same text as an install script and a .SRCINFO): the static audit.
pub fn pkgbuild_audit(data: &[u8]) {
    let text = String::from_utf8_lossy(data).into_owned();
    let report = archgate_aur::audit(&archgate_aur::AuditInput::new(text.clone()));
    let lines = text.lines().count().max(1);
    for f in &report.findings {
        let json = serde_json::to_value(f).expect("a finding serializes");
        if json["file"] == "PKGBUILD"
            && let Some(line) = json["line"].as_u64()
        {
            assert!(
                line as usize <= lines + 1,
                "finding at line {line} of a {lines}-line PKGBUILD: {json}"
            );
        }
    }
    let _ = serde_json::to_string(&report).expect("a report serializes");
    let _ = archgate_aur::audit(&archgate_aur::AuditInput {
        pkgbuild: "pkgname=x\npkgver=1\npkgrel=1\n".into(),
        install_scripts: vec![archgate_aur::ScriptFile {
            name: "x.install".into(),
            content: text.clone(),
        }],
        srcinfo: Some(text),
    });
}

/// config.toml text: both stages; never fails, problems point inside the text.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let loaded = archgate_core::config::load_str(text);
    let lines = text.split('\n').count();
    for p in &loaded.problems {
        if let Some(l) = p.line {
            assert!(l >= 1 && l <= lines, "problem at line {l} of {lines}: {p}");
        }
        let _ = p.to_string();
    }
    if !loaded.parsed {
        assert!(
            loaded.problems.iter().any(|p| p.fatal_to_file),
            "a file that did not parse says why"
        );
    }
}

/// Sync DB entries: `desc` and `files` texts, dependency strings, versions, and the bytes as a
/// database's (uncompressed) tar stream.
pub fn sync_db(data: &[u8]) {
    use archgate_pacman::{desc, version};
    if let Ok(pkg) = desc::parse_desc(data) {
        assert!(!pkg.name.is_empty() && !pkg.version.is_empty());
    }
    let _ = desc::parse_files(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let mut prev: Option<&str> = None;
        for line in text.lines().take(64) {
            let _ = version::Depend::parse(line);
            if let Some(p) = prev {
                // vercmp is antisymmetric.
                let a = archgate_pacman::vercmp(p, line);
                let b = archgate_pacman::vercmp(line, p);
                assert_eq!(a, b.reverse(), "vercmp({p:?}, {line:?})");
            }
            prev = Some(line);
        }
    }
    let _ = archgate_pacman::archive::parse_tar(std::path::Path::new("fuzz.db"), data, true);
}

/// Desktop tool outputs archgate parses: Quickshell's `qs ipc show`, Omarchy's command registry,
/// `wpctl get-volume` / `wpctl status`, `brightnessctl -m`, `playerctl` metadata.
pub fn desktop_text(data: &[u8]) {
    let _ = archgate_desktop::Registry::parse(data);
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = archgate_desktop::shell::parse_ipc_show(text);
    let _ = archgate_desktop::audio::parse_get_volume(text);
    let _ = archgate_desktop::audio::parse_sinks(text);
    let _ = archgate_desktop::controls::parse_brightness(text);
    let _ = archgate_desktop::controls::parse_media(text);
}

/// One line of the activity log, as `archgate log` and the activity resource read it.
pub fn audit_line(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.split('\n') {
        let _ = archgate_core::audit::reader::parse_line(line);
    }
}

/// A fuzz target: bytes in, a panic on a bug.
pub type Target = fn(&[u8]);

/// Every target by name (for the smoke test and `replay`).
pub const TARGETS: &[(&str, Target)] = &[
    ("mcp_message", mcp_message),
    ("pkgbuild_audit", pkgbuild_audit),
    ("config", config),
    ("sync_db", sync_db),
    ("hyprland_ipc", hyprland_ipc),
    ("desktop_text", desktop_text),
    ("audit_line", audit_line),
];

/// `main` of a target built without libFuzzer: runs it over every file (or every file in every
/// directory) named on the command line, so a crash file reproduces on stable.
pub fn replay_main(target: Target) -> std::process::ExitCode {
    let mut n = 0usize;
    for arg in std::env::args_os().skip(1) {
        let path = std::path::PathBuf::from(arg);
        let files: Vec<_> = if path.is_dir() {
            std::fs::read_dir(&path)
                .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default()
        } else {
            vec![path]
        };
        for f in files {
            match std::fs::read(&f) {
                Ok(bytes) => {
                    eprintln!("replay {}", f.display());
                    target(&bytes);
                    n += 1;
                }
                Err(e) => eprintln!("cannot read {}: {e}", f.display()),
            }
        }
    }
    eprintln!(
        "replayed {n} input(s) without a crash (built without libFuzzer: this is a replay, not fuzzing)"
    );
    std::process::ExitCode::SUCCESS
}

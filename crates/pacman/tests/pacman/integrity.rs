//! `pkg_verify` against real `pacman -Qk` and `-Qkk` on a system installed by real pacman and
//! then damaged: files removed, edited (same size and time, different content), chmod-ed,
//! chown-ed, retimed, a file turned into a directory, a symlink retargeted, a shared directory's
//! mode changed, a backup file edited. pacman's own report, parsed, is the oracle.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use archgate_pacman::PacmanError;
use archgate_pacman::integrity::{Budget, Problem, VerifyResult, verify};

use crate::health_world::{World, fixture_pkg, pkg};

/// (package, path, problem) — every line pacman prints about one file.
type Lines = BTreeSet<(String, String, Problem)>;

/// What pacman printed: warnings (counted), backup notes (not counted), per-package totals.
struct PacmanReport {
    warnings: Lines,
    backup: Lines,
    totals: BTreeSet<(String, usize, usize)>,
}

fn problem(reason: &str) -> Problem {
    match reason {
        "No such file or directory" => Problem::Missing,
        "File type mismatch" => Problem::Type,
        "UID mismatch" => Problem::Uid,
        "GID mismatch" => Problem::Gid,
        "Permissions mismatch" => Problem::Mode,
        "Symlink path mismatch" => Problem::Link,
        "Modification time mismatch" => Problem::Mtime,
        "Size mismatch" => Problem::Size,
        "MD5 checksum mismatch" => Problem::Md5,
        "SHA256 checksum mismatch" => Problem::Sha256,
        other => panic!("pacman reason not mapped: {other:?}"),
    }
}

/// `PKG: PATH (REASON)` → (PKG, PATH, problem).
fn file_line(rest: &str) -> (String, String, Problem) {
    let (pkg, rest) = rest.split_once(": ").unwrap();
    let open = rest.rfind(" (").unwrap();
    let reason = rest[open + 2..].strip_suffix(')').unwrap();
    (pkg.to_owned(), rest[..open].to_owned(), problem(reason))
}

fn pacman_check(w: &World, args: &[&str]) -> PacmanReport {
    let (_, out, err) = w.pacman_output(args);
    let mut r = PacmanReport {
        warnings: BTreeSet::new(),
        backup: BTreeSet::new(),
        totals: BTreeSet::new(),
    };
    for line in out.lines().chain(err.lines()) {
        if let Some(rest) = line.strip_prefix("warning: ") {
            r.warnings.insert(file_line(rest));
        } else if let Some(rest) = line.strip_prefix("backup file: ") {
            r.backup.insert(file_line(rest));
        } else if let Some((pkg, rest)) = line.split_once(": ")
            && let Some((total, altered)) = rest.split_once(" total file")
        {
            let n = |s: &str| s.trim().parse::<usize>().unwrap();
            let altered = altered
                .trim_start_matches("s,")
                .trim_start_matches(',')
                .split_whitespace()
                .next()
                .unwrap();
            r.totals.insert((pkg.to_owned(), n(total), n(altered)));
        } else if !line.trim().is_empty() {
            panic!("unexpected pacman line: {line:?}");
        }
    }
    r
}

fn ours(result: &VerifyResult) -> PacmanReport {
    let mut r = PacmanReport {
        warnings: BTreeSet::new(),
        backup: BTreeSet::new(),
        totals: BTreeSet::new(),
    };
    for p in &result.packages {
        assert!(p.error.is_none(), "{:?}", p.error);
        assert_eq!(p.omitted, 0, "{}", p.name);
        for f in &p.findings {
            for pr in &f.problems {
                r.warnings.insert((p.name.clone(), f.path.clone(), *pr));
            }
        }
        for f in &p.backup_changed {
            for pr in &f.problems {
                r.backup.insert((p.name.clone(), f.path.clone(), *pr));
            }
        }
        r.totals.insert((p.name.clone(), p.files, p.altered));
    }
    r
}

fn assert_same(pacman: &PacmanReport, ours: &PacmanReport, result: &VerifyResult) {
    assert_eq!(ours.warnings, pacman.warnings, "warnings");
    assert_eq!(ours.backup, pacman.backup, "backup files");
    // pacman prints a total for every package; ours lists the packages with something to say.
    let pacman_listed: BTreeSet<_> = pacman
        .totals
        .iter()
        .filter(|(name, _, altered)| *altered > 0 || ours.backup.iter().any(|(p, _, _)| p == name))
        .cloned()
        .collect();
    assert_eq!(ours.totals, pacman_listed, "totals");
    assert_eq!(
        result.files,
        pacman.totals.iter().map(|t| t.1).sum::<usize>(),
        "files checked in all"
    );
}

/// Editor, its libraries and conf-keeper 1.1, damaged in every way pacman checks.
fn damaged_world() -> World {
    let w = World::new();
    w.install(&[
        fixture_pkg("zlib-lite-1.2.13-1-x86_64"),
        fixture_pkg("coreutils-mini-9.1-2-x86_64"),
        fixture_pkg("text-engine-0.9.1-3-x86_64"),
        fixture_pkg("editor-one-2:3.0-1-x86_64"),
        pkg("conf-keeper", "1.1"),
    ]);
    // Missing.
    std::fs::remove_file(w.at("usr/bin/mini-cat")).unwrap();
    // Same size and time, other content: only the checksums can tell.
    let data = w.at("usr/share/text-engine/data.txt");
    let before = std::fs::metadata(&data).unwrap();
    let text = std::fs::read_to_string(&data).unwrap();
    std::fs::write(&data, text.to_uppercase()).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&data)
        .unwrap()
        .set_modified(before.modified().unwrap())
        .unwrap();
    // Mode, owner, time.
    chmod(&w.at("usr/bin/editor-one"), 0o700);
    chmod(&w.at("usr/share"), 0o700);
    std::os::unix::fs::chown(w.at("usr/lib/libzlite.so.1"), Some(5), Some(7)).unwrap();
    let old = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(978_307_200);
    std::fs::File::options()
        .write(true)
        .open(w.at("usr/bin/mini-ls"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    // A file that became a directory.
    let readme = w.at("usr/share/doc/zlib-lite/README");
    std::fs::remove_file(&readme).unwrap();
    std::fs::create_dir(&readme).unwrap();
    // A symlink pointing elsewhere.
    let link = w.at("usr/share/keeper/link");
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("target-b", &link).unwrap();
    // The person edited a backup file: expected, reported apart.
    let conf = w.at("etc/keeper.conf");
    let mut t = std::fs::read_to_string(&conf).unwrap();
    t.push_str("# mine\n");
    std::fs::write(&conf, t).unwrap();
    w
}

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn full_check_equals_pacman_qkk_on_a_damaged_system() {
    if !crate::support::is_root() {
        // The installed files must be root's, as pacman recorded them: a normal user's world is
        // theirs, and every file would differ in owner. CI runs as root.
        return eprintln!("skipped: needs root (files owned as pacman recorded them)");
    }
    let w = damaged_world();
    let snap = w.snapshot();
    let result = verify(&snap, None, true, None, Budget::default()).unwrap();
    let pacman = pacman_check(&w, &["-Qkk"]);
    // The oracle saw every kind of damage made above.
    for p in [
        Problem::Missing,
        Problem::Type,
        Problem::Uid,
        Problem::Gid,
        Problem::Mode,
        Problem::Link,
        Problem::Mtime,
        Problem::Md5,
        Problem::Sha256,
    ] {
        assert!(
            pacman.warnings.iter().any(|l| l.2 == p),
            "pacman saw no {p:?}"
        );
    }
    assert!(!pacman.backup.is_empty());
    assert_same(&pacman, &ours(&result), &result);
    assert_eq!(result.next, None);
    assert_eq!(result.checked, 5);
    // One package at a time gives the same as pacman -Qkk NAME.
    for name in ["text-engine", "conf-keeper", "editor-one"] {
        let one = verify(&snap, Some(name), true, None, Budget::default()).unwrap();
        assert_same(&pacman_check(&w, &["-Qkk", name]), &ours(&one), &one);
    }
}

#[test]
fn quick_check_equals_pacman_qk() {
    if !crate::support::is_root() {
        // The installed files must be root's, as pacman recorded them: a normal user's world is
        // theirs, and every file would differ in owner. CI runs as root.
        return eprintln!("skipped: needs root (files owned as pacman recorded them)");
    }
    let w = damaged_world();
    let snap = w.snapshot();
    let result = verify(&snap, None, false, None, Budget::default()).unwrap();
    let pacman = pacman_check(&w, &["-Qk"]);
    assert!(pacman.warnings.iter().any(|l| l.2 == Problem::Missing));
    assert!(pacman.warnings.iter().any(|l| l.2 == Problem::Type));
    assert_same(&pacman, &ours(&result), &result);
    assert_eq!(result.mode, "quick");
}

#[test]
fn an_intact_system_has_nothing_to_report_and_a_damaged_one_the_command() {
    if !crate::support::is_root() {
        // The installed files must be root's, as pacman recorded them: a normal user's world is
        // theirs, and every file would differ in owner. CI runs as root.
        return eprintln!("skipped: needs root (files owned as pacman recorded them)");
    }
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.0"), pkg("conf-saver", "1.0")]);
    let snap = w.snapshot();
    let clean = verify(&snap, None, true, None, Budget::default()).unwrap();
    assert!(clean.packages.is_empty(), "{:?}", clean.packages);
    assert_eq!((clean.checked, clean.installed), (2, 2));
    assert!(clean.files > 0);
    let (code, _, _) = w.pacman_output(&["-Qkk"]);
    assert_eq!(code, 0, "pacman agrees nothing is altered");
    // Not in a sync repository: no reinstall command is offered for it.
    std::fs::remove_file(w.at("usr/share/keeper/data")).unwrap();
    let r = verify(&w.snapshot(), None, true, None, Budget::default()).unwrap();
    assert_eq!(r.packages.len(), 1);
    assert_eq!(r.command, None);
}

#[test]
fn checking_everything_stops_at_the_budget_and_resumes_where_it_said() {
    if !crate::support::is_root() {
        // The installed files must be root's, as pacman recorded them: a normal user's world is
        // theirs, and every file would differ in owner. CI runs as root.
        return eprintln!("skipped: needs root (files owned as pacman recorded them)");
    }
    let w = damaged_world();
    let snap = w.snapshot();
    let whole = verify(&snap, None, true, None, Budget::default()).unwrap();
    let tiny = Budget {
        bytes: 1,
        time: Duration::from_secs(600),
    };
    let mut from: Option<String> = None;
    let mut checked = 0;
    let mut files = 0;
    let mut reports = Vec::new();
    for round in 0.. {
        assert!(round < 10, "never finished");
        let part = verify(&snap, None, true, from.as_deref(), tiny).unwrap();
        // Every file hashed spends the budget: one package per call.
        assert_eq!(part.checked, 1);
        checked += part.checked;
        files += part.files;
        reports.extend(part.packages.iter().map(|p| format!("{p:?}")));
        match part.next {
            Some(n) => from = Some(n),
            None => break,
        }
    }
    assert_eq!(checked, whole.checked);
    assert_eq!(files, whole.files);
    let whole_reports: Vec<String> = whole.packages.iter().map(|p| format!("{p:?}")).collect();
    assert_eq!(reports, whole_reports);
}

#[test]
fn a_missing_or_damaged_mtree_is_an_error_naming_the_file() {
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.0"), pkg("conf-saver", "1.0")]);
    let entry = w.dir.path().join("db/local/conf-keeper-1.0-1");
    let mtree = entry.join("mtree");
    std::fs::remove_file(&mtree).unwrap();
    let (_, out, _) = w.pacman_output(&["-Qkk", "conf-keeper"]);
    assert!(out.contains("conf-keeper: no mtree file"), "{out}");
    let err = verify(
        &w.snapshot(),
        Some("conf-keeper"),
        true,
        None,
        Budget::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, PacmanError::MtreeMissing { path } if *path == mtree),
        "{err}"
    );
    assert_eq!(err.kind(), "not_found");
    // Checking everything: the package is listed with its error, never silently clean.
    let all = verify(&w.snapshot(), None, true, None, Budget::default()).unwrap();
    let listed = all
        .packages
        .iter()
        .find(|p| p.name == "conf-keeper")
        .unwrap();
    let e = listed.error.as_ref().unwrap();
    assert!(
        e.message.contains(&mtree.display().to_string()),
        "{}",
        e.message
    );
    // Not gzip.
    std::fs::write(&mtree, b"this is not gzip").unwrap();
    let err = verify(
        &w.snapshot(),
        Some("conf-keeper"),
        true,
        None,
        Budget::default(),
    )
    .unwrap_err();
    assert!(matches!(err, PacmanError::MtreeDamaged { .. }), "{err}");
    assert!(err.to_string().contains(&mtree.display().to_string()));
    // Gzip of a line that is not mtree.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, b"#mtree\n./etc/keeper.conf size=12x\n").unwrap();
    std::fs::write(&mtree, gz.finish().unwrap()).unwrap();
    let err = verify(
        &w.snapshot(),
        Some("conf-keeper"),
        true,
        None,
        Budget::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, PacmanError::MtreeMalformed { line: 2, .. }),
        "{err}"
    );
    // The quick check does not need the mtree.
    assert!(
        verify(
            &w.snapshot(),
            Some("conf-keeper"),
            false,
            None,
            Budget::default()
        )
        .is_ok()
    );
    // An unknown package is not "nothing found".
    let err = verify(
        &w.snapshot(),
        Some("conf-keepr"),
        true,
        None,
        Budget::default(),
    )
    .unwrap_err();
    assert!(
        matches!(err, PacmanError::PackageNotFound { ref near, .. } if near.contains(&"conf-keeper".to_owned()))
    );
}

#[test]
fn a_package_with_every_file_gone_is_counted_whole_and_listed_in_part() {
    if !crate::support::is_root() {
        // The installed files must be root's, as pacman recorded them: a normal user's world is
        // theirs, and every file would differ in owner. CI runs as root.
        return eprintln!("skipped: needs root (files owned as pacman recorded them)");
    }
    let w = World::new();
    w.install(&[pkg("many-files", "1.0")]);
    std::fs::remove_dir_all(w.at("usr/share/many")).unwrap();
    let pacman = pacman_check(&w, &["-Qk"]);
    let total = pacman.totals.iter().find(|t| t.0 == "many-files").unwrap();
    assert_eq!(total.2, 71, "70 files and their directory");
    for full in [false, true] {
        let r = verify(
            &w.snapshot(),
            Some("many-files"),
            full,
            None,
            Budget::default(),
        )
        .unwrap();
        let p = &r.packages[0];
        assert_eq!(p.altered, 71);
        assert_eq!(p.findings.len(), archgate_pacman::integrity::MAX_FINDINGS);
        assert_eq!(p.omitted, 71 - archgate_pacman::integrity::MAX_FINDINGS);
    }
}

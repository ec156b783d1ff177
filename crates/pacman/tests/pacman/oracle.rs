//! archgate's answers compared field by field with real pacman on the fixture system.

use std::collections::BTreeSet;

use archgate_pacman::info::InstallReason;
use archgate_pacman::list::ListFilter;
use archgate_pacman::search::TermMode;

use crate::support::{c_date, conf_path, field, human, list, pacman, parse_info_blocks, snapshot};

/// `pacman -Ss` lines `repo/name version [(groups)] [installed…]` → (repo/name, installed?).
fn pacman_ss(terms: &[&str]) -> BTreeSet<(String, bool)> {
    let mut args = vec!["-Ss"];
    args.extend_from_slice(terms);
    let (_, out) = pacman(&conf_path(), &args);
    out.lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .map(|l| {
            let id = l.split_whitespace().next().unwrap().to_owned();
            (id, l.contains("[installed"))
        })
        .collect()
}

#[test]
fn search_matches_pacman_ss() {
    let snap = snapshot();
    let queries: &[&[&str]] = &[
        &["editor"],
        &["EDITOR"],
        &["text"],
        &["lib.*so"],
        &["network"],
        &["base-mini"],
        &["zlib", "api"],
        &["^edit"],
        &["dict"],
        &["fetch-tool"],
        &["ca-certificates"],
        &["c\\+\\+"],
        &["t.xt", "engine"],
        &["nomatchxyz"],
        &["e"],
    ];
    for terms in queries {
        let expected = pacman_ss(terms);
        let ours =
            archgate_pacman::search::search(&snap, &terms.join(" "), None, TermMode::Pacman, 1000)
                .unwrap();
        let got: BTreeSet<(String, bool)> = ours
            .results
            .iter()
            .map(|h| (format!("{}/{}", h.repo, h.name), h.installed.is_some()))
            .collect();
        assert_eq!(got, expected, "query {terms:?}");
        assert_eq!(ours.total, expected.len());
    }
    // Ranking: the exact name first, then prefixes.
    let ranked =
        archgate_pacman::search::search(&snap, "editor", None, TermMode::Pacman, 100).unwrap();
    let names: Vec<&str> = ranked.results.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(&names[..2], ["editor-one", "editor-two"], "{names:?}");
    assert_eq!(names.last(), Some(&"python-plugins"));
    // One repository only.
    let core =
        archgate_pacman::search::search(&snap, "e", Some("agcore"), TermMode::Pacman, 100).unwrap();
    assert!(core.results.iter().all(|h| h.repo == "agcore"));
    assert_eq!(
        core.total,
        pacman_ss(&["e"])
            .iter()
            .filter(|(id, _)| id.starts_with("agcore/"))
            .count()
    );
}

fn check_common(block: &[(String, String)], d: &archgate_pacman::info::PackageDetails) {
    assert_eq!(field(block, "Name"), d.name);
    assert_eq!(field(block, "Version"), d.version);
    assert_eq!(field(block, "Description"), d.description);
    assert_eq!(
        Some(field(block, "Architecture")),
        d.architecture.as_deref()
    );
    assert_eq!(Some(field(block, "URL")), d.url.as_deref());
    assert_eq!(list(field(block, "Licenses")), d.licenses);
    assert_eq!(list(field(block, "Groups")), d.groups);
    assert_eq!(list(field(block, "Provides")), d.provides);
    assert_eq!(list(field(block, "Depends On")), d.depends);
    assert_eq!(list(field(block, "Conflicts With")), d.conflicts);
    assert_eq!(list(field(block, "Replaces")), d.replaces);
    assert_eq!(
        field(block, "Installed Size"),
        human(d.installed_size.unwrap())
    );
    assert_eq!(Some(field(block, "Packager")), d.packager.as_deref());
    assert_eq!(field(block, "Build Date"), c_date(d.build_date.unwrap().0));
}

fn optdeps_text(d: &archgate_pacman::info::PackageDetails, markers: bool) -> String {
    if d.optdepends.is_empty() {
        return "None".into();
    }
    d.optdepends
        .iter()
        .map(|o| {
            let mut s = o.name.clone();
            if let Some(r) = &o.reason {
                s.push_str(": ");
                s.push_str(r);
            }
            if markers && o.installed {
                s.push_str(" [installed]");
            }
            s
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn info_matches_pacman_si_for_every_sync_package() {
    let snap = snapshot();
    let mut checked = 0;
    for repo in &snap.repos {
        for pkg in &repo.packages {
            let (_, out) = pacman(
                &conf_path(),
                &["-Si", &format!("{}/{}", repo.name, pkg.name)],
            );
            let block = &parse_info_blocks(&out)[0];
            let info =
                archgate_pacman::info::info(&snap, &format!("{}/{}", repo.name, pkg.name)).unwrap();
            let s = &info.sync[0];
            assert_eq!(field(block, "Repository"), s.repo);
            check_common(block, &s.details);
            assert_eq!(
                field(block, "Optional Deps"),
                optdeps_text(&s.details, false)
            );
            assert_eq!(
                field(block, "Download Size"),
                human(s.download_size.unwrap())
            );
            assert_eq!(list(field(block, "Validated By")), s.validated_by);
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} sync packages");
}

#[test]
fn info_matches_pacman_qi_for_every_installed_package() {
    let snap = snapshot();
    assert!(snap.local.packages.len() >= 7);
    for pkg in &snap.local.packages {
        let (_, out) = pacman(&conf_path(), &["-Qi", &pkg.name]);
        let block = &parse_info_blocks(&out)[0];
        let info = archgate_pacman::info::info(&snap, &pkg.name).unwrap();
        let i = info.installed.as_ref().unwrap();
        check_common(block, &i.details);
        assert_eq!(
            field(block, "Optional Deps"),
            optdeps_text(&i.details, true)
        );
        assert_eq!(
            list(field(block, "Required By")),
            i.required_by,
            "{}",
            pkg.name
        );
        assert_eq!(
            list(field(block, "Optional For")),
            i.optional_for,
            "{}",
            pkg.name
        );
        assert_eq!(
            field(block, "Install Date"),
            c_date(i.install_date.unwrap().0)
        );
        let reason = match i.install_reason {
            InstallReason::Explicit => "Explicitly installed",
            InstallReason::Dependency => "Installed as a dependency for another package",
        };
        assert_eq!(field(block, "Install Reason"), reason);
        assert_eq!(
            field(block, "Install Script"),
            if i.install_script { "Yes" } else { "No" }
        );
        let validated = i
            .validation
            .iter()
            .map(|v| match v.as_str() {
                "none" => "None".to_owned(),
                "md5" => "MD5 Sum".to_owned(),
                "sha256" => "SHA-256 Sum".to_owned(),
                "pgp" => "Signature".to_owned(),
                other => other.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("  ");
        assert_eq!(field(block, "Validated By"), validated, "{}", pkg.name);
    }
}

#[test]
fn files_match_pacman_ql() {
    let snap = snapshot();
    for pkg in &snap.local.packages {
        let (_, out) = pacman(&conf_path(), &["-Ql", &pkg.name]);
        let expected: Vec<String> = out
            .lines()
            .map(|l| l.split_once(' ').unwrap().1.to_owned())
            .collect();
        let ours = archgate_pacman::files::files(&snap, &pkg.name, 10_000).unwrap();
        assert_eq!(ours.files, expected, "{}", pkg.name);
        assert!(!ours.truncated);
    }
    // Not installed: the .files database answers (pacman -Fl would).
    let hunspell = archgate_pacman::files::files(&snap, "hunspell-dict", 100).unwrap();
    assert!(
        hunspell
            .files
            .iter()
            .any(|f| f.ends_with("/usr/share/hunspell/en_US.dic"))
    );
    assert!(matches!(
        hunspell.source,
        archgate_pacman::files::FilesSource::FilesDb { ref repo } if repo == "agextra"
    ));
}

#[test]
fn owner_matches_pacman_qo() {
    let snap = snapshot();
    let root = crate::support::fixture().join("root");
    let paths = [
        "usr/bin/mini-ls",
        "usr/bin/editor-one",
        "etc/editor-one.conf",
        "usr/lib/libzlite.so.1",
        "opt/foreign/data",
        "usr/bin/",
        "usr/share/",
        "usr/bin/../bin/spell",
    ];
    for rel in paths {
        let abs = format!("{}/{rel}", root.display());
        let (_, out) = pacman(&conf_path(), &["-Qo", &abs]);
        let expected: BTreeSet<String> = out
            .lines()
            .filter_map(|l| l.split_once(" is owned by ").map(|(_, o)| o.to_owned()))
            .collect();
        let ours = archgate_pacman::files::owner(&snap, &abs).unwrap();
        let got: BTreeSet<String> = ours
            .owners
            .iter()
            .map(|o| format!("{} {}", o.name, o.version))
            .collect();
        assert_eq!(got, expected, "{rel}");
        assert!(!got.is_empty(), "{rel}");
    }
    // The system view: a path without the root prefix means the same file.
    let plain = archgate_pacman::files::owner(&snap, "/usr/bin/mini-ls").unwrap();
    assert_eq!(plain.owners[0].name, "coreutils-mini");
    let nobody = archgate_pacman::files::owner(&snap, "/usr/bin/not-there").unwrap();
    assert!(nobody.owners.is_empty());
}

fn pacman_q(flags: &str) -> BTreeSet<String> {
    let (_, out) = pacman(&conf_path(), &[flags]);
    out.lines().map(str::to_owned).collect()
}

#[test]
fn lists_match_pacman_query_filters() {
    let snap = snapshot();
    for (filter, flags) in [
        (ListFilter::Explicit, "-Qe"),
        (ListFilter::Deps, "-Qd"),
        (ListFilter::Orphans, "-Qdt"),
        (ListFilter::Foreign, "-Qm"),
        (ListFilter::Upgradable, "-Qu"),
    ] {
        let ours = archgate_pacman::list::list(&snap, filter);
        let got: BTreeSet<String> = ours
            .packages
            .iter()
            .map(|p| match &p.new_version {
                Some(n) => format!("{} {} -> {n}", p.name, p.version),
                None => format!("{} {}", p.name, p.version),
            })
            .collect();
        assert_eq!(got, pacman_q(flags), "{flags}");
    }
    // The fixture has a foreign package and an explicit one, so these are not vacuous.
    assert_eq!(pacman_q("-Qm").len(), 1);
    assert!(pacman_q("-Qe").len() >= 3);
}

#[test]
fn deps_tree_resolves_through_provides() {
    let snap = snapshot();
    let tree = archgate_pacman::deps::deps(&snap, "editor-one", 5, false).unwrap();
    let core = tree
        .children
        .iter()
        .find(|c| c.requirement == "coreutils-mini")
        .unwrap();
    let zlib = &core.children[0];
    assert_eq!(zlib.requirement, "zlib-api>=1.0");
    let by = zlib.satisfied_by.as_ref().unwrap();
    assert_eq!(
        (by.name.as_str(), by.from.as_str(), by.via_provides),
        ("zlib-lite", "local", true)
    );
    // zlib-lite appears again under text-engine: marked, not expanded twice.
    let te = tree
        .children
        .iter()
        .find(|c| c.requirement == "text-engine>=0.9")
        .unwrap();
    assert!(te.children[0].repeated);
    // Reverse: who needs zlib-lite, the same set pacman calls "Required By".
    let rev = archgate_pacman::deps::deps(&snap, "zlib-lite", 1, true).unwrap();
    let names: BTreeSet<&str> = rev
        .children
        .iter()
        .map(|c| c.requirement.as_str())
        .collect();
    let (_, out) = pacman(&conf_path(), &["-Qi", "zlib-lite"]);
    let block = &parse_info_blocks(&out)[0];
    let expected: BTreeSet<String> = list(field(block, "Required By")).into_iter().collect();
    assert_eq!(names, expected.iter().map(String::as_str).collect());
}

#[test]
fn log_records_what_the_fixture_did() {
    let path = crate::support::fixture().join("pacman.log");
    let all = archgate_pacman::log::read_log(&path, &Default::default()).unwrap();
    let ca: Vec<_> = all
        .entries
        .iter()
        .filter(|e| e.package.as_deref() == Some("ca-bundle"))
        .map(|e| format!("{:?}", e.action))
        .collect();
    assert_eq!(ca, ["Installed", "Downgraded", "Upgraded", "Reinstalled"]);
    assert!(all.last_full_upgrade.is_some());
    let removed = archgate_pacman::log::read_log(
        &path,
        &archgate_pacman::log::LogQuery {
            action: Some(archgate_pacman::log::LogAction::Removed),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(removed.entries.len(), 1);
    assert_eq!(
        removed.entries[0].package.as_deref(),
        Some("python-plugins")
    );
    assert_eq!(removed.entries[0].old_version.as_deref(), Some("0.1-1"));
    let future = archgate_pacman::log::read_log(
        &path,
        &archgate_pacman::log::LogQuery {
            since: Some(i64::MAX / 2),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(future.total, 0);
}

/// `[arch] pacman_log` (`PacmanSettings::log_path`) replaces pacman.conf's `LogFile` for
/// `pacman_log` and the last full upgrade; unset, `LogFile` is read.
#[tokio::test]
async fn the_configured_log_path_wins_over_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("elsewhere.log");
    std::fs::write(
        &own,
        "[2026-11-01T10:00:00+0000] [PACMAN] starting full system upgrade\n\
         [2026-11-01T10:00:05+0000] [ALPM] installed only-in-my-log (1.0-1)\n",
    )
    .unwrap();
    let args = archgate_pacman::args::LogArgs {
        package: None,
        action: None,
        since: None,
        limit: None,
    };
    let db = archgate_pacman::PacmanDb::new(archgate_pacman::PacmanSettings {
        conf_path: crate::support::conf_path(),
        log_path: Some(own.clone()),
        ..Default::default()
    });
    let got = db.pacman_log(&args).await.unwrap();
    let names: Vec<_> = got
        .entries
        .iter()
        .filter_map(|e| e.package.clone())
        .collect();
    assert_eq!(names, ["only-in-my-log"]);
    assert!(db.last_full_upgrade().await.unwrap().is_some());

    // Unset: the fixture's own LogFile, which knows ca-bundle and not our package.
    let default = crate::support::db_for(&crate::support::conf_path())
        .pacman_log(&args)
        .await
        .unwrap();
    let names: Vec<_> = default
        .entries
        .iter()
        .filter_map(|e| e.package.clone())
        .collect();
    assert!(names.iter().any(|n| n == "ca-bundle") && !names.iter().any(|n| n == "only-in-my-log"));

    // A configured log that is not there is an error naming it, not the other log.
    let missing = archgate_pacman::PacmanDb::new(archgate_pacman::PacmanSettings {
        conf_path: crate::support::conf_path(),
        log_path: Some(dir.path().join("nope.log")),
        ..Default::default()
    });
    let err = missing.pacman_log(&args).await.unwrap_err();
    assert!(err.to_string().contains("nope.log"), "{err}");
}

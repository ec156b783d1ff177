//! Security advisories of installed packages (security.archlinux.org/all.json's shape), real
//! `vercmp` as the oracle of "affected".

use std::process::Command;

use archgate_pacman::advisories::{self, Severity, Status};
use archgate_pacman::http::HttpError;
use archgate_pacman::netjson::{self, Origin};

use super::*;
use crate::support;

/// One group in exactly the shape security.archlinux.org/all.json publishes (the field set
/// arch-audit's `Avg` reads plus affected, ticket and advisories as its JSON carries them).
fn avg(
    name: &str,
    pkgs: &[&str],
    status: &str,
    severity: &str,
    affected: &str,
    fixed: Option<&str>,
) -> String {
    let fixed = fixed.map_or("null".to_owned(), |f| format!("\"{f}\""));
    let pkgs: Vec<String> = pkgs.iter().map(|p| format!("\"{p}\"")).collect();
    format!(
        r#"{{"name": "{name}", "packages": [{}], "status": "{status}", "severity": "{severity}",
        "type": "arbitrary code execution", "affected": "{affected}", "fixed": {fixed},
        "ticket": null, "issues": ["CVE-2026-{n}1", "CVE-2026-{n}2"], "advisories": []}}"#,
        pkgs.join(", "),
        n = name.trim_start_matches("AVG-")
    )
}

fn real_vercmp(a: &str, b: &str) -> std::cmp::Ordering {
    let out = Command::new("vercmp")
        .args([a, b])
        .output()
        .expect("vercmp");
    let n: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    n.cmp(&0)
}

#[test]
fn affected_follows_real_vercmp() {
    let cases = [
        ("1.2-1", "1.2-2"),
        ("1.2-2", "1.2-1"),
        ("1.2-1", "1.2-1"),
        ("1:1.0-1", "2.0-1"),
        ("2.0-1", "1:1.0-1"),
        ("1.0rc1-1", "1.0-1"),
        ("1.0.a-1", "1.0-1"),
        ("20240101-1", "20240101.1-1"),
        ("1.0+r12.gabc-1", "1.0-1"),
        ("3.1.4_p2-1", "3.1.4-1"),
    ];
    for (installed, fixed) in cases {
        let want = real_vercmp(installed, fixed) == std::cmp::Ordering::Less;
        assert_eq!(
            advisories::is_affected(installed, Status::Fixed, Some(fixed)),
            want,
            "installed {installed} fixed {fixed}"
        );
        assert!(!advisories::is_affected(
            installed,
            Status::NotAffected,
            Some(fixed)
        ));
    }
    assert!(advisories::is_affected("9.9-1", Status::Vulnerable, None));
}

#[tokio::test]
async fn advisories_of_installed_packages_from_the_tracker() {
    let snap = support::snapshot();
    let mut installed = snap.local.packages.iter();
    let a = installed.next().expect("an installed package");
    let b = installed.next().expect("a second installed package");
    let newer = format!("{}.1", a.version);
    assert_eq!(real_vercmp(&a.version, &newer), std::cmp::Ordering::Less);
    let body = format!(
        "[{}]",
        [
            avg(
                "AVG-101",
                &[&a.name],
                "Fixed",
                "High",
                &a.version,
                Some(&newer)
            ),
            avg(
                "AVG-102",
                &[&a.name],
                "Fixed",
                "Critical",
                "0.1-1",
                Some(&a.version)
            ),
            avg(
                "AVG-103",
                &[&b.name, "not-installed-here"],
                "Vulnerable",
                "Medium",
                &b.version,
                None
            ),
            avg(
                "AVG-104",
                &[&b.name],
                "Not affected",
                "Critical",
                &b.version,
                None
            ),
            avg(
                "AVG-105",
                &["not-installed-here"],
                "Vulnerable",
                "Critical",
                "1-1",
                None
            ),
        ]
        .join(",")
    );
    let (port, _) = serve(200, body);
    let url = format!("http://127.0.0.1:{port}/all.json");
    let (avgs, origin) = netjson::get_json::<Vec<advisories::Avg>>(
        &settings(None),
        &url,
        "a.json",
        advisories::WHAT,
    )
    .await
    .unwrap();
    let r = advisories::report(&snap.local, &avgs, "https://security.example", &url, origin);
    assert_eq!(r.groups_read, 5);
    let names: Vec<&str> = r.affected.iter().map(|p| p.package.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let pa = r.affected.iter().find(|p| p.package == a.name).unwrap();
    // AVG-102 is fixed at the installed version: not counted; AVG-101 is.
    assert_eq!(
        pa.groups
            .iter()
            .map(|g| g.name.as_str())
            .collect::<Vec<_>>(),
        ["AVG-101"]
    );
    assert_eq!(pa.severity, Severity::High);
    assert_eq!(pa.fixed.as_deref(), Some(newer.as_str()));
    assert_eq!(pa.groups[0].cves, ["CVE-2026-1011", "CVE-2026-1012"]);
    assert_eq!(pa.groups[0].url, "https://security.example/AVG-101");
    let pb = r.affected.iter().find(|p| p.package == b.name).unwrap();
    assert_eq!(pb.groups.len(), 1, "Not affected groups never count");
    assert_eq!(pb.fixed, None);
    assert_eq!(r.fixable, 1);
    assert_eq!(r.commands, ["sudo pacman -Syu"]);
    // Most severe first.
    assert!(r.affected[0].severity >= r.affected[1].severity);

    // An empty tracker answer is "nothing found", never an error.
    let r = advisories::report(&snap.local, &[], "x", "x", Origin::Network);
    assert!(r.affected.is_empty() && r.commands.is_empty());
}

#[test]
fn a_malformed_tracker_answer_names_the_field() {
    let ok = avg("AVG-1", &["x"], "Fixed", "Low", "1-1", Some("2-1"));
    let cases = [
        (
            format!("[{ok}, {}]", ok.replace("\"Low\"", "\"Huge\"")),
            "[1].severity",
        ),
        (
            format!("[{}]", ok.replace("\"Fixed\"", "\"Mended\"")),
            "[0].status",
        ),
        (
            format!(
                "[{}]",
                ok.replace("\"packages\": [\"x\"]", "\"packages\": \"x\"")
            ),
            "[0].packages",
        ),
        (r#"{"groups": []}"#.to_owned(), "."),
    ];
    for (body, field) in cases {
        match advisories::parse(body.as_bytes(), "u") {
            Err(HttpError::Malformed { field: f, what, .. }) => {
                assert_eq!(f, field, "{body}");
                assert_eq!(what, advisories::WHAT);
            }
            other => panic!("expected malformed at {field}: {other:?}"),
        }
    }
    assert!(advisories::parse(b"[]", "u").unwrap().is_empty());
}

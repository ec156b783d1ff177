//! Mirrors, advisories and the keyring (issue 22 items 4, 5, 7, 10): local stand-ins for
//! archlinux.org's mirror status and the security tracker serving their real JSON shapes with
//! records we wrote; real `vercmp` as the oracle of "affected"; a real GnuPG home made here.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use archgate_pacman::advisories::{self, Severity, Status};
use archgate_pacman::http::HttpError;
use archgate_pacman::mirrors::{self, MirrorStatus};
use archgate_pacman::netjson::{self, NetSettings, Origin};
use archgate_pacman::{PacmanConf, Snapshot, keyring};

use super::support;

/// Serves `body` with `status` for every request; counts requests.
fn serve(status: u16, body: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            h.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let r = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(r.as_bytes());
        }
    });
    (port, hits)
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn settings(cache: Option<&Path>) -> NetSettings {
    NetSettings {
        timeout: Duration::from_secs(5),
        cache_dir: cache.map(Into::into),
        ttl: Duration::from_secs(600),
        ..NetSettings::default()
    }
}

/// One mirror record in exactly the shape archweb publishes at /mirrors/status/json/ (the field
/// set reflector and other public consumers read: url, protocol, last_sync, completion_pct,
/// delay, duration_avg, duration_stddev, score, active, country, country_code, isos, ipv4, ipv6,
/// details). The values are ours.
fn mirror_record(url: &str, last_sync: Option<&str>, active: bool) -> String {
    let sync = last_sync.map_or("null".to_owned(), |s| format!("\"{s}\""));
    format!(
        r#"{{"url": "{url}", "protocol": "https", "last_sync": {sync}, "completion_pct": 1.0,
        "delay": 3671, "duration_avg": 0.31, "duration_stddev": 0.12, "score": 1.2,
        "active": {active}, "country": "Germany", "country_code": "DE", "isos": true,
        "ipv4": true, "ipv6": false, "details": "https://archlinux.org/mirrors/example/1/"}}"#
    )
}

/// The document around the records: {cutoff, last_check, num_checks, check_frequency, urls,
/// version} as archweb's status_json view writes it.
fn status_doc(urls: &[String]) -> String {
    format!(
        r#"{{"cutoff": 86400, "last_check": "2026-11-30T12:00:00.123Z", "num_checks": 24,
        "check_frequency": 300, "urls": [{}], "version": 3}}"#,
        urls.join(",")
    )
}

fn secs(rfc: &str) -> i64 {
    time::OffsetDateTime::parse(rfc, &time::format_description::well_known::Rfc3339)
        .unwrap()
        .unix_timestamp()
}

fn set_mtime(path: &Path, unix: i64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(unix as u64))
        .unwrap();
}

/// A pacman.conf with [core] and [extra] through an Included mirrorlist, plus a local [own]
/// repository, and empty database files for core and extra.
fn mirror_world(dir: &Path, with_own: bool) -> PacmanConf {
    let db = dir.join("db");
    std::fs::create_dir_all(db.join("sync")).unwrap();
    std::fs::write(
        dir.join("mirrorlist"),
        "## Germany\nServer = https://fresh.example/archlinux/$repo/os/$arch\n\
         Server = https://stale.example/arch/$repo/os/$arch\n",
    )
    .unwrap();
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nDBPath = {db}\nArchitecture = x86_64\n\n[core]\nInclude = {ml}\n\n\
             [extra]\nServer = https://stale.example/arch/$repo/os/$arch\nInclude = {ml}\n\n{own}",
            db = db.display(),
            ml = dir.join("mirrorlist").display(),
            own = if with_own {
                "[own]\nServer = file:///srv/own\n"
            } else {
                ""
            },
        ),
    )
    .unwrap();
    for r in ["core", "extra"] {
        std::fs::write(db.join("sync").join(format!("{r}.db")), b"").unwrap();
    }
    PacmanConf::load(&conf).unwrap()
}

#[tokio::test]
async fn mirrors_report_last_sync_and_databases_older_than_the_mirror() {
    let dir = tempfile::tempdir().unwrap();
    let conf = mirror_world(dir.path(), true);
    let fresh_sync = "2026-11-30T11:40:00Z";
    let doc = status_doc(&[
        mirror_record("https://fresh.example/archlinux/", Some(fresh_sync), true),
        // Three days behind the check: past the 86400 s cutoff.
        mirror_record(
            "https://stale.example/arch/",
            Some("2026-11-27T10:00:00Z"),
            true,
        ),
        mirror_record("https://other.example/archlinux/", None, false),
    ]);
    let (port, hits) = serve(200, doc);
    let url = format!("http://127.0.0.1:{port}{}", mirrors::STATUS_PATH);
    // core's database was fetched before the fresh mirror's last sync, extra's after.
    set_mtime(&conf.sync_db_path("core", "db"), secs(fresh_sync) - 7200);
    set_mtime(&conf.sync_db_path("extra", "db"), secs(fresh_sync) + 60);

    let status =
        netjson::get_json::<mirrors::StatusDoc>(&settings(None), &url, "m.json", mirrors::WHAT)
            .await
            .and_then(|(d, o)| Ok((MirrorStatus::from_doc(d, &url)?, o)));
    let r = mirrors::report(&conf, &url, status);
    assert_eq!(hits.load(Ordering::SeqCst), 1);
    assert_eq!(r.status.origin, Some(Origin::Network));

    // One entry per mirror whatever the repository, pacman's order kept.
    let urls: Vec<&str> = r.servers.iter().map(|s| s.url.as_str()).collect();
    assert_eq!(
        urls,
        [
            "https://fresh.example/archlinux/core/os/x86_64",
            "https://stale.example/arch/core/os/x86_64",
            "file:///srv/own"
        ]
    );
    assert_eq!(r.servers[0].first_for, ["core"]);
    assert_eq!(r.servers[1].first_for, ["extra"]);
    assert_eq!(r.servers[1].repos, ["core", "extra"]);
    let fresh = r.servers[0].mirror.as_ref().expect("fresh mirror matched");
    assert_eq!(fresh.last_sync.map(|t| t.0), Some(secs(fresh_sync)));
    assert!(!fresh.out_of_date);
    let stale = r.servers[1].mirror.as_ref().expect("stale mirror matched");
    assert!(stale.out_of_date, "{stale:?}");
    assert!(
        r.servers[2].mirror.is_none(),
        "a file:// server is no public mirror"
    );

    let core = r.databases.iter().find(|d| d.repo == "core").unwrap();
    let extra = r.databases.iter().find(|d| d.repo == "extra").unwrap();
    assert_eq!(core.older_than_mirror, Some(true));
    // extra's first server is the stale one: its database is newer than that mirror's sync.
    assert_eq!(extra.older_than_mirror, Some(false));
    let own = r.databases.iter().find(|d| d.repo == "own").unwrap();
    assert!(own.modified.is_none());
    assert!(
        r.commands.contains(&"sudo pacman -Syu".to_owned()),
        "{:?}",
        r.commands
    );
    assert!(
        r.commands.contains(&mirrors::REFLECTOR.to_owned()),
        "{:?}",
        r.commands
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.contains("stale.example") && f.contains("extra"))
    );
}

#[tokio::test]
async fn fresh_databases_and_fresh_mirrors_ask_for_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let conf = mirror_world(dir.path(), false);
    let t = "2026-11-30T11:40:00Z";
    let doc = status_doc(&[
        mirror_record("https://fresh.example/archlinux/", Some(t), true),
        mirror_record("https://stale.example/arch/", Some(t), true),
    ]);
    for r in ["core", "extra"] {
        set_mtime(&conf.sync_db_path(r, "db"), secs(t) + 10);
    }
    let st = MirrorStatus::parse(doc.as_bytes(), "x").unwrap();
    let r = mirrors::report(&conf, "x", Ok((st, Origin::Network)));
    assert!(r.commands.is_empty(), "{:?}", r.commands);
    assert!(r.findings.is_empty(), "{:?}", r.findings);
    assert!(
        r.databases
            .iter()
            .all(|d| d.older_than_mirror == Some(false))
    );
}

#[tokio::test]
async fn a_malformed_mirror_status_names_the_field() {
    let cases: [(String, &str); 4] = [
        (
            status_doc(&[
                mirror_record("https://a.example/", Some("2026-11-30T11:40:00Z"), true),
                mirror_record("https://b.example/", Some("yesterday"), true),
            ]),
            "urls[1].last_sync",
        ),
        (
            status_doc(&[mirror_record("https://a.example/", None, true)])
                .replace("\"completion_pct\": 1.0", "\"completion_pct\": \"full\""),
            "urls[0].completion_pct",
        ),
        (
            r#"{"cutoff": 86400, "last_check": "2026-11-30T12:00:00Z"}"#.to_owned(),
            ".",
        ),
        ("".to_owned(), "."),
    ];
    for (body, field) in cases {
        let (port, _) = serve(200, body.clone());
        let url = format!("http://127.0.0.1:{port}/mirrors/status/json/");
        let got =
            netjson::get_json::<mirrors::StatusDoc>(&settings(None), &url, "m.json", mirrors::WHAT)
                .await
                .and_then(|(d, _)| MirrorStatus::from_doc(d, &url));
        match got {
            Err(HttpError::Malformed { field: f, .. }) => assert_eq!(f, field, "body {body}"),
            other => panic!("expected malformed at {field}, got {other:?}"),
        }
    }
    // A malformed status is said in the report, never read as "no mirrors are known".
    let dir = tempfile::tempdir().unwrap();
    let conf = mirror_world(dir.path(), true);
    let err = MirrorStatus::parse(b"[]", "u").unwrap_err();
    let r = mirrors::report(&conf, "u", Err(err));
    assert_eq!(r.status.error.as_ref().map(|e| e.kind), Some("malformed"));
    assert!(
        r.findings
            .iter()
            .any(|f| f.contains("could not read the mirror status"))
    );
}

#[tokio::test]
async fn offline_is_an_answer_a_stale_cache_or_the_failure() {
    let cache = tempfile::tempdir().unwrap();
    let doc = status_doc(&[mirror_record(
        "https://a.example/",
        Some("2026-11-30T11:40:00Z"),
        true,
    )]);
    let (port, hits) = serve(200, doc);
    let url = format!("http://127.0.0.1:{port}/mirrors/status/json/");
    let s = settings(Some(cache.path()));
    let (_, o) = netjson::get_json::<mirrors::StatusDoc>(&s, &url, "m.json", mirrors::WHAT)
        .await
        .unwrap();
    assert_eq!(o, Origin::Network);
    let (_, o) = netjson::get_json::<mirrors::StatusDoc>(&s, &url, "m.json", mirrors::WHAT)
        .await
        .unwrap();
    assert!(matches!(o, Origin::Cache { .. }), "{o:?}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the cache answered the second time"
    );

    // Past the TTL with the network gone: the old copy, said to be stale.
    let offline = format!("http://127.0.0.1:{}/mirrors/status/json/", closed_port());
    std::fs::copy(cache.path().join("m.json"), cache.path().join("off.json")).unwrap();
    set_mtime(&cache.path().join("off.json"), 1_000_000_000);
    let (st, o) = netjson::get_json::<mirrors::StatusDoc>(&s, &offline, "off.json", mirrors::WHAT)
        .await
        .unwrap();
    assert_eq!(st.urls.len(), 1);
    assert!(matches!(o, Origin::StaleCache { .. }), "{o:?}");

    // No cache: the failure itself, typed.
    let e =
        netjson::get_json::<mirrors::StatusDoc>(&settings(None), &offline, "x.json", mirrors::WHAT)
            .await
            .unwrap_err();
    assert_eq!(e.kind(), "could_not_reach");
    let (port, _) = serve(503, "busy".into());
    let e = netjson::get_json::<mirrors::StatusDoc>(
        &settings(None),
        &format!("http://127.0.0.1:{port}/"),
        "y.json",
        mirrors::WHAT,
    )
    .await
    .unwrap_err();
    assert!(matches!(e, HttpError::Status { status: 503, .. }), "{e:?}");

    // Rate limited (HTTP 429) is the service not answering: the stale copy stands in, and
    // without one the failure says so (the packages API and the archive read it the same way).
    let (port, _) = serve(429, "slow down".into());
    let limited = format!("http://127.0.0.1:{port}/mirrors/status/json/");
    let (_, o) = netjson::get_json::<mirrors::StatusDoc>(&s, &limited, "off.json", mirrors::WHAT)
        .await
        .unwrap();
    assert!(
        matches!(o, Origin::StaleCache { ref network_error, .. } if network_error.contains("rate limiting")),
        "{o:?}"
    );
    let e =
        netjson::get_json::<mirrors::StatusDoc>(&settings(None), &limited, "z.json", mirrors::WHAT)
            .await
            .unwrap_err();
    assert_eq!(e.kind(), "rate_limited", "{e}");
}

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

fn gpg(home: &Path, args: &[&str]) {
    let out = Command::new("gpg")
        .arg("--homedir")
        .arg(home)
        .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
        .args(args)
        .output()
        .expect("gpg");
    assert!(
        out.status.success(),
        "gpg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A GnuPG home like pacman's (root-owned, 0755, world-readable pubring) with a key that expires
/// in 10 days, one that expired (made with a faked clock a year back, valid for 30 days), one
/// valid for years and one revoked.
fn keyring_home(dir: &Path) -> std::path::PathBuf {
    let home = dir.join("gnupg");
    std::fs::create_dir_all(&home).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Soon Packager <soon@example.invalid>",
            "ed25519",
            "sign",
            "10d",
        ],
    );
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Long Packager <long@example.invalid>",
            "ed25519",
            "sign",
            "5y",
        ],
    );
    let year_ago = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 365 * 86400;
    gpg(
        &home,
        &[
            "--faked-system-time",
            &year_ago.to_string(),
            "--quick-gen-key",
            "Old Packager <old@example.invalid>",
            "ed25519",
            "sign",
            "30d",
        ],
    );
    gpg(
        &home,
        &[
            "--quick-gen-key",
            "Gone Packager <gone@example.invalid>",
            "ed25519",
            "sign",
            "5y",
        ],
    );
    let out = Command::new("gpg")
        .arg("--homedir")
        .arg(&home)
        .args([
            "--batch",
            "--with-colons",
            "--list-keys",
            "gone@example.invalid",
        ])
        .output()
        .unwrap();
    let fpr = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            l.strip_prefix("fpr:")
                .map(|r| r.trim_matches(':').to_owned())
        })
        .unwrap();
    let rev = home.join("openpgp-revocs.d").join(format!("{fpr}.rev"));
    let text = std::fs::read_to_string(&rev)
        .unwrap()
        .replacen(":-----BEGIN", "-----BEGIN", 1);
    std::fs::write(&rev, text).unwrap();
    gpg(&home, &["--import", rev.to_str().unwrap()]);
    let _ = Command::new("gpgconf")
        .arg("--homedir")
        .arg(&home)
        .args(["--kill", "gpg-agent"])
        .status();
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
    for e in std::fs::read_dir(&home).unwrap().flatten() {
        if e.path().is_file() {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    home
}

#[test]
fn keys_expired_and_expiring_read_by_an_unprivileged_user() {
    let dir = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let home = keyring_home(dir.path());
    keyring::readable(&home).expect("readable");
    // As nobody, with the arguments the tool runs: nothing in the root-owned home is written.
    let before: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let out = Command::new("setpriv")
        .args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "env",
            "HOME=/nonexistent",
            "gpg",
        ])
        .args(keyring::gpg_args(&home))
        .output()
        .expect("setpriv gpg");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Vec<_> = std::fs::read_dir(&home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(before.len(), after.len(), "gpg wrote into the keyring home");
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let list = keyring::parse_keys(&String::from_utf8_lossy(&out.stdout), now);
    assert_eq!(list.total, 4, "{list:?}");
    assert_eq!(list.revoked, 1);
    assert_eq!(list.expired.len(), 1, "{list:?}");
    assert!(list.expired[0].uid.contains("old@example.invalid"));
    assert_eq!(list.expired[0].fingerprint.len(), 40);
    assert!(list.expired[0].days_left < 0);
    assert_eq!(list.expiring.len(), 1, "{list:?}");
    assert!(list.expiring[0].uid.contains("soon@example.invalid"));
    assert!(
        (9..=10).contains(&list.expiring[0].days_left),
        "{:?}",
        list.expiring[0]
    );

    let r = keyring::report(
        keyring::KeyringPackage {
            installed: Some("20260101-1".into()),
            repo: Some("core".into()),
            available: Some("20260101-1".into()),
            outdated: false,
        },
        &home,
        Ok(list),
    );
    assert_eq!(r.commands, ["sudo pacman-key --refresh-keys"]);
    assert!(r.keys.readable);
}

#[test]
fn an_unreadable_keyring_is_said_never_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let e = keyring::readable(dir.path()).unwrap_err();
    assert!(e.contains("pacman-key --init"), "{e}");
    let e = keyring::readable(&dir.path().join("missing")).unwrap_err();
    assert!(e.contains("missing"), "{e}");
    // gpg as nobody on a 0700 home fails; the report then says not readable, with the command.
    let home = dir.path().join("private");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("pubring.kbx"), b"").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let r = keyring::report(
        keyring::KeyringPackage {
            installed: None,
            repo: None,
            available: None,
            outdated: false,
        },
        &home,
        Err("permission denied".into()),
    );
    assert!(!r.keys.readable);
    let v = serde_json::to_value(&r).unwrap();
    assert!(
        v["keys"].get("expired").is_none(),
        "no empty list stands in for unread keys: {v}"
    );
    assert!(
        r.commands
            .contains(&"sudo pacman-key --list-keys".to_owned())
    );
}

/// A local database with archlinux-keyring at `installed` and a sync [core] with `available`.
fn keyring_world(dir: &Path, installed: &str, available: &str) -> Snapshot {
    let db = dir.join("db");
    let local = db
        .join("local")
        .join(format!("archlinux-keyring-{installed}"));
    std::fs::create_dir_all(&local).unwrap();
    std::fs::write(db.join("local/ALPM_DB_VERSION"), "9\n").unwrap();
    std::fs::write(
        local.join("desc"),
        format!("%NAME%\narchlinux-keyring\n\n%VERSION%\n{installed}\n\n%ARCH%\nany\n\n"),
    )
    .unwrap();
    let stage = dir.join("stage");
    let entry = stage.join(format!("archlinux-keyring-{available}"));
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(
        entry.join("desc"),
        format!(
            "%FILENAME%\narchlinux-keyring-{available}-any.pkg.tar.zst\n\n%NAME%\narchlinux-keyring\n\n\
             %VERSION%\n{available}\n\n%ARCH%\nany\n\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(db.join("sync")).unwrap();
    let st = Command::new("tar")
        .arg("-czf")
        .arg(db.join("sync/core.db"))
        .arg("-C")
        .arg(&stage)
        .arg(format!("archlinux-keyring-{available}"))
        .status()
        .unwrap();
    assert!(st.success());
    let conf = dir.join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nDBPath = {}\n\n[core]\nServer = file:///x\n",
            db.display()
        ),
    )
    .unwrap();
    Snapshot::load(Arc::new(PacmanConf::load(&conf).unwrap()), None).unwrap()
}

#[test]
fn the_keyring_package_against_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    let snap = keyring_world(dir.path(), "20251001-1", "20251120.1-1");
    let p = keyring::package_state(&snap);
    assert_eq!(p.installed.as_deref(), Some("20251001-1"));
    assert_eq!(p.available.as_deref(), Some("20251120.1-1"));
    assert_eq!(p.repo.as_deref(), Some("core"));
    assert!(p.outdated);
    let r = keyring::report(p, Path::new("/x"), Ok(Default::default()));
    assert_eq!(
        r.commands,
        ["sudo pacman -Sy archlinux-keyring && sudo pacman -Su"]
    );

    let dir = tempfile::tempdir().unwrap();
    let snap = keyring_world(dir.path(), "20251120-1", "20251120-1");
    let p = keyring::package_state(&snap);
    assert!(!p.outdated);
    assert!(
        keyring::report(p, Path::new("/x"), Ok(Default::default()))
            .commands
            .is_empty()
    );
}

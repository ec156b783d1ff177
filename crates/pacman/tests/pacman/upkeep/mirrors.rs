//! Mirrors: last sync of the mirror against the age of the databases, malformed status
//! documents, offline with and without a cache (archweb's /mirrors/status/json/ shape).

use std::path::Path;
use std::sync::atomic::Ordering;

use archgate_pacman::PacmanConf;
use archgate_pacman::http::HttpError;
use archgate_pacman::mirrors::{self, MirrorStatus};
use archgate_pacman::netjson::{self, Origin};

use super::*;

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
    // A 503 with Retry-After says how long to wait (issue 36).
    let (port, _) = serve_with(503, "Retry-After: 300\r\n", "maintenance".into());
    let e = netjson::get_json::<mirrors::StatusDoc>(
        &settings(None),
        &format!("http://127.0.0.1:{port}/"),
        "w.json",
        mirrors::WHAT,
    )
    .await
    .unwrap_err();
    assert_eq!(e.kind(), "could_not_reach", "{e}");
    assert!(e.to_string().contains("HTTP 503; retry after 300 s"), "{e}");

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

    // Retry-After, in seconds or as an HTTP date, is said (issue 36).
    let (port, _) = serve_with(429, "Retry-After: 120\r\n", "slow down".into());
    let limited = format!("http://127.0.0.1:{port}/mirrors/status/json/");
    let e =
        netjson::get_json::<mirrors::StatusDoc>(&settings(None), &limited, "r.json", mirrors::WHAT)
            .await
            .unwrap_err();
    assert!(e.to_string().contains("retry after 120 s"), "{e}");
    let (port, _) = serve_with(
        429,
        "Retry-After: Fri, 31 Dec 2100 23:59:59 GMT\r\n",
        "slow down".into(),
    );
    let limited = format!("http://127.0.0.1:{port}/mirrors/status/json/");
    let e =
        netjson::get_json::<mirrors::StatusDoc>(&settings(None), &limited, "d.json", mirrors::WHAT)
            .await
            .unwrap_err();
    assert!(
        matches!(e, HttpError::RateLimited { retry_after_s: Some(s), .. } if s > 365 * 24 * 3600),
        "{e:?}"
    );
}

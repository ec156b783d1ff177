//! The AUR client against a local server speaking RPC v5 and git's smart HTTP: answers,
//! errors, 429, oversized and malformed bodies, a server that hangs, a closed port, the cache,
//! and the package repositories' files and history read exactly.

use std::time::Duration;

use archgate_aur::{AurClient, AurConfig, AurError, SearchBy};
use serde_json::json;

use crate::support::{Reply, Server, fake_aur, permit};

fn client(base: &str) -> AurClient {
    AurClient::new(AurConfig {
        base_url: base.to_owned(),
        timeout: Duration::from_millis(1500),
        connect_timeout: Duration::from_millis(500),
        max_rpc_bytes: 64 * 1024,
        ..AurConfig::default()
    })
    .expect("client")
}

fn fake() -> Server {
    let pkgs = fake_aur::packages();
    Server::start(move |p, q| fake_aur::route(&pkgs, p, q))
}

#[tokio::test]
async fn search_sends_the_field_and_reads_trust_signals() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let s2 = seen.clone();
    let pkgs = fake_aur::packages();
    let srv = Server::start(move |p, q| {
        s2.lock().expect("lock").push(q.to_vec());
        fake_aur::route(&pkgs, p, q)
    });
    let r = client(&srv.base)
        .search("pkg", SearchBy::Maintainer)
        .await
        .expect("search");
    assert_eq!(r.total, 2);
    assert!(r.notice.contains("reviewed by nobody"));
    let by = seen.lock().expect("lock")[0]
        .iter()
        .find(|(k, _)| k == "by")
        .map(|(_, v)| v.clone());
    assert_eq!(by.as_deref(), Some("maintainer"));
    // Most popular first; orphaned flagged.
    assert_eq!(r.packages[0].name, "evil-pkg");
    let good = r
        .packages
        .iter()
        .find(|p| p.name == "good-pkg")
        .expect("good");
    assert!(good.orphaned);
    assert_eq!(good.maintainer, None);
    assert_eq!(
        good.first_submitted.as_deref(),
        Some("2020-09-13T12:26:40Z")
    );
}

#[tokio::test]
async fn every_search_field_has_its_rpc_name() {
    let all = [
        (SearchBy::Name, "name"),
        (SearchBy::NameDesc, "name-desc"),
        (SearchBy::Maintainer, "maintainer"),
        (SearchBy::Depends, "depends"),
        (SearchBy::Makedepends, "makedepends"),
        (SearchBy::Optdepends, "optdepends"),
        (SearchBy::Checkdepends, "checkdepends"),
        (SearchBy::Submitter, "submitter"),
        (SearchBy::Provides, "provides"),
        (SearchBy::Conflicts, "conflicts"),
        (SearchBy::Replaces, "replaces"),
        (SearchBy::Keywords, "keywords"),
        (SearchBy::Groups, "groups"),
        (SearchBy::Comaintainers, "comaintainers"),
    ];
    for (by, s) in all {
        assert_eq!(by.as_str(), s);
        let parsed: SearchBy = serde_json::from_value(json!(s)).expect("deserialize");
        assert_eq!(parsed, by);
    }
    assert_eq!(SearchBy::default(), SearchBy::NameDesc);
}

#[tokio::test]
async fn info_takes_many_names_and_reports_unknown_ones() {
    let srv = fake();
    let names = vec![
        "good-pkg".to_owned(),
        "evil-pkg".to_owned(),
        "nope".to_owned(),
    ];
    let r = client(&srv.base).info(&names).await.expect("info");
    assert_eq!(r.packages.len(), 2);
    assert_eq!(r.not_found, vec!["nope".to_owned()]);
    let e = client(&srv.base)
        .info_one("nope")
        .await
        .expect_err("missing");
    assert_eq!(e.kind(), "not_found");
}

#[tokio::test]
async fn rpc_error_answer_is_typed() {
    let srv = fake();
    let e = client(&srv.base)
        .search("x", SearchBy::Name)
        .await
        .expect_err("too short");
    assert_eq!(e.kind(), "rpc_error");
    assert!(matches!(e, AurError::Rpc { ref message } if message.contains("too small")));
}

#[tokio::test]
async fn http_429_and_rate_limit_messages_are_rate_limited() {
    let srv = Server::start(|_, _| {
        Reply::Status(
            429,
            vec![("Retry-After", "60".into())],
            b"slow down".to_vec(),
        )
    });
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("429");
    assert!(
        matches!(
            e,
            AurError::RateLimited {
                retry_after: Some(60),
                ..
            }
        ),
        "{e:?}"
    );
    assert!(e.to_string().contains("try again after 60 s"), "{e}");
    // Retry-After as an HTTP date (RFC 9110): a wait in seconds from now.
    let srv = Server::start(|_, _| {
        Reply::Status(
            429,
            vec![("Retry-After", "Fri, 31 Dec 2100 23:59:59 GMT".into())],
            b"slow down".to_vec(),
        )
    });
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("429");
    assert!(
        matches!(e, AurError::RateLimited { retry_after: Some(s), .. } if s > 365 * 24 * 3600),
        "{e:?}"
    );
    // 503 (the AUR down for maintenance) is not reaching it, not an HTTP error to report.
    let srv = Server::start(|_, _| {
        Reply::Status(
            503,
            vec![("Retry-After", "300".into())],
            b"maintenance".to_vec(),
        )
    });
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("503");
    assert_eq!(e.kind(), "could_not_reach", "{e}");
    assert!(e.to_string().contains("try again after 300 s"), "{e}");
    let srv = Server::start(|_, _| {
        let b = json!({"error": "Rate limit reached", "resultcount": 0, "results": [], "type": "error", "version": 5});
        Reply::Ok("application/json", b.to_string().into_bytes())
    });
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("json rate limit");
    assert_eq!(e.kind(), "rate_limited");
}

#[tokio::test]
async fn malformed_and_oversized_answers_are_typed() {
    let srv = Server::start(|_, _| {
        Reply::Ok(
            "application/json",
            b"{\"resultcount\": 1, \"results\": [".to_vec(),
        )
    });
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("malformed");
    assert_eq!(e.kind(), "malformed");
    let srv = Server::start(|_, _| {
        Reply::Ok(
            "application/json",
            b"{\"type\":\"weird\",\"results\":[]}".to_vec(),
        )
    });
    assert_eq!(
        client(&srv.base)
            .search("foo", SearchBy::Name)
            .await
            .expect_err("type")
            .kind(),
        "malformed"
    );
    // Declared length over the cap.
    let srv = Server::start(|_, _| Reply::Ok("application/json", vec![b' '; 200 * 1024]));
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("too large");
    assert!(
        matches!(e, AurError::TooLarge { limit: 65536, .. }),
        "{e:?}"
    );
    // Streamed without a length.
    let srv = Server::start(|_, _| Reply::Huge(1024 * 1024));
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("streamed too large");
    assert_eq!(e.kind(), "too_large");
    let srv = Server::start(|_, _| Reply::Status(500, vec![], b"oops".to_vec()));
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("500");
    assert!(matches!(e, AurError::Status { status: 500, .. }));
}

#[tokio::test]
async fn a_hanging_server_times_out() {
    let srv = Server::start(|_, _| Reply::Hang);
    let e = client(&srv.base)
        .search("foo", SearchBy::Name)
        .await
        .expect_err("hang");
    assert_eq!(e.kind(), "timed_out", "{e:?}");
}

#[tokio::test]
async fn a_closed_port_is_could_not_reach_with_reason() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let e = client(&format!("http://127.0.0.1:{port}"))
        .search("foo", SearchBy::Name)
        .await
        .expect_err("closed");
    match e {
        AurError::CouldNotReach { reason, .. } => assert!(!reason.is_empty()),
        other => panic!("expected could_not_reach, got {other:?}"),
    }
}

/// The file list, every file's bytes and the history come from the package's git repository,
/// exactly as git holds them: names, modes, sizes, object ids, author names and dates.
#[tokio::test]
async fn git_listing_files_and_history_are_exact() {
    let aur = fake_aur::Aur::start(fake_aur::packages());
    let c = client(&aur.srv.base);
    let git = permit();
    let ids = aur.ids("evil-pkg");
    let files = c.list_files(&git, "evil-pkg", None).await.expect("tree");
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, [".SRCINFO", "PKGBUILD", "evil-pkg-deps.install"]);
    let pkgs = fake_aur::packages();
    let want = &pkgs[0].commits[1].2;
    for f in &files {
        assert_eq!((f.kind, f.mode.as_str()), ("file", "100644"));
        let body = c.file(&git, "evil-pkg", &f.name, None).await.expect("file");
        assert_eq!(&body, &want[f.name.as_str()], "{} byte for byte", f.name);
        assert_eq!(f.size, Some(body.len() as u64));
        assert_eq!(f.object, aur.git.blob("evil-pkg", body.as_bytes()));
    }
    let old = c
        .file(&git, "evil-pkg", "PKGBUILD", Some(&ids[0]))
        .await
        .expect("old");
    assert_eq!(old, pkgs[0].commits[0].2["PKGBUILD"]);
    // A prefix names the same commit.
    let old2 = c
        .file(&git, "evil-pkg", "PKGBUILD", Some(&ids[0][..10]))
        .await
        .expect("old by prefix");
    assert_eq!(old2, old);
    let new = c
        .file(&git, "evil-pkg", "PKGBUILD", None)
        .await
        .expect("new");
    assert!(new.contains("curl") && !old.contains("curl"));
    let h = c.history(&git, "evil-pkg").await.expect("log");
    let got: Vec<(&str, &str, &str, &str)> = h
        .iter()
        .map(|c| {
            (
                c.id.as_str(),
                c.author.as_str(),
                c.subject.as_str(),
                c.date.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                ids[1].as_str(),
                "New Owner",
                "update deps",
                "2024-02-01 12:00:00 +0000"
            ),
            (
                ids[0].as_str(),
                "Good Person",
                "Initial import",
                "2024-01-01 12:00:00 +0000"
            ),
        ]
    );
    let files = c.package_files(&git, "evil-pkg").await.expect("files");
    assert_eq!(files.commit, ids[1], "bound to the exact head commit");
    assert_eq!(files.install_scripts.len(), 1);
    assert_eq!(
        files.install_scripts[0].content,
        want["evil-pkg-deps.install"]
    );
    assert!(
        files
            .srcinfo
            .as_deref()
            .is_some_and(|s| s.contains("pkgrel = 2"))
    );
}

/// Names the AUR does not hold, paths that leave the repository, commits it does not have.
#[tokio::test]
async fn unknown_bases_paths_and_commits_are_typed() {
    let aur = fake_aur::Aur::start(fake_aur::packages());
    // The AUR answers an unknown name with an empty repository.
    aur.git.init("empty-base");
    let c = client(&aur.srv.base);
    let git = permit();
    let e = c
        .list_files(&git, "no-such-base", None)
        .await
        .expect_err("missing repository");
    assert_eq!(e.kind(), "not_found", "{e}");
    let e = c
        .list_files(&git, "empty-base", None)
        .await
        .expect_err("empty repository");
    assert_eq!(e.kind(), "not_found", "{e}");
    for bad in ["../../etc/passwd", "/etc/passwd", ".git/config", "a//b"] {
        let e = c.file(&git, "evil-pkg", bad, None).await.expect_err("path");
        assert_eq!(e.kind(), "invalid_argument", "{bad}: {e}");
    }
    let e = c
        .file(&git, "evil-pkg", "missing", None)
        .await
        .expect_err("no such file");
    assert_eq!(e.kind(), "not_found");
    let e = c
        .file(&git, "evil-pkg", "PKGBUILD", Some("deadbeef"))
        .await
        .expect_err("no such commit");
    assert_eq!(e.kind(), "not_found", "{e}");
    let e = c
        .file(&git, "evil-pkg", "PKGBUILD", Some("HEAD~1"))
        .await
        .expect_err("not a commit id");
    assert_eq!(e.kind(), "invalid_argument", "{e}");
}

#[tokio::test]
async fn cache_serves_repeats_and_writes_atomically() {
    let srv = fake();
    let dir = tempfile::tempdir().expect("tmp");
    let c = AurClient::new(AurConfig {
        base_url: srv.base.clone(),
        cache_dir: Some(dir.path().join("aur")),
        cache_ttl: Duration::from_secs(3600),
        ..AurConfig::default()
    })
    .expect("client");
    let a = c.search("pkg", SearchBy::Name).await.expect("first");
    let hits = srv.hits();
    let b = c.search("pkg", SearchBy::Name).await.expect("second");
    assert_eq!(
        srv.hits(),
        hits,
        "the second search must come from the cache"
    );
    assert_eq!(a.packages, b.packages);
    let entries: Vec<String> = std::fs::read_dir(dir.path().join("aur"))
        .expect("cache dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 1);
    assert!(
        entries
            .iter()
            .all(|n| n.len() == 64 && !n.starts_with(".tmp"))
    );
    // A zero TTL refetches.
    let c0 = AurClient::new(AurConfig {
        base_url: srv.base.clone(),
        cache_dir: Some(dir.path().join("aur")),
        cache_ttl: Duration::ZERO,
        ..AurConfig::default()
    })
    .expect("client");
    std::thread::sleep(Duration::from_millis(20));
    c0.search("pkg", SearchBy::Name).await.expect("third");
    assert_eq!(srv.hits(), hits + 1);
}

#[tokio::test]
async fn bad_names_never_reach_the_network() {
    let srv = fake();
    let c = client(&srv.base);
    for bad in ["", "a b", "../x", "x&y=1", "-rf"] {
        let e = c.info_one(bad).await.expect_err(bad);
        assert_eq!(e.kind(), "invalid_argument", "{bad}");
    }
    assert_eq!(srv.hits(), 0);
}

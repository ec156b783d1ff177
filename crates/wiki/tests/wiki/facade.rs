//! The `Wiki` facade: which source answers under each preference, and that every answer says so.

use std::sync::Arc;
use std::time::Duration;

use archgate_wiki::{Preference, Source, Wiki, WikiConfig, WikiPageArgs, build_index};
use serde_json::json;

use super::server::{Reply, Request, closed_port_base, start};
use super::{copy_tree, fixtures};

fn config(base: &str) -> WikiConfig {
    WikiConfig {
        request_timeout: Duration::from_millis(800),
        connect_timeout: Duration::from_millis(800),
        ..WikiConfig::for_base_url(base)
    }
}

/// A fake wiki that knows one page the corpus lacks ("Online only") and answers every search.
fn online_wiki(req: &Request) -> Reply {
    let q = |k: &str| req.query.get(k).cloned().unwrap_or_default();
    match q("action").as_str() {
        "query" => Reply::Json(
            json!({"query": {"search": [{"title": "Online only", "snippet": "from the <span class=\"searchmatch\">network</span>"}]}}).to_string(),
        ),
        "parse" if q("page") == "Online only" => Reply::Json(
            json!({"parse": {"title": "Online only", "revid": 3, "text": "<div class=\"mw-parser-output\"><p>Served online.</p></div>"}}).to_string(),
        ),
        "opensearch" => Reply::Json(json!([q("search"), [], [], []]).to_string()),
        _ => Reply::Json(json!({"error": {"code": "missingtitle", "info": "missing"}}).to_string()),
    }
}

fn indexed() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("corpus"), &dir.path().join("html"));
    build_index(
        &dir.path().join("html"),
        &dir.path().join("index"),
        &mut |_| {},
    )
    .unwrap();
    dir
}

fn args(title: &str) -> WikiPageArgs {
    WikiPageArgs {
        title: title.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn offline_first_answers_offline_and_falls_back_online() {
    let server = start(Arc::new(online_wiki)).await;
    let dir = indexed();
    let wiki = Wiki::new(
        config(&server.base),
        &dir.path().join("index"),
        Preference::default(),
    )
    .unwrap();
    assert_eq!(wiki.preference(), Preference::OfflineFirst);

    let r = wiki.search("bootctl", 3).await.unwrap();
    assert_eq!(r.origin.source, Source::Offline);
    assert_eq!(r.hits[0].title, "Systemd-boot");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["source"], "offline");
    assert!(json["as_of"].as_str().unwrap().ends_with('Z'));
    assert!(json["age_seconds"].as_u64().unwrap() < 3600);

    let p = wiki.page(&args("GRUB")).await.unwrap();
    assert_eq!(p.origin.source, Source::Offline);
    // Not in the index: the network has it.
    let p = wiki.page(&args("Online only")).await.unwrap();
    assert_eq!(p.origin.source, Source::Online);
    assert_eq!(serde_json::to_value(&p).unwrap()["source"], "online");
    // Nothing offline for this query: asked online.
    let r = wiki.search("qwertyuiopasdf", 3).await.unwrap();
    assert_eq!(
        (r.origin.source, r.hits[0].title.as_str()),
        (Source::Online, "Online only")
    );
    // Missing everywhere: not found.
    assert_eq!(
        wiki.page(&args("Nowhere")).await.unwrap_err().kind(),
        "not_found"
    );
}

#[tokio::test]
async fn without_an_index_the_network_answers_unless_offline_only() {
    let server = start(Arc::new(online_wiki)).await;
    let empty = tempfile::tempdir().unwrap();
    let wiki = Wiki::new(config(&server.base), empty.path(), Preference::OfflineFirst).unwrap();
    assert_eq!(
        wiki.search("anything", 3).await.unwrap().origin.source,
        Source::Online
    );
    let only = Wiki::new(config(&server.base), empty.path(), Preference::OfflineOnly).unwrap();
    assert_eq!(
        only.search("anything", 3).await.unwrap_err().kind(),
        "no_index"
    );
    assert_eq!(
        only.page(&args("GRUB")).await.unwrap_err().kind(),
        "no_index"
    );
}

#[tokio::test]
async fn online_first_falls_back_to_the_index_when_offline_and_online_only_does_not() {
    let dir = indexed();
    let index = dir.path().join("index");
    let down = closed_port_base();
    let wiki = Wiki::new(config(&down), &index, Preference::OnlineFirst).unwrap();
    let r = wiki.search("journalctl", 3).await.unwrap();
    assert_eq!(r.origin.source, Source::Offline);
    assert_eq!(
        wiki.page(&args("Sudo")).await.unwrap().origin.source,
        Source::Offline
    );
    // Offline-first, page missing offline, network down: the offline "not found" stands.
    let off_first = Wiki::new(config(&down), &index, Preference::OfflineFirst).unwrap();
    assert_eq!(
        off_first
            .page(&args("Online only"))
            .await
            .unwrap_err()
            .kind(),
        "not_found"
    );

    let online_only = Wiki::new(config(&down), &index, Preference::OnlineOnly).unwrap();
    assert_eq!(
        online_only
            .search("journalctl", 3)
            .await
            .unwrap_err()
            .kind(),
        "could_not_reach"
    );

    let server = start(Arc::new(online_wiki)).await;
    let up = Wiki::new(config(&server.base), &index, Preference::OnlineFirst).unwrap();
    assert_eq!(
        up.search("journalctl", 3).await.unwrap().origin.source,
        Source::Online
    );
}

#[tokio::test]
async fn a_rebuilt_index_is_seen_after_reload() {
    let dir = indexed();
    let index = dir.path().join("index");
    let wiki = Wiki::new(config(&closed_port_base()), &index, Preference::OfflineOnly).unwrap();
    assert!(wiki.page(&args("Git")).await.is_ok());
    std::fs::remove_file(dir.path().join("html/en/Git.html")).unwrap();
    build_index(&dir.path().join("html"), &index, &mut |_| {}).unwrap();
    wiki.reload_offline();
    assert_eq!(
        wiki.page(&args("Git")).await.unwrap_err().kind(),
        "not_found"
    );
}

/// Offline with no index built: the answer says the wiki was out of reach (its URL once), that
/// this machine has no offline index, and that `archgate wiki index` builds one — under both
/// preferences that fall back, for search and for pages.
#[tokio::test]
async fn out_of_reach_without_an_index_names_the_missing_index_and_the_command() {
    let down = closed_port_base();
    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    for pref in [Preference::OfflineFirst, Preference::OnlineFirst] {
        let wiki = Wiki::new(config(&down), &index, pref).unwrap();
        for err in [
            wiki.search("journalctl", 3).await.unwrap_err(),
            wiki.page(&args("Systemd")).await.unwrap_err(),
        ] {
            let said = err.to_string();
            assert_eq!(err.kind(), "could_not_reach", "{pref:?}: {said}");
            assert!(said.contains("archgate wiki index"), "{pref:?}: {said}");
            assert!(
                said.contains(&format!("no offline ArchWiki index ({})", index.display())),
                "{pref:?}: {said}"
            );
            let host = down.trim_start_matches("http://");
            assert_eq!(said.matches(host).count(), 1, "the URL once: {said}");
            assert!(
                err.next_step().unwrap().contains("archgate wiki index"),
                "{err:?}"
            );
        }
    }
}

/// A wiki that refuses every request the way Wikimedia's front ends do when a client asks too
/// often: HTTP 429 with Retry-After in seconds and an HTML body (our own text in that shape).
fn rate_limited(req: &Request) -> Reply {
    let _ = req;
    Reply::Headed(
        429,
        vec!["Retry-After: 120".to_owned()],
        b"<!DOCTYPE html><html><body><p>Too many requests.</p></body></html>".to_vec(),
    )
}

/// A wiki down for maintenance: 503 with Retry-After as an HTTP date.
fn unavailable(req: &Request) -> Reply {
    let _ = req;
    Reply::Headed(
        503,
        vec!["Retry-After: Fri, 31 Dec 2100 23:59:59 GMT".to_owned()],
        b"<html><body>Service Unavailable</body></html>".to_vec(),
    )
}

/// Issue 36: a 429 was answered "malformed … a file or an answer is damaged". Class: HTTP status
/// codes mapped to wrong kinds.
#[tokio::test]
async fn a_rate_limited_wiki_says_so_with_retry_after_and_the_index_answers_meanwhile() {
    let server = start(Arc::new(rate_limited)).await;
    let dir = indexed();
    let index = dir.path().join("index");

    let online_only = Wiki::new(config(&server.base), &index, Preference::OnlineOnly).unwrap();
    let e = online_only.search("journalctl", 3).await.unwrap_err();
    assert_eq!(e.kind(), "rate_limited", "{e}");
    let msg = e.to_string();
    assert!(msg.contains("retry after 120 s"), "{msg}");
    assert!(!msg.contains("malformed"), "{msg}");
    let e = online_only.page(&args("Sudo")).await.unwrap_err();
    assert_eq!(e.kind(), "rate_limited", "{e}");

    // Online first, with an index: the index answers, and says why.
    let online_first = Wiki::new(config(&server.base), &index, Preference::OnlineFirst).unwrap();
    let r = online_first.search("journalctl", 3).await.unwrap();
    assert_eq!(r.origin.source, Source::Offline);
    let why = r.origin.instead_of_online.clone().expect("the reason");
    assert!(
        why.contains("rate limiting") && why.contains("retry after 120 s"),
        "{why}"
    );
    let v = serde_json::to_value(&r).unwrap();
    assert!(v["instead_of_online"].as_str().is_some(), "{v}");
    let p = online_first.page(&args("Sudo")).await.unwrap();
    assert_eq!(p.origin.source, Source::Offline);
    assert!(p.origin.instead_of_online.is_some());

    // Without an index: rate limited, and no index to answer instead.
    let none = dir.path().join("no-index");
    let bare = Wiki::new(config(&server.base), &none, Preference::OnlineFirst).unwrap();
    let e = bare.search("journalctl", 3).await.unwrap_err();
    assert_eq!(e.kind(), "rate_limited", "{e}");
    assert!(e.to_string().contains("archgate wiki index"), "{e}");

    // 503 with an HTTP date: the service is unavailable (could not reach), with the wait.
    let down = start(Arc::new(unavailable)).await;
    let w = Wiki::new(config(&down.base), &index, Preference::OnlineOnly).unwrap();
    let e = w.search("journalctl", 3).await.unwrap_err();
    assert_eq!(e.kind(), "could_not_reach", "{e}");
    assert!(e.to_string().contains("HTTP 503; retry after "), "{e}");
}

//! The online client against a local server speaking the MediaWiki API's JSON formats:
//! search, opensearch fallback, parse, missing pages, languages, cache, and failures.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use archgate_wiki::{OnlineWiki, SectionArg, Source, WikiConfig, WikiError, WikiPageArgs};
use serde_json::json;

use super::fixtures;
use super::server::{Reply, Request, Server, closed_port_base, start};

/// The parse API's `text` of a page: the fixture fragment.
fn fragment() -> String {
    std::fs::read_to_string(fixtures().join("parse/legacy-markup.html")).unwrap()
}

/// A fake ArchWiki: a few pages, search, opensearch; `down` makes it drop every connection.
fn mediawiki(down: Arc<AtomicBool>) -> impl Fn(&Request) -> Reply + Send + Sync {
    move |req: &Request| {
        if down.load(Ordering::SeqCst) {
            return Reply::Close;
        }
        if req.path != "/api.php" {
            return Reply::Raw(404, "text/plain", b"no".to_vec());
        }
        let q = |k: &str| req.query.get(k).cloned().unwrap_or_default();
        match (q("action").as_str(), q("list").as_str()) {
            ("query", "search") if q("srsearch") == "nothing here" => {
                Reply::Json(json!({"batchcomplete": true, "query": {"searchinfo": {"totalhits": 0}, "search": []}}).to_string())
            }
            ("query", "search") if q("srsearch") == "broken search" => Reply::Json(
                json!({"error": {"code": "internal_api_error_DBQueryError", "info": "search backend down"}}).to_string(),
            ),
            ("query", "search") => Reply::Json(
                json!({
                    "batchcomplete": true,
                    "continue": {"sroffset": 2, "continue": "-||"},
                    "query": {"searchinfo": {"totalhits": 40}, "search": [
                        {"ns": 0, "title": "Power management", "pageid": 11, "snippet": "Save energy with <span class=\"searchmatch\">suspend</span> &amp; hibernate"},
                        {"ns": 0, "title": "NVIDIA", "pageid": 12, "snippet": "video memory survives <span class=\"searchmatch\">suspend</span>"}
                    ]}
                })
                .to_string(),
            ),
            ("opensearch", _) => {
                let s = q("search");
                let titles: Vec<&str> = ["Pacman", "Pacman/Tips and tricks", "Power management"]
                    .into_iter()
                    .filter(|t| t.to_lowercase().starts_with(&s.to_lowercase()[..s.len().min(3)]))
                    .collect();
                let urls: Vec<String> = titles.iter().map(|t| format!("https://wiki.example/title/{}", t.replace(' ', "_"))).collect();
                let descs: Vec<&str> = titles.iter().map(|_| "").collect();
                Reply::Json(json!([s, titles, descs, urls]).to_string())
            }
            ("parse", _) => match q("page").as_str() {
                "Sample" | "Pacman" => Reply::Json(
                    json!({"parse": {
                        "title": q("page"), "pageid": 7, "revid": 81234,
                        "text": fragment(),
                        "sections": [{"toclevel": 1, "level": "2", "line": "Old style heading", "number": "1", "index": "1", "anchor": "Old_style_heading"}],
                        "langlinks": [
                            {"lang": "es", "url": "https://wiki.example/title/Pacman_(Espa%C3%B1ol)", "langname": "Spanish", "autonym": "español", "title": "Pacman (Español)"},
                            {"lang": "de", "url": "https://wiki.archlinux.de/title/Pacman", "langname": "German", "autonym": "Deutsch", "title": "Pacman"}
                        ]
                    }})
                    .to_string(),
                ),
                "Pacman (Español)" => Reply::Json(
                    json!({"parse": {"title": "Pacman (Español)", "revid": 5, "text": "<div class=\"mw-parser-output\"><p><b>pacman</b> es el gestor de paquetes.</p></div>", "langlinks": []}})
                        .to_string(),
                ),
                "Not json" => Reply::Raw(200, "application/json", b"<html>oops</html>".to_vec()),
                "No parse" => Reply::Json(json!({"batchcomplete": true}).to_string()),
                "Huge" => Reply::Json(json!({"parse": {"title": "Huge", "text": "x".repeat(200_000)}}).to_string()),
                "Slow" => Reply::Hang,
                "Silent" => Reply::Silent,
                _ => Reply::Json(
                    json!({"error": {"code": "missingtitle", "info": "The page you specified doesn't exist.", "*": "See api.php for API usage."}, "servedby": "test"})
                        .to_string(),
                ),
            },
            _ => Reply::Json(json!({"error": {"code": "badvalue", "info": "Unrecognized value"}}).to_string()),
        }
    }
}

async fn fake_wiki() -> (Server, Arc<AtomicBool>) {
    let down = Arc::new(AtomicBool::new(false));
    (start(Arc::new(mediawiki(down.clone()))).await, down)
}

fn client(base: &str) -> OnlineWiki {
    OnlineWiki::new(WikiConfig {
        request_timeout: Duration::from_millis(800),
        connect_timeout: Duration::from_millis(800),
        ..WikiConfig::for_base_url(base)
    })
    .unwrap()
}

fn page_args(title: &str) -> WikiPageArgs {
    WikiPageArgs {
        title: title.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn search_returns_hits_with_plain_snippets() {
    let (server, _) = fake_wiki().await;
    let wiki = client(&server.base);
    let r = wiki.search("suspend", 5).await.unwrap();
    assert_eq!(r.api, Some("search"));
    assert_eq!(r.origin.source, Source::Online);
    assert!(!r.origin.from_cache);
    let titles: Vec<&str> = r.hits.iter().map(|h| h.title.as_str()).collect();
    assert_eq!(titles, vec!["Power management", "NVIDIA"]);
    assert_eq!(r.hits[0].snippet, "Save energy with suspend & hibernate");
    assert_eq!(r.hits[0].uri, "archwiki://page/Power_management");
    assert_eq!(
        r.hits[0].url.as_deref(),
        Some(format!("{}/title/Power_management", server.base).as_str())
    );
    let req = &server.requests.lock().unwrap()[0];
    assert_eq!(req.query.get("srprop").map(String::as_str), Some("snippet"));
    assert_eq!(
        req.query.get("srsearch").map(String::as_str),
        Some("suspend")
    );
}

#[tokio::test]
async fn opensearch_answers_when_search_is_empty_or_broken() {
    let (server, _) = fake_wiki().await;
    let wiki = client(&server.base);
    let r = wiki.search("broken search", 5).await.unwrap();
    assert_eq!(r.api, Some("opensearch"));
    let r2 = wiki.search("nothing here", 5).await.unwrap();
    assert_eq!(
        r2.api,
        Some("search"),
        "an empty search stays empty when opensearch has nothing"
    );
    assert!(r2.hits.is_empty());
    let _ = r;
}

#[tokio::test]
async fn page_is_clean_markdown_with_sections_toc_and_languages() {
    let (server, _) = fake_wiki().await;
    let wiki = client(&server.base);
    let p = wiki
        .page(&WikiPageArgs {
            toc: Some(true),
            ..page_args("Sample")
        })
        .await
        .unwrap();
    let golden = std::fs::read_to_string(fixtures().join("golden/parse-fragment.md")).unwrap();
    assert_eq!(p.markdown, golden);
    assert_eq!(p.revision, Some(81234));
    assert_eq!(p.uri, "archwiki://page/Sample");
    assert_eq!(
        p.url.as_deref(),
        Some(format!("{}/title/Sample", server.base).as_str())
    );
    assert_eq!(p.origin.source, Source::Online);
    let toc: Vec<(u32, String)> = p
        .toc
        .unwrap()
        .into_iter()
        .map(|e| (e.index, e.title))
        .collect();
    assert_eq!(toc[1], (1, "Old style heading".to_owned()));
    assert_eq!(toc[2], (2, "A definition list".to_owned()));
    assert_eq!(
        p.languages
            .iter()
            .map(|l| l.lang.as_str())
            .collect::<Vec<_>>(),
        vec!["es", "de"]
    );
    let req = server.requests.lock().unwrap().last().unwrap().clone();
    assert_eq!(
        req.query.get("prop").map(String::as_str),
        Some("text|sections|revid|langlinks")
    );
    assert_eq!(
        req.query.get("formatversion").map(String::as_str),
        Some("2")
    );

    let s = wiki
        .page(&WikiPageArgs {
            section: Some(SectionArg::Name("A definition list".into())),
            ..page_args("Sample")
        })
        .await
        .unwrap();
    assert!(s.markdown.starts_with("### A definition list"));
    assert!(!s.markdown.contains("Old style heading"));

    let es = wiki
        .page(&WikiPageArgs {
            lang: Some("es".into()),
            ..page_args("Pacman")
        })
        .await
        .unwrap();
    assert_eq!(es.title, "Pacman (Español)");
    assert_eq!(es.lang, "es");
    assert!(es.markdown.contains("gestor de paquetes"));
}

#[tokio::test]
async fn missing_page_is_not_found_with_suggestions() {
    let (server, _) = fake_wiki().await;
    let wiki = client(&server.base);
    match wiki.page(&page_args("Pacmna")).await {
        Err(e @ WikiError::NotFound { .. }) => {
            assert_eq!(e.kind(), "not_found");
            let WikiError::NotFound { title, suggestions } = e else {
                unreachable!()
            };
            assert_eq!(title, "Pacmna");
            assert!(
                suggestions.contains(&"Pacman".to_owned()),
                "{suggestions:?}"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    // A translation that does not exist here points at the other wiki.
    match wiki
        .page(&WikiPageArgs {
            lang: Some("de".into()),
            ..page_args("Pacman")
        })
        .await
    {
        Err(WikiError::NotFound { title, suggestions }) => {
            assert_eq!(title, "Pacman (Deutsch)");
            assert!(
                suggestions.iter().any(|s| s.contains("wiki.archlinux.de")),
                "{suggestions:?}"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

/// Guards a test against hanging: a broken timeout fails the test instead of stalling the suite.
async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the client did not give up on its own")
}

#[tokio::test]
async fn failures_are_typed_errors_within_the_timeout() {
    let (server, _) = fake_wiki().await;
    let wiki = client(&server.base);
    let kind = |r: Result<archgate_wiki::WikiPage, WikiError>| r.unwrap_err().kind();
    assert_eq!(
        kind(within(wiki.page(&page_args("Slow"))).await),
        "timed_out"
    );
    assert_eq!(
        kind(within(wiki.page(&page_args("Silent"))).await),
        "timed_out"
    );
    assert_eq!(
        kind(within(wiki.page(&page_args("Not json"))).await),
        "malformed"
    );
    assert_eq!(
        kind(within(wiki.page(&page_args("No parse"))).await),
        "malformed"
    );

    let small = OnlineWiki::new(WikiConfig {
        max_response_bytes: 64 * 1024,
        ..WikiConfig::for_base_url(&server.base)
    })
    .unwrap();
    assert_eq!(
        kind(within(small.page(&page_args("Huge"))).await),
        "too_large"
    );

    let nobody = client(&closed_port_base());
    match within(nobody.search("pacman", 5)).await {
        Err(e @ WikiError::CouldNotReach { .. }) => {
            assert_eq!(e.kind(), "could_not_reach");
            assert!(e.to_string().contains("127.0.0.1"), "{e}");
        }
        other => panic!("expected CouldNotReach, got {other:?}"),
    }
    let wrong_path = client(&format!("{}/nowiki", server.base));
    assert_eq!(
        within(wrong_path.search("x", 5)).await.unwrap_err().kind(),
        "malformed"
    );
}

#[tokio::test]
async fn cache_answers_fresh_and_serves_stale_when_the_network_fails() {
    let (server, down) = fake_wiki().await;
    let cache = tempfile::tempdir().unwrap();
    let config = WikiConfig {
        cache_dir: Some(cache.path().to_owned()),
        request_timeout: Duration::from_millis(800),
        ..WikiConfig::for_base_url(&server.base)
    };
    let wiki = OnlineWiki::new(config.clone()).unwrap();
    let first = wiki.page(&page_args("Sample")).await.unwrap();
    assert!(!first.origin.from_cache);
    let n = server.count();
    let second = wiki.page(&page_args("Sample")).await.unwrap();
    assert!(second.origin.from_cache);
    assert!(!second.origin.stale);
    assert_eq!(
        server.count(),
        n,
        "a fresh cache entry answers without the network"
    );
    assert_eq!(second.markdown, first.markdown);
    // Missing pages are not cached.
    let _ = wiki.page(&page_args("Nope")).await;
    let before = server.count();
    let _ = wiki.page(&page_args("Nope")).await;
    assert!(server.count() > before);

    // TTL zero: every answer is stale; with the server down the stale copy is served, marked.
    let expired = OnlineWiki::new(WikiConfig {
        cache_ttl: Duration::ZERO,
        ..config
    })
    .unwrap();
    down.store(true, Ordering::SeqCst);
    let stale = within(expired.page(&page_args("Sample"))).await.unwrap();
    assert!(stale.origin.stale && stale.origin.from_cache);
    assert_eq!(stale.markdown, first.markdown);
    let err = within(expired.page(&page_args("Pacman")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "could_not_reach");
}

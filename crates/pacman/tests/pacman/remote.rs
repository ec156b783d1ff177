//! No pacman here: search and info go to the archlinux.org packages API (a local server playing
//! it, in the API's JSON format), cached with a TTL; failures are typed.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use archgate_pacman::args::{InfoArgs, SearchArgs};
use archgate_pacman::remote::RemoteSettings;
use archgate_pacman::search::Source;
use archgate_pacman::{PacmanDb, PacmanSettings};

fn package(name: &str, desc: &str, epoch: u32) -> String {
    format!(
        r#"{{"pkgname":"{name}","pkgbase":"{name}","repo":"extra","arch":"x86_64","pkgver":"1.2.3",
        "pkgrel":"2","epoch":{epoch},"pkgdesc":"{desc}","url":"https://example.invalid/{name}",
        "filename":"{name}-1.2.3-2-x86_64.pkg.tar.zst","compressed_size":1000,"installed_size":4000,
        "build_date":"2026-01-02T03:04:05Z","last_update":"2026-01-03T00:00:00Z","flag_date":null,
        "maintainers":["someone"],"packager":"Some One <one@example.invalid>","groups":[],
        "licenses":["MIT"],"conflicts":[],"provides":["{name}-api=1"],"replaces":[],
        "depends":["glibc"],"optdepends":["python: scripting"],"makedepends":[],"checkdepends":[]}}"#
    )
}

/// Answers every request with `body` (or stays silent when `None`); counts requests and keeps
/// the last request line.
fn api(body: Option<String>) -> (u16, Arc<AtomicUsize>, Arc<std::sync::Mutex<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(std::sync::Mutex::new(String::new()));
    let (h, l) = (hits.clone(), last.clone());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            h.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            *l.lock().unwrap() = req.lines().next().unwrap_or("").to_owned();
            match &body {
                Some(b) => {
                    let r = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}",
                        b.len()
                    );
                    let _ = stream.write_all(r.as_bytes());
                }
                None => held.push(stream),
            }
        }
    });
    (port, hits, last)
}

fn handle(port: u16, cache: Option<&std::path::Path>, timeout: Duration) -> PacmanDb {
    PacmanDb::new(PacmanSettings {
        conf_path: "/nonexistent/pacman.conf".into(),
        remote: RemoteSettings {
            base_url: format!("http://127.0.0.1:{port}"),
            timeout,
            max_bytes: 1 << 20,
            cache_dir: cache.map(Into::into),
            ttl: Duration::from_secs(600),
        },
        ..PacmanSettings::default()
    })
}

#[tokio::test]
async fn search_and_info_go_remote_without_pacman_and_are_cached() {
    let page = format!(
        r#"{{"version":2,"limit":250,"valid":true,"num_pages":1,"page":1,"results":[{},{}]}}"#,
        package("ripgrep-all", "search in pdfs too", 0),
        package("ripgrep", "fast grep", 1)
    );
    let (port, hits, last) = api(Some(page));
    let cache = tempfile::tempdir().unwrap();
    let db = handle(port, Some(cache.path()), Duration::from_secs(5));
    let args = SearchArgs {
        query: "ripgrep".into(),
        repo: Some("extra".into()),
        regex: None,
        limit: None,
    };
    let found = db.search(&args).await.unwrap();
    assert_eq!(found.source, Source::Remote);
    assert_eq!(found.results[0].name, "ripgrep", "exact name ranks first");
    assert_eq!(found.results[0].version, "1:1.2.3-2");
    assert_eq!(
        *last.lock().unwrap(),
        "GET /packages/search/json/?q=ripgrep&repo=Extra HTTP/1.1"
    );
    let again = db.search(&args).await.unwrap();
    assert_eq!(again.total, found.total);
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "second answer came from the cache"
    );

    let info = db
        .info(&InfoArgs {
            name: "ripgrep".into(),
        })
        .await
        .unwrap();
    assert_eq!(info.source, Source::Remote);
    let s = &info.sync[0];
    assert_eq!(s.details.version, "1:1.2.3-2");
    assert_eq!(s.download_size, Some(1000));
    assert_eq!(s.details.optdepends[0].reason.as_deref(), Some("scripting"));
    assert!(last.lock().unwrap().contains("?name=ripgrep "));
    let json = serde_json::to_value(&info).unwrap();
    assert_eq!(json["source"], "remote");
    assert_eq!(json["sync"][0]["build_date"], "2026-01-02T03:04:05Z");
}

#[tokio::test]
async fn remote_failures_are_typed() {
    let (silent, _, _) = api(None);
    let db = handle(silent, None, Duration::from_millis(300));
    let args = SearchArgs {
        query: "x".into(),
        repo: None,
        regex: None,
        limit: None,
    };
    assert_eq!(db.search(&args).await.unwrap_err().kind(), "timed_out");

    let (junk, _, _) = api(Some("<html>not json</html>".into()));
    let db = handle(junk, None, Duration::from_secs(5));
    assert_eq!(db.search(&args).await.unwrap_err().kind(), "malformed");

    let (big, _, _) = api(Some(format!(
        "{{\"results\":[],\"pad\":\"{}\"}}",
        "x".repeat(2 << 20)
    )));
    let db = handle(big, None, Duration::from_secs(5));
    assert_eq!(db.search(&args).await.unwrap_err().kind(), "too_large");

    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let db = handle(closed, None, Duration::from_secs(5));
    assert_eq!(
        db.search(&args).await.unwrap_err().kind(),
        "could_not_reach"
    );
}

/// A machine without pacman's databases (Debian, a container): when the remote API fails too,
/// the answer names the local fact (no pacman.conf, or no sync databases in its DBPath), the URL
/// once, and what to do; `pkg_updates` with no repository says so instead of "up to date".
#[tokio::test]
async fn without_databases_a_failed_fallback_names_this_machine_and_the_next_step() {
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let args = SearchArgs {
        query: "ripgrep".into(),
        repo: None,
        regex: None,
        limit: None,
    };
    let url = format!("http://127.0.0.1:{closed}/packages/search/json/?q=ripgrep");

    // No pacman.conf at all.
    let err = handle(closed, None, Duration::from_secs(5))
        .search(&args)
        .await
        .unwrap_err();
    let said = err.to_string();
    assert_eq!(err.kind(), "could_not_reach", "{said}");
    assert!(
        said.starts_with("this machine has no pacman.conf (/nonexistent/pacman.conf)"),
        "{said}"
    );
    assert_eq!(said.matches(&url).count(), 1, "the URL once: {said}");
    assert!(err.next_step().unwrap().contains("pacman -Sy"), "{err:?}");

    // A pacman.conf whose DBPath holds no sync database.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir_all(db.join("local")).unwrap();
    std::fs::create_dir_all(db.join("sync")).unwrap();
    let conf = dir.path().join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nRootDir = {root}\nDBPath = {db}/\nLogFile = {root}/pacman.log\nArchitecture = x86_64\n",
            root = dir.path().display(),
            db = db.display()
        ),
    )
    .unwrap();
    let pacman = PacmanDb::new(PacmanSettings {
        conf_path: conf.clone(),
        remote: RemoteSettings {
            base_url: format!("http://127.0.0.1:{closed}"),
            timeout: Duration::from_secs(5),
            max_bytes: 1 << 20,
            cache_dir: None,
            ttl: Duration::from_secs(600),
        },
        ..PacmanSettings::default()
    });
    let err = pacman.search(&args).await.unwrap_err();
    let said = err.to_string();
    assert_eq!(err.kind(), "could_not_reach", "{said}");
    assert!(
        said.starts_with(&format!(
            "this machine has no pacman sync databases (DBPath {}/",
            db.display()
        )),
        "{said}"
    );
    assert_eq!(said.matches(&url).count(), 1, "the URL once: {said}");
    let info = pacman
        .info(&InfoArgs {
            name: "ripgrep".into(),
        })
        .await
        .unwrap_err();
    assert!(
        info.to_string().contains("no pacman sync databases"),
        "{info}"
    );

    let updates = pacman.updates().await.unwrap_err();
    assert_eq!(updates.kind(), "not_available", "{updates}");
    assert!(
        updates.to_string().contains("configures no repository"),
        "{updates}"
    );
    assert!(updates.next_step().is_some());
}

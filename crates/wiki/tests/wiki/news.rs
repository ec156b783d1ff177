//! Arch news from a local feed: ordering, `since`, limits, manual-intervention flags, bad feeds.

use std::sync::Arc;
use std::time::Duration;

use archgate_wiki::{NewsClient, WikiConfig, parse_feed, parse_since};

use super::fixtures;
use super::server::{Reply, closed_port_base, start};

fn feed() -> Vec<u8> {
    std::fs::read(fixtures().join("news/feed.xml")).unwrap()
}

fn client() -> NewsClient {
    NewsClient::new(&WikiConfig {
        request_timeout: Duration::from_millis(800),
        ..WikiConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn news_items_are_ordered_filtered_and_flagged() {
    let server = start(Arc::new(|req: &super::server::Request| {
        match req.path.as_str() {
            "/feeds/news/" => Reply::Raw(200, "application/rss+xml; charset=utf-8", feed()),
            "/html" => Reply::Raw(
                200,
                "text/html",
                b"<!DOCTYPE html><html><body>not a feed</body></html>".to_vec(),
            ),
            "/broken" => Reply::Raw(
                200,
                "application/rss+xml",
                b"<rss><channel><item><title>x</title></channel></rss>".to_vec(),
            ),
            _ => Reply::Raw(404, "text/plain", b"missing".to_vec()),
        }
    }))
    .await;
    let url = format!("{}/feeds/news/", server.base);
    let news = client();

    let all = news.news(&url, 10, None).await.unwrap();
    assert_eq!(all.matched, 5);
    let titles: Vec<&str> = all.items.iter().map(|i| i.title.as_str()).collect();
    assert_eq!(
        titles,
        vec![
            "examplefs-utils >= 3.1 update requires manual intervention",
            "Sampled keyring rotation",
            "Demo compositor 2.0 released",
            "Mirror service changes",
            "Old item"
        ]
    );
    let flags: Vec<bool> = all.items.iter().map(|i| i.manual_intervention).collect();
    assert_eq!(flags, vec![true, true, false, false, false]);
    assert_eq!(all.manual_intervention_count, 2);
    assert_eq!(all.items[0].published, "2025-06-10T18:00:00Z");
    assert!(
        all.items[0]
            .body
            .contains("```\npacman -Syu --overwrite /usr/sbin/examplefs\\*\n```"),
        "{}",
        all.items[0].body
    );
    assert!(
        all.items[1]
            .body
            .contains("[package signing](archwiki://page/Pacman/Package_signing)"),
        "{}",
        all.items[1].body
    );
    assert!(
        all.items[2].body.contains("keep working & nothing else"),
        "{}",
        all.items[2].body
    );
    assert!(
        all.items[3].body.contains("retired — refresh"),
        "{}",
        all.items[3].body
    );

    // Since the last upgrade: only what came after.
    let since = parse_since("2025-05-21T12:00:00Z").unwrap();
    let recent = news.news(&url, 10, Some(since)).await.unwrap();
    assert_eq!(recent.items.len(), 2);
    assert_eq!(recent.since.as_deref(), Some("2025-05-21T12:00:00Z"));
    assert_eq!(recent.manual_intervention_count, 2);
    let limited = news.news(&url, 1, None).await.unwrap();
    assert_eq!((limited.items.len(), limited.matched), (1, 5));

    assert_eq!(
        news.news(&format!("{}/html", server.base), 5, None)
            .await
            .unwrap_err()
            .kind(),
        "malformed"
    );
    assert_eq!(
        news.news(&format!("{}/broken", server.base), 5, None)
            .await
            .unwrap_err()
            .kind(),
        "malformed"
    );
    assert_eq!(
        news.news(&format!("{}/gone", server.base), 5, None)
            .await
            .unwrap_err()
            .kind(),
        "malformed"
    );
    let unreachable = news
        .news(&format!("{}/feeds/news/", closed_port_base()), 5, None)
        .await
        .unwrap_err();
    assert_eq!(unreachable.kind(), "could_not_reach");
}

#[tokio::test]
async fn a_hanging_feed_times_out() {
    let server = start(Arc::new(|_: &super::server::Request| Reply::Silent)).await;
    let err = tokio::time::timeout(
        Duration::from_secs(20),
        client().news(&server.base, 5, None),
    )
    .await
    .expect("the client did not give up on its own")
    .unwrap_err();
    assert_eq!(err.kind(), "timed_out");
}

#[test]
fn feed_parser_rejects_what_is_not_rss() {
    for bad in [
        &b""[..],
        b"not xml at all <<<",
        b"<feed></feed>",
        b"<rss><channel><item>",
    ] {
        let err = parse_feed(bad, "test")
            .err()
            .unwrap_or_else(|| panic!("accepted {:?}", String::from_utf8_lossy(bad)));
        assert_eq!(err.kind(), "malformed");
    }
    let empty = parse_feed(
        b"<rss version=\"2.0\"><channel><title>t</title></channel></rss>",
        "test",
    )
    .unwrap();
    assert!(empty.is_empty());
}

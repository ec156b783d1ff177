//! Benchmark of archgate-wiki's offline index (figures, not assertions).
//!
//! Generates 5,000 wiki-like pages in the arch-wiki-docs layout, times the full index build,
//! a no-change and a small incremental rebuild, warm query latency (p50/p99) and page reads,
//! and compares an offline query with an online round trip to a local MediaWiki-like server.
//! Run: `cargo bench -p archgate-wiki --bench wiki` (see README.md).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use archgate_wiki::{OfflineWiki, OnlineWiki, WikiConfig, WikiPageArgs, build_index};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const PAGES: usize = 5_000;

const WORDS: &[&str] = &[
    "package",
    "kernel",
    "module",
    "service",
    "daemon",
    "socket",
    "mount",
    "partition",
    "boot",
    "loader",
    "compositor",
    "window",
    "monitor",
    "display",
    "driver",
    "firmware",
    "network",
    "wireless",
    "ethernet",
    "bridge",
    "firewall",
    "port",
    "user",
    "group",
    "permission",
    "sudo",
    "journal",
    "log",
    "timer",
    "cron",
    "backup",
    "snapshot",
    "btrfs",
    "ext4",
    "swap",
    "memory",
    "cpu",
    "frequency",
    "battery",
    "suspend",
    "hibernate",
    "audio",
    "sink",
    "source",
    "volume",
    "bluetooth",
    "keyboard",
    "layout",
    "locale",
    "font",
    "render",
    "cache",
    "mirror",
    "repository",
    "build",
    "compile",
    "toolchain",
    "python",
    "rust",
    "git",
    "container",
    "image",
    "virtual",
    "machine",
    "shell",
    "terminal",
    "prompt",
    "config",
    "option",
    "setting",
    "variable",
    "path",
];

/// Syllables of the generated part of the vocabulary.
const SYLLABLES: &[&str] = &[
    "ka", "to", "ri", "men", "sul", "ax", "tor", "vi", "lo", "dra", "pen", "qu", "ek", "zim", "fa",
    "nor", "bel", "ush", "ti", "gro",
];

/// The vocabulary: the domain words first (most frequent), then ~4,000 generated words.
fn vocabulary() -> Vec<String> {
    let mut v: Vec<String> = WORDS.iter().map(|w| (*w).to_owned()).collect();
    for a in SYLLABLES {
        for b in SYLLABLES {
            for c in SYLLABLES.iter().take(10) {
                v.push(format!("{a}{b}{c}"));
            }
        }
    }
    v
}

/// A small deterministic generator (no dependency, same corpus every run).
struct Lcg(u64, Vec<String>);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn uniform(&mut self) -> f64 {
        (self.next() % 1_000_000) as f64 / 1_000_000.0
    }
    /// A word with a Zipf-like distribution: low ranks are common, the tail is rare.
    fn word(&mut self) -> String {
        let n = self.1.len() as f64;
        let rank = (n.powf(self.uniform()) - 1.0) as usize;
        self.1[rank.min(self.1.len() - 1)].clone()
    }
    fn sentence(&mut self, n: usize) -> String {
        let mut s: Vec<String> = (0..n).map(|_| self.word()).collect();
        s[0] = "The".to_owned();
        s.join(" ") + "."
    }
}

fn title(i: usize) -> String {
    format!("Topic {i} {}", WORDS[i % WORDS.len()])
}

fn page_html(i: usize, rng: &mut Lcg) -> String {
    let t = title(i);
    let mut body = String::new();
    body.push_str(&format!("<p><b>{t}</b> {}</p>\n", rng.sentence(30)));
    for s in 0..6 {
        body.push_str(&format!(
            "<div class=\"mw-heading mw-heading2\"><h2 id=\"S{s}\">Section {s} {}</h2><span class=\"mw-editsection\">[edit]</span></div>\n",
            rng.word()
        ));
        for _ in 0..3 {
            let link = title(rng.next() as usize % PAGES).replace(' ', "_");
            body.push_str(&format!(
                "<p>{} See <a href=\"{link}.html\">{link}</a>. {}</p>\n",
                rng.sentence(25),
                rng.sentence(20)
            ));
        }
        body.push_str(&format!(
            "<pre># {} --{} {}\n$ {} {}\n</pre>\n",
            rng.word(),
            rng.word(),
            rng.word(),
            rng.word(),
            rng.word()
        ));
        if s % 2 == 0 {
            body.push_str(&format!(
                "<div class=\"archwiki-template-box archwiki-template-box-note\"><strong>Note:</strong> {}</div>\n",
                rng.sentence(15)
            ));
            body.push_str(
                "<table class=\"wikitable\"><tbody><tr><th>Option</th><th>Meaning</th></tr>\n",
            );
            for _ in 0..4 {
                body.push_str(&format!(
                    "<tr><td><code>{}</code></td><td>{}</td></tr>\n",
                    rng.word(),
                    rng.sentence(8)
                ));
            }
            body.push_str("</tbody></table>\n");
        }
    }
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"UTF-8\"><title>{t} - ArchWiki</title></head><body>\
<h1 id=\"firstHeading\">{t}</h1><div id=\"mw-content-text\"><div class=\"mw-parser-output\">{body}</div></div></body></html>"
    )
}

fn generate(dir: &Path) -> u64 {
    let en = dir.join("en");
    std::fs::create_dir_all(&en).unwrap();
    let mut rng = Lcg(42, vocabulary());
    let mut bytes = 0;
    for i in 0..PAGES {
        let html = page_html(i, &mut rng);
        bytes += html.len() as u64;
        std::fs::write(
            en.join(format!("{}.html", title(i).replace(' ', "_"))),
            html,
        )
        .unwrap();
    }
    bytes
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn measure(n: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    let mut v: Vec<Duration> = (0..n)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    v.sort();
    v
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// A local server answering every request with one MediaWiki search answer.
async fn search_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let body = r#"{"batchcomplete":true,"query":{"searchinfo":{"totalhits":2},"search":[{"ns":0,"title":"Topic 1 kernel","snippet":"the <span class=\"searchmatch\">kernel</span> module"},{"ns":0,"title":"Topic 2 module","snippet":"a <span class=\"searchmatch\">module</span>"}]}}"#;
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

fn main() {
    // `cargo test --all-targets` runs bench targets without `--bench`: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        eprintln!("wiki benchmark: run with `cargo bench -p archgate-wiki --bench wiki`");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("html");
    let index = dir.path().join("index");
    let mut rows: Vec<(String, String)> = Vec::new();

    let t = Instant::now();
    let bytes = generate(&src);
    rows.push((
        format!("generate {PAGES} pages ({} MiB)", bytes / (1024 * 1024)),
        ms(t.elapsed()),
    ));

    let t = Instant::now();
    let report = build_index(&src, &index, &mut |_| {}).unwrap();
    rows.push((
        format!("full index build ({} pages)", report.pages),
        format!("{:.2} s", t.elapsed().as_secs_f64()),
    ));

    let t = Instant::now();
    let again = build_index(&src, &index, &mut |_| {}).unwrap();
    assert_eq!(again.unchanged, PAGES);
    rows.push(("rebuild, nothing changed".into(), ms(t.elapsed())));

    let mut rng = Lcg(7, vocabulary());
    for i in 0..50 {
        let p = src
            .join("en")
            .join(format!("{}.html", title(i * 97).replace(' ', "_")));
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        writeln!(f, "<!-- {} -->", rng.word()).unwrap();
    }
    let t = Instant::now();
    let inc = build_index(&src, &index, &mut |_| {}).unwrap();
    rows.push((
        format!("rebuild, {} pages changed", inc.updated),
        ms(t.elapsed()),
    ));

    let wiki = OfflineWiki::open(&index).unwrap();
    let queries: Vec<String> = (0..200)
        .map(|_| format!("{} {} {}", rng.word(), rng.word(), rng.word()))
        .collect();
    for q in &queries {
        wiki.search(q, 10).unwrap();
    }
    let q = measure(2_000, |i| {
        wiki.search(&queries[i % queries.len()], 10).unwrap();
    });
    rows.push((
        "warm search p50 (10 hits, snippets)".into(),
        ms(percentile(&q, 0.5)),
    ));
    rows.push(("warm search p99".into(), ms(percentile(&q, 0.99))));
    let one = measure(2_000, |i| {
        wiki.search(&queries[i % queries.len()], 1).unwrap();
    });
    rows.push(("warm search p50 (1 hit)".into(), ms(percentile(&one, 0.5))));
    rows.push(("warm search p99 (1 hit)".into(), ms(percentile(&one, 0.99))));
    let p = measure(300, |i| {
        wiki.page(&WikiPageArgs {
            title: title(i * 13 % PAGES),
            ..Default::default()
        })
        .unwrap();
    });
    rows.push(("page → Markdown p50".into(), ms(percentile(&p, 0.5))));
    rows.push(("page → Markdown p99".into(), ms(percentile(&p, 0.99))));

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let online_p50 = rt.block_on(async {
        let base = search_server().await;
        let online = OnlineWiki::new(WikiConfig::for_base_url(&base)).unwrap();
        for _ in 0..20 {
            online.search("kernel module", 10).await.unwrap();
        }
        let mut v = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            online.search("kernel module", 10).await.unwrap();
            v.push(t.elapsed());
        }
        v.sort();
        percentile(&v, 0.5)
    });
    rows.push((
        "online search round trip p50 (local server)".into(),
        ms(online_p50),
    ));
    let ratio = percentile(&q, 0.5).as_secs_f64() / online_p50.as_secs_f64();
    rows.push(("offline p50 / online p50".into(), format!("{ratio:.2}")));

    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(10);
    let mut out = std::io::stderr().lock();
    writeln!(
        out,
        "\n| {:w$} | {:>12} |",
        "archgate-wiki benchmark", "figure"
    )
    .unwrap();
    writeln!(out, "| {} | {} |", "-".repeat(w), "-".repeat(12)).unwrap();
    for (k, v) in rows {
        writeln!(out, "| {k:w$} | {v:>12} |").unwrap();
    }
}

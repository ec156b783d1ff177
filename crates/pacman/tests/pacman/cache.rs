//! `pkg_cache`: the package cache of a test system (real package files), what `paccache -rk3`
//! would remove (pacman-contrib is not in Debian: an independent count ordered by the real
//! `vercmp`), the versions to go back to from the cache (their `pacman -U` command run for real
//! in the test system) and from the Arch Linux Archive (a local server speaking its listing
//! format); and one package's history from a log real pacman wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use archgate_pacman::args::{CacheArgs, LogArgs};
use archgate_pacman::remote::RemoteSettings;
use archgate_pacman::{PacmanDb, PacmanSettings};

use crate::health_world::{KEEPER_VERSIONS, World, fixture_pkg, pkg};

/// A test system with conf-keeper 1.2 installed and every built version in its cache, plus a
/// signature, a partial download, a stray file and a package that is not installed.
fn cached_world() -> World {
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.2")]);
    let cache = w.cache();
    for v in KEEPER_VERSIONS {
        let p = pkg("conf-keeper", v);
        std::fs::copy(&p, cache.join(p.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        cache.join("conf-keeper-1.0-1-x86_64.pkg.tar.zst.sig"),
        [7u8; 119],
    )
    .unwrap();
    let foreign = fixture_pkg("foreign-tool-1.0-1-x86_64");
    std::fs::copy(&foreign, cache.join(foreign.file_name().unwrap())).unwrap();
    std::fs::write(
        cache.join("conf-keeper-2.0-1-x86_64.pkg.tar.zst.part"),
        b"half",
    )
    .unwrap();
    std::fs::write(cache.join("notes.txt"), b"not a package").unwrap();
    w
}

fn vercmp(a: &str, b: &str) -> std::cmp::Ordering {
    let out = Command::new("vercmp").args([a, b]).output().unwrap();
    let n: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    n.cmp(&0)
}

fn db(w: &World, archive: &str) -> PacmanDb {
    PacmanDb::new(PacmanSettings {
        conf_path: w.conf.clone(),
        archive: RemoteSettings {
            base_url: archive.to_owned(),
            timeout: Duration::from_secs(3),
            max_bytes: 1 << 20,
            cache_dir: None,
            ttl: Duration::from_secs(60),
        },
        ..PacmanSettings::default()
    })
}

#[tokio::test]
async fn cache_versions_and_paccache_rk3_agree_with_an_independent_count() {
    let w = cached_world();
    let d = db(&w, "http://127.0.0.1:9");
    let v = d.cache_tool(&CacheArgs::default()).await.unwrap();

    // Versions listed = the package files in the cache, by name.
    let mut expected: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in std::fs::read_dir(w.cache()).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".pkg.tar.zst") else {
            continue;
        };
        let parts: Vec<&str> = stem.rsplitn(4, '-').collect();
        expected
            .entry(parts[3].to_owned())
            .or_default()
            .insert(format!("{}-{}", parts[2], parts[1]));
    }
    let listed: BTreeMap<String, BTreeSet<String>> = v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let vs = p["versions"].as_array().unwrap();
            (
                p["name"].as_str().unwrap().to_owned(),
                vs.iter().map(|x| x.as_str().unwrap().to_owned()).collect(),
            )
        })
        .collect();
    assert_eq!(listed, expected);
    // Newest first, by vercmp: 1.10 before 1.2.
    let keeper = v["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "conf-keeper")
        .unwrap();
    let order: Vec<&str> = keeper["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    let mut by_vercmp = order.clone();
    by_vercmp.sort_by(|a, b| vercmp(b, a));
    assert_eq!(order, by_vercmp);
    assert_eq!(order[0], "1.10-1");
    assert_eq!(keeper["installed"], "1.2-1");

    // paccache -rk3, counted independently: all but the three newest of each name.
    let mut remove = BTreeSet::new();
    let mut freed = 0u64;
    for (name, versions) in &expected {
        let mut vs: Vec<&String> = versions.iter().collect();
        vs.sort_by(|a, b| vercmp(b, a));
        for old in vs.iter().skip(3) {
            let file = w.cache().join(format!("{name}-{old}-x86_64.pkg.tar.zst"));
            freed += std::fs::metadata(&file).unwrap().len();
            let sig = PathBuf::from(format!("{}.sig", file.display()));
            freed += std::fs::metadata(&sig).map(|m| m.len()).unwrap_or(0);
            remove.insert(file.display().to_string());
        }
    }
    assert_eq!(remove.len(), 1, "the oldest conf-keeper");
    let k = &v["keep_newest"];
    let ours: BTreeSet<String> = k["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ours, remove);
    assert_eq!(k["bytes"].as_u64().unwrap(), freed);
    assert_eq!(k["command"], "sudo paccache -rk3");
    // Uninstalled: foreign-tool only.
    let u = &v["uninstalled"];
    assert_eq!(u["files"], 1);
    assert!(
        u["paths"][0]
            .as_str()
            .unwrap()
            .contains("foreign-tool-1.0-1")
    );
    // The size is every file in the directory, signatures and partial downloads included.
    let all: u64 = std::fs::read_dir(w.cache())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(v["bytes"].as_u64().unwrap(), all);
    assert_eq!(v["files"], 5);
    // keep is honoured: -rk1 removes all but 1.10.
    let one = d
        .cache_tool(&CacheArgs {
            name: None,
            keep: Some(1),
        })
        .await
        .unwrap();
    assert_eq!(one["keep_newest"]["files"], 3);
    assert_eq!(one["keep_newest"]["command"], "sudo paccache -rk1");
}

#[tokio::test]
async fn an_unreadable_cache_is_an_error_naming_it_and_a_missing_one_holds_nothing() {
    let w = cached_world();
    let d = db(&w, "http://127.0.0.1:9");
    std::fs::remove_dir_all(w.cache()).unwrap();
    let v = d.cache_tool(&CacheArgs::default()).await.unwrap();
    assert_eq!(v["files"], 0);
    assert_eq!(v["dirs"][0]["exists"], false);
    // A file where the directory should be cannot be listed.
    std::fs::write(w.cache(), b"x").unwrap();
    let err = d.cache_tool(&CacheArgs::default()).await.unwrap_err();
    assert_eq!(err.kind(), "unreadable");
    assert!(err.to_string().contains(&w.cache().display().to_string()));
}

/// nginx's directory listing (ngx_http_autoindex_module, its default `autoindex_exact_size
/// on`): the shape archive.archlinux.org serves. Our own records, in exactly that shape: CRLF
/// lines, `../` first, a `./` before a name with a colon, names padded to 50 columns, then
/// `DD-Mon-YYYY HH:MM` and the size right-aligned in 19 columns.
fn listing(uri: &str, files: &[&str]) -> String {
    let mut s = format!(
        "<html>\r\n<head><title>Index of {uri}</title></head>\r\n<body>\r\n<h1>Index of {uri}</h1><hr><pre><a href=\"../\">../</a>\r\n"
    );
    for f in files {
        let href = if f.contains(':') {
            format!("./{f}")
        } else {
            (*f).to_owned()
        };
        let shown = if f.len() > 50 {
            format!("{}..&gt;</a>", &f[..47])
        } else {
            format!("{f}</a>{}", " ".repeat(50 - f.len()))
        };
        s.push_str(&format!(
            "<a href=\"{href}\">{shown} 14-Mar-2026 09:26 {:>19}\r\n",
            1234
        ));
    }
    s.push_str("</pre><hr></body>\r\n</html>\r\n");
    s
}

/// One listing pinned byte for byte: our own records in the shape nginx's autoindex module
/// writes (read from ngx_http_autoindex_module.c: title and h1 with the URI, `../` first, a
/// `./` before a name with a colon, the link text cut at 50 columns with `..&gt;`, padding after
/// `</a>`, the date as `%02d-%s-%d %02d:%02d`, the exact size in 19 columns, CRLF line ends).
const PINNED: &str = "<html>\r\n<head><title>Index of /packages/c/conf-keeper/</title></head>\r\n<body>\r\n\
<h1>Index of /packages/c/conf-keeper/</h1><hr><pre><a href=\"../\">../</a>\r\n\
<a href=\"conf-keeper-0.9-1-x86_64.pkg.tar.zst\">conf-keeper-0.9-1-x86_64.pkg.tar.zst</a>               14-Mar-2026 09:26                1234\r\n\
<a href=\"./conf-keeper-1:0.1-1-x86_64.pkg.tar.zst\">conf-keeper-1:0.1-1-x86_64.pkg.tar.zst</a>             14-Mar-2026 09:26                1234\r\n\
<a href=\"conf-keeper-0.8.0.20240101.r123.gabcdef-1-x86_64.pkg.tar.zst\">conf-keeper-0.8.0.20240101.r123.gabcdef-1-x86_6..&gt;</a> 14-Mar-2026 09:26                1234\r\n\
</pre><hr></body>\r\n</html>\r\n";

#[test]
fn the_pinned_archive_listing_parses_and_the_stand_in_writes_the_same_shape() {
    let dir = "/packages/c/conf-keeper/";
    let names = [
        "conf-keeper-0.9-1-x86_64.pkg.tar.zst",
        "conf-keeper-1:0.1-1-x86_64.pkg.tar.zst",
        "conf-keeper-0.8.0.20240101.r123.gabcdef-1-x86_64.pkg.tar.zst",
    ];
    assert_eq!(listing(dir, &names), PINNED);
    let l = archgate_pacman::ala::parse_listing(
        PINNED,
        "http://a/packages/c/conf-keeper/",
        "conf-keeper",
    )
    .unwrap();
    let got: Vec<(&str, &str)> = l
        .files
        .iter()
        .map(|f| (f.version.as_str(), f.url.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "0.9-1",
                "http://a/packages/c/conf-keeper/conf-keeper-0.9-1-x86_64.pkg.tar.zst"
            ),
            (
                "1:0.1-1",
                "http://a/packages/c/conf-keeper/conf-keeper-1:0.1-1-x86_64.pkg.tar.zst"
            ),
            (
                "0.8.0.20240101.r123.gabcdef-1",
                "http://a/packages/c/conf-keeper/conf-keeper-0.8.0.20240101.r123.gabcdef-1-x86_64.pkg.tar.zst"
            ),
        ]
    );
}

/// Serves `routes` (path → status, body); anything else is 404.
fn serve(
    routes: Vec<(String, u16, String)>,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let a = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap_or(0);
            let req = String::from_utf8_lossy(&buf[..n]).to_string();
            let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
            a.lock().unwrap().push(path.clone());
            let (status, body) = routes
                .iter()
                .find(|r| r.0 == path)
                .map(|r| (r.1, r.2.clone()))
                .unwrap_or((404, "<html>404</html>".to_owned()));
            let _ = stream.write_all(
                format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
        }
    });
    (format!("http://127.0.0.1:{port}"), asked)
}

#[tokio::test]
async fn downgrade_offers_older_versions_from_the_cache_and_the_archive_with_the_command() {
    let w = cached_world();
    let dir = "/packages/c/conf-keeper/";
    let files = [
        "conf-keeper-0.9-1-x86_64.pkg.tar.zst",
        "conf-keeper-0.9-1-x86_64.pkg.tar.zst.sig",
        "conf-keeper-1.1-1-x86_64.pkg.tar.zst",
        "conf-keeper-1.1-1-aarch64.pkg.tar.zst",
        "conf-keeper-1:0.1-1-x86_64.pkg.tar.zst",
        "conf-keeper-1.2-1-x86_64.pkg.tar.zst",
        "conf-keeper-0.8.0.20240101.r123.gabcdef-1-x86_64.pkg.tar.zst",
        "conf-keeper-extras-0.1-1-any.pkg.tar.zst",
    ];
    let (base, asked) = serve(vec![(dir.to_owned(), 200, listing(dir, &files))]);
    let d = db(&w, &base);
    let v = d
        .cache_tool(&CacheArgs {
            name: Some("conf-keeper".into()),
            keep: None,
        })
        .await
        .unwrap();
    assert_eq!(asked.lock().unwrap().as_slice(), [dir]);
    assert_eq!(v["installed"], "1.2-1");
    // The cache: older than 1.2-1 by vercmp (1.10 is newer), newest first.
    let cached: Vec<&str> = v["cache"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["version"].as_str().unwrap())
        .collect();
    assert_eq!(cached, ["1.1-1", "1.0-1"]);
    // The archive: older ones of this architecture only; the epoch one is newer; another
    // package's file and signatures are not versions.
    let archived: Vec<&str> = v["archive"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["version"].as_str().unwrap())
        .collect();
    // The long name is cut in the link text, whole in the href.
    assert_eq!(
        archived,
        ["1.1-1", "0.9-1", "0.8.0.20240101.r123.gabcdef-1"]
    );
    assert_eq!(
        v["archive"]["versions"][1]["command"],
        format!("sudo pacman -U {base}{dir}conf-keeper-0.9-1-x86_64.pkg.tar.zst")
    );
    // The cache command is exactly right: run without sudo in the test system, it downgrades.
    let cmd = v["cache"][0]["command"].as_str().unwrap();
    let file = cmd.strip_prefix("sudo pacman -U ").unwrap();
    w.pacman(&["-U", file]);
    let (_, out, _) = w.pacman_output(&["-Q", "conf-keeper"]);
    assert_eq!(out.trim(), "conf-keeper 1.1-1");
    assert!(v["note"].as_str().unwrap().contains("IgnorePkg"));
}

#[tokio::test]
async fn the_archive_offline_malformed_or_unknown_is_said_and_the_cache_still_answers() {
    let w = cached_world();
    let args = CacheArgs {
        name: Some("conf-keeper".into()),
        keep: None,
    };
    // Offline: nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let v = db(&w, &format!("http://127.0.0.1:{port}"))
        .cache_tool(&args)
        .await
        .unwrap();
    assert_eq!(v["archive"]["error"]["kind"], "could_not_reach");
    assert!(v["archive"].get("versions").is_none());
    assert_eq!(v["cache"].as_array().unwrap().len(), 2);
    // Not a listing: a typed error naming what is missing.
    let dir = "/packages/c/conf-keeper/";
    let (base, _) = serve(vec![(
        dir.to_owned(),
        200,
        "<html>maintenance</html>".into(),
    )]);
    let v = db(&w, &base).cache_tool(&args).await.unwrap();
    assert_eq!(v["archive"]["error"]["kind"], "malformed");
    assert!(
        v["archive"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("<pre>")
    );
    // 404: the archive has no such package — nothing found, said as an empty list.
    let (base, _) = serve(vec![]);
    let v = db(&w, &base).cache_tool(&args).await.unwrap();
    assert_eq!(v["archive"]["versions"].as_array().unwrap().len(), 0);
    assert!(v["archive"].get("error").is_none());
    // A name that could leave the package directory never reaches the network.
    let err = db(&w, &base)
        .cache_tool(&CacheArgs {
            name: Some("../../etc".into()),
            keep: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "invalid_argument");
}

#[tokio::test]
async fn one_package_history_from_the_log_real_pacman_wrote() {
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.0")]);
    w.install(&[pkg("conf-keeper", "1.2")]);
    w.install(&[pkg("conf-keeper", "1.1")]);
    w.install(&[pkg("conf-keeper", "1.1")]);
    w.install(&[pkg("conf-saver", "1.0")]);
    w.pacman(&["-R", "conf-keeper"]);
    w.install(&[pkg("conf-keeper", "1.10")]);
    let d = db(&w, "http://127.0.0.1:9");
    let r = d
        .pacman_log(&LogArgs {
            package: Some("conf-keeper".into()),
            limit: Some(2),
            ..LogArgs::default()
        })
        .await
        .unwrap();
    let h = r.history.expect("a history for a package");
    assert_eq!(
        (
            h.installed,
            h.upgraded,
            h.downgraded,
            h.reinstalled,
            h.removed
        ),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(h.versions, ["1.0-1", "1.2-1", "1.1-1", "1.10-1"]);
    assert_eq!(h.first.unwrap().new_version.as_deref(), Some("1.0-1"));
    let last = h.last.unwrap();
    assert_eq!(last.new_version.as_deref(), Some("1.10-1"));
    // The limit cuts the entries, not the history.
    assert_eq!(r.entries.len(), 2);
    assert_eq!(r.total, 6);
    // The log lines pacman wrote are the oracle for the count.
    let log = std::fs::read_to_string(w.dir.path().join("pacman.log")).unwrap();
    let lines = log
        .lines()
        .filter(|l| l.contains("[ALPM] ") && l.contains(" conf-keeper ("))
        .count();
    assert_eq!(lines, 6);
    // Without a package: no history.
    let all = d.pacman_log(&LogArgs::default()).await.unwrap();
    assert!(all.history.is_none());
}

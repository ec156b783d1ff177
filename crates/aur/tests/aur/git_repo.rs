//! The package repository as untrusted input, and the cache it is fetched into: a hostile
//! repository (a symlink out of the tree, a submodule, filter and LFS attributes, hook-named
//! scripts) makes git run nothing and reads nothing outside; names that leave the tree refuse
//! the fetch; a file or repository past the limits is `too_large`; a failed fetch leaves the
//! cached repository whole; concurrent audits of one package fetch once.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use archgate_aur::{AurClient, AurConfig};

use crate::support::fake_aur::{self, Aur, Pkg};
use crate::support::git_http::Entry;
use crate::support::permit;

fn client(base: &str, cache: &Path, ttl: Duration) -> AurClient {
    AurClient::new(AurConfig {
        base_url: base.to_owned(),
        timeout: Duration::from_secs(10),
        cache_dir: Some(cache.to_owned()),
        cache_ttl: ttl,
        max_file_bytes: 64 * 1024,
        max_repo_bytes: 512 * 1024,
        ..AurConfig::default()
    })
    .expect("client")
}

fn pkgbuild(name: &str, extra: &str) -> String {
    format!(
        "# Maintainer: Test Writer <writer@example.org>\npkgname={name}\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/{name}\"\nlicense=('MIT')\n{extra}\npackage() {{\n  install -Dm644 README \"$pkgdir/usr/share/doc/$pkgname/README\"\n}}\n"
    )
}

/// A package on the RPC side with no commits (the test writes its repository itself).
fn rpc_only(name: &'static str) -> Pkg {
    Pkg {
        name,
        version: "1.0-1",
        maintainer: Some("Test Writer"),
        votes: 1,
        commits: Vec::new(),
    }
}

/// Bytes no compression shrinks (xorshift), so a repository's size is what it holds.
fn noise(n: usize, mut seed: u64) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

/// Files under `dir` whose names say a fetch was cut short or a staging copy was left.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("tmp_") || n.starts_with(".staging") || n.starts_with(".trash") {
                out.push(e.path().display().to_string());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(e.path());
            }
        }
    }
    out
}

#[tokio::test]
async fn a_hostile_repository_runs_nothing_and_reads_nothing_outside() {
    let aur = Aur::start(vec![rpc_only("hostile")]);
    let marker_dir = tempfile::tempdir().expect("tmp");
    let marker = marker_dir.path().join("ran");
    let script = format!("#!/bin/sh\ntouch {}\n", marker.display());
    let pb = pkgbuild(
        "hostile",
        "install=hostile.install\nsource=('helper.sh' 'big.patch')\nsha256sums=('SKIP' 'SKIP')\n",
    );
    let big = vec![b'x'; 200 * 1024];
    let sub = aur.git.blob("hostile", b"not a commit");
    let files = [
        Entry::File("PKGBUILD", pb.as_bytes()),
        // An install script that is a symbolic link to a file of this machine.
        Entry::Symlink("hostile.install", "/etc/passwd"),
        Entry::Executable("helper.sh", script.as_bytes()),
        Entry::File("big.patch", &big),
        // Filters, LFS and a diff driver that would run programs if anything applied them.
        Entry::File(
            ".gitattributes",
            b"* filter=evil diff=evil\n*.patch filter=lfs diff=lfs merge=lfs -text\n",
        ),
        Entry::File(
            ".gitmodules",
            b"[submodule \"vendor\"]\n\tpath = vendor\n\turl = https://example.invalid/vendor.git\n",
        ),
    ];
    let mut raw: Vec<(String, String, String)> = Vec::new();
    let tree0 = aur.git.tree("hostile", &files);
    // Hook-named scripts in a directory, and a submodule entry: re-list the tree with them.
    let hooks = aur.git.tree(
        "hostile",
        &[
            Entry::Executable("post-checkout", script.as_bytes()),
            Entry::Executable("post-merge", script.as_bytes()),
        ],
    );
    for line in aur.git.ls_tree("hostile", &tree0) {
        raw.push(line);
    }
    raw.push(("40000".into(), "hooks".into(), hooks));
    raw.push(("160000".into(), "vendor".into(), sub_commit(&aur, &sub)));
    let refs: Vec<(&str, &str, &str)> = raw
        .iter()
        .map(|(m, n, i)| (m.as_str(), n.as_str(), i.as_str()))
        .collect();
    let tree = aur.git.raw_tree("hostile", &refs);
    let head = aur.git.commit(
        "hostile",
        &tree,
        None,
        "Test Writer",
        "1.0-1",
        "2024-01-01T12:00:00+0000",
    );

    let cache = tempfile::tempdir().expect("tmp");
    let c = client(&aur.srv.base, cache.path(), Duration::from_secs(600));
    let git = permit();
    let pf = c.package_files(&git, "hostile").await.expect("files");
    assert_eq!(pf.commit, head);
    assert_eq!(pf.pkgbuild, pb, "the PKGBUILD's bytes, no filter applied");
    let kinds: BTreeMap<&str, (&str, &str)> = pf
        .files
        .iter()
        .map(|f| (f.name.as_str(), (f.kind, f.mode.as_str())))
        .collect();
    assert_eq!(kinds["hostile.install"], ("symlink", "120000"));
    assert_eq!(kinds["helper.sh"], ("file", "100755"));
    assert_eq!(kinds["vendor"], ("submodule", "160000"));
    assert_eq!(kinds["hooks"], ("dir", "040000"));
    assert_eq!(kinds["hooks/post-checkout"], ("file", "100755"));
    // The link is never followed: listed, not read, and /etc/passwd is nowhere in the answer.
    assert!(pf.skipped.contains(&"hostile.install".to_owned()), "{pf:?}");
    assert!(pf.skipped.contains(&"big.patch".to_owned()), "{pf:?}");
    assert!(
        pf.install_scripts
            .iter()
            .all(|s| s.name != "hostile.install" && !s.content.contains("root:"))
    );
    let e = c
        .file(&git, "hostile", "hostile.install", None)
        .await
        .expect_err("a link is not read");
    assert_eq!(e.kind(), "malformed", "{e}");
    let e = c
        .file(&git, "hostile", "big.patch", None)
        .await
        .expect_err("past max_file_bytes");
    assert_eq!(e.kind(), "too_large", "{e}");
    let e = c
        .file(&git, "hostile", "vendor", None)
        .await
        .expect_err("a submodule is not a file");
    assert_eq!(e.kind(), "invalid_argument", "{e}");
    // The audit reads it too, and nothing ran: no hook, filter, submodule update or script.
    let a = archgate_aur::audit_package(&c, &git, "hostile")
        .await
        .expect("audit");
    assert_eq!(a.commit.as_deref(), Some(head.as_str()));
    assert!(!marker.exists(), "something ran");
    // The cached repository is bare: no checkout, no hooks directory git would run from.
    let repo = cache.path().join("git/hostile.git");
    assert!(repo.join("objects").is_dir());
    assert!(!repo.join("hooks").exists());
    assert!(!repo.join("vendor").exists() && !repo.join("modules").exists());
}

/// A commit for the submodule entry to point at (a gitlink names a commit; it is not fetched).
fn sub_commit(aur: &Aur, blob: &str) -> String {
    let t = aur.git.raw_tree("hostile", &[("100644", "x", blob)]);
    aur.git.commit(
        "hostile",
        &t,
        None,
        "Someone",
        "sub",
        "2024-01-01T12:00:00+0000",
    )
}

#[tokio::test]
async fn names_that_leave_the_tree_or_run_commands_refuse_the_fetch_and_leave_nothing() {
    for (n, bad) in [
        ("dots", ".."),
        ("dotgit", ".git"),
        ("dot", "."),
        ("dotgit-case", ".GIT"),
        // A .gitmodules whose update is a command (what `git submodule update` would run).
        ("gitmodules", ".gitmodules"),
    ] {
        let name: &'static str = Box::leak(format!("evil-{n}").into_boxed_str());
        let aur = Aur::start(vec![rpc_only(name)]);
        let pb = aur.git.blob(name, pkgbuild(name, "").as_bytes());
        let evil = aur.git.blob(
            name,
            b"[core]\n\tfsmonitor = touch /tmp/x\n[submodule \"v\"]\n\tpath = v\n\turl = https://example.invalid/v.git\n\tupdate = !sh -c 'touch /tmp/x'\n",
        );
        let tree = aur
            .git
            .raw_tree(name, &[("100644", "PKGBUILD", &pb), ("100644", bad, &evil)]);
        aur.git.commit(
            name,
            &tree,
            None,
            "Test Writer",
            "1.0-1",
            "2024-01-01T12:00:00+0000",
        );
        let cache = tempfile::tempdir().expect("tmp");
        let c = client(&aur.srv.base, cache.path(), Duration::from_secs(600));
        let e = c.package_files(&permit(), name).await.expect_err("refused");
        assert_eq!(e.kind(), "malformed", "{bad}: {e}");
        assert!(
            !cache.path().join(format!("git/{name}.git")).exists(),
            "{bad}: nothing cached"
        );
        assert_eq!(leftovers(cache.path()), Vec::<String>::new(), "{bad}");
    }
}

#[tokio::test]
async fn a_repository_past_the_limit_is_too_large_and_the_cache_stays_whole() {
    let mut files = BTreeMap::new();
    files.insert("PKGBUILD", pkgbuild("grower", ""));
    let aur = Aur::start(vec![Pkg {
        commits: vec![("Test Writer", "1.0-1", files)],
        ..rpc_only("grower")
    }]);
    let a = aur.ids("grower")[0].clone();
    let cache = tempfile::tempdir().expect("tmp");
    let git = permit();
    let c = client(&aur.srv.base, cache.path(), Duration::ZERO);
    assert_eq!(
        c.history(&git, "grower").await.expect("first fetch").len(),
        1
    );
    // The next commit carries 2 MiB nothing compresses; the limit is 512 KiB.
    let big = noise(2 * 1024 * 1024, 7);
    let blob = aur.git.blob("grower", &big);
    let pbb = aur.git.blob("grower", pkgbuild("grower", "").as_bytes());
    let tree = aur.git.raw_tree(
        "grower",
        &[
            ("100644", "PKGBUILD", &pbb),
            ("100644", "vendor.bin", &blob),
        ],
    );
    let b = aur.git.commit(
        "grower",
        &tree,
        Some(&a),
        "Test Writer",
        "1.0-2",
        "2024-02-01T12:00:00+0000",
    );
    let e = c.history(&git, "grower").await.expect_err("too large");
    assert_eq!(e.kind(), "too_large", "{e}");
    // The cached repository is as it was: head A, no temporary pack, B absent.
    let cached = client(&aur.srv.base, cache.path(), Duration::from_secs(600));
    let h = cached.history(&git, "grower").await.expect("cache");
    assert_eq!(h.iter().map(|c| c.id.clone()).collect::<Vec<_>>(), [a]);
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
    let size = dir_size(&cache.path().join("git/grower.git"));
    assert!(size < 512 * 1024, "{size} bytes cached");
    // A first fetch past the limit leaves nothing at all.
    let other = tempfile::tempdir().expect("tmp");
    let c2 = client(&aur.srv.base, other.path(), Duration::ZERO);
    let e = c2.history(&git, "grower").await.expect_err("too large");
    assert_eq!(e.kind(), "too_large", "{e}");
    assert!(!other.path().join("git/grower.git").exists());
    assert_eq!(leftovers(other.path()), Vec::<String>::new());
    let _ = b;
}

fn dir_size(d: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
        let m = e.metadata().expect("meta");
        total += if m.is_dir() {
            dir_size(&e.path())
        } else {
            m.len()
        };
    }
    total
}

#[tokio::test]
async fn a_network_failure_is_typed_and_the_cached_repository_stays() {
    let aur = Aur::start(fake_aur::packages());
    let cache = tempfile::tempdir().expect("tmp");
    let git = permit();
    let c = client(&aur.srv.base, cache.path(), Duration::from_secs(600));
    let before = c.package_files(&git, "good-pkg").await.expect("fetch");
    // The same cache, the AUR unreachable (a closed port), the TTL past.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let down = client(
        &format!("http://127.0.0.1:{port}"),
        cache.path(),
        Duration::ZERO,
    );
    let e = down
        .history(&git, "good-pkg")
        .await
        .expect_err("unreachable");
    assert_eq!(e.kind(), "could_not_reach", "{e}");
    // A commit already fetched is still read, from the cache, even with the AUR down.
    let again = down
        .package_files_at(&git, "good-pkg", "good-pkg", Some(&before.commit))
        .await
        .expect("cached commit");
    assert_eq!(again.pkgbuild, before.pkgbuild);
    assert_eq!(leftovers(cache.path()), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_audits_of_one_package_fetch_once_and_agree() {
    // What one audit asks of the server: the RPC info and the git requests of one fetch.
    let aur = Aur::start(fake_aur::packages());
    let one = tempfile::tempdir().expect("tmp");
    let c = client(&aur.srv.base, one.path(), Duration::from_secs(600));
    archgate_aur::audit_package(&c, &permit(), "evil-pkg")
        .await
        .expect("audit");
    let per_fetch = aur.git_hits();
    let shared = tempfile::tempdir().expect("tmp");
    let start = aur.git_hits();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let c = client(&aur.srv.base, shared.path(), Duration::from_secs(600));
        tasks.push(tokio::spawn(async move {
            archgate_aur::audit_package(&c, &permit(), "evil-pkg")
                .await
                .map(|a| a.commit)
        }));
    }
    let mut commits = Vec::new();
    for t in tasks {
        commits.push(t.await.expect("join").expect("audit"));
    }
    let head = aur.ids("evil-pkg")[1].clone();
    assert!(commits.iter().all(|c| c.as_deref() == Some(head.as_str())));
    assert!(per_fetch > 0);
    assert_eq!(
        aur.git_hits() - start,
        per_fetch,
        "one fetch for four audits"
    );
    assert_eq!(leftovers(shared.path()), Vec::<String>::new());
}

/// The history kept is the fetch's depth: 30 commits upstream, `max_history` 10, ten read and
/// the repository shallow. Prints the fetch time and the cache's size for a package of the
/// usual shape (PKGBUILD, .SRCINFO, an install script, a patch; 30 versions).
#[tokio::test]
async fn the_history_is_as_deep_as_max_history_and_the_cache_stays_small() {
    let aur = Aur::start(vec![rpc_only("typical")]);
    let patch = "--- a/src/main.c\n+++ b/src/main.c\n@@ -1,3 +1,4 @@\n #include <stdio.h>\n+#include <stdlib.h>\n int main(void) {\n   return 0;\n".repeat(20);
    let mut parent: Option<String> = None;
    let mut ids = Vec::new();
    for i in 0..30 {
        let ver = format!("1.{i}");
        let pb = pkgbuild("typical", &format!("install=typical.install\nsource=(\"https://example.org/typical-{ver}.tar.gz\" 'fix-build.patch')\nsha256sums=('{}' 'SKIP')\n", "ab".repeat(32))).replace("pkgver=1.0", &format!("pkgver={ver}"));
        let si = format!(
            "pkgbase = typical\n\tpkgver = {ver}\n\tpkgrel = 1\n\tarch = any\n\tlicense = MIT\n\npkgname = typical\n"
        );
        let tree = aur.git.tree(
            "typical",
            &[
                Entry::File("PKGBUILD", pb.as_bytes()),
                Entry::File(".SRCINFO", si.as_bytes()),
                Entry::File(
                    "typical.install",
                    b"post_install() {\n  echo 'run typical --setup once'\n}\n",
                ),
                Entry::File("fix-build.patch", patch.as_bytes()),
            ],
        );
        let id = aur.git.commit(
            "typical",
            &tree,
            parent.as_deref(),
            "Test Writer",
            &format!("{ver}-1"),
            &format!("2024-01-{:02}T12:00:00+0000", i + 1),
        );
        ids.push(id.clone());
        parent = Some(id);
    }
    let cache = tempfile::tempdir().expect("tmp");
    let c = AurClient::new(AurConfig {
        max_history: 10,
        ..client(&aur.srv.base, cache.path(), Duration::from_secs(600))
            .config()
            .clone()
    })
    .expect("client");
    let started = std::time::Instant::now();
    let h = c.history(&permit(), "typical").await.expect("history");
    let took = started.elapsed();
    let got: Vec<&str> = h.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<&str> = ids.iter().rev().take(10).map(String::as_str).collect();
    assert_eq!(got, want);
    let repo = cache.path().join("git/typical.git");
    assert!(repo.join("shallow").is_file(), "a shallow repository");
    let size = dir_size(&repo);
    eprintln!(
        "fetch of a typical package (10 of 30 commits) from the local server: {} ms; cached repository: {} KiB",
        took.as_millis(),
        size / 1024
    );
    // An older commit than the depth is not there, and is not invented.
    let e = archgate_aur::audit_package_at(&c, &permit(), "typical", Some(&ids[5]))
        .await
        .expect_err("deeper than the history kept");
    assert_eq!(e.kind(), "not_found", "{e}");
}

/// A `.mailmap` in the repository does not rename the author of the latest change: the
/// takeover signal compares the names as committed.
#[tokio::test]
async fn a_mailmap_in_the_repository_does_not_hide_a_new_author() {
    let aur = Aur::start(fake_aur::packages());
    // good-pkg: every change by Good Person, then one by New Owner that maps itself to them.
    let mut files: BTreeMap<&'static str, String> = fake_aur::packages()[1].commits[1].2.clone();
    files.insert(
        ".mailmap",
        "Good Person <good.person@example.org> New Owner <new.owner@example.org>\n".into(),
    );
    aur.push("good-pkg", "2.1-2", ("New Owner", "2.1-2", files));
    let cache = tempfile::tempdir().expect("tmp");
    let c = client(&aur.srv.base, cache.path(), Duration::from_secs(600));
    let a = archgate_aur::audit_package(&c, &permit(), "good-pkg")
        .await
        .expect("audit");
    assert_eq!(a.recent_history[0].author, "New Owner");
    assert!(
        a.trust
            .iter()
            .any(|t| t.level == "warning" && t.signal.contains("New Owner")),
        "{:?}",
        a.trust
    );
}

/// git is allowed the AUR's own scheme only: another base URL never reaches it.
#[tokio::test]
async fn a_base_url_of_another_scheme_never_reaches_git() {
    let cache = tempfile::tempdir().expect("tmp");
    for base in [
        "file:///srv/aur",
        "ext::sh -c id",
        "ssh://aur@aur.archlinux.org",
    ] {
        let c = client(base, cache.path(), Duration::from_secs(600));
        let e = c.history(&permit(), "evil-pkg").await.expect_err("refused");
        assert_eq!(e.kind(), "invalid_argument", "{base}: {e}");
    }
    assert!(!cache.path().join("git/evil-pkg.git").exists());
}

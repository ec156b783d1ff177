//! An audit is bound to the AUR git commit it read: against the stand-in AUR (real git
//! repositories over smart HTTP), audit commit A, move the package to B, and the review says
//! the package moved on; the build commands name A only when A is asked for. A branch rewritten
//! under the audit (another tree, the old commit gone) is caught the same way. Also: the head
//! is refetched after the TTL, a commit already fetched is read from the cache whatever
//! happens on the server, and install scripts without a dot come through the client.

use std::collections::BTreeMap;
use std::time::Duration;

use archgate_aur::{AurClient, AurConfig, Verdict};

use crate::support::{fake_aur, permit};

fn files(ver: &str, rel: &str, evil: bool) -> BTreeMap<&'static str, String> {
    let mut pb = format!(
        "# Maintainer: Good Person <good@example.org>\npkgname=mover\npkgver={ver}\npkgrel={rel}\narch=('any')\nurl=\"https://github.com/example/mover\"\nlicense=('MIT')\ninstall=mover-setup\nsource=(\"https://github.com/example/mover/archive/v$pkgver.tar.gz\")\nsha256sums=('{}')\n\npackage() {{\n  install -Dm644 README \"$pkgdir/usr/share/doc/mover/README\"\n}}\n",
        "cd".repeat(32)
    );
    if evil {
        pb = pb.replace("url=", "depends=('npm')\nurl=");
    }
    let setup = if evil {
        "post_install() {\n  npm install -g mover-telemetry\n}\n"
    } else {
        "post_install() {\n  echo 'mover installed'\n}\n"
    };
    let mut f = BTreeMap::new();
    f.insert("PKGBUILD", pb);
    f.insert(
        ".SRCINFO",
        format!(
            "pkgbase = mover\n\tpkgver = {ver}\n\tpkgrel = {rel}\n\turl = https://github.com/example/mover\n\tarch = any\n\tlicense = MIT\n\tinstall = mover-setup\n\tsource = https://github.com/example/mover/archive/v{ver}.tar.gz\n\tsha256sums = {}\n\npkgname = mover\n",
            "cd".repeat(32)
        ),
    );
    f.insert("mover-setup", setup.to_owned());
    f
}

fn start(ttl: Duration) -> (fake_aur::Aur, AurClient, tempfile::TempDir) {
    let aur = fake_aur::Aur::start(vec![fake_aur::Pkg {
        name: "mover",
        version: "1.0-1",
        maintainer: Some("Good Person"),
        votes: 10,
        commits: vec![("Good Person", "1.0-1", files("1.0", "1", false))],
    }]);
    let cache = tempfile::tempdir().expect("tmp");
    let c = AurClient::new(AurConfig {
        base_url: aur.srv.base.clone(),
        timeout: Duration::from_secs(10),
        cache_dir: Some(cache.path().to_owned()),
        cache_ttl: ttl,
        ..AurConfig::default()
    })
    .expect("client");
    (aur, c, cache)
}

fn move_to_b(aur: &fake_aur::Aur) -> String {
    aur.push(
        "mover",
        "1.1-1",
        ("New Owner", "1.1-1", files("1.1", "1", true)),
    )
}

#[tokio::test]
async fn audit_of_a_then_review_after_the_move_to_b_says_so_and_builds_only_what_was_asked() {
    let (aur, c, _cache) = start(Duration::ZERO);
    let git = permit();
    let a = aur.ids("mover")[0].clone();
    let first = archgate_aur::audit_package(&c, &git, "mover")
        .await
        .expect("audit A");
    assert_eq!(first.commit.as_deref(), Some(a.as_str()));
    assert_eq!(first.head_commit.as_deref(), Some(a.as_str()));
    assert!(first.moved_on.is_none());
    assert_eq!(
        first.report.verdict,
        Verdict::Ok,
        "{}",
        first.report.to_text()
    );
    let build = first.build.clone().expect("build commands");
    let dir = format!("mover-{}", &a[..12]);
    assert_eq!(
        build.commands,
        [
            format!("git clone {}/mover.git {dir}", aur.srv.base),
            format!("git -C {dir} checkout {a}"),
            format!("cd {dir} && makepkg --syncdeps --install"),
        ]
    );
    assert_eq!(
        archgate_aur::last_audit(&c, "mover")
            .await
            .map(|r| r.commit),
        Some(a.clone())
    );

    let b = move_to_b(&aur);

    let review =
        archgate_aur::review_updates(&c, &git, &[("mover".to_owned(), "1.0-1".to_owned())])
            .await
            .expect("review");
    let e = &review.updates[0];
    assert_eq!(e.commit.as_deref(), Some(b.as_str()));
    assert_eq!(e.audited_commit.as_deref(), Some(a.as_str()));
    let moved = e.moved_on.as_deref().expect("moved on is said");
    assert!(moved.contains(&a) && moved.contains(&b), "{moved}");
    let rb = e.build.as_ref().expect("review build");
    assert!(
        rb.commands.iter().all(|c| !c.contains(&a[..12])),
        "{:?}",
        rb.commands
    );
    assert_eq!(
        rb.commands[1],
        format!("git -C mover-{} checkout {b}", &b[..12])
    );
    assert_eq!(
        e.verdict,
        Some(Verdict::Dangerous),
        "the move adds npm as root"
    );
    // aur_diff reports the commit it read and builds that one.
    let d = e.diff.as_ref().expect("diff");
    assert_eq!(d.to.commit, b);
    assert_eq!(d.from.commit, a);
    assert_eq!(d.build.commit, b);

    // Asking for A audits A's files and builds A, and says the package moved on.
    let again = archgate_aur::audit_package_at(&c, &git, "mover", Some(&a[..10]))
        .await
        .expect("audit A again");
    assert_eq!(again.commit.as_deref(), Some(a.as_str()));
    assert_eq!(again.head_commit.as_deref(), Some(b.as_str()));
    assert_eq!(again.report.verdict, Verdict::Ok, "A's files, not B's");
    assert!(again.moved_on.as_deref().is_some_and(|m| m.contains(&b)));
    let ab = again.build.expect("build");
    assert!(
        ab.commands
            .iter()
            .any(|x| x.ends_with(&format!("checkout {a}")))
    );
    assert!(ab.commands.iter().all(|x| !x.contains(&b[..12])));

    // Not asking: the newest commit, B, with its own commands.
    let now = archgate_aur::audit_package(&c, &git, "mover")
        .await
        .expect("audit B");
    assert_eq!(now.commit.as_deref(), Some(b.as_str()));
    assert_eq!(now.report.verdict, Verdict::Dangerous);
    assert!(
        now.report
            .findings
            .iter()
            .any(|f| f.file == "mover-setup" && f.id == "AUR-PKGMGR-INSTALL")
    );
    assert!(
        now.build
            .expect("b")
            .commands
            .iter()
            .all(|x| !x.contains(&a[..12]))
    );
    // A commit that is not in the history is refused, not silently replaced by the head.
    let e = archgate_aur::audit_package_at(&c, &git, "mover", Some("deadbeef"))
        .await
        .expect_err("unknown commit");
    assert_eq!(e.kind(), "not_found");
}

/// The branch rewritten after an audit (a force push: another tree under the same version, the
/// audited commit no longer in the history): the review reads the new commit, names the
/// audited one, says they differ, and audits the new files.
#[tokio::test]
async fn a_tree_rewritten_after_the_audit_is_caught_by_the_binding() {
    let (aur, c, _cache) = start(Duration::ZERO);
    let git = permit();
    let a = aur.ids("mover")[0].clone();
    let first = archgate_aur::audit_package(&c, &git, "mover")
        .await
        .expect("audit A");
    assert_eq!(first.report.verdict, Verdict::Ok);
    // A new root commit replaces the branch: 1.0-2 whose history lacks 1.0-1.
    let entries: Vec<(String, String)> = files("1.0", "2", true)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    let e: Vec<crate::support::git_http::Entry<'_>> = entries
        .iter()
        .map(|(k, v)| crate::support::git_http::Entry::File(k, v.as_bytes()))
        .collect();
    let tree = aur.git.tree("mover", &e);
    let rewritten = aur.git.commit(
        "mover",
        &tree,
        None,
        "Good Person",
        "1.0-1",
        "2024-01-01T12:00:00+0000",
    );
    aur.pkgs.lock().expect("lock")[0].version = "1.0-2";
    assert_ne!(rewritten, a);
    let review =
        archgate_aur::review_updates(&c, &git, &[("mover".to_owned(), "1.0-1".to_owned())])
            .await
            .expect("review");
    let e = &review.updates[0];
    assert_eq!(e.commit.as_deref(), Some(rewritten.as_str()));
    assert_eq!(e.audited_commit.as_deref(), Some(a.as_str()));
    let moved = e
        .moved_on
        .as_deref()
        .expect("the binding catches the rewrite");
    assert!(moved.contains(&a) && moved.contains(&rewritten), "{moved}");
    assert_eq!(e.verdict, Some(Verdict::Dangerous), "{e:?}");
    // Asking for A now: not in the branch's history any more, refused.
    let gone = archgate_aur::audit_package_at(&c, &git, "mover", Some(&a))
        .await
        .expect_err("A is gone from the history");
    assert_eq!(gone.kind(), "not_found");
}

#[tokio::test]
async fn the_head_is_refetched_after_the_ttl_and_a_fetched_commit_is_read_from_the_cache() {
    // A long TTL: the fetched head stays, so the move to B is not seen yet.
    let (aur, c, _cache) = start(Duration::from_secs(600));
    let git = permit();
    let a = aur.ids("mover")[0].clone();
    let first = archgate_aur::audit_package(&c, &git, "mover")
        .await
        .expect("audit");
    assert_eq!(first.commit.as_deref(), Some(a.as_str()));
    let at_a = c
        .file(&git, "mover", "mover-setup", Some(&a))
        .await
        .expect("file at A");
    move_to_b(&aur);
    let h = c.history(&git, "mover").await.expect("history");
    assert_eq!(h.len(), 1, "cached for the TTL");
    // The server's repository gone: A, fetched already, is still read from the cache (its id
    // is the hash of its content), with no request.
    std::fs::remove_dir_all(aur.git.repo("mover")).expect("remove");
    let hits = aur.srv.hits();
    assert_eq!(
        c.file(&git, "mover", "mover-setup", Some(&a))
            .await
            .expect("again"),
        at_a
    );
    assert_eq!(aur.srv.hits(), hits);
    // With a zero TTL the same cache directory fetches the head again: the server is gone now,
    // which is a typed error, and the cached repository is still there and whole.
    let fresh = AurClient::new(AurConfig {
        cache_ttl: Duration::ZERO,
        ..c.config().clone()
    })
    .expect("client");
    let e = fresh
        .history(&git, "mover")
        .await
        .expect_err("the repository is gone");
    assert_eq!(e.kind(), "not_found", "{e}");
    assert_eq!(
        c.file(&git, "mover", "mover-setup", Some(&a))
            .await
            .expect("cache intact"),
        at_a
    );
    assert_eq!(AurConfig::default().cache_ttl, Duration::from_secs(600));
}

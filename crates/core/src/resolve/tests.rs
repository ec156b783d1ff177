//! Resolution, tried (`resolve.rs`).

use super::*;

#[test]
fn not_found_lists_near_misses_and_never_corrects() {
    let themes = [
        "tokyo-night",
        "catppuccin",
        "catppuccin-latte",
        "gruvbox",
        "nord",
    ];
    let ok = match_name("theme", "Tokyo Night", themes.iter().copied(), omarchy_name).unwrap();
    assert_eq!(ok.value, "tokyo-night");
    let err = match_name("theme", "catpuccin", themes.iter().copied(), omarchy_name).unwrap_err();
    match &err {
        Refusal::NotFound { near, .. } => {
            assert_eq!(near.first().map(String::as_str), Some("catppuccin"));
            assert!(near.len() <= 5);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.kind(), ErrorKind::NotFound);
    let far = match_name("theme", "zzzzzzzz", themes.iter().copied(), omarchy_name).unwrap_err();
    assert!(matches!(far, Refusal::NotFound { ref near, .. } if near.is_empty()));
}

/// Issue 33 (an entry that cannot be applied is never silently dropped): `~/x` in
/// `resolve.protected` protects the person's `x` (a relative entry keeps the config from
/// applying at all, `config/validate.rs`).
#[test]
fn a_protected_entry_under_home_protects_the_persons_file() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join("secrets")).unwrap();
    std::fs::write(home.join("secrets/key"), "k").unwrap();
    std::fs::write(home.join("notes.txt"), "n").unwrap();
    let r = Resolver::new(&[], Some(&home), false, &[PathBuf::from("~/secrets")]);
    let key = home.join("secrets/key").display().to_string();
    assert_eq!(
        r.existing_path(&key).unwrap_err().kind(),
        ErrorKind::ProtectedPath
    );
    assert!(
        r.existing_path(&home.join("notes.txt").display().to_string())
            .is_ok()
    );
}

#[test]
fn paths_are_canonical_and_private_dirs_refused_even_through_links() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::write(state.join("token"), "x").unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_ed25519"), "k").unwrap();
    std::fs::write(home.join("notes.txt"), "n").unwrap();
    std::os::unix::fs::symlink(state.join("token"), home.join("innocent")).unwrap();
    let r = Resolver::new(&[&state], Some(&home), true, &[]);

    let ok = r
        .existing_path(&format!("{}/../home/notes.txt", state.display()))
        .unwrap();
    assert_eq!(
        ok.value,
        std::fs::canonicalize(home.join("notes.txt"))
            .unwrap()
            .display()
            .to_string()
    );
    for bad in [
        state.join("token").display().to_string(),
        home.join("innocent").display().to_string(),
        format!("{}/../state/token", home.display()),
        home.join(".ssh/id_ed25519").display().to_string(),
    ] {
        assert_eq!(
            r.existing_path(&bad).unwrap_err().kind(),
            ErrorKind::ProtectedPath,
            "{bad}"
        );
    }
    let missing = r
        .existing_path(&home.join("notes.tx").display().to_string())
        .unwrap_err();
    assert_eq!(missing.kind(), ErrorKind::NotFound);
    assert!(missing.to_string().contains("notes.txt"), "{missing}");
    assert_eq!(
        r.existing_path("relative/path").unwrap_err().kind(),
        ErrorKind::InvalidTarget
    );
    let off = Resolver::new(&[&state], Some(&home), false, &[]);
    assert!(
        off.existing_path(&home.join(".ssh/id_ed25519").display().to_string())
            .is_ok()
    );
}

/// Issue 16.11: a "not found" inside a protected directory never lists what is in it, and
/// a near miss elsewhere is never a protected file or a link to one.
#[test]
fn near_misses_are_never_drawn_from_protected_directories() {
    let t = tempfile::tempdir().unwrap();
    let state = t.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::write(state.join("token"), "x").unwrap();
    std::fs::write(state.join("clients.json"), "x").unwrap();
    let home = t.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "k").unwrap();
    std::fs::write(home.join(".ssh/id_rsa.pub"), "k").unwrap();
    std::fs::create_dir_all(home.join(".gnupg")).unwrap();
    std::fs::write(home.join(".gnupg/pubring.kbx"), "k").unwrap();
    std::fs::create_dir_all(home.join("docs")).unwrap();
    std::fs::write(home.join("docs/id_rsa.txt"), "n").unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh/id_rsa"), home.join("docs/id_rsa")).unwrap();
    std::os::unix::fs::symlink(&state, home.join("docs/tokenz")).unwrap();
    let r = Resolver::new(&[&state], Some(&home), true, &[]);
    let secrets = ["id_rsa", "id_rsa.pub", "pubring", "token", "clients"];
    for missing in [
        home.join(".ssh/id_rsx"),
        home.join(".ssh/id_rs"),
        home.join("keys/id_rsx"),
        home.join(".gnupg/pubring.kb"),
        home.join("docs/../.ssh/id_rsa.pu"),
        state.join("toke"),
        state.join("client.json"),
        home.join("docs/tokenz/toke"),
    ] {
        let e = r.existing_path(&missing.display().to_string()).unwrap_err();

        // What the agent learns beyond the path it gave.
        let given = missing.display().to_string();
        let shown =
            format!("{e} {:?}", ToolError::from(e.clone()).details).replace(&given, "GIVEN");
        assert_eq!(
            e.kind(),
            ErrorKind::ProtectedPath,
            "{}: {shown}",
            missing.display()
        );
        for s in secrets {
            assert!(
                !shown.contains(&format!("/{s}")),
                "{}: {shown}",
                missing.display()
            );
        }
    }
    // Elsewhere near misses still help, but leave out protected files and links to them.
    let e = r
        .existing_path(&home.join("docs/id_rsa.tx").display().to_string())
        .unwrap_err();
    let Refusal::NotFound { near, .. } = &e else {
        panic!("{e:?}")
    };
    assert!(
        near.iter().any(|n| n.ends_with("docs/id_rsa.txt")),
        "{near:?}"
    );
    assert!(!near.iter().any(|n| n.ends_with("docs/id_rsa")), "{near:?}");
    assert!(!near.iter().any(|n| n.ends_with("tokenz")), "{near:?}");
    // With protection off (the person's choice) ~/.ssh is an ordinary directory again.
    let off = Resolver::new(&[&state], Some(&home), false, &[]);
    let e = off
        .existing_path(&home.join(".ssh/id_rsx").display().to_string())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[test]
fn only_http_urls() {
    let r = Resolver::new(&[], None, true, &[]);
    assert!(r.url("https://wiki.archlinux.org/title/Pacman").is_ok());
    for bad in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "https://",
        "http://a b",
        "ftp://x",
    ] {
        assert_eq!(
            r.url(bad).unwrap_err().kind(),
            ErrorKind::InvalidTarget,
            "{bad}"
        );
    }
}

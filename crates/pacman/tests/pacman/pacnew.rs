//! `pkg_pacnew` on `.pacnew`/`.pacsave` files made by real pacman: an upgrade of a package with
//! `backup=()` after the person edited the file leaves `.pacnew`, a removal of an edited backup
//! file leaves `.pacsave`. The diff must turn the live file into the waiting one (GNU `patch` is
//! the judge), and `find` must see no other waiting file than the ones listed.

use std::collections::BTreeSet;
use std::process::Command;

use archgate_pacman::pacnew::pacnew;

use crate::health_world::{World, pkg};

fn append(path: &std::path::Path, text: &str) {
    let mut t = std::fs::read_to_string(path).unwrap();
    t.push_str(text);
    std::fs::write(path, t).unwrap();
}

/// Applies `diff` to a copy of `live` with GNU patch; returns the patched text.
fn patched(live: &std::path::Path, diff: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("file");
    std::fs::copy(live, &copy).unwrap();
    let patch = dir.path().join("d.patch");
    std::fs::write(&patch, diff).unwrap();
    let out = Command::new("patch")
        .arg("--batch")
        .arg("--silent")
        .arg(&copy)
        .arg(&patch)
        .output()
        .expect("run patch");
    assert!(
        out.status.success(),
        "patch refused the diff: {}{}\n{diff}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(copy).unwrap()
}

#[test]
fn pacnew_and_pacsave_left_by_real_pacman_are_reported_with_the_right_diff() {
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.0"), pkg("conf-saver", "1.0")]);
    let live = w.at("etc/keeper.conf");
    append(&live, "# the person's own line\n");
    w.install(&[pkg("conf-keeper", "1.1")]);
    let new = w.at("etc/keeper.conf.pacnew");
    assert!(new.exists(), "pacman left no .pacnew");
    append(&w.at("etc/saver/saver.conf"), "saved = yes\n");
    w.pacman(&["-R", "conf-saver"]);
    let saved = w.at("etc/saver/saver.conf.pacsave");
    assert!(saved.exists(), "pacman left no .pacsave");

    let r = pacnew(&w.snapshot()).unwrap();
    assert!(!r.truncated);
    // Exactly what find sees.
    let out = Command::new("find")
        .arg(w.root())
        .args(["-name", "*.pacnew", "-o", "-name", "*.pacsave*"])
        .output()
        .unwrap();
    let found: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let listed: BTreeSet<String> = r.files.iter().map(|f| f.path.clone()).collect();
    assert_eq!(listed, found);
    assert_eq!(found.len(), 2);

    let n = r.files.iter().find(|f| f.kind == "pacnew").unwrap();
    assert_eq!(n.path, new.display().to_string());
    assert_eq!(n.live, live.display().to_string());
    assert_eq!(n.owner.as_deref(), Some("conf-keeper"));
    let diff = n.diff.as_deref().expect("a diff");
    assert!(
        diff.starts_with(&format!("--- {}", live.display())),
        "{diff}"
    );
    assert!(
        diff.contains("-setting = 1.0") && diff.contains("+setting = 1.1"),
        "{diff}"
    );
    assert!(diff.contains("-# the person's own line"), "{diff}");
    assert_eq!(
        patched(&live, diff),
        std::fs::read_to_string(&new).unwrap(),
        "the diff turns the live file into the .pacnew"
    );
    assert_eq!(
        n.adopt,
        format!("sudo mv -- {} {}", new.display(), live.display())
    );
    assert_eq!(n.discard, format!("sudo rm -- {}", new.display()));

    // The removed package's file: no installed owner, the live file is gone.
    let s = r.files.iter().find(|f| f.kind == "pacsave").unwrap();
    assert_eq!(s.path, saved.display().to_string());
    assert_eq!(s.owner, None);
    assert!(!s.live_exists);
    assert!(s.diff.as_deref().unwrap().contains("+saved = yes"));
}

#[test]
fn nothing_waiting_is_an_empty_list_and_big_or_binary_files_are_named_not_diffed() {
    let w = World::new();
    w.install(&[pkg("conf-keeper", "1.0")]);
    let r = pacnew(&w.snapshot()).unwrap();
    assert!(r.files.is_empty());
    assert_eq!(r.backup_files, 1);
    // Binary and too large under etc: named with the reason.
    std::fs::write(w.at("etc/keeper.conf.pacnew"), b"bin\0ary").unwrap();
    std::fs::create_dir_all(w.at("etc/big")).unwrap();
    std::fs::write(
        w.at("etc/big/huge.conf.pacnew"),
        vec![b'a'; (archgate_pacman::pacnew::MAX_DIFF_INPUT + 1) as usize],
    )
    .unwrap();
    // A long diff is cut at a line boundary.
    let long: String = (0..4000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(w.at("etc/long.conf"), "").unwrap();
    std::fs::write(w.at("etc/long.conf.pacnew"), &long).unwrap();
    // A symlink named like one is not followed.
    std::os::unix::fs::symlink("/etc/passwd", w.at("etc/evil.pacnew")).unwrap();
    let r = pacnew(&w.snapshot()).unwrap();
    let note = |suffix: &str| {
        r.files
            .iter()
            .find(|f| f.path.ends_with(suffix))
            .unwrap_or_else(|| panic!("{suffix} not listed: {:?}", r.files))
            .clone()
    };
    assert_eq!(
        note("keeper.conf.pacnew").diff_note.as_deref(),
        Some("binary")
    );
    assert_eq!(
        note("huge.conf.pacnew").diff_note.as_deref(),
        Some("too_large")
    );
    let l = note("long.conf.pacnew");
    assert_eq!(l.diff_note.as_deref(), Some("truncated"));
    let d = l.diff.unwrap();
    assert!(d.len() <= archgate_pacman::pacnew::MAX_DIFF_PER_FILE && d.ends_with('\n'));
    assert!(!r.files.iter().any(|f| f.path.ends_with("evil.pacnew")));
    assert_eq!(r.files.len(), 3);
}

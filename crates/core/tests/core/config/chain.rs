//! Every hop to the config file is judged (attack1 finding 1). Class: *whoever controls any hop
//! of the path to the config — a link, or a directory holding a link or passed through — chooses
//! which file is read*. Before, only the first link and the final file's directories were
//! judged: a link in another user's directory, or a symlinked `~/.config` whose target sits in a
//! directory others may write, let that user point the config at any empty root-owned file
//! (defaults: every deny rule gone) and made that file the last good copy. Another user is
//! played by a directory everyone may write (non-sticky), so the test runs as any user.

use super::*;

/// A private directory of the person's under the place's root.
fn private_dir(p: &Place, name: &str) -> PathBuf {
    let d = p.dir.parent().unwrap().parent().unwrap().join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    d
}

fn private_file(path: &std::path::Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

#[test]
fn a_link_in_the_chain_that_another_user_controls_is_refused_and_never_kept() {
    let p = Place::new();
    let h = p.with_person();
    // The person's dotfile, reached through a link in a directory another user controls.
    let dotfiles = private_dir(&p, "dotfiles");
    let dotfile = dotfiles.join("archgate.toml");
    private_file(&dotfile, PERSON);
    let shared = private_dir(&p, "shared");
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let hop = shared.join("archgate.toml");
    std::os::unix::fs::symlink(&dotfile, &hop).unwrap();
    std::fs::remove_file(&p.file).unwrap();
    std::os::unix::fs::symlink(&hop, &p.file).unwrap();
    assert!(
        matches!(guard::read_guarded(&p.file, p.uid), OnDisk::Refused(w) if w.contains("shared is writable by group or others")),
        "{:?}",
        guard::read_guarded(&p.file, p.uid)
    );
    // That user points its link at an empty file (defaults): never applied, never kept.
    let empty = dotfiles.join("empty.toml");
    private_file(&empty, "");
    std::fs::remove_file(&hop).unwrap();
    std::os::unix::fs::symlink(&empty, &hop).unwrap();
    for _ in 0..3 {
        h.reload();
    }
    assert!(denies_aur(&h), "the deny rule stays");
    says_last_good(&h, "shared is writable by group or others");
    assert_eq!(std::fs::read_to_string(&p.last_good).unwrap(), PERSON);
    drop(h);
    let err = ConfigHandle::open_guarded(p.file.clone(), p.last_good.clone(), p.uid)
        .map(|(h, _)| denies_aur(&h));
    assert_eq!(err.ok(), Some(true), "at start: the last good copy");
    assert_eq!(std::fs::read_to_string(&p.last_good).unwrap(), PERSON);
    // The same chain with every hop the person's applies (dotfile managers link twice).
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_file(&hop).unwrap();
    std::os::unix::fs::symlink(&dotfile, &hop).unwrap();
    assert_eq!(
        guard::read_guarded(&p.file, p.uid),
        OnDisk::Text(PERSON.into())
    );
}

#[test]
fn a_symlinked_config_directory_is_judged_where_it_really_is() {
    let p = Place::new();
    let h = p.with_person();
    // `~/.config/archgate` is a link to `open/real/archgate`; `open` is another user's to write.
    let open = private_dir(&p, "open");
    let real = open.join("real");
    std::fs::create_dir_all(real.join("archgate")).unwrap();
    for d in [real.clone(), real.join("archgate")] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    private_file(&real.join("archgate/config.toml"), "");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::remove_dir_all(&p.dir).unwrap();
    std::os::unix::fs::symlink(real.join("archgate"), &p.dir).unwrap();
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "open is writable by group or others");
    assert_eq!(std::fs::read_to_string(&p.last_good).unwrap(), PERSON);
    // Passing through a sticky directory (like /tmp) is fine: no one else can rename `real`.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert_eq!(
        guard::read_guarded(&p.file, p.uid),
        OnDisk::Text(String::new())
    );
}

#[test]
fn a_link_to_a_device_says_what_it_is_once() {
    let p = Place::new();
    std::os::unix::fs::symlink("/dev/null", &p.file).unwrap();
    let OnDisk::Refused(why) = guard::read_guarded(&p.file, p.uid) else {
        panic!("a device is not a config")
    };
    assert!(
        why.contains("is a character device, not a regular file"),
        "{why}"
    );
    assert!(
        !why.contains("not a regular file, not a regular file"),
        "{why}"
    );
}

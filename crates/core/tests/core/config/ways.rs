//! Each way the file on disk can go wrong, at start and on reload.

use super::*;

#[test]
fn a_config_deleted_after_it_applied_keeps_the_last_good_copy_on_reload() {
    let p = Place::new();
    let h = p.with_person();
    std::fs::remove_file(&p.file).unwrap();
    assert_eq!(h.reload().0, ReloadOutcome::WaitingForFile);
    assert!(denies_aur(&h));
    assert_eq!(h.reload().0, ReloadOutcome::Rejected);
    assert!(denies_aur(&h), "deleting the file lifts no deny rule");
    says_last_good(&h, "is missing");
    assert_eq!(h.reload().0, ReloadOutcome::Unchanged, "said once");
    // Put back: it applies again.
    p.write("");
    assert_eq!(reload_judged(&h), ReloadOutcome::Applied);
    assert!(
        !denies_aur(&h) && h.status().ok,
        "an empty file is defaults, on purpose"
    );
}

#[test]
fn a_config_deleted_while_stopped_keeps_the_last_good_copy_at_start() {
    let p = Place::new();
    drop(p.with_person());
    std::fs::remove_file(&p.file).unwrap();
    let h = p.open();
    assert!(
        denies_aur(&h),
        "the last good copy on disk is the evidence a config existed"
    );
    says_last_good(&h, "is missing");
}

#[test]
fn the_first_run_without_a_file_is_defaults() {
    let p = Place::new();
    let h = p.open();
    let s = h.status();
    assert!(s.ok, "{s:?}");
    assert_eq!(s.using, "defaults (no config file)");
    assert!(!denies_aur(&h));
    // And a file that appears later applies.
    p.write(PERSON);
    assert_eq!(h.reload().0, ReloadOutcome::Applied);
    assert!(denies_aur(&h));
}

#[test]
fn a_config_replaced_by_another_mode_keeps_the_last_good_copy() {
    let p = Place::new();
    let h = p.with_person();
    p.write("");
    std::fs::set_permissions(&p.file, std::fs::Permissions::from_mode(0o666)).unwrap();
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "writable by group or others");
    drop(h);
    let h = p.open();
    assert!(denies_aur(&h), "at start too");
    says_last_good(&h, "writable by group or others");
}

#[test]
fn a_config_replaced_by_a_fifo_is_refused_without_blocking() {
    let p = Place::new();
    let h = p.with_person();
    std::fs::remove_file(&p.file).unwrap();
    nix::unistd::mkfifo(&p.file, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    std::fs::set_permissions(&p.file, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A FIFO with no writer: a plain read would wait forever.
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "a FIFO, not a regular file");
    std::fs::remove_file(&p.file).unwrap();
    std::fs::create_dir(&p.file).unwrap();
    assert!(
        matches!(guard::read_guarded(&p.file, p.uid), OnDisk::Refused(w) if w.contains("a directory"))
    );
}

#[test]
fn a_config_replaced_by_a_symlink_applies_only_when_every_part_is_trusted() {
    let p = Place::new();
    let h = p.with_person();
    let elsewhere = p.dir.parent().unwrap().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = elsewhere.join("lifted.toml");
    std::fs::write(&target, "").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::remove_file(&p.file).unwrap();
    std::os::unix::fs::symlink(&target, &p.file).unwrap();
    // The target's directory is writable by others: not applied.
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "elsewhere is writable by group or others");
    // A link to nothing is not "no file": the last good copy stays.
    std::fs::remove_file(&target).unwrap();
    assert_eq!(h.reload().0, ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "is a symlink whose target cannot be read");
    // A dotfile manager's link to a trusted file of the person's applies.
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        &target,
        "[policy]\ndeny = [\"aur_search\", \"pkg_search\"]\n",
    )
    .unwrap();
    assert_eq!(h.reload().0, ReloadOutcome::Applied);
    assert!(h.status().ok, "{:?}", h.status());
}

#[test]
fn a_config_directory_losing_trust_keeps_the_last_good_copy() {
    let p = Place::new();
    let h = p.with_person();
    p.write("");
    std::fs::set_permissions(&p.dir, std::fs::Permissions::from_mode(0o770)).unwrap();
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "archgate is writable by group or others");
    // A parent that others may write can rename the directory away: the same.
    std::fs::set_permissions(&p.dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let parent = p.dir.parent().unwrap();
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(h.reload().0, ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "config is writable by group or others");
    drop(h);
    let h = p.open();
    assert!(denies_aur(&h), "at start too");
    // Trusted again: applies on the next poll.
    std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(reload_judged(&h), ReloadOutcome::Applied);
    assert!(h.status().ok);
}

#[test]
fn a_config_too_large_is_refused_not_read() {
    let p = Place::new();
    let h = p.with_person();
    p.write(&format!("# {}\n", "x".repeat(2 << 20)));
    assert_eq!(reload_judged(&h), ReloadOutcome::Rejected);
    assert!(denies_aur(&h));
    says_last_good(&h, "bytes, more than");
}

/// One-shot commands read what a daemon would run on, without writing: the file when it
/// applies, else the last good copy, else defaults.
#[test]
fn what_is_in_force_for_one_shot_commands_is_what_the_daemon_runs_on() {
    let p = Place::new();
    let in_force = || archgate_core::config::in_force(&p.file, &p.last_good, p.uid);
    assert_eq!(
        in_force(),
        archgate_core::config::Config::default(),
        "first run"
    );
    p.write(PERSON);
    assert!(in_force().policy.rules.first_match("aur_search").is_some());
    assert!(!p.last_good.exists(), "nothing written");
    drop(p.with_person());
    for broken in ["[policy\n", "[policy]\ndeny = [\"a*b\"]\n"] {
        p.write(broken);
        assert!(
            in_force().policy.rules.first_match("aur_search").is_some(),
            "{broken}"
        );
    }
    std::fs::remove_file(&p.file).unwrap();
    assert!(
        in_force().policy.rules.first_match("aur_search").is_some(),
        "missing"
    );
}

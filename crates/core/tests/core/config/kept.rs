//! The last good copy and the moments a file is empty (attack1 findings 4 and 8).
//!
//! Class: *a state that only looks like "no config" must never mean defaults*. A save in place
//! (truncate, then write) leaves an empty file for a moment: it used to apply as defaults on
//! purpose and become the last good copy. A last good copy that exists but cannot be read or
//! trusted used to count as no copy at all: with the file missing, archgate started on defaults
//! and said `ok`.

use super::*;

#[test]
fn an_empty_file_applies_only_when_it_is_still_empty_at_the_next_look() {
    let p = Place::new();
    let h = p.with_person();
    // The save's first moment: empty. Waited out, and nothing kept.
    p.write("");
    assert_eq!(h.reload().0, ReloadOutcome::WaitingForFile);
    assert!(denies_aur(&h), "the empty moment lifts no deny rule");
    assert_eq!(std::fs::read_to_string(&p.last_good).unwrap(), PERSON);
    // The save's second moment: the text is back.
    p.write(PERSON);
    assert_eq!(h.reload().0, ReloadOutcome::Unchanged);
    assert!(denies_aur(&h) && h.status().ok);
    // Blank lines and comments only are the same empty moment.
    p.write("# archgate\n\n");
    assert_eq!(h.reload().0, ReloadOutcome::WaitingForFile);
    assert!(denies_aur(&h));
    // Still empty at the next look: defaults, on purpose, and kept.
    assert_eq!(h.reload().0, ReloadOutcome::Applied);
    assert!(!denies_aur(&h) && h.status().ok);
    assert_eq!(
        std::fs::read_to_string(&p.last_good).unwrap(),
        "# archgate\n\n"
    );
    assert_eq!(h.reload().0, ReloadOutcome::Unchanged);
}

#[test]
fn a_last_good_copy_that_cannot_be_trusted_refuses_to_start_never_defaults() {
    let p = Place::new();
    drop(p.with_person());
    std::fs::remove_file(&p.file).unwrap();
    // Readable by others changes nothing: archgate's own copy, writable by no one else.
    std::fs::set_permissions(&p.last_good, std::fs::Permissions::from_mode(0o644)).unwrap();
    let h = p.open();
    assert!(denies_aur(&h), "a 0644 copy is still the person's");
    drop(h);
    // Writable by others: it proves a config existed, and cannot be used.
    std::fs::set_permissions(&p.last_good, std::fs::Permissions::from_mode(0o666)).unwrap();
    let err = ConfigHandle::open_guarded(p.file.clone(), p.last_good.clone(), p.uid)
        .expect_err("never defaults");
    let said = err.to_string();
    assert!(
        said.contains(&p.last_good.display().to_string())
            && said.contains("chmod 600")
            && said.contains("does not run on defaults"),
        "{said}"
    );
    // A symlink in its place: the same.
    let elsewhere = p.last_good.with_extension("elsewhere");
    std::fs::rename(&p.last_good, &elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &p.last_good).unwrap();
    let err = ConfigHandle::open_guarded(p.file.clone(), p.last_good.clone(), p.uid)
        .expect_err("never defaults");
    assert!(err.to_string().contains("not a regular file"), "{err}");
    // A file that applies needs no copy: it starts, and its text replaces the link.
    p.write(PERSON);
    let h = p.open();
    assert!(denies_aur(&h) && h.status().ok);
    assert!(
        !std::fs::symlink_metadata(&p.last_good)
            .unwrap()
            .is_symlink()
    );
}

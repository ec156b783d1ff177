//! Trusted program directories: owned by root or by the person, writable by neither group nor
//! others, for every component up to `/`, symbolic links followed and each hop checked.
//!
//! The person is played by uid 65534 (`person_uid`), so the tests mean the same whether they run
//! as root (CI) or not; changing owners needs root, so without it they only check what they can.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Executor, Permit, UntrustedReason};
use nix::unistd::{Uid, chown};

const PERSON: u32 = 65534;
const STRANGER: u32 = 65533;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn own(path: &Path, uid: u32) {
    chown(path, Some(Uid::from_raw(uid)), None).expect("chown");
}

/// A root-owned 0755 directory whose ancestors are root-owned and not writable by others.
fn root_chain() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir");
    set_mode(dir.path(), 0o755);
    dir
}

fn executor(dirs: &[&Path], person: Option<u32>) -> Executor {
    Executor::new(ExecConfig {
        search_dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        person_uid: person,
        ..ExecConfig::default()
    })
}

/// `base/.local/share/omarchy/bin/omarchy-hello`, every part made by and owned by the person,
/// 0755 — how a git install of Omarchy looks.
fn person_install(base: &Path) -> (PathBuf, PathBuf) {
    let mut dir = base.to_path_buf();
    for part in [".local", "share", "omarchy", "bin"] {
        dir.push(part);
        std::fs::create_dir(&dir).unwrap();
        set_mode(&dir, 0o755);
        own(&dir, PERSON);
    }
    let prog = dir.join("omarchy-hello");
    std::fs::write(&prog, "#!/bin/sh\necho hello from the person\n").unwrap();
    set_mode(&prog, 0o755);
    own(&prog, PERSON);
    (dir, prog)
}

fn untrusted(e: ExecError) -> UntrustedReason {
    match e {
        ExecError::Untrusted { reason, .. } => reason,
        other => panic!("expected untrusted, got {other}"),
    }
}

#[test]
fn a_person_owned_0755_chain_is_trusted_and_root_only_refuses_it() {
    if !is_root() {
        return eprintln!("skipped: chown needs root");
    }
    let top = root_chain();
    let home = top.path().join("home");
    std::fs::create_dir(&home).unwrap();
    set_mode(&home, 0o755);
    own(&home, PERSON);
    let (bin, prog) = person_install(&home);

    let ex = executor(&[&bin], Some(PERSON));
    assert_eq!(ex.resolve_program("omarchy-hello").unwrap(), prog);
    assert_eq!(ex.check_directory(&bin).unwrap(), bin);

    // Root alone: the person's directory is refused, naming the first person-owned component.
    let strict = executor(&[&bin], None);
    match untrusted(strict.resolve_program("omarchy-hello").unwrap_err()) {
        UntrustedReason::NotRootOwned { path, uid } => {
            assert_eq!((path, uid), (home.clone(), PERSON));
        }
        other => panic!("{other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_owned_program_really_runs() {
    if !is_root() {
        return eprintln!("skipped: chown needs root");
    }
    let top = root_chain();
    let (bin, _) = person_install(top.path());
    let permit = Permit::for_tests(ExecConfig {
        search_dirs: vec![bin, PathBuf::from("/usr/bin")],
        person_uid: Some(PERSON),
        ..ExecConfig::default()
    });
    let out = permit
        .run(CommandSpec::new("omarchy-hello"))
        .await
        .expect("runs");
    assert_eq!(out.stdout_lossy(), "hello from the person\n");
}

#[test]
fn a_group_writable_component_is_refused_by_name() {
    if !is_root() {
        return eprintln!("skipped: chown needs root");
    }
    let top = root_chain();
    let (bin, _) = person_install(top.path());
    let share = top.path().join(".local/share");
    set_mode(&share, 0o775);
    let ex = executor(&[&bin], Some(PERSON));
    let err = ex.resolve_program("omarchy-hello").unwrap_err();
    assert!(
        err.to_string().contains(&share.display().to_string()),
        "{err}"
    );
    match untrusted(err) {
        UntrustedReason::WritableByOthers { path, mode } => {
            assert_eq!(path, share);
            assert_eq!(mode & 0o777, 0o775);
        }
        other => panic!("{other}"),
    }
    match ex.check_directory(&bin).unwrap_err() {
        UntrustedReason::WritableByOthers { path, .. } => assert_eq!(path, share),
        other => panic!("{other}"),
    }
}

#[test]
fn another_users_directory_is_refused() {
    if !is_root() {
        return eprintln!("skipped: chown needs root");
    }
    let top = root_chain();
    let (bin, prog) = person_install(top.path());
    let omarchy = top.path().join(".local/share/omarchy");
    own(&omarchy, STRANGER);
    let ex = executor(&[&bin], Some(PERSON));
    let err = ex.resolve_program("omarchy-hello").unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("neither root nor you"), "{msg}");
    match untrusted(err) {
        UntrustedReason::NotTrustedOwner { path, uid, person } => {
            assert_eq!((path, uid, person), (omarchy.clone(), STRANGER, PERSON));
        }
        other => panic!("{other}"),
    }
    // The file itself owned by a stranger, in a trusted directory: refused too.
    own(&omarchy, PERSON);
    own(&prog, STRANGER);
    match untrusted(ex.resolve_program("omarchy-hello").unwrap_err()) {
        UntrustedReason::NotTrustedOwner { path, .. } => assert_eq!(path, prog),
        other => panic!("{other}"),
    }
}

#[test]
fn a_symlink_into_tmp_is_refused_at_tmp() {
    let top = root_chain();
    // The real program sits in a private directory under /tmp, owned by whoever runs the test.
    let under_tmp = tempfile::tempdir_in("/tmp").unwrap();
    set_mode(under_tmp.path(), 0o700);
    let real = under_tmp.path().join("real-hello");
    std::fs::copy("/usr/bin/true", &real).unwrap();
    set_mode(&real, 0o755);
    let link = top.path().join("omarchy-hello");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let me = nix::unistd::geteuid().as_raw();
    let ex = executor(&[top.path()], Some(me));
    match untrusted(ex.resolve_program("omarchy-hello").unwrap_err()) {
        UntrustedReason::WritableByOthers { path, mode } => {
            assert_eq!(path, Path::new("/tmp"));
            assert_eq!(mode & 0o7777, 0o1777);
        }
        other => panic!("{other}"),
    }
    // /tmp itself, and a directory linked into it, are never trusted directories.
    assert!(ex.check_directory(Path::new("/tmp")).is_err());
    let dir_link = top.path().join("bin");
    std::os::unix::fs::symlink(under_tmp.path(), &dir_link).unwrap();
    match ex.check_directory(&dir_link).unwrap_err() {
        UntrustedReason::WritableByOthers { path, .. } => assert_eq!(path, Path::new("/tmp")),
        other => panic!("{other}"),
    }
}

#[test]
fn the_default_trusts_the_uid_archgate_runs_as() {
    let cfg = ExecConfig::default();
    assert_eq!(cfg.person_uid, Some(nix::unistd::geteuid().as_raw()));
    assert!(cfg.require_root_owned);
    // The system directories pass under the defaults.
    let ex = Executor::new(cfg);
    assert!(ex.check_directory(Path::new("/usr/bin")).is_ok());
}

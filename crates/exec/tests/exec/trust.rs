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

/// A 0755 directory of the test's own under `/tmp` (root-owned when the tests run as root): a
/// trusted chain by the sticky-directory rule, wherever the clone or the target directory is.
fn root_chain() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in("/tmp").expect("tempdir");
    set_mode(dir.path(), 0o755);
    dir
}

fn own_link(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), None).expect("lchown");
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
fn a_private_directory_under_tmp_is_trusted_but_tmp_itself_never_is() {
    // /tmp is root-owned and sticky (1777): nobody but an entry's owner can rename or remove it.
    let tmp_meta = std::fs::metadata("/tmp").unwrap();
    assert_eq!(
        std::os::unix::fs::MetadataExt::mode(&tmp_meta) & 0o1000,
        0o1000,
        "/tmp is sticky here"
    );
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
    assert_eq!(ex.resolve_program("omarchy-hello").unwrap(), real);
    assert_eq!(
        ex.check_directory(under_tmp.path()).unwrap(),
        under_tmp.path()
    );
    // /tmp itself is never a trusted directory, however it is reached: anyone can add to it.
    let to_tmp = top.path().join("to-tmp");
    std::os::unix::fs::symlink("/tmp", &to_tmp).unwrap();
    let dotdot = under_tmp.path().join("..");
    for dir in [Path::new("/tmp"), to_tmp.as_path(), dotdot.as_path()] {
        match ex.check_directory(dir).unwrap_err() {
            UntrustedReason::WritableByOthers { path, mode } => {
                assert_eq!(path, Path::new("/tmp"), "{}", dir.display());
                assert_eq!(mode & 0o7777, 0o1777);
            }
            other => panic!("{}: {other}", dir.display()),
        }
    }
    // Made writable by others, the private directory is refused by name.
    set_mode(under_tmp.path(), 0o777);
    match ex.check_directory(under_tmp.path()).unwrap_err() {
        UntrustedReason::WritableByOthers { path, .. } => assert_eq!(path, under_tmp.path()),
        other => panic!("{other}"),
    }
}

#[test]
fn a_sticky_directory_not_owned_by_root_is_refused() {
    let top = root_chain();
    let shared = top.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    set_mode(&shared, 0o1777);
    let me = nix::unistd::geteuid().as_raw();
    let person = if is_root() {
        own(&shared, PERSON);
        PERSON
    } else {
        me
    };
    let inner = shared.join("bin");
    std::fs::create_dir(&inner).unwrap();
    set_mode(&inner, 0o755);
    if is_root() {
        own(&inner, PERSON);
    }
    // Only root's sticky bit counts: the person's own 1777 directory is writable by others.
    match executor(&[&inner], Some(person))
        .check_directory(&inner)
        .unwrap_err()
    {
        UntrustedReason::WritableByOthers { path, .. } => assert_eq!(path, shared),
        other => panic!("{other}"),
    }
}

#[test]
fn a_strangers_entry_or_link_in_tmp_is_refused() {
    if !is_root() {
        return eprintln!("skipped: chown needs root");
    }
    // A stranger's directory under /tmp: the stranger may rename it, so it is refused by name.
    let theirs = tempfile::tempdir_in("/tmp").unwrap();
    set_mode(theirs.path(), 0o755);
    own(theirs.path(), STRANGER);
    let ex = executor(&[theirs.path()], Some(PERSON));
    match ex.check_directory(theirs.path()).unwrap_err() {
        UntrustedReason::NotTrustedOwner { path, uid, .. } => {
            assert_eq!((path, uid), (theirs.path().to_owned(), STRANGER));
        }
        other => panic!("{other}"),
    }
    // A stranger's link in /tmp to the person's own directory: whoever owns a link chose its
    // target, so the link is refused, absolute or relative.
    let mine = root_chain();
    own(mine.path(), PERSON);
    let name = mine
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    for (suffix, target) in [
        ("abs", mine.path().to_owned()),
        ("rel", PathBuf::from(&name)),
    ] {
        let link = PathBuf::from(format!("/tmp/{name}-{suffix}"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        own_link(&link, STRANGER);
        let ex = executor(&[&link], Some(PERSON));
        let got = ex.check_directory(&link);
        // The person's own link, by contrast, passes.
        own_link(&link, PERSON);
        let persons = ex.check_directory(&link);
        std::fs::remove_file(&link).unwrap();
        match got.unwrap_err() {
            UntrustedReason::NotTrustedOwner { path, uid, .. } => {
                assert_eq!((path, uid), (link.clone(), STRANGER));
            }
            other => panic!("{suffix}: {other}"),
        }
        assert_eq!(persons.unwrap(), mine.path(), "{suffix}");
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

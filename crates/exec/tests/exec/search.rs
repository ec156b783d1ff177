//! Finding the program: only in the search directories, trusted by owner and write bits, links
//! followed, a missing program named with where it was looked for.

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Permit, UntrustedReason};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_outside_the_search_dirs_are_untrusted() {
    let dir = trusted_tempdir();
    let copy = dir.path().join("true");
    std::fs::copy("/usr/bin/true", &copy).unwrap();
    let err = permit()
        .run(CommandSpec::new(copy.display().to_string()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "untrusted_program");
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::OutsideSearchDirs { .. }, path } if *path == copy),
        "{err}"
    );
    for relative in ["./true", "bin/true", "/usr/bin/../bin/true"] {
        let err = permit().run(CommandSpec::new(relative)).await.unwrap_err();
        assert!(
            matches!(
                err,
                ExecError::Untrusted {
                    reason: UntrustedReason::RelativePath,
                    ..
                }
            ),
            "{relative}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ownership_and_write_bits_decide_trust() {
    let dir = trusted_tempdir();
    let prog = dir.path().join("archgate-test-true");
    std::fs::copy("/usr/bin/true", &prog).unwrap();
    set_mode(&prog, 0o755);
    // Root alone here (the person's uid is trusted too by default; see tests/trust.rs).
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![dir.path().to_owned()],
        person_uid: None,
        ..config()
    });

    if nix::unistd::geteuid().is_root() {
        // Positive control: root-owned all the way, not writable by others → it runs.
        assert!(run(&p).await.expect("trusted program runs").success());
    } else {
        // The first component not root's: the test's own directory under /tmp (root's sticky
        // /tmp is passed through), wherever the clone is.
        let err = run(&p).await.unwrap_err();
        assert!(
            matches!(&err, ExecError::Untrusted { reason: UntrustedReason::NotRootOwned { path, .. }, .. } if path == dir.path()),
            "{err}"
        );
        return;
    }

    set_mode(dir.path(), 0o777);
    let err = run(&p).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::WritableByOthers { path, .. }, .. } if path == dir.path()),
        "{err}"
    );
    assert!(err.to_string().contains("writable by group or others"));

    set_mode(dir.path(), 0o755);
    set_mode(&prog, 0o775);
    let err = run(&p).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::WritableByOthers { path, .. }, .. } if *path == prog),
        "{err}"
    );

    set_mode(&prog, 0o755);
    nix::unistd::chown(&prog, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    let err = run(&p).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::NotRootOwned { path, uid: 65534 }, .. } if *path == prog),
        "{err}"
    );

    // Without the ownership requirement the same file runs.
    let lax = Permit::for_tests(ExecConfig {
        search_dirs: vec![dir.path().to_owned()],
        require_root_owned: false,
        ..config()
    });
    assert!(run(&lax).await.unwrap().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_into_an_untrusted_directory_is_untrusted() {
    let good = trusted_tempdir();
    let bad = trusted_tempdir();
    std::fs::copy("/usr/bin/true", bad.path().join("real-true")).unwrap();
    set_mode(bad.path(), 0o777);
    std::os::unix::fs::symlink(
        bad.path().join("real-true"),
        good.path().join("archgate-linked"),
    )
    .unwrap();
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![good.path().to_owned()],
        ..config()
    });
    let err = p
        .run(CommandSpec::new("archgate-linked"))
        .await
        .unwrap_err();
    if !nix::unistd::geteuid().is_root() {
        assert_eq!(err.kind(), "untrusted_program");
        return;
    }
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::WritableByOthers { path, .. }, .. } if path == bad.path()),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_program_names_the_directories_searched() {
    let err = permit()
        .run(CommandSpec::new("archgate-no-such-program"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "not_installed");
    match &err {
        ExecError::NotInstalled { program, searched } => {
            assert_eq!(program, "archgate-no-such-program");
            assert_eq!(searched, &config().search_dirs);
        }
        other => panic!("unexpected {other}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("archgate-no-such-program") && msg.contains("/usr/local/bin, /usr/bin"));

    let err = permit()
        .run(CommandSpec::new("/usr/bin/archgate-no-such-program"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "not_installed");
}

/// `trusted_path`: a file or directory the person may take as their own — every hop theirs or
/// root's and writable by no one else; anything at the end but a file or a directory refused.
#[test]
fn a_path_is_the_persons_only_when_every_hop_is() {
    use archgate_exec::trusted_path;
    let me = nix::unistd::geteuid().as_raw();
    let dir = trusted_tempdir();
    let file = dir.path().join("hook");
    std::fs::write(&file, "x").unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    assert_eq!(trusted_path(Some(me), &file).unwrap(), file);
    assert_eq!(trusted_path(Some(me), &sub).unwrap(), sub);
    // A link of the person's to it, in their own directory: the real path.
    let link = sub.join("link");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert_eq!(trusted_path(Some(me), &link).unwrap(), file);
    // The same link in a directory others can write: refused at that directory.
    set_mode(&sub, 0o777);
    let err = trusted_path(Some(me), &link).unwrap_err();
    assert!(
        matches!(&err, UntrustedReason::WritableByOthers { path, .. } if *path == sub),
        "{err}"
    );
    set_mode(&sub, 0o755);
    // The file itself writable by others.
    set_mode(&file, 0o666);
    assert!(matches!(
        trusted_path(Some(me), &file).unwrap_err(),
        UntrustedReason::WritableByOthers { .. }
    ));
    set_mode(&file, 0o644);
    // Neither a file nor a directory: a FIFO.
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert!(matches!(
        trusted_path(Some(me), &fifo).unwrap_err(),
        UntrustedReason::NotFileOrDirectory { .. }
    ));
    // Relative: never judged against wherever this process happens to be.
    assert!(matches!(
        trusted_path(Some(me), std::path::Path::new("hook")).unwrap_err(),
        UntrustedReason::RelativePath
    ));
    // Another uid than the file's owner (and not root): refused by owner.
    if me != 0 {
        assert!(matches!(
            trusted_path(Some(me + 1), &file).unwrap_err(),
            UntrustedReason::NotTrustedOwner { .. }
        ));
    } else {
        std::os::unix::fs::chown(&file, Some(65534), None).unwrap();
        assert!(matches!(
            trusted_path(None, &file).unwrap_err(),
            UntrustedReason::NotRootOwned { .. } | UntrustedReason::NotTrustedOwner { .. }
        ));
    }
}

/// Attack 34 F6 (class: *a directory trusted for the program archgate names is also in front of
/// root's*): with Omarchy's `bin/` (the person's, in the home) first in the search directories, a
/// read tool ran a `smartctl` the agent dropped there although root's existed. A bare name
/// resolves in the directories root owns all the way first, whatever the configured order and the
/// trust setting; a name only the person's directory has is still found there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_name_resolves_in_roots_directories_before_the_persons() {
    let dir = trusted_tempdir();
    for name in ["true", "archgate-test-own-only"] {
        let p = dir.path().join(name);
        std::fs::write(&p, "#!/bin/sh\necho planted\n").unwrap();
        set_mode(&p, 0o755);
    }
    if nix::unistd::geteuid().is_root() {
        // Root's when the tests run as root: the person's, as on a desktop.
        nix::unistd::chown(dir.path(), Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    for trust in [true, false] {
        let cfg = ExecConfig {
            search_dirs: vec![dir.path().to_owned(), "/usr/bin".into()],
            require_root_owned: trust,
            person_uid: Some(nix::unistd::geteuid().as_raw()),
            ..config()
        };
        let exec = archgate_exec::Executor::new(cfg);
        if trust && nix::unistd::geteuid().is_root() {
            // Nobody's directory is no one's to trust here; root's `true` is found all the same.
            assert_eq!(
                exec.resolve_program("true").unwrap(),
                std::path::Path::new("/usr/bin/true")
            );
            continue;
        }
        assert_eq!(
            exec.resolve_program("true").unwrap(),
            std::path::Path::new("/usr/bin/true"),
            "trust {trust}"
        );
        assert_eq!(
            exec.resolve_program("archgate-test-own-only").unwrap(),
            dir.path()
                .join("archgate-test-own-only")
                .canonicalize()
                .unwrap(),
            "trust {trust}"
        );
    }
}

/// Attack 35 L4: where `/usr/sbin` is a directory of its own (Debian), a program only it holds
/// (`smartctl`) was no search directory's but the person's — a copy planted in Omarchy's `bin/`
/// ran. The default directories hold `/usr/sbin` among root's, so the name resolves there; on
/// Arch, where it is a link to `bin`, to the same file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_only_usr_sbin_holds_resolves_there_not_in_the_persons_directory() {
    let in_bin = |name: &std::ffi::OsStr| {
        ["/usr/local/bin", "/usr/bin"]
            .iter()
            .any(|d| std::path::Path::new(d).join(name).exists())
    };
    let sbin: Vec<_> = std::fs::read_dir("/usr/sbin")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            use std::os::unix::fs::PermissionsExt;
            // A plain program: a regular file, executable, neither set-user- nor set-group-id.
            e.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o6111 == 0o111)
        })
        .map(|e| e.file_name())
        .collect();
    // Debian's own only (`useradd`, `smartctl`…) if there are any, else any (Arch's merged `bin`).
    let name = sbin
        .iter()
        .find(|n| !in_bin(n))
        .or(sbin.first())
        .expect("/usr/sbin holds programs")
        .clone();
    let dir = trusted_tempdir();
    let planted = dir.path().join(&name);
    std::fs::write(&planted, "#!/bin/sh\necho planted\n").unwrap();
    set_mode(&planted, 0o755);
    if nix::unistd::geteuid().is_root() {
        // Root's when the tests run as root: the person's, as on a desktop.
        nix::unistd::chown(dir.path(), Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    let mut search_dirs = vec![dir.path().to_owned()];
    search_dirs.extend(ExecConfig::system_search_dirs());
    let exec = archgate_exec::Executor::new(ExecConfig {
        search_dirs,
        require_root_owned: true,
        person_uid: Some(nix::unistd::geteuid().as_raw()),
        ..config()
    });
    let name = name.to_str().unwrap();
    assert_eq!(
        exec.resolve_program(name).unwrap(),
        std::path::Path::new("/usr/sbin")
            .join(name)
            .canonicalize()
            .unwrap(),
        "{name}"
    );
}

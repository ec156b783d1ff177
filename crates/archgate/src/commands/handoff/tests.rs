//! The helper's own tests: rendering, the tail, the daemon check, the command rebuilt.

use super::*;

fn prepared(reason: &str, pkg: &str) -> Prepared {
    Prepared {
        id: "1-2-3".into(),
        argv: [
            "/usr/bin/sudo",
            "-k",
            "--",
            "/usr/bin/pacman",
            "-S",
            "--",
            pkg,
        ]
        .map(String::from)
        .to_vec(),
        reason: reason.into(),
        changes: format!("installs {pkg}"),
        ..Prepared::for_tests("1-2-3")
    }
}

#[test]
fn terminal_escapes_in_reasons_and_names_are_shown_not_obeyed() {
    let p = prepared(
        "fine\x1b[1A\x1b[2K\rsudo rm -rf / \u{202e}txt",
        "a\x1b]0;x\x07",
    );
    let shown = render(&p);
    assert!(!shown.contains('\x1b'), "{shown:?}");
    assert!(!shown.contains('\r'));
    assert!(!shown.contains('\u{202e}'));
    assert!(!shown.contains('\x07'));
    assert!(shown.contains("\\x1b[1A"), "{shown}");
    assert!(shown.contains("\\u{202e}"), "{shown}");
}

#[test]
fn the_tail_is_bounded_and_secrets_are_redacted() {
    let mut out = b"line one\n\x1b[31mred\x1b[0m\n".to_vec();
    out.extend(b"export GITHUB_TOKEN=abc123\nPassword: hunter2\n");
    out.extend("x".repeat(10_000).as_bytes());
    out.extend(b"\nlast line\n");
    let t = redact_tail(&out, 64);
    assert!(t.len() <= 64);
    assert!(t.ends_with("last line\n"));
    let all = redact_tail(&out, 1 << 20);
    assert!(!all.contains("abc123") && !all.contains("hunter2"), "{all}");
    assert!(!all.contains('\x1b'));
    assert!(all.contains("[31mred"));
}

#[test]
fn after_enter_the_files_renamed_as_root_are_judged_after_the_programs_own_dashes() {
    let argv = |file: &str| -> Vec<String> {
        ["-k", "--", "/usr/bin/rm", "-f", "--", file]
            .map(String::from)
            .to_vec()
    };
    // Root's own file in root's directories: passes (nothing runs here).
    assert_eq!(
        files_still_roots("/usr/bin/rm", &argv("/usr/bin/sh")),
        Ok(())
    );
    // A file in a directory of someone else than root (the test's own; nobody's as root).
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.conf.pacnew");
    std::fs::write(&f, "x").unwrap();
    if nix::unistd::geteuid().is_root() {
        nix::unistd::chown(d.path(), Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    let e = files_still_roots("/usr/bin/rm", &argv(&f.display().to_string())).unwrap_err();
    assert!(e.contains("owned by uid"), "{e}");
    // Other programs are not renames: nothing to judge here.
    assert_eq!(
        files_still_roots("/usr/bin/pacman", &argv(&f.display().to_string())),
        Ok(())
    );
}

#[test]
fn only_the_archgate_that_opened_the_terminal_may_hand_it_a_command() {
    let d = tempfile::tempdir().unwrap();
    // A socket this process serves: not the helper's ancestor, but this very binary.
    let own = d.path().join("own.sock");
    let _l = std::os::unix::net::UnixListener::bind(&own).unwrap();
    let s = UnixStream::connect(&own).unwrap();
    let e = daemon_is_ours(&s, "terminal").unwrap_err().to_string();
    assert!(e.contains("did not open this terminal"), "{e}");
    assert!(daemon_is_ours(&s, "own_terminal").is_ok());
    // Another program's socket: `adversary::stand_in_daemon` (a test may not start one here).
}

#[test]
fn the_helper_runs_only_the_command_its_operation_builds() {
    use crate::tools::handoff::ops::{Op, Values};
    let conf = std::path::Path::new("/etc/pacman.conf");
    let pacnew = "/etc/archgate-test-none.conf.pacnew";
    let mut p = prepared("r", "x");
    p.op = Some(Op::PacnewDiscard);
    p.values = Values {
        path: Some(pacnew.into()),
        ..Values::default()
    };
    // What a stand-in (or a preloaded archgate) says runs: a sudoers file of its own.
    p.argv = [
        "/usr/bin/sudo",
        "-k",
        "--",
        "/usr/bin/install",
        "-m",
        "0440",
        "/tmp/x",
        "/etc/sudoers.d/zz",
    ]
    .map(String::from)
    .to_vec();
    let e = rebuilt(&p, conf).unwrap_err();
    assert!(e.contains("is not the one its operation builds"), "{e}");
    // The command the operation builds passes that check (and meets the next: no such file).
    p.argv = [
        "/usr/bin/sudo",
        "-k",
        "--",
        "/usr/bin/rm",
        "-f",
        "--",
        pacnew,
    ]
    .map(String::from)
    .to_vec();
    let e = rebuilt(&p, conf).unwrap_err();
    assert!(!e.contains("is not the one"), "{e}");
    // No operation, or values the closed set refuses: nothing is built.
    p.op = None;
    assert!(rebuilt(&p, conf).unwrap_err().contains("no operation"));
    p.op = Some(Op::Install);
    p.values = Values {
        packages: Some(vec!["--config=/tmp/evil".into()]),
        ..Values::default()
    };
    assert!(rebuilt(&p, conf).is_err());
}

/// Attack 29 F8: what a pacman hand-off reads is judged again after the person's Enter — the
/// question can wait minutes, and a file that turns into the person's (the agent's) meanwhile
/// is refused with the reason, nothing run.
#[test]
fn after_enter_a_package_file_no_longer_roots_refuses() {
    use crate::tools::handoff::ops::{self, Op, Operation, Values};
    let d = tempfile::tempdir().unwrap();
    let cache = d.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    let pkg = cache.join("pathtest-9-1-any.pkg.tar.zst");
    std::fs::write(&pkg, "x").unwrap();
    let conf = d.path().join("pacman.conf");
    std::fs::write(
        &conf,
        format!(
            "[options]\nCacheDir = {c}/\nDBPath = {d}/db/\nLogFile = {d}/pacman.log\nHookDir = {d}/hooks/\nGPGDir = {d}/gnupg/\n",
            c = cache.display(),
            d = d.path().display()
        ),
    )
    .unwrap();
    let values = Values {
        path: Some(pkg.display().to_string()),
        ..Values::default()
    };
    let operation = Operation::from_args(Op::InstallFile, values.clone()).unwrap();
    let argv = ops::argv(
        &operation,
        &pinned::program("sudo").unwrap(),
        &pinned::program("pacman").unwrap(),
        &conf,
    );
    let mut p = prepared("r", "x");
    p.op = Some(Op::InstallFile);
    p.values = values;
    p.argv = argv;
    if nix::unistd::geteuid().is_root() {
        // As shown: root's file in root's cache.
        assert_eq!(still_as_shown(&p, &conf), Ok(()));
        nix::unistd::chown(&pkg, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    }
    let e = still_as_shown(&p, &conf).unwrap_err();
    assert!(e.starts_with("changed since it was shown"), "{e}");
}

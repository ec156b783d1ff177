//! Integration tests of archgate-exec against real programs and real process groups.
//!
//! The programs under test are ordinary binaries in /usr/bin. Where a test needs a program that
//! misbehaves (forks helpers that ignore SIGTERM, writes a lot), it runs `/usr/bin/sh -c SCRIPT`:
//! that is an argv given to an allowed binary, which is exactly what archgate permits.

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Permit, UntrustedReason};

fn config() -> ExecConfig {
    ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin")],
        kill_grace: Duration::from_millis(300),
        ..ExecConfig::default()
    }
}

fn permit() -> Permit {
    Permit::for_tests(config())
}

fn sh(script: &str) -> CommandSpec {
    CommandSpec::new("/usr/bin/sh").args(["-c", script])
}

/// A temporary directory on a path that is root-owned and not writable by group or others all
/// the way down (unlike /tmp), when the tests run as root: the target's tmp dir if it qualifies,
/// else /run or /root.
fn trusted_tempdir() -> tempfile::TempDir {
    let candidates = [env!("CARGO_TARGET_TMPDIR"), "/run", "/root"];
    let base = candidates
        .iter()
        .find(|c| trusted_chain(Path::new(c)))
        .unwrap_or(&candidates[0]);
    let dir = tempfile::tempdir_in(base).expect("tempdir");
    set_mode(dir.path(), 0o755);
    dir
}

fn trusted_chain(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    real.ancestors()
        .all(|p| std::fs::metadata(p).is_ok_and(|m| m.uid() == 0 && m.mode() & 0o022 == 0))
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Non-zombie processes whose process group is `pgid`.
fn live_group_members(pgid: i32) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            found.push(stat.trim().to_owned());
        }
    }
    found
}

/// Poll for a while until nothing of the group is alive; returns what is left.
async fn group_left_after_polling(pgid: i32) -> Vec<String> {
    for _ in 0..50 {
        let left = live_group_members(pgid);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    live_group_members(pgid)
}

fn read_pid(file: &Path) -> i32 {
    std::fs::read_to_string(file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_syntax_in_arguments_reaches_the_program_literally() {
    let dir = trusted_tempdir();
    let canary = dir.path().join("CANARY");
    std::fs::write(dir.path().join("a-file-for-globs"), "x").unwrap();
    let c = canary.display().to_string();
    let hostile = vec![
        "; touch CANARY".to_owned(),
        format!("; touch {c}"),
        format!("$(touch {c})"),
        format!("`touch {c}`"),
        format!("x\ntouch {c}\n"),
        format!("&& touch {c} || touch {c} | touch {c}"),
        "*".to_owned(),
        "a-file-*".to_owned(),
        "'single' \"double\" \\back".to_owned(),
        "$HOME ${PATH} ~ %s %n".to_owned(),
        String::new(),
    ];
    let spec = CommandSpec::new("/usr/bin/printf")
        .arg("%s\\n")
        .args(hostile.clone())
        .cwd(dir.path());
    let out = permit().run(spec).await.expect("printf runs");
    assert!(out.success(), "{out:?}");
    let expected: String = hostile.iter().map(|a| format!("{a}\n")).collect();
    assert_eq!(out.stdout_lossy(), expected);
    assert!(!canary.exists(), "a canary file appeared");
    assert!(!Path::new("/CANARY").exists());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["a-file-for-globs"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolved_file_runs_under_the_name_as_written() {
    let out = permit()
        .run(CommandSpec::new("sh").args(["-c", "printf '%s' \"$0\""]))
        .await
        .unwrap();
    assert_eq!(out.stdout_lossy(), "sh");
    assert_eq!(
        out.program,
        Path::new("/usr/bin/sh").canonicalize().unwrap(),
        "the real file behind the link ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helpers_ignoring_sigterm_do_not_survive_a_timeout() {
    let dir = trusted_tempdir();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "echo $$ > {}; trap '' TERM; (sleep 60) & (sleep 60 & wait) & sleep 60",
        pidfile.display()
    );
    let err = permit()
        .run(sh(&script).timeout(Duration::from_secs(2)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ExecError::TimedOut { after, .. } if after == Duration::from_secs(2)),
        "{err}"
    );
    assert_eq!(err.kind(), "timed_out");
    let pgid = read_pid(&pidfile);
    let left = group_left_after_polling(pgid).await;
    assert!(left.is_empty(), "still alive: {left:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn helpers_left_behind_after_a_normal_exit_are_ended() {
    let dir = trusted_tempdir();
    let pidfile = dir.path().join("pid");
    // The leader exits at once; its helper ignores SIGTERM and holds stdout open.
    let script = format!(
        "echo $$ > {}; (trap '' TERM; sleep 60) & echo started",
        pidfile.display()
    );
    let out = permit().run(sh(&script)).await.expect("runs");
    assert!(out.success());
    assert_eq!(out.stdout_lossy(), "started\n");
    let pgid = read_pid(&pidfile);
    let left = group_left_after_polling(pgid).await;
    assert!(left.is_empty(), "still alive: {left:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_call_ends_its_process_group() {
    let dir = trusted_tempdir();
    let pidfile = dir.path().join("pid");
    let script = format!("echo $$ > {}; sleep 60 & sleep 60", pidfile.display());
    let p = permit();
    let call = p.run(sh(&script));
    let abandoned = tokio::time::timeout(Duration::from_millis(400), call).await;
    assert!(
        abandoned.is_err(),
        "the call should still have been running"
    );
    let pgid = read_pid(&pidfile);
    let left = group_left_after_polling(pgid).await;
    assert!(left.is_empty(), "still alive: {left:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_cap_keeps_head_and_tail() {
    let cfg = ExecConfig {
        output_cap: 1000,
        ..config()
    };
    let out = Permit::for_tests(cfg)
        .run(CommandSpec::new("seq").args(["1", "100000"]))
        .await
        .unwrap();
    let full: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    let omitted = full.len() - 1000;
    let expected = format!(
        "{}\n… [archgate: {omitted} bytes omitted] …\n{}",
        &full[..500],
        &full[full.len() - 500..]
    );
    assert!(out.truncated);
    assert_eq!(out.stdout_lossy(), expected);
    assert!(out.stderr.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cap_is_shared_by_both_streams_and_a_chatty_program_does_not_block() {
    let cfg = ExecConfig {
        output_cap: 1000,
        ..config()
    };
    // Both streams far beyond a pipe buffer, interleaved.
    let out = Permit::for_tests(cfg)
        .run(sh(
            "seq 1 200000; seq 1 200000 >&2; echo out-end; echo err-end >&2",
        ))
        .await
        .unwrap();
    assert!(out.truncated);
    let (stdout, stderr) = (out.stdout_lossy(), out.stderr_lossy());
    for s in [&stdout, &stderr] {
        assert!(s.starts_with("1\n2\n3\n"), "{s}");
        assert!(s.contains("bytes omitted]"), "{s}");
    }
    assert!(stdout.ends_with("200000\nout-end\n"), "{stdout}");
    assert!(stderr.ends_with("200000\nerr-end\n"), "{stderr}");
    let marker_len = |s: &str| s.len() - 500;
    assert!(marker_len(&stdout) < 60 && marker_len(&stderr) < 60);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_output_is_whole_and_exit_status_is_reported() {
    let out = permit()
        .run(sh("echo hi; echo oops >&2; exit 3"))
        .await
        .unwrap();
    assert!(!out.truncated);
    assert_eq!(out.stdout, b"hi\n");
    assert_eq!(out.stderr, b"oops\n");
    assert_eq!((out.status.code, out.status.signal), (Some(3), None));
    assert!(!out.success());

    let out = permit().run(sh("kill -9 $$")).await.unwrap();
    assert_eq!((out.status.code, out.status.signal), (None, Some(9)));
}

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

async fn run(p: &Permit) -> Result<archgate_exec::Output, ExecError> {
    p.run(CommandSpec::new("archgate-test-true")).await
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
        let err = run(&p).await.unwrap_err();
        assert!(
            matches!(&err, ExecError::Untrusted { reason: UntrustedReason::NotRootOwned { path, .. }, .. } if *path == prog),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_timeout_is_timed_out() {
    let p = Permit::for_tests(ExecConfig {
        default_timeout: Duration::from_millis(200),
        ..config()
    });
    let err = p
        .run(CommandSpec::new("sleep").arg("30"))
        .await
        .unwrap_err();
    match err {
        ExecError::TimedOut { command, after } => {
            assert_eq!(command, "sleep 30");
            assert_eq!(after, Duration::from_millis(200));
        }
        other => panic!("unexpected {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_bytes_reach_the_program_and_default_stdin_is_empty() {
    let input: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let out = permit()
        .run(CommandSpec::new("cat").stdin_bytes(input.clone()))
        .await
        .unwrap();
    assert!(!out.truncated);
    assert_eq!(out.stdout, input);

    let out = permit().run(CommandSpec::new("cat")).await.unwrap();
    assert!(out.success());
    assert!(out.stdout.is_empty());
}

/// The child half of `the_persons_environment_passes_and_secrets_do_not`: run `env` through the
/// executor and print what it saw between markers. Does nothing unless the parent started it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stdout)] // the parent reads this process's stdout
async fn env_child_prints_what_a_program_sees() {
    if std::env::var_os("ARCHGATE_EXEC_ENV_CHILD").is_none() {
        return;
    }
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/bin")],
        ..config()
    });
    let out = p
        .run(CommandSpec::new("env").env("SPEC_VAR", "v=1"))
        .await
        .unwrap();
    println!("<<ENV\n{}ENV>>", out.stdout_lossy());
}

#[test]
#[allow(clippy::disallowed_methods)] // re-runs this test binary with a chosen environment
fn the_persons_environment_passes_and_secrets_do_not() {
    let me = std::env::current_exe().unwrap();
    let session = [
        ("HOME", "/home/person"),
        ("EDITOR", "nvim"),
        ("TERMINAL", "alacritty"),
        ("BROWSER", "chromium"),
        (
            "XDG_DATA_DIRS",
            "/home/person/.local/share/flatpak/exports/share:/usr/share",
        ),
        ("XDG_CONFIG_DIRS", "/etc/xdg"),
        ("XDG_CURRENT_DESKTOP", "Hyprland"),
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("HYPRLAND_INSTANCE_SIGNATURE", "abc_123"),
        ("SWAYSOCK", "/run/user/1000/sway-ipc.1000.1.sock"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("LANG", "de_DE.UTF-8"),
        ("LC_TIME", "C"),
        ("PATH", "/home/person/.local/bin:/usr/bin"),
    ];
    let secrets = [
        ("ARCHGATE_TOKEN", "s1"),
        ("ARCHGATE_CONFIG", "s2"),
        ("GITHUB_TOKEN", "s3"),
        ("ANTHROPIC_API_KEY", "s4"),
        ("DB_PASSWORD", "s5"),
        ("LD_PRELOAD", "/tmp/evil.so"),
    ];
    let out = std::process::Command::new(me)
        .args([
            "--exact",
            "env_child_prints_what_a_program_sees",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .envs(session)
        .envs(secrets)
        .env("ARCHGATE_EXEC_ENV_CHILD", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text
        .find("<<ENV\n")
        .unwrap_or_else(|| panic!("no env printed: {text}"));
    let end = text.find("ENV>>").unwrap();
    let seen: Vec<(&str, &str)> = text[start + 6..end]
        .lines()
        .map(|l| l.split_once('=').expect("KEY=VALUE"))
        .collect();
    let get = |k: &str| seen.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    for (k, v) in session {
        if k == "PATH" {
            continue;
        }
        assert_eq!(get(k), Some(v), "{k} did not pass through: {seen:?}");
    }
    // The person's PATH is kept for the program's own lookups; the search directory was in it.
    assert_eq!(get("PATH"), Some("/home/person/.local/bin:/usr/bin"));
    assert_eq!(get("SPEC_VAR"), Some("v=1"));
    for (k, _) in secrets {
        assert_eq!(get(k), None, "{k} reached the program");
    }
    assert!(
        !seen.iter().any(|(k, _)| k.starts_with("ARCHGATE_")),
        "{seen:?}"
    );
    for (_, secret) in secrets {
        assert!(
            !seen.iter().any(|(_, v)| *v == secret),
            "{secret} leaked: {seen:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_directories_missing_from_path_are_appended_and_bad_keys_refused() {
    let out = permit().run(CommandSpec::new("env")).await.unwrap();
    let text = out.stdout_lossy();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .expect("a PATH");
    let dirs: Vec<&str> = path.split(':').collect();
    assert!(
        dirs.contains(&"/usr/local/bin") && dirs.contains(&"/usr/bin"),
        "{path}"
    );
    if let Some(inherited) = std::env::var_os("PATH") {
        assert!(path.starts_with(inherited.to_str().unwrap()), "{path}");
    }

    let err = permit()
        .run(CommandSpec::new("env").env("BAD=KEY", "x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "spawn_failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_detached_program_runs_on_in_its_own_group() {
    let dir = trusted_tempdir();
    let done = dir.path().join("done");
    let script = format!("sleep 2; echo ran > {}", done.display());
    let pid = permit().spawn_detached(sh(&script)).expect("spawned");
    // Returned at once, while the program still sleeps.
    assert!(!done.exists());
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("still running");
    let pgrp: i32 = stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(pgrp, pid as i32, "its own process group");
    for _ in 0..200 {
        if done.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(&done).unwrap(), "ran\n");

    let err = permit()
        .spawn_detached(CommandSpec::new("cat").stdin_bytes(b"x".to_vec()))
        .unwrap_err();
    assert_eq!(err.kind(), "spawn_failed");
    let err = permit()
        .spawn_detached(CommandSpec::new("archgate-no-such-program"))
        .unwrap_err();
    assert_eq!(err.kind(), "not_installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_left_the_group_cannot_hold_the_call_open() {
    // `setsid` moves the sleeper to a new session, out of reach of the group kill, while it keeps
    // the output pipe open. The call must still end (the output is drained for a bounded time).
    let p = permit();
    let call = p.run(sh("setsid sleep 60 & echo $!"));
    let out = tokio::time::timeout(Duration::from_secs(30), call)
        .await
        .expect("the call ended although a pipe was still held")
        .expect("runs");
    let escaped: i32 = out.stdout_lossy().trim().parse().expect("pid");
    // End the sleeper this test started.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(escaped),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert!(out.success());
}

/// Issue 16, "what is approved is what runs": a permit bound to the approved commands runs
/// exactly those — another argument, another program or other stdin bytes are refused before
/// anything starts, and the approved command still runs.
#[tokio::test]
async fn a_bound_permit_runs_only_the_approved_commands() {
    let approved = CommandSpec::new("/usr/bin/echo").args(["approved"]);
    let p = permit().bound_to(vec![approved.clone()]);
    let out = p
        .run(approved.clone())
        .await
        .expect("the approved command runs");
    assert_eq!(out.stdout_lossy().trim(), "approved");

    for drifted in [
        CommandSpec::new("/usr/bin/echo").args(["approved", "more"]),
        CommandSpec::new("/usr/bin/true"),
        approved.clone().stdin_bytes(b"other".to_vec()),
    ] {
        let err = p
            .run(drifted.clone())
            .await
            .expect_err("a drifted command is refused");
        assert_eq!(err.kind(), "not_approved", "{drifted:?}");
        let err = p.spawn_detached(drifted).expect_err("detached too");
        assert_eq!(err.kind(), "not_approved");
    }
    // The environment is plumbing, not the command: the approved command with an extra
    // variable still runs.
    let with_env = approved.env("X_TEST", "1");
    assert!(p.run(with_env).await.is_ok());
}

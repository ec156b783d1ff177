//! Process groups: helpers that ignore SIGTERM, stay behind, detach or leave the group, an
//! abandoned call and a plain timeout.

use std::time::Duration;

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Permit};

use crate::support::*;

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

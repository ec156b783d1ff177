//! Arguments, stdin and output: shell syntax reaches the program literally, the output cap keeps
//! head and tail across both streams, exit status and stdin bytes.

use std::path::Path;

use archgate_exec::{CommandSpec, ExecConfig, Permit};

use crate::support::*;

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

/// `sh` is a link on Arch (to bash) and on Debian (to dash): the real file runs, and it is told
/// its own name, the real path — never the link's name, which a multi-call binary would obey
/// (attack 15 F5; `arg0.rs`). A `sh` that is a file of its own keeps the name as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resolved_file_runs_under_its_own_name() {
    let out = permit()
        .run(CommandSpec::new("sh").args(["-c", "printf '%s' \"$0\""]))
        .await
        .unwrap();
    let real = Path::new("/usr/bin/sh").canonicalize().unwrap();
    assert_eq!(out.program, real, "the real file behind the link ran");
    if real.file_name() == Some(std::ffi::OsStr::new("sh")) {
        assert_eq!(out.stdout_lossy(), "sh");
    } else {
        assert_eq!(Path::new(&out.stdout_lossy()), real);
    }
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

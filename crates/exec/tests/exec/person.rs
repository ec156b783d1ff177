//! `run_for_person`: the person's own command runs through the same trust checks as every launch
//! and hands back its output and exit status.

use archgate_exec::{CommandSpec, ExecError, run_for_person};

#[tokio::test]
async fn runs_a_trusted_program_and_returns_its_output() {
    let out = run_for_person(CommandSpec::new("printf").args(["%s|", "a b", "c"]))
        .await
        .expect("printf runs");
    assert!(out.success());
    assert_eq!(out.stdout_lossy(), "a b|c|");
}

#[tokio::test]
async fn a_failing_program_is_an_output_not_an_error() {
    let out = run_for_person(CommandSpec::new("false"))
        .await
        .expect("false runs");
    assert_eq!(out.status.code, Some(1));
}

#[tokio::test]
async fn a_program_outside_the_trusted_directories_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("systemctl");
    std::fs::write(&fake, "#!/bin/sh\necho hijacked\n").unwrap();
    let err = run_for_person(CommandSpec::new(fake.display().to_string()))
        .await
        .expect_err("a program in a temp dir must not run");
    assert!(
        matches!(err, ExecError::Untrusted { .. }),
        "unexpected error: {err}"
    );
}

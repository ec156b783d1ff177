//! Class: *trust judged from today's mode, while write access granted earlier outlives it*
//! (attack 33 F3). A route script archgate refused as mode 0777 was fixed with `chmod go-w`; a
//! stranger who had opened it for writing meanwhile kept the descriptor, rewrote the script
//! after the fix, and the person's yes ran the stranger's code. What it tries: the same, on a
//! program in a trusted directory — refused at 0777, a descriptor held, the mode fixed, the file
//! rewritten through the descriptor. The inode stays refused (with how to get out: replace the
//! file); a copy moved over it, which no earlier descriptor reaches, runs.

use std::io::Write;

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Permit, UntrustedReason};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_once_writable_by_others_stays_refused_until_it_is_replaced() {
    let dir = trusted_tempdir();
    let prog = dir.path().join("archgate-test-route");
    std::fs::write(&prog, "#!/bin/sh\necho route-ran\n").unwrap();
    set_mode(&prog, 0o755);
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![dir.path().to_owned(), "/usr/bin".into()],
        ..config()
    });
    async fn run(p: &Permit) -> Result<archgate_exec::Output, ExecError> {
        p.run(CommandSpec::new("archgate-test-route")).await
    }
    let out = run(&p).await.expect("the person's own script runs");
    assert_eq!(out.stdout_lossy().trim(), "route-ran");

    set_mode(&prog, 0o777);
    let err = run(&p).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::WritableByOthers { path, .. }, .. } if *path == prog),
        "{err}"
    );
    // Another user opens it for writing while it is theirs to write, and keeps the descriptor.
    let mut held = std::fs::OpenOptions::new().write(true).open(&prog).unwrap();
    set_mode(&prog, 0o755);
    let err = run(&p).await.unwrap_err();
    assert!(
        matches!(&err, ExecError::Untrusted { reason: UntrustedReason::WasOpenToOthers { path }, .. } if *path == prog),
        "the mode is fixed, the descriptor is not: {err}"
    );
    assert!(err.to_string().contains("replace it"), "{err}");
    held.set_len(0).unwrap();
    held.write_all(b"#!/bin/sh\necho stranger-ran\n").unwrap();
    drop(held);
    let err = run(&p).await.unwrap_err();
    assert!(
        err.to_string().contains("was writable by another user"),
        "{err}"
    );

    // Replaced by the person: a new file moved over it, which no earlier descriptor reaches.
    let new = dir.path().join("archgate-test-route.new");
    std::fs::write(&new, "#!/bin/sh\necho route-ran\n").unwrap();
    set_mode(&new, 0o755);
    std::fs::rename(&new, &prog).unwrap();
    let out = run(&p).await.expect("the replaced script runs");
    assert_eq!(out.stdout_lossy().trim(), "route-ran");
}

//! A permit bound to approved commands.

use archgate_exec::CommandSpec;

use crate::support::*;

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
    let with_env = approved.env("LANG", "C.UTF-8");
    assert!(p.run(with_env).await.is_ok());
}

//! A CLI ends quietly on a closed pipe (issue 36): `archgate policy explain … | head` panicked
//! with "failed printing to stdout: Broken pipe" and a backtrace. Class: "writing to stdout
//! assumes it stays open". Each command below runs with stdout a pipe whose reading end is
//! already closed (deterministic: the first write fails with EPIPE), and must end by itself, with
//! no panic and nothing about the pipe on stderr.

use std::process::Stdio;

use crate::support::Env;

#[test]
fn every_printing_command_ends_quietly_on_a_closed_stdout() {
    let env = Env::hermetic();
    let commands: &[&[&str]] = &[
        &["policy", "explain", "system_status"],
        &[
            "policy",
            "explain",
            "omarchy_run",
            r#"{"route":"theme set","args":["nord"]}"#,
        ],
        &["tools"],
        &["tools", "--markdown"],
        &["config", "example"],
        &["completions", "bash"],
        &["man"],
        &["call", "system_status", "{}"],
        &["approvals"],
        &["rules", "list"],
        &["client-config", "claude-code"],
        &["log"],
        &["--help"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = env
            .command(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("run archgate");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "archgate {args:?} on a closed stdout: {stderr}"
        );
        assert!(
            out.status.code().is_some_and(|c| c != 101),
            "archgate {args:?} did not end by itself: {:?}; {stderr}",
            out.status
        );
    }
}

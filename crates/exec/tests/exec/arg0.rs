//! What was approved is the file that is used — and the name it is told it has (attack 15 F5;
//! class: *what is judged (the file) is not what the program is told it is (its name)*).
//!
//! A multi-call binary picks its command by `argv[0]`: on Arch `/usr/bin/reboot` is a link to
//! `systemctl`, which reboots when it is called `reboot`. The executor judges and starts the
//! real file, so a link's name must not reach it as `argv[0]`. bash is a real binary that says
//! its `argv[0]` (`bash -c 'echo "$0"'`): a link named `reboot` to it, in a trusted directory,
//! run through the executor (waited for, and detached), must not be told it is `reboot`.

use std::path::{Path, PathBuf};

use archgate_exec::{CommandSpec, ExecConfig, Permit};

use crate::support::*;

/// The real bash (through whatever links `/usr/bin/bash` or `/bin/bash` is on this system).
fn real_bash() -> PathBuf {
    ["/usr/bin/bash", "/bin/bash"]
        .iter()
        .find_map(|p| Path::new(p).canonicalize().ok())
        .expect("bash is installed")
}

/// A trusted directory holding `reboot` and `bash`, each a link to the real bash.
fn links() -> (tempfile::TempDir, ExecConfig) {
    let dir = trusted_tempdir();
    let bash = real_bash();
    std::os::unix::fs::symlink(&bash, dir.path().join("reboot")).unwrap();
    std::os::unix::fs::symlink(&bash, dir.path().join("bash")).unwrap();
    let cfg = ExecConfig {
        search_dirs: vec![dir.path().to_owned()],
        ..config()
    };
    (dir, cfg)
}

#[tokio::test]
async fn a_link_name_is_not_the_name_a_program_is_told() {
    let (_dir, cfg) = links();
    let permit = Permit::for_tests(cfg);
    let out = permit
        .run(CommandSpec::new("reboot").args(["-c", "echo \"$0\""]))
        .await
        .expect("runs");
    let told = out.stdout_lossy().trim().to_owned();
    assert_ne!(
        told, "reboot",
        "the link's name reached the program as argv[0]"
    );
    assert_eq!(
        Path::new(&told),
        real_bash(),
        "argv[0] is the real file judged"
    );
}

#[tokio::test]
async fn a_name_that_is_the_file_s_own_stays_as_asked() {
    let (_dir, cfg) = links();
    // `bash` → the real `bash`: the same name, kept as asked (a program's own name changes
    // nothing). Only when the real file has its own name `bash` (else it is the path).
    let permit = Permit::for_tests(cfg);
    let out = permit
        .run(CommandSpec::new("bash").args(["-c", "echo \"$0\""]))
        .await
        .expect("runs");
    let told = out.stdout_lossy().trim().to_owned();
    if real_bash().file_name() == Some(std::ffi::OsStr::new("bash")) {
        assert_eq!(told, "bash");
    } else {
        assert_eq!(Path::new(&told), real_bash());
    }
}

#[tokio::test]
async fn a_detached_program_is_not_told_the_link_name_either() {
    let (dir, cfg) = links();
    let out = dir.path().join("argv0");
    let permit = Permit::for_tests(cfg);
    permit
        .spawn_detached(CommandSpec::new("reboot").args([
            "-c",
            &format!("echo \"$0\" > {}.tmp && mv {0}.tmp {0}", out.display()),
        ]))
        .expect("starts");
    // Wait for the program's answer (it writes and renames; no timing is asserted).
    let told = loop {
        if let Ok(t) = std::fs::read_to_string(&out) {
            break t.trim().to_owned();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    assert_ne!(told, "reboot");
    assert_eq!(Path::new(&told), real_bash());
}

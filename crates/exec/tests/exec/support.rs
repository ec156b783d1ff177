//! What the tests of this crate share: an executor config with a short kill grace, a test
//! permit, `sh -c`, trusted temporary directories and a look at live process groups.

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_exec::{CommandSpec, ExecConfig, ExecError, Permit};

pub fn config() -> ExecConfig {
    ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin")],
        kill_grace: Duration::from_millis(300),
        ..ExecConfig::default()
    }
}

pub fn permit() -> Permit {
    Permit::for_tests(config())
}

pub fn sh(script: &str) -> CommandSpec {
    CommandSpec::new("/usr/bin/sh").args(["-c", script])
}

/// A 0755 temporary directory under `/tmp`, whoever runs the tests and wherever the clone and the
/// target directory are: the executor trusts the chain through root's sticky `/tmp` to a directory
/// of the person's (or root's) own (SECURITY.md, "Trusted programs").
pub fn trusted_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir_in("/tmp").expect("tempdir");
    set_mode(dir.path(), 0o755);
    dir
}

pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Non-zombie processes whose process group is `pgid`.
pub fn live_group_members(pgid: i32) -> Vec<String> {
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
pub async fn group_left_after_polling(pgid: i32) -> Vec<String> {
    for _ in 0..50 {
        let left = live_group_members(pgid);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    live_group_members(pgid)
}

pub fn read_pid(file: &Path) -> i32 {
    std::fs::read_to_string(file)
        .expect("pid file")
        .trim()
        .parse()
        .expect("pid")
}

pub async fn run(p: &Permit) -> Result<archgate_exec::Output, ExecError> {
    p.run(CommandSpec::new("archgate-test-true")).await
}

//! Shared test helpers: snapshot paths, permits, and fixture programs standing in for Omarchy's
//! commands (which do not exist on this machine).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_exec::{ExecConfig, Permit};

/// A snapshot file under `tests/data`.
pub fn data(rel: &str) -> PathBuf {
    crate::manifest_dir().join("tests/data").join(rel)
}

/// A permit for the real system programs in /usr/bin.
pub fn system_permit() -> Permit {
    Permit::for_tests(ExecConfig {
        default_timeout: Duration::from_secs(60),
        ..ExecConfig::default()
    })
}

/// A permit that finds programs first in `dir` (fixture programs in a temporary directory, which
/// is not root-owned all the way up), then in /usr/bin.
pub fn permit_with(dir: &Path) -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![dir.to_path_buf(), PathBuf::from("/usr/bin")],
        require_root_owned: false,
        default_timeout: Duration::from_secs(60),
        ..ExecConfig::default()
    })
}

/// A permit that finds no program at all.
pub fn empty_permit(dir: &Path) -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![dir.to_path_buf()],
        require_root_owned: false,
        ..ExecConfig::default()
    })
}

/// Writes an executable shell script named `name` into `dir`.
pub fn script(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

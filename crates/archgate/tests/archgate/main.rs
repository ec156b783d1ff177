//! Integration tests of the archgate binary (the one test binary of this crate): the real
//! `archgate` started as a process with private XDG directories and spoken to as any client or
//! person would. No part of archgate is linked in; every module shares the harness in `support`.
//!
//! - `e2e`: stdio and HTTP end to end, the CLI, the bridge, the page's clients, real desktops.
//! - `approvals`: the person's answers through the CLI and desktop notifications.
//! - `home`: status for bars, the systemd unit, setup, doctor, the Omarchy plugin's contract.
//! - `catalogue`: TOOLS.md and the context budget of tools/list.
//! - `binary`: how the binary is linked.
//! - `layering`: no two source files of a crate import each other.
//! - `faults`: the daemon killed mid-write, a full disk, garbage config, hanging servers.
//! - `hostile` and `adversary`: hostile input, each kind a table; zero successes.

// These tests start the archgate binary and real tools (setpriv, mount, qmllint, mako …); that is
// their whole point, so the workspace rule that only crates/exec spawns processes does not apply.
#![allow(clippy::disallowed_methods)]

mod adversary;
mod approvals;
mod binary;
mod catalogue;
mod e2e;
mod faults;
mod home;
mod hostile;
mod layering;
mod support;

/// This package's directory as `cargo test` names it to the running test (its environment),
/// else as it was when this binary was compiled: a test binary built from one clone may run for
/// another that shares the target directory (cargo reuses it when the sources are unchanged),
/// and the first clone may be gone by then.
pub fn manifest_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")))
}

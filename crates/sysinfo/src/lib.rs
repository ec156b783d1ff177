//! archgate-sysinfo: the facts behind the `system_status` tool.
//!
//! [`system_status`] reads kernel, hostname, uptime, load, memory, swap and CPU count from
//! `/proc` and `/sys`, disk use of `/` and `/home` from `statvfs`, batteries from
//! `/sys/class/power_supply`, and — only where systemd runs — failed units from one
//! `systemctl` run through the caller's [`Permit`]. Every field is its own probe: a probe that
//! fails gives `{"error": {"kind", "message"}}` in its place and the others are unaffected.
//!
//! All paths are read under [`SysinfoOptions::root`] (`/` on a real machine), so tests can point
//! the probes at a tree they wrote.
//!
//! The diagnostics behind the `hardware`, `network` and `processes` tools live in [`hardware`],
//! [`network`] and [`processes`]; their errors are [`MachineError`]s.
//! The diagnostics read deeper, each call on its own: the journal ([`journal::query`]), systemd
//! units ([`units::list`], [`units::status`]), boots and core dumps ([`boots::boots`],
//! [`boots::crashes`]), through `journalctl`, `systemctl` and `coredumpctl` run with the caller's
//! permit, never elevating; their errors are [`DiagError`] (see `diag.rs`).
//!
//! This crate knows nothing of MCP: the binary turns [`SystemStatus`] into a tool result.

#![forbid(unsafe_code)]

mod battery;
pub mod boots;
mod diag;
mod disk;
pub mod hardware;
pub mod journal;
mod machine;
pub mod network;
mod probe;
pub mod processes;
mod procfs;
pub mod restart;
pub mod snapshots;
mod systemd;
mod transient;
mod unit_name;
pub mod units;

use std::path::PathBuf;
use std::time::Duration;

use archgate_exec::Permit;
use serde::Serialize;

pub use battery::Battery;
pub use diag::{DiagError, DiagOptions, JournalSource};
pub use disk::Disk;
pub use machine::{Field, MachineError, Unread};
pub use probe::{Probe, ProbeError};
pub use procfs::{Kernel, LoadAverage, Usage};
pub use systemd::{FailedUnit, SYSTEMCTL_ARGS};

/// Where and how long to look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysinfoOptions {
    /// The directory under which `proc/`, `sys/`, `run/` and `home/` are read. Default `/`.
    pub root: PathBuf,
    /// Time allowed for `systemctl --failed`. Default 5 s.
    pub systemctl_timeout: Duration,
    /// Time allowed for each `statvfs` (a hung network mount must not hang the status). Default 2 s.
    pub disk_timeout: Duration,
}

impl Default for SysinfoOptions {
    fn default() -> Self {
        Self {
            root: PathBuf::from("/"),
            systemctl_timeout: Duration::from_secs(5),
            disk_timeout: Duration::from_secs(2),
        }
    }
}

/// A snapshot of the machine's state. Each field is probed on its own.
#[derive(Debug, Serialize)]
pub struct SystemStatus {
    /// Kernel name and release.
    pub kernel: Probe<Kernel>,
    /// The machine's hostname.
    pub hostname: Probe<String>,
    /// Whole seconds since boot.
    pub uptime_seconds: Probe<u64>,
    /// Load averages.
    pub load: Probe<LoadAverage>,
    /// Online CPUs.
    pub cpus: Probe<usize>,
    /// Memory: `available_bytes` is what can be had without swapping.
    pub memory: Probe<Usage>,
    /// Swap (all zero when there is none).
    pub swap: Probe<Usage>,
    /// `/` and, when it exists, `/home`.
    pub disks: Vec<Disk>,
    /// Failed systemd units; `not_available` where systemd is not running.
    pub failed_units: Probe<Vec<FailedUnit>>,
    /// Batteries; an empty list on a machine without one.
    pub batteries: Probe<Vec<Battery>>,
}

/// Probe the machine. Never fails as a whole: each field carries its own error.
pub async fn system_status(permit: &Permit, opts: &SysinfoOptions) -> SystemStatus {
    let root = opts.root.as_path();
    let (disks, failed_units) = tokio::join!(
        disk::disks(root, opts.disk_timeout),
        systemd::failed_units(permit, root, opts.systemctl_timeout),
    );
    let (memory, swap) = procfs::memory_and_swap(root);
    let status = SystemStatus {
        kernel: procfs::kernel(root).into(),
        hostname: procfs::hostname(root).into(),
        uptime_seconds: procfs::uptime(root).into(),
        load: procfs::load(root).into(),
        cpus: procfs::cpus(root).into(),
        memory: memory.into(),
        swap: swap.into(),
        disks,
        failed_units: failed_units.into(),
        batteries: battery::batteries(root).into(),
    };
    tracing::debug!(
        failed_probes = status.failed_probes(),
        "system status probed"
    );
    status
}

impl SystemStatus {
    /// How many probes failed (a systemd probe that is `not_available` counts).
    pub fn failed_probes(&self) -> usize {
        let errs = [
            self.kernel.error().is_some(),
            self.hostname.error().is_some(),
            self.uptime_seconds.error().is_some(),
            self.load.error().is_some(),
            self.cpus.error().is_some(),
            self.memory.error().is_some(),
            self.swap.error().is_some(),
            self.failed_units.error().is_some(),
            self.batteries.error().is_some(),
        ];
        errs.iter().filter(|e| **e).count()
            + self
                .disks
                .iter()
                .filter(|d| d.usage.error().is_some())
                .count()
    }
}

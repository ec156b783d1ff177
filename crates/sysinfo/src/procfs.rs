//! Facts read from `/proc` and `/sys`: kernel, hostname, uptime, load, memory, swap, CPUs.

use std::path::Path;

use serde::Serialize;

use crate::probe::{ProbeError, read};

/// The running kernel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Kernel {
    /// Its name (`/proc/sys/kernel/ostype`, e.g. `Linux`).
    pub name: String,
    /// Its release (`/proc/sys/kernel/osrelease`, what `uname -r` prints).
    pub release: String,
}

/// Load averages over 1, 5 and 15 minutes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LoadAverage {
    /// Over the last minute.
    pub one: f64,
    /// Over the last five minutes.
    pub five: f64,
    /// Over the last fifteen minutes.
    pub fifteen: f64,
}

/// Size and use of memory or swap, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// All of it.
    pub total_bytes: u64,
    /// What can still be had without swapping (memory) or is unused (swap, disks).
    pub available_bytes: u64,
    /// What is in use.
    pub used_bytes: u64,
}

pub(crate) fn kernel(root: &Path) -> Result<Kernel, ProbeError> {
    let name = non_empty(root, "proc/sys/kernel/ostype")?;
    let release = non_empty(root, "proc/sys/kernel/osrelease")?;
    Ok(Kernel { name, release })
}

pub(crate) fn hostname(root: &Path) -> Result<String, ProbeError> {
    non_empty(root, "proc/sys/kernel/hostname")
}

/// Whole seconds since boot.
pub(crate) fn uptime(root: &Path) -> Result<u64, ProbeError> {
    let path = root.join("proc/uptime");
    let text = read(path.clone())?;
    let secs: f64 = text
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .ok_or(ProbeError::Malformed {
            path,
            what: "expected seconds since boot",
        })?;
    // Truncation to whole seconds is intended; the value is finite and non-negative.
    Ok(secs as u64)
}

pub(crate) fn load(root: &Path) -> Result<LoadAverage, ProbeError> {
    let path = root.join("proc/loadavg");
    let text = read(path.clone())?;
    let mut nums = text
        .split_whitespace()
        .take(3)
        .map(|s| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0));
    match (nums.next(), nums.next(), nums.next()) {
        (Some(Some(one)), Some(Some(five)), Some(Some(fifteen))) => {
            Ok(LoadAverage { one, five, fifteen })
        }
        _ => Err(ProbeError::Malformed {
            path,
            what: "expected three load averages",
        }),
    }
}

/// Memory and swap, from one read of `/proc/meminfo` (the same moment for both).
pub(crate) fn memory_and_swap(
    root: &Path,
) -> (Result<Usage, ProbeError>, Result<Usage, ProbeError>) {
    let path = root.join("proc/meminfo");
    match read(path.clone()) {
        Ok(text) => (memory_in(&path, &text), swap_in(&path, &text)),
        // Each probe says why on its own: swap reads again for its own error.
        Err(e) => (Err(e), swap(root)),
    }
}

/// Memory, from the text of `/proc/meminfo`.
fn memory_in(path: &Path, text: &str) -> Result<Usage, ProbeError> {
    let path = path.to_owned();
    let field = |name| meminfo_field(text, name);
    let total = field("MemTotal").ok_or(ProbeError::Malformed {
        path: path.clone(),
        what: "no MemTotal",
    })?;
    let available = field("MemAvailable")
        .or_else(|| {
            // Kernels before 3.14 lack MemAvailable: estimate it as the kernel used to.
            Some(field("MemFree")? + field("Buffers").unwrap_or(0) + field("Cached").unwrap_or(0))
        })
        .ok_or(ProbeError::Malformed {
            path,
            what: "no MemAvailable or MemFree",
        })?;
    Ok(usage(total, available))
}

/// Swap, from `/proc/meminfo`.
fn swap(root: &Path) -> Result<Usage, ProbeError> {
    let path = root.join("proc/meminfo");
    swap_in(&path, &read(path.clone())?)
}

fn swap_in(path: &Path, text: &str) -> Result<Usage, ProbeError> {
    match (
        meminfo_field(text, "SwapTotal"),
        meminfo_field(text, "SwapFree"),
    ) {
        (Some(total), Some(free)) => Ok(usage(total, free)),
        _ => Err(ProbeError::Malformed {
            path: path.to_owned(),
            what: "no SwapTotal or SwapFree",
        }),
    }
}

/// A `Name:   123 kB` line of `/proc/meminfo`, in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix(':')?;
        let mut parts = rest.split_whitespace();
        let n: u64 = parts.next()?.parse().ok()?;
        match parts.next() {
            Some("kB") => n.checked_mul(1024),
            None => Some(n),
            Some(_) => None,
        }
    })
}

pub(crate) fn usage(total: u64, available: u64) -> Usage {
    let available = available.min(total);
    Usage {
        total_bytes: total,
        available_bytes: available,
        used_bytes: total - available,
    }
}

/// Online CPUs, from the range list in `/sys/devices/system/cpu/online` (e.g. `0-3,6`).
pub(crate) fn cpus(root: &Path) -> Result<usize, ProbeError> {
    let path = root.join("sys/devices/system/cpu/online");
    let text = read(path.clone())?;
    count_ranges(text.trim()).ok_or(ProbeError::Malformed {
        path,
        what: "expected a CPU range list",
    })
}

fn count_ranges(list: &str) -> Option<usize> {
    if list.is_empty() {
        return None;
    }
    let mut n = 0usize;
    for part in list.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.parse::<usize>().ok()?, hi.parse::<usize>().ok()?),
            None => {
                let v = part.parse::<usize>().ok()?;
                (v, v)
            }
        };
        n = n.checked_add(hi.checked_sub(lo)?.checked_add(1)?)?;
    }
    Some(n)
}

fn non_empty(root: &Path, rel: &str) -> Result<String, ProbeError> {
    let path = root.join(rel);
    let text = read(path.clone())?;
    let text = text.trim();
    if text.is_empty() {
        return Err(ProbeError::Malformed {
            path,
            what: "empty",
        });
    }
    Ok(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::count_ranges;

    #[test]
    fn cpu_range_lists() {
        assert_eq!(count_ranges("0"), Some(1));
        assert_eq!(count_ranges("0-3"), Some(4));
        assert_eq!(count_ranges("0-3,6,8-9"), Some(7));
        assert_eq!(count_ranges(""), None);
        assert_eq!(count_ranges("3-1"), None);
        assert_eq!(count_ranges("a-b"), None);
    }
}

//! Reboot and restart needed after an upgrade: the running kernel (`/proc/sys/kernel/osrelease`,
//! what `uname -r` prints) against the module trees installed in `/usr/lib/modules` (pacman
//! removes the old kernel's when it upgrades), and processes still mapping libraries that were
//! deleted or replaced (`/proc/PID/maps` entries ending in ` (deleted)`), grouped by the systemd
//! unit of each (`/proc/PID/cgroup`), each group with the command that restarts it.
//!
//! Everything is read under a root directory (`/` on a real machine). Processes whose maps the
//! person may not read (other users', without privilege) are counted, not guessed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

/// The kernel part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelState {
    /// The running kernel's release (`uname -r`).
    pub running: String,
    /// Module trees in `/usr/lib/modules`, sorted.
    pub installed: Vec<String>,
    /// The running kernel's modules are gone: modules it has not loaded yet cannot load.
    pub reboot_needed: bool,
}

/// Processes of one unit mapping deleted files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitGroup {
    /// The unit (`sshd.service`, `app-firefox@….scope`), or `none` outside any.
    pub unit: String,
    /// `system`, `user` or `none`.
    pub scope: &'static str,
    /// The processes: pid and command name.
    pub processes: Vec<Proc>,
    /// Deleted files they map.
    pub libraries: Vec<String>,
    /// What restarts them, for the person.
    pub command: String,
}

/// One process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Proc {
    /// Process id.
    pub pid: u32,
    /// `/proc/PID/comm`.
    pub comm: String,
}

/// The answer of `restart_needed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestartReport {
    /// Kernel against modules.
    pub kernel: KernelState,
    /// Units with processes mapping deleted libraries.
    pub units: Vec<UnitGroup>,
    /// Processes whose maps could not be read (other users' without privilege).
    pub unreadable_processes: usize,
    /// What needs attention.
    pub findings: Vec<String>,
    /// Commands for the person.
    pub commands: Vec<String>,
}

/// Whether a deleted mapping is a library or program worth a restart (not shared memory,
/// memfd or a deleted temporary file).
fn is_library(path: &str) -> bool {
    if path.starts_with("/memfd:")
        || path.starts_with("/dev/")
        || path.starts_with("/SYSV")
        || path.starts_with("/run/")
    {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    name.contains(".so") || path.starts_with("/usr/lib/") || path.starts_with("/usr/bin/")
}

/// Deleted files in one `/proc/PID/maps` text.
pub fn deleted_in_maps(maps: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in maps.lines() {
        let Some(rest) = line.strip_suffix(" (deleted)") else {
            continue;
        };
        // address perms offset dev inode pathname (the pathname may hold spaces).
        let path = rest
            .splitn(6, ' ')
            .nth(5)
            .map(str::trim_start)
            .unwrap_or("");
        if path.starts_with('/') && is_library(path) && !out.iter().any(|p| p == path) {
            out.push(path.to_owned());
        }
    }
    out
}

/// The unit of a process from its cgroup v2 path (`0::/system.slice/sshd.service`).
pub fn unit_of(cgroup: &str) -> (String, &'static str) {
    let path = cgroup
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .or_else(|| cgroup.lines().find_map(|l| l.split(':').nth(2)))
        .unwrap_or("");
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let user = parts.iter().any(|p| p.starts_with("user@"));
    let unit = parts
        .iter()
        .rev()
        .find(|p| p.ends_with(".service") || p.ends_with(".scope"))
        .map(|p| (*p).to_owned());
    match unit {
        Some(u) if user && !u.starts_with("user@") => (u, "user"),
        Some(u) => (u, "system"),
        None => ("none".to_owned(), "none"),
    }
}

fn command_for(unit: &str, scope: &str) -> String {
    match scope {
        _ if unit == "init.scope" => "sudo systemctl daemon-reexec".into(),
        "system" if unit.starts_with("session-") && unit.ends_with(".scope") => {
            "log out and back in (the login session holds them)".into()
        }
        "system" if unit.starts_with("user@") => {
            "log out and back in (the user manager holds them)".into()
        }
        "system" if unit.ends_with(".service") => format!("sudo systemctl restart {unit}"),
        "user" if unit.ends_with(".service") => format!("systemctl --user restart {unit}"),
        "user" | "system" => "close and start the program again".into(),
        _ => "restart the program".into(),
    }
}

/// Reads the kernel and the processes under `root`.
pub fn restart_needed(root: &Path) -> RestartReport {
    let running = std::fs::read_to_string(root.join("proc/sys/kernel/osrelease"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let mut installed: Vec<String> = std::fs::read_dir(root.join("usr/lib/modules"))
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    installed.sort();
    let reboot_needed = !running.is_empty() && !installed.contains(&running);

    let mut groups: BTreeMap<(String, &'static str), UnitGroup> = BTreeMap::new();
    let mut unreadable = 0usize;
    let me = std::process::id();
    if let Ok(rd) = std::fs::read_dir(root.join("proc")) {
        for e in rd.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me {
                continue;
            }
            let dir = e.path();
            let maps = match std::fs::read_to_string(dir.join("maps")) {
                Ok(m) => m,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(_) => {
                    unreadable += 1;
                    continue;
                }
            };
            // Kernel threads have empty maps; a process that exited in between too.
            let deleted = deleted_in_maps(&maps);
            if deleted.is_empty() {
                continue;
            }
            let (unit, scope) =
                unit_of(&std::fs::read_to_string(dir.join("cgroup")).unwrap_or_default());
            let comm = std::fs::read_to_string(dir.join("comm"))
                .map(|s| s.trim().to_owned())
                .unwrap_or_default();
            let g = groups
                .entry((unit.clone(), scope))
                .or_insert_with(|| UnitGroup {
                    command: command_for(&unit, scope),
                    unit,
                    scope,
                    processes: Vec::new(),
                    libraries: Vec::new(),
                });
            g.processes.push(Proc { pid, comm });
            for d in deleted {
                if !g.libraries.contains(&d) {
                    g.libraries.push(d);
                }
            }
        }
    }
    let mut units: Vec<UnitGroup> = groups.into_values().collect();
    for u in &mut units {
        u.processes.sort_by_key(|p| p.pid);
        u.libraries.sort();
    }

    let mut findings = Vec::new();
    let mut commands = Vec::new();
    if reboot_needed {
        findings.push(format!(
            "the running kernel {running} has no modules in /usr/lib/modules (installed: {}): reboot",
            if installed.is_empty() {
                "none".to_owned()
            } else {
                installed.join(", ")
            }
        ));
        commands.push("systemctl reboot".into());
    }
    if !units.is_empty() {
        findings.push(format!(
            "{} unit(s) still run deleted libraries: restart them (or reboot)",
            units.len()
        ));
        if !reboot_needed {
            for u in &units {
                if !commands.contains(&u.command) {
                    commands.push(u.command.clone());
                }
            }
        }
    }
    if unreadable > 0 {
        findings.push(format!(
            "{unreadable} process(es) of other users could not be read; `sudo grep -l '(deleted)' /proc/*/maps` lists them all"
        ));
    }
    RestartReport {
        kernel: KernelState {
            running,
            installed,
            reboot_needed,
        },
        units,
        unreadable_processes: unreadable,
        findings,
        commands,
    }
}

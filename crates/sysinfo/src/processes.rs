//! The `processes` diagnostics, from `/proc`: the top N by CPU (sampled over a short interval,
//! as `top` does: 100 % is one core) or by resident memory, and one process's details — its
//! executable (flagged when the file was replaced or deleted since it started, as after an
//! upgrade), state, parent, start, CPU time, memory, open file count and its systemd unit (from
//! its cgroup).
//!
//! Command lines can hold secrets (tokens, passwords given as arguments): they are read only
//! when the caller asks, and then returned as `cmdline`. Nothing here writes them anywhere.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::machine::{Field, MachineError, attr, read};

/// How the top list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SortBy {
    /// CPU use over the sample interval.
    Cpu,
    /// Resident memory.
    Memory,
}

/// What [`top`] lists.
#[derive(Debug, Clone)]
pub struct TopOptions {
    /// The order.
    pub sort: SortBy,
    /// How many processes (1–100).
    pub limit: usize,
    /// The CPU sample interval.
    pub sample: Duration,
    /// Include command lines (private: may hold secrets).
    pub cmdline: bool,
}

/// The top processes.
#[derive(Debug, Serialize)]
pub struct Top {
    /// The order.
    pub sort: SortBy,
    /// The CPU sample interval, ms.
    pub sampled_ms: u64,
    /// Processes visible to this user (`hidepid` hides others'), the asking process left out.
    pub total: usize,
    /// The first `limit` of them.
    pub processes: Vec<TopEntry>,
}

/// One line of the top list.
#[derive(Debug, Serialize)]
pub struct TopEntry {
    /// Process id.
    pub pid: u32,
    /// Its name (`comm`, at most 15 bytes).
    pub name: String,
    /// The owner's user name (or uid).
    pub user: String,
    /// `running`, `sleeping`, `disk_sleep` (uninterruptible), `zombie`, `stopped`, `idle` …
    pub state: &'static str,
    /// CPU use over the sample, percent of one core.
    pub cpu_percent: f64,
    /// Resident memory, bytes.
    pub rss_bytes: u64,
    /// Resident memory, percent of RAM.
    pub mem_percent: f64,
    /// Its systemd unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// A kernel thread.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub kernel_thread: bool,
    /// Its command line, when asked (private: may hold secrets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<Vec<String>>,
}

/// The systemd unit a process belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    /// The unit (`NetworkManager.service`, `session-2.scope`, `app-firefox@….service`).
    pub name: String,
    /// A unit of the person's `systemd --user` (under `user@UID.service`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user: bool,
}

/// One process in detail.
#[derive(Debug, Serialize)]
pub struct Process {
    /// Process id.
    pub pid: u32,
    /// Parent's pid.
    pub ppid: u32,
    /// Its name (`comm`).
    pub name: String,
    /// See [`TopEntry::state`].
    pub state: &'static str,
    /// Owner's uid (real).
    pub uid: u32,
    /// Owner's user name.
    pub user: String,
    /// The executable (`/proc/PID/exe`); another user's process answers `could_not_read`.
    pub exe: Field<String>,
    /// The executable was deleted or replaced since it started (an upgrade: restart it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub exe_deleted: bool,
    /// Start, seconds since the Unix epoch.
    pub started_unix: u64,
    /// Seconds it has been running.
    pub age_seconds: u64,
    /// CPU time used, user + system, seconds.
    pub cpu_seconds: f64,
    /// Threads.
    pub threads: u64,
    /// Memory.
    pub memory: Memory,
    /// Open file descriptors; another user's process answers `could_not_read`.
    pub open_files: Field<usize>,
    /// Its systemd unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// Its cgroup path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    /// Its command line, when asked (private: may hold secrets).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cmdline: Option<Vec<String>>,
}

/// Memory of one process, bytes (`/proc/PID/status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Memory {
    /// Resident now (`VmRSS`).
    pub rss_bytes: u64,
    /// Peak resident (`VmHWM`).
    pub peak_rss_bytes: u64,
    /// Swapped out (`VmSwap`).
    pub swap_bytes: u64,
}

/// The fields of `/proc/PID/stat` this module uses.
struct Stat {
    name: String,
    state: char,
    ppid: u32,
    flags: u64,
    ticks: u64,
    threads: u64,
    start_ticks: u64,
    rss_pages: u64,
}

fn proc_dir(root: &Path, pid: u32) -> PathBuf {
    root.join("proc").join(pid.to_string())
}

fn stat(root: &Path, pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(proc_dir(root, pid).join("stat")).ok()?;
    // `PID (COMM) STATE …`: the name may hold spaces and parentheses; it ends at the last `)`.
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_owned();
    let f: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    Some(Stat {
        name,
        state: f.first()?.chars().next()?,
        ppid: u32::try_from(n(1)?).ok()?,
        flags: n(6)?,
        ticks: n(11)? + n(12)?,
        threads: n(17)?,
        start_ticks: n(19)?,
        rss_pages: n(21)?,
    })
}

fn state_name(c: char) -> &'static str {
    match c {
        'R' => "running",
        'S' => "sleeping",
        'D' => "disk_sleep",
        'Z' => "zombie",
        'T' => "stopped",
        't' => "tracing_stop",
        'X' | 'x' => "dead",
        'I' => "idle",
        'P' => "parked",
        'W' => "waking",
        'K' => "wakekill",
        _ => "unknown",
    }
}

/// `PF_KTHREAD` in the stat flags.
const KERNEL_THREAD: u64 = 0x0020_0000;

fn clock_ticks() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .filter(|v| *v > 0)
        .unwrap_or(100)
}

fn page_size() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten()
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(4096)
}

fn pids(root: &Path) -> Result<Vec<u32>, MachineError> {
    let dir = root.join("proc");
    let rd = std::fs::read_dir(&dir).map_err(|source| MachineError::Unreadable {
        path: dir.clone(),
        source,
    })?;
    Ok(rd
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect())
}

/// uid → user name, from `/etc/passwd`.
fn users(root: &Path) -> HashMap<u32, String> {
    std::fs::read_to_string(root.join("etc/passwd"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            Some((f.nth(1)?.parse().ok()?, name.to_owned()))
        })
        .collect()
}

fn status_field(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

fn uid_of(root: &Path, pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(proc_dir(root, pid).join("status")).ok()?;
    u32::try_from(status_field(&s, "Uid")?).ok()
}

fn cmdline(root: &Path, pid: u32) -> Option<Vec<String>> {
    let b = std::fs::read(proc_dir(root, pid).join("cmdline")).ok()?;
    Some(
        b.split(|c| *c == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect(),
    )
}

/// The cgroup path (v2 `0::/…`, else v1's `name=systemd` hierarchy).
fn cgroup(root: &Path, pid: u32) -> Option<String> {
    let text = std::fs::read_to_string(proc_dir(root, pid).join("cgroup")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("0::"))
        .or_else(|| {
            text.lines()
                .find_map(|l| l.split_once(":name=systemd:").map(|x| x.1))
        })
        .map(str::to_owned)
}

/// The unit in a cgroup path: its last component that is a unit other than a slice.
pub fn unit_of_cgroup(path: &str) -> Option<Unit> {
    const KINDS: &[&str] = &[".service", ".scope", ".socket", ".mount", ".swap"];
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let i = parts
        .iter()
        .rposition(|p| KINDS.iter().any(|k| p.ends_with(k)))?;
    let name = parts[i];
    let manager = parts[..i].iter().any(|p| p.starts_with("user@"));
    // `user@1000.service` itself is a system unit; units under it are the person's.
    Some(Unit {
        name: name.to_owned(),
        user: manager,
    })
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The top `limit` processes by CPU or memory.
pub async fn top(root: &Path, opts: &TopOptions) -> Result<Top, MachineError> {
    let tck = clock_ticks() as f64;
    let page = page_size();
    let first: HashMap<u32, u64> = pids(root)?
        .into_iter()
        .filter_map(|p| Some((p, stat(root, p)?.ticks)))
        .collect();
    tokio::time::sleep(opts.sample).await;
    let mem_total = crate::procfs::memory_and_swap(root)
        .0
        .map(|u| u.total_bytes)
        .unwrap_or(0);
    let secs = opts.sample.as_secs_f64().max(0.001);
    // The asking process itself is left out: its own sampling is not what the person asks about.
    let me = std::process::id();
    let mut rows: Vec<(u32, Stat, f64)> = pids(root)?
        .into_iter()
        .filter(|p| *p != me)
        .filter_map(|p| {
            let s = stat(root, p)?;
            let before = first.get(&p).copied().unwrap_or(0);
            let cpu = s.ticks.saturating_sub(before) as f64 / tck / secs * 100.0;
            Some((p, s, cpu))
        })
        .collect();
    let total = rows.len();
    match opts.sort {
        SortBy::Cpu => rows.sort_by(|a, b| {
            b.2.total_cmp(&a.2)
                .then(b.1.rss_pages.cmp(&a.1.rss_pages))
                .then(a.0.cmp(&b.0))
        }),
        SortBy::Memory => rows.sort_by(|a, b| {
            b.1.rss_pages
                .cmp(&a.1.rss_pages)
                .then(b.2.total_cmp(&a.2))
                .then(a.0.cmp(&b.0))
        }),
    }
    rows.truncate(opts.limit);
    let names = users(root);
    let processes = rows
        .into_iter()
        .map(|(pid, s, cpu)| {
            let rss = s.rss_pages.saturating_mul(page);
            let uid = uid_of(root, pid);
            TopEntry {
                pid,
                user: user_name(&names, uid),
                state: state_name(s.state),
                cpu_percent: round1(cpu),
                rss_bytes: rss,
                mem_percent: if mem_total > 0 {
                    round1(rss as f64 / mem_total as f64 * 100.0)
                } else {
                    0.0
                },
                unit: cgroup(root, pid).and_then(|c| unit_of_cgroup(&c)),
                kernel_thread: s.flags & KERNEL_THREAD != 0,
                cmdline: if opts.cmdline {
                    cmdline(root, pid)
                } else {
                    None
                },
                name: s.name,
            }
        })
        .collect();
    Ok(Top {
        sort: opts.sort,
        sampled_ms: u64::try_from(opts.sample.as_millis()).unwrap_or(u64::MAX),
        total,
        processes,
    })
}

fn user_name(names: &HashMap<u32, String>, uid: Option<u32>) -> String {
    match uid {
        Some(u) => names.get(&u).cloned().unwrap_or_else(|| u.to_string()),
        None => "?".into(),
    }
}

/// The highest pid this kernel hands out.
pub fn pid_max(root: &Path) -> Option<u32> {
    attr(&root.join("proc/sys/kernel"), "pid_max")?.parse().ok()
}

/// One process in detail. pid 0 and pids above `pid_max` are `invalid_argument`; a pid with no
/// process is `not_found`.
pub fn process(root: &Path, pid: u32, with_cmdline: bool) -> Result<Process, MachineError> {
    if pid == 0 {
        return Err(MachineError::Invalid {
            what: "pid 0 is the kernel's scheduler, not a process".into(),
        });
    }
    if let Some(max) = pid_max(root)
        && pid > max
    {
        return Err(MachineError::Invalid {
            what: format!(
                "pid {pid} is above this kernel's pid_max ({max}): no process can have it"
            ),
        });
    }
    let dir = proc_dir(root, pid);
    let not_found = || MachineError::NotFound {
        what: format!("no process with pid {pid} (it may have exited; list them with processes)"),
    };
    let s = stat(root, pid).ok_or_else(not_found)?;
    let status = read(&dir.join("status")).map_err(|_| not_found())?;
    // A thread id is not a process: its /proc entry exists but its Tgid is another pid.
    if status_field(&status, "Tgid").is_some_and(|t| t != u64::from(pid)) {
        return Err(not_found());
    }
    let uid = status_field(&status, "Uid").and_then(|u| u32::try_from(u).ok());
    let kb = |k| status_field(&status, k).unwrap_or(0).saturating_mul(1024);
    let exe = std::fs::read_link(dir.join("exe"))
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|source| MachineError::Unreadable {
            path: dir.join("exe"),
            source,
        });
    let exe_deleted = exe.as_ref().is_ok_and(|e| e.ends_with(" (deleted)"));
    let open_files = std::fs::read_dir(dir.join("fd"))
        .map(|rd| rd.count())
        .map_err(|source| MachineError::Unreadable {
            path: dir.join("fd"),
            source,
        });
    let tck = clock_ticks();
    let boot = std::fs::read_to_string(root.join("proc/stat"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("btime ")?.trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    let started_unix = boot + s.start_ticks / tck;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let cg = cgroup(root, pid);
    Ok(Process {
        pid,
        ppid: s.ppid,
        state: state_name(s.state),
        uid: uid.unwrap_or(u32::MAX),
        user: user_name(&users(root), uid),
        exe: exe.into(),
        exe_deleted,
        started_unix,
        age_seconds: now.saturating_sub(started_unix),
        cpu_seconds: round1(s.ticks as f64 / tck as f64),
        threads: s.threads,
        memory: Memory {
            rss_bytes: kb("VmRSS"),
            peak_rss_bytes: kb("VmHWM"),
            swap_bytes: kb("VmSwap"),
        },
        open_files: open_files.into(),
        unit: cg.as_deref().and_then(unit_of_cgroup),
        cgroup: cg,
        cmdline: if with_cmdline {
            cmdline(root, pid)
        } else {
            None
        },
        name: s.name,
    })
}

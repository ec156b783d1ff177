//! Calls whose work started and whose end nobody recorded. The gate writes a `started` line
//! before an act or destructive call's work (`gate/started.rs`) and the call's one record when it
//! ends; a process killed in between leaves the first without the second. Whoever finds such a
//! call — the next daemon at its start, or the stdio bridge whose daemon died under its call —
//! writes its one record with the outcome `unknown` and the `started` line's id, route, target
//! and approval: it may have run, in part or whole. A call whose process still lives is not
//! orphaned (an in-process stdio server, `archgate call`, is still running it).
//!
//! Both finders work under one lock (`activity.jsonl.orphans.lock`, flock) and look for the
//! call's record before writing, so a call is never recorded twice by them.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::record::{ApprovalRecord, Outcome, Record};

/// How much of the log's end is searched. A call whose `started` line is older than the last
/// MiB of the log is not found (thousands of records later).
pub const TAIL: u64 = 1024 * 1024;

/// Why an orphan's outcome is unknown, as its record says it.
pub const ORPHAN_REASON: &str = "archgate stopped while this call's work ran (killed or crashed): it may have run, in part or whole; nobody saw it end";

/// This process: its pid and its start time (field 22 of /proc/self/stat, clock ticks since
/// boot), so a reused pid is not taken for it.
pub fn this_process() -> (u32, u64) {
    let pid = std::process::id();
    (pid, start_time(pid).unwrap_or(0))
}

fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields are counted after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process that wrote a `started` line still runs.
pub fn alive(pid: u32, pid_start: u64) -> bool {
    pid != 0 && start_time(pid) == Some(pid_start)
}

/// One `started` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    pub id: String,
    pub time: String,
    pub client: String,
    pub tool: String,
    pub route: Option<String>,
    pub target: Option<String>,
    pub tier: Option<String>,
    pub decision: Option<String>,
    pub approval: Option<ApprovalRecord>,
    pub dev_mode: bool,
    pub args_sha256: String,
    pub pid: u32,
    pub pid_start: u64,
}

impl Started {
    fn parse(v: &Value) -> Option<Started> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(Started {
            id: s("id")?,
            time: s("time").unwrap_or_default(),
            client: s("client")?,
            tool: s("tool")?,
            route: s("route"),
            target: s("target"),
            tier: s("tier"),
            decision: s("decision"),
            approval: v
                .get("approval")
                .and_then(|a| serde_json::from_value(a.clone()).ok()),
            dev_mode: v.get("dev_mode").and_then(Value::as_bool).unwrap_or(false),
            args_sha256: s("args_sha256").unwrap_or_default(),
            pid: v.get("pid").and_then(Value::as_u64).unwrap_or(0) as u32,
            pid_start: v.get("pid_start").and_then(Value::as_u64).unwrap_or(0),
        })
    }

    /// The call's one record: outcome `unknown`, what the `started` line knew.
    pub fn unknown_record(&self, reason: &str, duration_ms: u64) -> Record {
        Record {
            time: super::record::now_rfc3339(),
            id: self.id.clone(),
            client: self.client.clone(),
            tool: self.tool.clone(),
            route: self.route.clone(),
            target: self.target.clone(),
            tier: self.tier.clone(),
            decision: self.decision.clone(),
            reason: Some(reason.to_owned()),
            rule: None,
            approval: self.approval.clone(),
            outcome: Outcome::Unknown,
            error_kind: Some("unknown".into()),
            exit_code: None,
            duration_ms,
            args_sha256: self.args_sha256.clone(),
            args: Value::Null,
            dev_mode: self.dev_mode,
            provenance: None,
        }
    }

    /// When the line was written.
    pub fn at(&self) -> Option<SystemTime> {
        let t =
            time::OffsetDateTime::parse(&self.time, &time::format_description::well_known::Rfc3339)
                .ok()?;
        Some(SystemTime::from(t))
    }
}

/// The `started` lines in `tail` with no call record of the same id, in the log's order.
pub fn unfinished(tail: &str) -> Vec<Started> {
    let mut started: Vec<Started> = Vec::new();
    let mut recorded: HashSet<String> = HashSet::new();
    for line in tail.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("event").and_then(Value::as_str) {
            Some("started") => started.extend(Started::parse(&v)),
            Some(_) => {}
            None => {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    recorded.insert(id.to_owned());
                }
            }
        }
    }
    let mut seen = HashMap::new();
    started.retain(|s| !recorded.contains(&s.id) && seen.insert(s.id.clone(), ()).is_none());
    started
}

/// The last `TAIL` bytes of the log, from its first whole line ("" when there is none).
pub fn read_tail(path: &Path) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(TAIL);
    let _ = f.seek(SeekFrom::Start(from));
    let mut buf = Vec::new();
    let _ = f.take(TAIL).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    if from > 0 {
        // Cut mid-line: the first fragment is not a line.
        text.split_once('\n')
            .map(|(_, rest)| rest.to_owned())
            .unwrap_or_default()
    } else {
        text
    }
}

/// The lock both finders hold while they look and write.
pub struct FinderLock {
    _lock: nix::fcntl::Flock<std::fs::File>,
}

impl FinderLock {
    /// Blocks until no other finder holds it.
    pub fn take(log: &Path) -> std::io::Result<FinderLock> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = lock_path(log);
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&path)?;
        let lock = nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| std::io::Error::from(e))?;
        Ok(FinderLock { _lock: lock })
    }
}

fn lock_path(log: &Path) -> PathBuf {
    let mut name = log.file_name().unwrap_or_default().to_os_string();
    name.push(".orphans.lock");
    log.with_file_name(name)
}

/// At a daemon's start: records, as `unknown`, every call in the log's tail whose work started
/// in a process that is gone and whose record was never written. Returns how many.
pub fn record_orphans(log: &super::AuditLog, path: &Path) -> usize {
    let _lock = match FinderLock::take(path) {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!("could not look for calls a stopped archgate left unrecorded: {e}");
            return 0;
        }
    };
    let orphans: Vec<Started> = unfinished(&read_tail(path))
        .into_iter()
        .filter(|s| !alive(s.pid, s.pid_start))
        .collect();
    for s in &orphans {
        let ms = s
            .at()
            .and_then(|t| t.elapsed().ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        log.record(&s.unknown_record(ORPHAN_REASON, ms));
    }
    if !orphans.is_empty() {
        // On disk before the lock is let go, so the other finder sees them.
        let _ = log.flush(std::time::Duration::from_secs(5));
        tracing::warn!(
            "{} call(s) a stopped archgate left running were recorded as unknown",
            orphans.len()
        );
    }
    orphans.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn started(id: &str, pid: u32, pid_start: u64) -> String {
        json!({"event": "started", "id": id, "client": "c", "tool": "omarchy_run",
               "route": "system reboot", "target": "reboot", "tier": "destructive",
               "decision": "ask", "approval": {"outcome": "accepted", "channel": "cli", "rule_id": null},
               "dev_mode": false, "args_sha256": "ab", "pid": pid, "pid_start": pid_start,
               "time": "2026-12-05T18:00:00Z"})
        .to_string()
    }

    #[test]
    fn a_started_line_without_its_record_is_unfinished_and_one_with_it_is_not() {
        let rec = |id: &str| {
            let mut r = Started::parse(&serde_json::from_str(&started(id, 1, 1)).unwrap())
                .unwrap()
                .unknown_record("x", 0);
            r.outcome = Outcome::Ok;
            serde_json::to_string(&r).unwrap()
        };
        let tail = [started("a", 1, 1), started("b", 1, 1), rec("a")].join("\n");
        let u = unfinished(&tail);
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].id, "b");
        assert_eq!(u[0].route.as_deref(), Some("system reboot"));
        assert_eq!(
            u[0].approval.as_ref().unwrap().channel.as_deref(),
            Some("cli")
        );
        // A torn line and other events change nothing.
        let tail = format!(
            "{}\n{{\"event\":\"dropped\",\"n\":1}}\n{{\"id\":",
            started("c", 1, 1)
        );
        assert_eq!(unfinished(&tail).len(), 1);
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let (pid, start) = this_process();
        assert!(start > 0);
        assert!(alive(pid, start));
        assert!(
            !alive(pid, start + 1),
            "another start time is another process"
        );
        assert!(!alive(0, start));
    }

    #[test]
    fn the_daemons_finder_records_a_dead_processs_call_once_as_unknown() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let (me, my_start) = this_process();
        // "gone": a pid of this process with another start time; "live": this very process.
        std::fs::write(
            &path,
            format!(
                "{}\n{}\n",
                started("gone", me, my_start + 7),
                started("live", me, my_start)
            ),
        )
        .unwrap();
        let settings = |p: &Path| super::super::AuditSettings {
            path: p.to_owned(),
            queue: 16,
            max_bytes: 1 << 30,
            keep: 3,
        };
        let log = super::super::AuditLog::start(settings(&path));
        assert_eq!(record_orphans(&log, &path), 1);
        // A second look finds the record and writes nothing more.
        assert_eq!(record_orphans(&log, &path), 0);
        let r = super::super::read_log(&path).unwrap();
        let calls: Vec<_> = r
            .entries
            .iter()
            .filter_map(|e| match e {
                super::super::Entry::Call(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "gone");
        assert_eq!(calls[0].outcome, Outcome::Unknown);
        assert_eq!(calls[0].route.as_deref(), Some("system reboot"));
        assert_eq!(calls[0].approval.as_ref().unwrap().outcome, "accepted");
    }
}

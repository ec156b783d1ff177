//! Calls whose work started and whose end nobody recorded. The gate writes a `started` line
//! before an act or destructive call's work (`gate/started.rs`) and the call's one record when it
//! ends; a process killed in between leaves the first without the second. Whoever finds such a
//! call — the next daemon at its start, or the stdio bridge whose daemon died under its call —
//! writes its one record with the outcome `unknown` and the `started` line's id, route, target
//! and approval: it may have run, in part or whole. A call whose process still lives is not
//! orphaned (an in-process stdio server, `archgate call`, is still running it).
//!
//! A call whose question was waiting has an `asking` line (`gate/asking.rs`) and, if its
//! process was killed, no record: the finders write its one record, `unreachable` — the question
//! went with the daemon, and nothing that acts ran (that would have written a `started` line).
//!
//! Both finders work under one lock (an flock on the log's directory) and look for the
//! call's record before writing, so a call is never recorded twice by them.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::SystemTime;

use super::record::{ApprovalRecord, Outcome, Record};

pub use super::since::{LogMark, SINCE_MAX, mark, read_since};

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

/// Why a killed daemon's waiting question is `unreachable`, as its record says it.
pub const WITHDRAWN_REASON: &str = "archgate stopped (killed or crashed) while this call's question waited for the person: the question was withdrawn with it and nothing ran";

/// One `started` (or `asking`) line.
#[derive(Debug, Clone, PartialEq)]
pub struct Started {
    pub id: String,
    pub time: String,
    pub client: String,
    /// How the client reached archgate (empty in lines written before it was named).
    pub transport: String,
    pub tool: String,
    pub route: Option<String>,
    pub target: Option<String>,
    pub tier: Option<String>,
    pub decision: Option<String>,
    pub approval: Option<ApprovalRecord>,
    pub dev_mode: bool,
    pub args_sha256: String,
    /// The MCP task the call ran as, if it was one: after a restart its record says so.
    pub task: Option<String>,
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
            transport: s("transport").unwrap_or_default(),
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
            task: s("task"),
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
            agent: None,
            transport: self.transport.clone(),
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
            task: self.task.clone(),
        }
    }

    /// The call's one record for an `asking` line nobody answered: outcome `unreachable`.
    pub fn withdrawn_record(&self, reason: &str, duration_ms: u64) -> Record {
        let mut r = self.unknown_record(reason, duration_ms);
        r.outcome = Outcome::Unreachable;
        r.error_kind = Some("unreachable".into());
        r.approval = Some(ApprovalRecord {
            outcome: "unreachable".into(),
            channel: None,
            rule_id: None,
        });
        r
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
    scan(tail).0
}

/// The `asking` lines in `tail` with neither a call record nor a `started` line of the same id
/// (a question nobody answered, or answered and followed by nothing that acts), in the log's
/// order.
pub fn unanswered(tail: &str) -> Vec<Started> {
    scan(tail).1
}

fn scan(tail: &str) -> (Vec<Started>, Vec<Started>) {
    let mut started: Vec<Started> = Vec::new();
    let mut asking: Vec<Started> = Vec::new();
    let mut recorded: HashSet<String> = HashSet::new();
    for line in tail.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("event").and_then(Value::as_str) {
            Some("started") => started.extend(Started::parse(&v)),
            Some("asking") => asking.extend(Started::parse(&v)),
            Some(_) => {}
            None => {
                if let Some(id) = v.get("id").and_then(Value::as_str) {
                    recorded.insert(id.to_owned());
                }
            }
        }
    }
    // A record's id is cut as every record field is (`bound.rs`); a line's id is compared cut
    // the same way, so a planted overlong id is found recorded once written.
    let key = |s: &Started| super::bound::cap(&s.id, super::bound::FIELD_LIMIT);
    let with_start: HashSet<String> = started.iter().map(key).collect();
    let mut seen = HashMap::new();
    started.retain(|s| {
        let k = key(s);
        !recorded.contains(&k) && seen.insert(k, ()).is_none()
    });
    let mut seen = HashMap::new();
    asking.retain(|s| {
        let k = key(s);
        !recorded.contains(&k) && !with_start.contains(&k) && seen.insert(k, ()).is_none()
    });
    (started, asking)
}

/// The last `TAIL` bytes of the log, from its first whole line ("" when there is none) — taken
/// from the rotated file (`activity.jsonl.1`) too when the current one is shorter, so a call that
/// started just before a rotation is still found.
pub fn read_tail(path: &Path) -> String {
    let current = tail_of(path, TAIL);
    let short = TAIL.saturating_sub(current.len() as u64);
    if short == 0 {
        return current;
    }
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    let mut text = tail_of(Path::new(&rotated), short);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text + &current
}

/// The last `n` bytes of a file, from its first whole line.
fn tail_of(path: &Path, n: u64) -> String {
    let Ok(mut f) = crate::paths::open_private(path) else {
        return String::new();
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return String::new();
    }
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(n);
    let _ = f.seek(SeekFrom::Start(from));
    let mut buf = Vec::new();
    let _ = f.take(n).read_to_end(&mut buf);
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

/// The lock both finders hold while they look and write: an flock on the log's directory
/// (archgate's private state directory), so nothing planted at a lock file's path — a FIFO, a
/// link, a directory — can make a finder hang or stop looking. Taken within `LOCK_WAIT`; a
/// holder that keeps it longer (only a same-user process can) is waited out no longer: the finder
/// goes on without it, where the worst case is a second record of one call, never none.
pub struct FinderLock {
    _lock: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// How long a finder waits for the other's lock.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl FinderLock {
    pub fn take(log: &Path) -> FinderLock {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = log.parent().unwrap_or(Path::new("."));
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags((nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_NOFOLLOW).bits())
            .open(dir);
        let mut f = match opened {
            Ok(f) => f,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), "the audit log's directory could not be locked ({e}); looking without the lock");
                return FinderLock { _lock: None };
            }
        };
        let until = std::time::Instant::now() + LOCK_WAIT;
        loop {
            match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
                Ok(l) => return FinderLock { _lock: Some(l) },
                Err((back, _)) if std::time::Instant::now() < until => {
                    f = back;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err((_, e)) => {
                    tracing::warn!(dir = %dir.display(), "the audit log's directory stayed locked ({e}); looking without the lock");
                    return FinderLock { _lock: None };
                }
            }
        }
    }
}

/// How many orphans one look records at most: a log a same-user process filled with planted
/// `started` lines costs each start a bounded amount (the rest wait for later looks).
pub const MAX_PER_LOOK: usize = 32;

/// At a daemon's start: records, as `unknown`, every call in the log's tail whose work started
/// in a process that is gone and whose record was never written, and as `unreachable` every
/// call whose question was waiting in such a process. `task_of` names the MCP task a call ran
/// as, when its line could not (the task's table knows). Returns how many.
pub fn record_orphans(
    log: &super::AuditLog,
    path: &Path,
    task_of: &dyn Fn(&str) -> Option<String>,
) -> usize {
    let _lock = FinderLock::take(path);
    let (started, asking) = scan(&read_tail(path));
    let gone = |s: &Started| !alive(s.pid, s.pid_start);
    let all: Vec<(Started, bool)> = started
        .into_iter()
        .filter(gone)
        .map(|s| (s, true))
        .chain(asking.into_iter().filter(gone).map(|s| (s, false)))
        .collect();
    if all.len() > MAX_PER_LOOK {
        tracing::warn!(
            "{} unfinished calls in the activity log; recording {MAX_PER_LOOK} now, the rest at later starts",
            all.len()
        );
    }
    let orphans = &all[..all.len().min(MAX_PER_LOOK)];
    for (s, ran) in orphans {
        let ms = s
            .at()
            .and_then(|t| t.elapsed().ok())
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let mut r = if *ran {
            s.unknown_record(ORPHAN_REASON, ms)
        } else {
            s.withdrawn_record(WITHDRAWN_REASON, ms)
        };
        if r.task.is_none() {
            r.task = task_of(&s.id);
        }
        log.record(&r);
    }
    if !orphans.is_empty() {
        // On disk before the lock is let go, so the other finder sees them.
        let _ = log.flush(std::time::Duration::from_secs(5));
        tracing::warn!(
            "{} call(s) a stopped archgate left running or asking were recorded (unknown, or unreachable)",
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

    /// A task's run killed with its daemon: the `unknown` record names the task, so a client
    /// told "unknown task" after the restart finds what became of it in the log.
    #[test]
    fn the_unknown_record_of_a_tasks_run_names_the_task() {
        let mut line: Value = serde_json::from_str(&started("t", 1, 1)).unwrap();
        let plain = Started::parse(&line).unwrap().unknown_record("gone", 0);
        assert_eq!(plain.task, None);
        assert!(serde_json::to_value(&plain).unwrap().get("task").is_none());
        line["task"] = json!("0b6d7c0e-task");
        let r = Started::parse(&line).unwrap().unknown_record("gone", 0);
        assert_eq!(r.outcome, Outcome::Unknown);
        assert_eq!(r.task.as_deref(), Some("0b6d7c0e-task"));
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

    fn asking(id: &str, pid: u32, pid_start: u64) -> String {
        started(id, pid, pid_start).replace("\"started\"", "\"asking\"")
    }

    /// A question a killed daemon left waiting: recorded once, `unreachable`, with the task
    /// its table names; one that went on to start work is the `started` line's (`unknown`);
    /// one whose record exists, or whose process lives, is nobody's to record.
    #[test]
    fn a_killed_daemons_waiting_question_is_recorded_once_as_unreachable_with_its_task() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let (me, my_start) = this_process();
        let rec = |id: &str| {
            let mut r = Started::parse(&serde_json::from_str(&started(id, 1, 1)).unwrap())
                .unwrap()
                .unknown_record("x", 0);
            r.outcome = Outcome::Ok;
            serde_json::to_string(&r).unwrap()
        };
        let lines = [
            asking("waited", me, my_start + 7),
            asking("ran", me, my_start + 7),
            started("ran", me, my_start + 7),
            asking("answered", me, my_start + 7),
            rec("answered"),
            asking("live", me, my_start),
        ];
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        assert_eq!(
            unanswered(&read_tail(&path))
                .iter()
                .map(|s| s.id.as_str())
                .collect::<Vec<_>>(),
            ["waited", "live"]
        );
        let log = super::super::AuditLog::start(super::super::AuditSettings {
            path: path.clone(),
            queue: 16,
            max_bytes: 1 << 30,
            keep: 3,
        });
        let task_of = |id: &str| (id == "waited").then(|| "task-1".to_owned());
        assert_eq!(record_orphans(&log, &path, &task_of), 2);
        assert_eq!(record_orphans(&log, &path, &task_of), 0);
        let r = super::super::read_log(&path).unwrap();
        let calls: Vec<_> = r
            .entries
            .iter()
            .filter_map(|e| match e {
                super::super::Entry::Call(c) => Some(c),
                _ => None,
            })
            .collect();
        let waited: Vec<_> = calls.iter().filter(|c| c.id == "waited").collect();
        assert_eq!(waited.len(), 1);
        assert_eq!(waited[0].outcome, Outcome::Unreachable);
        assert_eq!(waited[0].task.as_deref(), Some("task-1"));
        assert_eq!(waited[0].approval.as_ref().unwrap().outcome, "unreachable");
        let ran: Vec<_> = calls.iter().filter(|c| c.id == "ran").collect();
        assert_eq!(ran.len(), 1);
        assert_eq!(ran[0].outcome, Outcome::Unknown);
        assert!(!calls.iter().any(|c| c.id == "live"));
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
        assert_eq!(record_orphans(&log, &path, &|_| None), 1);
        // A second look finds the record and writes nothing more.
        assert_eq!(record_orphans(&log, &path, &|_| None), 0);
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

    #[test]
    fn a_planted_overlong_id_is_recorded_once_and_one_look_is_bounded() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let (me, my_start) = this_process();
        let long = "x".repeat(1000);
        let mut lines = vec![started(&long, me, my_start + 7)];
        for i in 0..(MAX_PER_LOOK + 10) {
            lines.push(started(&format!("p{i}"), me, my_start + 7));
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let log = super::super::AuditLog::start(super::super::AuditSettings {
            path: path.clone(),
            queue: 1024,
            max_bytes: 1 << 30,
            keep: 3,
        });
        assert_eq!(
            record_orphans(&log, &path, &|_| None),
            MAX_PER_LOOK,
            "one look is bounded"
        );
        assert_eq!(
            record_orphans(&log, &path, &|_| None),
            11,
            "the rest at the next look"
        );
        assert_eq!(
            record_orphans(&log, &path, &|_| None),
            0,
            "the overlong id was found recorded"
        );
    }

    #[test]
    fn a_call_started_before_a_rotation_is_found_in_the_rotated_file() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("activity.jsonl");
        let (me, my_start) = this_process();
        std::fs::write(
            t.path().join("activity.jsonl.1"),
            format!("{}\n", started("before", me, my_start + 7)),
        )
        .unwrap();
        std::fs::write(&path, "{\"event\":\"rotated\"}\n").unwrap();
        let u = unfinished(&read_tail(&path));
        assert_eq!(u.len(), 1);
        assert_eq!(u[0].id, "before");
    }
}

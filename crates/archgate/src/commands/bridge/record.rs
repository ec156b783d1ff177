//! The one audit record of a bridged call the daemon never answered, and what the agent is told.
//!
//! A daemon records each call when it ends (`gate::Pending`); one killed mid-call (SIGKILL, a
//! crash) records nothing for its parked or running calls, and one stopped gracefully records
//! and answers them before its socket closes (`serve.rs`). So the bridge settles each call it had
//! to answer itself, under the orphan finders' lock (`audit::orphans`):
//! - the log holds its `started` line and no record: its work began, so it may have run (it may
//!   still be running) — one record `unknown` with the started line's id, route and approval,
//!   and the agent is told **unknown**, with how to check;
//! - the log already holds the daemon's record of it (the daemon recorded, then died before its
//!   answer left) — nothing to write, and the agent is told how it ended;
//! - neither: nothing that acts had started — one `unreachable` record (under the daemon's id
//!   when the log holds the call's `asking` line: its question was waiting, `gate/asking.rs`,
//!   so the next daemon's finder sees it recorded), and the agent is told it did not run.
//!
//! The log names a call by client, tool and argument digest, so identical calls in flight
//! together are settled as a group (`settle`).
//!
//! Written through the same audit writer (bounded lines, rotation), arguments as their digest
//! only: the bridge does not know which are private.

use serde_json::Value;
use std::time::{Duration, Instant, SystemTime};

use super::Inflight;
use archgate_core::audit::orphans::{self, FinderLock, Started};
use archgate_core::audit::{AuditLog, AuditSettings, Outcome, Record, args_digest, now_rfc3339};
use archgate_core::config::AuditConfig;
use archgate_core::paths::Paths;

/// What became of one call the daemon did not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// The daemon recorded it before it died (its answer was lost): the record's outcome.
    RecordedByDaemon(Outcome),
    /// Its work may have begun: it may have run. Also every call of a group of identical calls
    /// (same tool and arguments) in which one started or ended, since the log cannot tell them
    /// apart.
    Unknown,
    /// Nothing that acts had started.
    DidNotRun,
}

/// A call the daemon answered: its tool, argument digest and when the answer came.
#[derive(Debug, Clone)]
pub struct Answered {
    tool: String,
    digest: String,
    /// When the answer came, on the monotonic clock (compared with `Inflight::sent_at`).
    at: Instant,
}

/// A group's key: the tool and the arguments' digest.
type Key = (String, String);

/// How many answered calls the pump keeps for `settle`.
pub const ANSWERED_KEPT: usize = 256;

/// The calls the daemon answered lately, and when the latest one no longer kept was answered:
/// a window of [`ANSWERED_KEPT`], so `settle` knows when it no longer holds every identical call
/// answered since a call was sent (then a record may be either's: unknown).
#[derive(Debug, Default)]
pub struct AnsweredLog {
    kept: std::collections::VecDeque<Answered>,
    forgotten: Option<Instant>,
}

impl AnsweredLog {
    pub fn push(&mut self, a: Answered) {
        if self.kept.len() == ANSWERED_KEPT
            && let Some(old) = self.kept.pop_front()
        {
            self.forgotten = Some(self.forgotten.map_or(old.at, |f| f.max(old.at)));
        }
        self.kept.push_back(a);
    }

    /// The answered calls kept, and when the latest forgotten one was answered.
    pub fn snapshot(&self) -> (Vec<Answered>, Option<Instant>) {
        (self.kept.iter().cloned().collect(), self.forgotten)
    }
}

impl Answered {
    pub fn now(tool: String, args: &Value) -> Answered {
        Answered {
            tool,
            digest: args_digest(args),
            at: Instant::now(),
        }
    }
}

/// Why a bridged call's outcome is unknown, as its record says it.
pub const UNKNOWN_REASON: &str = "the archgate daemon went away while this call's work ran (recorded by the stdio bridge): it may have run, in part or whole";

/// Settles each call (see the module doc); one fate per call, in order.
///
/// The log names a call by client, tool and argument digest, not by the client's request id: so
/// calls are settled by group of identical calls. A group of one is told what the log says of it
/// (a `started` line without a record first — it may still be running — then its record, unless
/// an identical call answered meanwhile could own that record). Otherwise, when any of them
/// started or was recorded, each is told unknown: archgate cannot say which one ran, and never
/// says "did not run" of a call that may have. Records: one `unknown` per unfinished `started`
/// line, and one `unreachable` for each call the log accounts for in no other way.
pub fn settle(
    client: &str,
    paths: &Paths,
    audit: &AuditConfig,
    calls: &[Inflight],
    answered: &[Answered],
    forgotten: Option<Instant>,
) -> Vec<Fate> {
    let path = paths.audit_log();
    let _lock = FinderLock::take(&path);
    // Everything written since the first of these calls was sent, read whole: only then may a
    // line's absence say anything. When that cannot be read (the log rotated twice, or grew
    // past `SINCE_MAX`), the bounded tail is searched for what it holds, and no call is said
    // not to have run unless its question's `asking` line is found (a `started` line would come
    // after it).
    let whole = calls
        .iter()
        .min_by_key(|c| c.sent_at)
        .and_then(|c| orphans::read_since(&path, c.mark));
    let known_whole = whole.is_some();
    let tail = whole.unwrap_or_else(|| orphans::read_tail(&path));
    let unfinished = orphans::unfinished(&tail);
    let unanswered = orphans::unanswered(&tail);
    let mut fates = vec![Fate::DidNotRun; calls.len()];
    let mut todo: Vec<Record> = Vec::new();
    // Calls by (tool, argument digest); a request that is no tools/call has no record.
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let Some((t, a)) = &c.tool else {
            continue;
        };
        let key = (t.clone(), args_digest(a));
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    for ((tool, digest), members) in groups {
        let first = members
            .iter()
            .map(|&i| &calls[i])
            .min_by_key(|c| c.sent_at)
            .expect("a group has a member");
        let since = first.sent;
        // The group's window by position, not by clock (attack 14 F5; class: *evidence
        // selected by a clock that can go back*): everything written since the group's first
        // call was sent, read from its mark — every line in it is after the call was sent,
        // whatever time the daemon's clock wrote in it. Only when that window cannot be read
        // whole are the bounded tail's lines chosen by their time (and then no call is said
        // not to have run unless its question is found).
        let own = if known_whole {
            orphans::read_since(&path, first.mark)
        } else {
            None
        };
        let by_position = own.is_some();
        let (unfinished, unanswered, tail) = match &own {
            Some(text) => (orphans::unfinished(text), orphans::unanswered(text), text),
            None => (unfinished.clone(), unanswered.clone(), &tail),
        };
        let after = |at: Option<SystemTime>| by_position || at.is_some_and(|t| t >= since);
        let started: Vec<&Started> = unfinished
            .iter()
            .filter(|s| {
                s.client == client && s.tool == tool && s.args_sha256 == digest && after(s.at())
            })
            .collect();
        // Questions the daemon was asking for these calls when it went: their records are
        // these calls' `unreachable` ones, under the daemon's ids (so its next start, which
        // looks for the same lines, finds them recorded).
        let asking: Vec<&Started> = unanswered
            .iter()
            .filter(|s| {
                s.client == client && s.tool == tool && s.args_sha256 == digest && after(s.at())
            })
            .collect();
        let recorded = records_since(
            tail,
            client,
            &tool,
            &digest,
            (!by_position).then_some(since),
        );
        // Identical calls answered since: their records may be among `recorded`.
        // When an answered call no longer kept was answered after the first of these was sent,
        // the kept ones are not all there were: any record may be an answered call's.
        let others = if forgotten.is_some_and(|f| f >= first.sent_at) {
            recorded.len().max(1)
        } else {
            answered
                .iter()
                .filter(|a| a.tool == tool && a.digest == digest && a.at >= first.sent_at)
                .count()
        };
        for s in &started {
            todo.push(s.unknown_record(UNKNOWN_REASON, elapsed_ms(&calls[members[0]])));
        }
        // Records that may be these calls': those the answered ones cannot all explain.
        let theirs = recorded.len().saturating_sub(others);
        let rest = members.len().saturating_sub(started.len() + theirs);
        for (k, &i) in members.iter().skip(started.len() + theirs).enumerate() {
            todo.push(match asking.get(k) {
                Some(a) => a.withdrawn_record(orphans::WITHDRAWN_REASON, elapsed_ms(&calls[i])),
                None if known_whole => unreachable_record(client, &calls[i]),
                None => unseen_record(client, &calls[i]),
            });
        }
        let mut fate = fate_of_group(members.len(), started.len(), &recorded, others);
        if fate == Fate::DidNotRun && !known_whole && asking.len() < rest {
            fate = Fate::Unknown;
        }
        for &i in &members {
            fates[i] = fate.clone();
        }
    }
    if !todo.is_empty() {
        let log = AuditLog::start(AuditSettings {
            path,
            queue: audit.queue.max(todo.len()),
            max_bytes: audit.max_bytes,
            keep: audit.keep,
        });
        for r in &todo {
            log.record(r);
        }
        if !log.shutdown(Duration::from_secs(2)) {
            tracing::warn!("the bridge's records of unanswered calls may not all be written");
        }
    }
    fates
}

/// What each call of a group of `k` identical calls is told, from the `started` lines without a
/// record (`started`), the records since the first was sent (`recorded`) and the identical calls
/// answered meanwhile (`others`, whose records may be among them).
fn fate_of_group(k: usize, started: usize, recorded: &[Outcome], others: usize) -> Fate {
    match (started, recorded.first()) {
        (0, None) => Fate::DidNotRun,
        (0, Some(o)) if k == 1 && others == 0 => Fate::RecordedByDaemon(*o),
        // A started call without a record, or records that could be any one's: it may have run.
        _ => Fate::Unknown,
    }
}

fn elapsed_ms(c: &Inflight) -> u64 {
    c.sent_at.elapsed().as_millis() as u64
}

/// Why a bridged call's outcome is unknown when the log could not be read back to its sending.
pub const UNSEEN_REASON: &str = "the archgate daemon went away before it answered, and the log could not be read back to when this call was sent (recorded by the stdio bridge): it may have run, in part or whole";

fn unreachable_record(client: &str, c: &Inflight) -> Record {
    bridge_record(
        client,
        c,
        Outcome::Unreachable,
        "the archgate daemon went away before it answered, and nothing that acts had started (recorded by the stdio bridge)",
    )
}

/// A call the log cannot account for either way: `unknown`.
fn unseen_record(client: &str, c: &Inflight) -> Record {
    bridge_record(client, c, Outcome::Unknown, UNSEEN_REASON)
}

fn bridge_record(client: &str, c: &Inflight, outcome: Outcome, reason: &str) -> Record {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let (tool, args) = c.tool.clone().unwrap_or_default();
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Record {
        time: now_rfc3339(),
        id: format!("{secs:x}-{}-b{n}", std::process::id()),
        client: client.to_owned(),
        agent: None,
        transport: archgate_core::gate::Transport::Bridge.to_string(),
        tool,
        route: None,
        target: None,
        tier: None,
        decision: None,
        reason: Some(reason.into()),
        rule: None,
        approval: None,
        outcome,
        error_kind: Some(outcome.as_str().into()),
        exit_code: None,
        duration_ms: elapsed_ms(c),
        args_sha256: args_digest(&args),
        args: Value::Null,
        dev_mode: false,
        task: None,
        provenance: None,
    }
}

/// The outcomes of the daemon's records of this tool and digest in `tail` — every one when
/// `tail` is the window read by position (`since` `None`), else those stamped since `since`.
fn records_since(
    tail: &str,
    client: &str,
    tool: &str,
    digest: &str,
    since: Option<SystemTime>,
) -> Vec<Outcome> {
    tail.lines()
        .filter_map(|l| serde_json::from_str::<Record>(l).ok())
        .filter(|r| {
            r.client == client
                && r.tool == tool
                && r.args_sha256 == digest
                && since.is_none_or(|since| parse_time(&r.time).is_some_and(|t| t >= since))
        })
        .map(|r| r.outcome)
        .collect()
}

fn parse_time(s: &str) -> Option<SystemTime> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    Some(SystemTime::from(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_said_not_to_have_run_only_when_the_log_accounts_for_no_identical_call() {
        use Outcome::Ok as O;
        // Nothing started, nothing recorded.
        assert_eq!(fate_of_group(1, 0, &[], 0), Fate::DidNotRun);
        assert_eq!(fate_of_group(3, 0, &[], 2), Fate::DidNotRun);
        // Its own record, no identical call answered meanwhile: how it ended.
        assert_eq!(fate_of_group(1, 0, &[O], 0), Fate::RecordedByDaemon(O));
        // A record an identical answered call may own: it may be either's.
        assert_eq!(fate_of_group(1, 0, &[O], 1), Fate::Unknown);
        // Started and unrecorded: it may still run — whatever else is recorded.
        assert_eq!(fate_of_group(1, 1, &[O], 1), Fate::Unknown);
        assert_eq!(fate_of_group(1, 1, &[], 0), Fate::Unknown);
        // Two identical calls, one started: either may be it.
        assert_eq!(fate_of_group(2, 1, &[], 0), Fate::Unknown);
        assert_eq!(fate_of_group(2, 0, &[O], 0), Fate::Unknown);
    }

    /// Class: absence from a bounded window read as absence. The answered calls kept are a
    /// window of 256; once one answered after a call was sent is forgotten, the window says so.
    #[test]
    fn the_answered_window_says_when_it_forgot_one() {
        let mut log = AnsweredLog::default();
        let t0 = Instant::now();
        for _ in 0..ANSWERED_KEPT {
            log.push(Answered::now("t".into(), &Value::Null));
        }
        assert_eq!(log.snapshot().1, None);
        log.push(Answered::now("t".into(), &Value::Null));
        let (kept, forgotten) = log.snapshot();
        assert_eq!(kept.len(), ANSWERED_KEPT);
        assert!(forgotten.is_some_and(|f| f >= t0));
    }

    /// Class: evidence selected by a clock that can go back (attack 14 F5). The daemon's clock
    /// stepped back 30 s while the call waited: its `started` line, written after the call was
    /// sent, carries an earlier time. Found by position (after the call's mark), it still makes
    /// the call unknown — never "did not run" — and its record is the daemon's id with the route.
    #[test]
    fn a_started_line_stamped_before_the_call_was_sent_still_counts() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let state = t.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let paths = Paths {
            config_dir: t.path().join("config"),
            config_file: t.path().join("config/config.toml"),
            state_dir: state.clone(),
            runtime_dir: t.path().join("rt"),
            cache_dir: t.path().join("cache"),
        };
        let log = paths.audit_log();
        archgate_core::paths::write_private_file(&log, b"{\"event\":\"x\"}\n").unwrap();
        let args = serde_json::json!({"route": "toggle nightlight"});
        let call = Inflight {
            method: "tools/call".into(),
            tool: Some(("omarchy_run".into(), args.clone())),
            sent: SystemTime::now(),
            sent_at: Instant::now(),
            mark: orphans::mark(&log),
        };
        let stepped = time::OffsetDateTime::from(SystemTime::now() - Duration::from_secs(30))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap();
        let started = serde_json::json!({
            "event": "started", "id": "d-1", "time": stepped, "client": "default",
            "transport": "bridge", "tool": "omarchy_run", "route": "omarchy toggle nightlight",
            "decision": "allow", "args_sha256": args_digest(&args),
        });
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        std::io::Write::write_all(&mut f, format!("{started}\n").as_bytes()).unwrap();
        drop(f);
        let audit = AuditConfig {
            max_bytes: 1 << 20,
            keep: 3,
            queue: 16,
        };
        let fates = settle("default", &paths, &audit, &[call], &[], None);
        assert_eq!(fates, vec![Fate::Unknown]);
        let text = std::fs::read_to_string(&log).unwrap();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["id"], "d-1", "{text}");
        assert_eq!(last["outcome"], "unknown", "{text}");
        assert_eq!(last["route"], "omarchy toggle nightlight", "{text}");
    }
}

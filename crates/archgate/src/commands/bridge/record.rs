//! The one audit record of a bridged call the daemon never answered, and what the agent is told.
//!
//! A daemon records each call when it ends (`gate::Pending`); one killed mid-call (SIGKILL, a
//! crash) records nothing for its parked or running calls, and one stopped gracefully records
//! and answers them before its socket closes (`serve.rs`). So the bridge settles each call it had
//! to answer itself, under the orphan finders' lock (`audit::orphans`):
//! - the log already holds the daemon's record of it (the daemon recorded, then died before its
//!   answer left: same client, tool and argument digest, written since the call was sent) —
//!   nothing to write;
//! - the log holds its `started` line and no record: its work began, so it may have run — one
//!   record `unknown` with the started line's id, route and approval, and the agent is told
//!   **unknown**, with how to check;
//! - neither: nothing that acts had started — one `unreachable` record, and the agent is told
//!   it did not run.
//!
//! Written through the same audit writer (bounded lines, rotation), arguments as their digest
//! only: the bridge does not know which are private.

use serde_json::Value;
use std::time::{Duration, SystemTime};

use super::Inflight;
use archgate_core::audit::orphans::{self, FinderLock, Started};
use archgate_core::audit::{AuditLog, AuditSettings, Outcome, Record, args_digest, now_rfc3339};
use archgate_core::config::AuditConfig;
use archgate_core::paths::Paths;

/// What became of one call the daemon did not answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// The daemon recorded it before it died (its answer was lost).
    RecordedByDaemon,
    /// Its work had started: it may have run.
    Unknown,
    /// Nothing that acts had started.
    DidNotRun,
}

/// Why a bridged call's outcome is unknown, as its record says it.
pub const UNKNOWN_REASON: &str = "the archgate daemon went away while this call's work ran (recorded by the stdio bridge): it may have run, in part or whole";

/// Settles each call (see the module doc); one fate per call, in order.
pub fn settle(client: &str, paths: &Paths, audit: &AuditConfig, calls: &[Inflight]) -> Vec<Fate> {
    let path = paths.audit_log();
    let _lock = FinderLock::take(&path)
        .map_err(|e| tracing::warn!("could not take the audit log's finder lock: {e}"))
        .ok();
    let tail = orphans::read_tail(&path);
    let unfinished = orphans::unfinished(&tail);
    let mut claimed: Vec<&str> = Vec::new();
    let mut todo: Vec<Record> = Vec::new();
    let fates = calls
        .iter()
        .map(|c| {
            if recorded_by_daemon(&tail, client, c) {
                return Fate::RecordedByDaemon;
            }
            match started_by_daemon(&unfinished, client, c, &claimed) {
                Some(s) => {
                    claimed.push(&s.id);
                    todo.push(s.unknown_record(UNKNOWN_REASON, elapsed_ms(c)));
                    Fate::Unknown
                }
                None => {
                    todo.push(unreachable_record(client, c));
                    Fate::DidNotRun
                }
            }
        })
        .collect();
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

fn elapsed_ms(c: &Inflight) -> u64 {
    c.sent.elapsed().map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn unreachable_record(client: &str, c: &Inflight) -> Record {
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
        tool,
        route: None,
        target: None,
        tier: None,
        decision: None,
        reason: Some(
            "the archgate daemon went away before it answered, and nothing that acts had started (recorded by the stdio bridge)"
                .into(),
        ),
        rule: None,
        approval: None,
        outcome: Outcome::Unreachable,
        error_kind: Some("unreachable".into()),
        exit_code: None,
        duration_ms: elapsed_ms(c),
        args_sha256: args_digest(&args),
        args: Value::Null,
        dev_mode: false,
        provenance: None,
    }
}

fn recorded_by_daemon(tail: &str, client: &str, call: &Inflight) -> bool {
    let Some((tool, args)) = &call.tool else {
        return true;
    };
    let digest = args_digest(args);
    // The gate stamps a record when it admits the call, after the bridge sent it (one clock).
    let since = call.sent;
    tail.lines()
        .filter_map(|l| serde_json::from_str::<Record>(l).ok())
        .any(|r| {
            r.client == client
                && &r.tool == tool
                && r.args_sha256 == digest
                && parse_time(&r.time).is_some_and(|t| t >= since)
        })
}

/// The unfinished `started` line of this call (same client, tool and digest, written since the
/// call was sent), not already claimed by another call of the same batch.
fn started_by_daemon<'a>(
    unfinished: &'a [Started],
    client: &str,
    call: &Inflight,
    claimed: &[&str],
) -> Option<&'a Started> {
    let (tool, args) = call.tool.as_ref()?;
    let digest = args_digest(args);
    unfinished.iter().find(|s| {
        s.client == client
            && &s.tool == tool
            && s.args_sha256 == digest
            && s.at().is_some_and(|t| t >= call.sent)
            && !claimed.contains(&s.id.as_str())
    })
}

fn parse_time(s: &str) -> Option<SystemTime> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    Some(SystemTime::from(t))
}

//! The one audit record of a bridged call the daemon never answered.
//!
//! A daemon records each call when it ends (`gate::Pending`); one killed mid-call (SIGKILL, a
//! crash) records nothing for its parked calls, and one stopped gracefully records and answers
//! them before its socket closes (`serve.rs`). So the bridge writes an `unreachable` record
//! for each call it had to answer itself — unless the log already holds the daemon's record of
//! it (the daemon recorded, then died before its answer left): same client, tool and argument
//! digest, written since the call was sent. Written through the same audit writer (bounded
//! lines, rotation), arguments as their digest only: the bridge does not know which are private.

use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::Inflight;
use archgate_core::audit::{AuditLog, AuditSettings, Outcome, Record, args_digest, now_rfc3339};
use archgate_core::config::AuditConfig;
use archgate_core::paths::Paths;

/// How much of the log's end is searched for the daemon's own record.
const TAIL: u64 = 1024 * 1024;

/// Writes one record for each call the daemon has not recorded; returns how many it wrote.
pub fn unreachable(client: &str, paths: &Paths, audit: &AuditConfig, calls: &[Inflight]) -> usize {
    let path = paths.audit_log();
    let tail = read_tail(&path);
    let todo: Vec<&Inflight> = calls
        .iter()
        .filter(|c| !recorded_by_daemon(&tail, client, c))
        .collect();
    if todo.is_empty() {
        return 0;
    }
    let log = AuditLog::start(AuditSettings {
        path,
        queue: audit.queue.max(todo.len()),
        max_bytes: audit.max_bytes,
        keep: audit.keep,
    });
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    for c in &todo {
        let (tool, args) = c.tool.clone().unwrap_or_default();
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let secs = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        log.record(&Record {
            time: now_rfc3339(),
            id: format!("{secs:x}-{}-b{n}", std::process::id()),
            client: client.to_owned(),
            tool,
            route: None,
            target: None,
            tier: None,
            decision: None,
            reason: Some(
                "the archgate daemon went away before it answered (recorded by the stdio bridge)"
                    .into(),
            ),
            rule: None,
            approval: None,
            outcome: Outcome::Unreachable,
            error_kind: Some("unreachable".into()),
            exit_code: None,
            duration_ms: c.sent.elapsed().map(|d| d.as_millis() as u64).unwrap_or(0),
            args_sha256: args_digest(&args),
            args: Value::Null,
            dev_mode: false,
            provenance: None,
        });
    }
    if !log.shutdown(Duration::from_secs(2)) {
        tracing::warn!("the bridge's unreachable records may not all be written");
    }
    todo.len()
}

fn read_tail(path: &Path) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(TAIL)));
    let mut buf = Vec::new();
    let _ = f.take(TAIL).read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
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

fn parse_time(s: &str) -> Option<SystemTime> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    Some(SystemTime::from(t))
}

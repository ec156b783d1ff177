//! Every line of the activity log is bounded, however large what it describes.
//!
//! An agent chooses a tool name, a route, arguments; an unknown tool's name of 4 MiB once made
//! one record of 8 MiB, and fourteen such calls rotated every earlier record out of the log.
//! So each string field is cut to a limit of its own (the tool name to
//! [`TOOL_NAME_LIMIT`] bytes), and a cut field names the SHA-256 of the whole value and its
//! length; the arguments keep their structure when they fit [`ARGS_LIMIT`] and become a note
//! with their size when they do not (the record's `args_sha256` is of the whole arguments
//! anyway). Events are bounded the same way. A line is at most [`LINE_LIMIT`] bytes.

use super::record::{ApprovalRecord, ProvenanceRecord, Record};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The tool name kept in a record, in bytes.
pub const TOOL_NAME_LIMIT: usize = 128;
/// Most string fields (client, id, reason, rule, kinds), in bytes.
pub const FIELD_LIMIT: usize = 256;
/// The route and the resolved target, in bytes.
pub const TARGET_LIMIT: usize = 1024;
/// The recorded arguments, serialized, in bytes.
pub const ARGS_LIMIT: usize = 4096;
/// One whole line of the log, in bytes.
pub const LINE_LIMIT: usize = 8 * 1024;
/// A value inside the arguments when the arguments as a whole do not fit.
const ARG_VALUE_SMALL: usize = 64;

/// `s` cut to at most `limit` bytes (on a character boundary) plus, when cut, the SHA-256 of the
/// whole and its length: `first bytes…[sha256:HEX, N bytes]`.
pub fn cap(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_owned();
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}…[sha256:{}, {} bytes]",
        &s[..end],
        hex::encode(Sha256::digest(s.as_bytes())),
        s.len()
    )
}

fn cap_opt(s: &Option<String>, limit: usize) -> Option<String> {
    s.as_deref().map(|s| cap(s, limit))
}

/// Every string in `v` (object keys too) cut to `limit` bytes.
fn cap_json(v: &Value, limit: usize) -> Value {
    match v {
        Value::String(s) => Value::String(cap(s, limit)),
        Value::Array(a) => Value::Array(a.iter().map(|v| cap_json(v, limit)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (cap(k, limit), cap_json(v, limit)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Bytes of `v` as compact JSON, counted as it would be written, without building the text.
pub(crate) fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut n = Count(0);
    serde_json::to_writer(&mut n, v).map_or(usize::MAX, |()| n.0)
}

/// The arguments as a record keeps them: whole when they fit, with every value cut when that
/// makes them fit, else a note with their size.
fn bounded_args(args: &Value) -> Value {
    if json_len(args) <= ARGS_LIMIT {
        return args.clone();
    }
    let small = cap_json(args, ARG_VALUE_SMALL);
    if json_len(&small) <= ARGS_LIMIT {
        return small;
    }
    json!({ "[too large to record]": format!("{} bytes; see args_sha256", json_len(args)) })
}

/// `r` with every field within its limit.
pub fn bounded_record(r: &Record) -> Record {
    bounded_record_at(r, usize::MAX)
}

/// `r` with every field within its limit and within `most` bytes.
fn bounded_record_at(r: &Record, most: usize) -> Record {
    let c = |s: &str, limit: usize| cap(s, limit.min(most));
    let o = |s: &Option<String>, limit: usize| cap_opt(s, limit.min(most));
    Record {
        time: c(&r.time, FIELD_LIMIT),
        id: c(&r.id, FIELD_LIMIT),
        client: c(&r.client, FIELD_LIMIT),
        agent: o(&r.agent, FIELD_LIMIT),
        transport: c(&r.transport, FIELD_LIMIT),
        tool: c(&r.tool, TOOL_NAME_LIMIT),
        route: o(&r.route, TARGET_LIMIT),
        target: o(&r.target, TARGET_LIMIT),
        tier: o(&r.tier, FIELD_LIMIT),
        decision: o(&r.decision, FIELD_LIMIT),
        reason: o(&r.reason, FIELD_LIMIT),
        rule: o(&r.rule, FIELD_LIMIT),
        approval: r.approval.as_ref().map(|a| ApprovalRecord {
            outcome: c(&a.outcome, FIELD_LIMIT),
            channel: o(&a.channel, FIELD_LIMIT),
            rule_id: o(&a.rule_id, FIELD_LIMIT),
        }),
        outcome: r.outcome,
        error_kind: o(&r.error_kind, FIELD_LIMIT),
        exit_code: r.exit_code,
        duration_ms: r.duration_ms,
        args_sha256: c(&r.args_sha256, FIELD_LIMIT),
        args: if most == usize::MAX {
            bounded_args(&r.args)
        } else {
            json!({ "[too large to record]": format!("{} bytes; see args_sha256", json_len(&r.args)) })
        },
        dev_mode: r.dev_mode,
        task: o(&r.task, FIELD_LIMIT),
        provenance: r.provenance.as_ref().map(|p| ProvenanceRecord {
            read: o(&p.read, FIELD_LIMIT),
            after: o(&p.after, TARGET_LIMIT),
            after_s: p.after_s,
        }),
    }
}

/// The record's line (without its newline): at most [`LINE_LIMIT`] bytes. Fields full of
/// characters JSON escapes six bytes wide are cut further until the line fits.
pub fn record_line(r: &Record) -> Result<String, serde_json::Error> {
    // Most records are within every limit already: then the record is its own bounded copy.
    if within_limits(r) {
        let line = serde_json::to_string(r)?;
        if line.len() <= LINE_LIMIT {
            return Ok(line);
        }
    }
    let mut line = serde_json::to_string(&bounded_record(r))?;
    for most in [64, 16] {
        if line.len() <= LINE_LIMIT {
            break;
        }
        line = serde_json::to_string(&bounded_record_at(r, most))?;
    }
    Ok(line)
}

/// Whether `bounded_record(r)` would be `r` itself: every field within its limit.
fn within_limits(r: &Record) -> bool {
    let ok = |s: &str, limit: usize| s.len() <= limit;
    let opt = |s: &Option<String>, limit: usize| s.as_deref().is_none_or(|s| ok(s, limit));
    ok(&r.time, FIELD_LIMIT)
        && ok(&r.id, FIELD_LIMIT)
        && ok(&r.client, FIELD_LIMIT)
        && ok(&r.tool, TOOL_NAME_LIMIT)
        && opt(&r.route, TARGET_LIMIT)
        && opt(&r.target, TARGET_LIMIT)
        && opt(&r.tier, FIELD_LIMIT)
        && opt(&r.decision, FIELD_LIMIT)
        && opt(&r.reason, FIELD_LIMIT)
        && opt(&r.rule, FIELD_LIMIT)
        && r.approval.as_ref().is_none_or(|a| {
            ok(&a.outcome, FIELD_LIMIT)
                && opt(&a.channel, FIELD_LIMIT)
                && opt(&a.rule_id, FIELD_LIMIT)
        })
        && opt(&r.error_kind, FIELD_LIMIT)
        && ok(&r.args_sha256, FIELD_LIMIT)
        && json_len(&r.args) <= ARGS_LIMIT
}

/// An event with every string cut to [`FIELD_LIMIT`]; when even that is too long a line, only
/// its `event` and `time` and a note of its size remain.
pub fn bounded_event(v: &Value) -> Value {
    if json_len(v) <= LINE_LIMIT && !has_long_string(v) {
        return v.clone();
    }
    let small = cap_json(v, FIELD_LIMIT);
    if json_len(&small) <= LINE_LIMIT {
        return small;
    }
    json!({
        "event": small.get("event").cloned().unwrap_or(Value::Null),
        "time": small.get("time").cloned().unwrap_or(Value::Null),
        "truncated": format!("{} bytes", json_len(v)),
    })
}

fn has_long_string(v: &Value) -> bool {
    match v {
        Value::String(s) => s.len() > FIELD_LIMIT,
        Value::Array(a) => a.iter().any(has_long_string),
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| k.len() > FIELD_LIMIT || has_long_string(v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{Outcome, args_digest, now_rfc3339};

    fn huge(n: usize) -> String {
        "A".repeat(n)
    }

    fn record(tool: &str, args: Value) -> Record {
        Record {
            time: now_rfc3339(),
            id: "c1".into(),
            client: "local".into(),
            agent: None,
            transport: "stdio".into(),
            tool: tool.into(),
            route: Some(tool.into()),
            target: Some(tool.into()),
            tier: None,
            decision: None,
            reason: Some(format!("no tool named {tool}")),
            rule: None,
            approval: None,
            outcome: Outcome::NotGranted,
            error_kind: Some("unknown_tool".into()),
            exit_code: None,
            duration_ms: 0,
            args_sha256: args_digest(&args),
            args,
            dev_mode: false,
            task: None,
            provenance: None,
        }
    }

    #[test]
    fn a_four_mebibyte_tool_name_makes_a_small_record_that_names_its_digest() {
        let name = huge(4 << 20);
        let b = bounded_record(&record(&name, json!({"x": huge(70_000)})));
        let line = serde_json::to_string(&b).unwrap();
        assert!(line.len() <= LINE_LIMIT, "{} bytes", line.len());
        assert!(b.tool.starts_with(&"A".repeat(TOOL_NAME_LIMIT)));
        assert!(!b.tool.starts_with(&"A".repeat(TOOL_NAME_LIMIT + 1)));
        let digest = hex::encode(Sha256::digest(name.as_bytes()));
        assert!(
            b.tool.contains(&digest) && b.tool.contains("4194304 bytes"),
            "{}",
            b.tool
        );
    }

    #[test]
    fn fields_of_control_characters_still_make_a_bounded_line() {
        let nul = "\u{1}".repeat(64 << 10);
        let mut r = record(&nul, json!({ nul.clone(): nul.clone() }));
        r.client = nul.clone();
        r.reason = Some(nul.clone());
        r.rule = Some(nul.clone());
        r.error_kind = Some(nul.clone());
        r.decision = Some(nul.clone());
        r.tier = Some(nul.clone());
        r.approval = Some(ApprovalRecord {
            outcome: nul.clone(),
            channel: Some(nul.clone()),
            rule_id: Some(nul.clone()),
        });
        let line = record_line(&r).unwrap();
        assert!(line.len() <= LINE_LIMIT, "{} bytes", line.len());
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back.outcome, r.outcome);
    }

    #[test]
    fn small_records_are_unchanged() {
        let r = record("system_status", json!({"a": "b", "n": [1, 2]}));
        assert_eq!(bounded_record(&r), r);
    }

    #[test]
    fn many_arguments_keep_their_shape_or_become_a_note() {
        let many: serde_json::Map<String, Value> = (0..20)
            .map(|i| (format!("k{i}"), json!(huge(500))))
            .collect();
        let b = bounded_args(&Value::Object(many));
        assert!(json_len(&b) <= ARGS_LIMIT);
        assert!(b["k0"].as_str().unwrap().contains("sha256:"), "{b}");
        let flood: Vec<Value> = (0..10_000).map(|i| json!(i)).collect();
        let b = bounded_args(&json!({ "list": flood }));
        assert!(json_len(&b) <= ARGS_LIMIT);
        assert!(b.get("[too large to record]").is_some(), "{b}");
    }

    #[test]
    fn events_are_bounded_too() {
        let e = json!({"event": "rule_revoked", "id": huge(100_000), "time": "t"});
        let b = bounded_event(&e);
        assert!(json_len(&b) <= LINE_LIMIT);
        assert_eq!(b["event"], "rule_revoked");
        let many: Vec<Value> = (0..5000).map(|_| json!("x".repeat(200))).collect();
        let b = bounded_event(&json!({"event": "x", "list": many}));
        assert!(json_len(&b) <= LINE_LIMIT, "{}", json_len(&b));
        assert!(b.get("truncated").is_some());
        let small = json!({"event": "developer_mode", "on": true});
        assert_eq!(bounded_event(&small), small);
    }
}

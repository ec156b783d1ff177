//! One audit record: what a call was, what was decided, how it ended. Never its output.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Each value in the recorded arguments is cut to this many bytes.
pub const ARG_VALUE_LIMIT: usize = 512;

/// How a call ended. Exactly one per call; the same names count in `/health`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and answered.
    Ok,
    /// The tool ran and answered an error (not installed, not found, could not reach …).
    ToolError,
    /// Refused by policy (denied or blocked) before anything ran.
    Refused,
    /// Resolution refused the target (not found, could not look, protected path).
    Unresolved,
    /// Arguments too large or not valid against the schema.
    InvalidArguments,
    /// The client is not granted the tool, or the tool is disabled.
    NotGranted,
    /// The client's budget is spent.
    BudgetExhausted,
    /// The person said no.
    Declined,
    /// The question was dismissed.
    Cancelled,
    /// Nobody answered before the deadline.
    TimedOut,
    /// Approval was needed and no channel could ask.
    Unsupported,
    /// The client went away while the call was pending.
    Unreachable,
    /// The call needs the person's yes and the client (a trusted relay on the stateless protocol)
    /// was asked to bring it: the question stays parked, and the client's next request with the
    /// answer is a call of its own.
    InputRequired,
    /// The tool panicked; archgate kept serving.
    Panicked,
    /// The call's act or destructive work had started (its `started` line is in the log) when
    /// archgate lost sight of it — the daemon was killed or crashed, or the client went away
    /// mid-run: it may have run, in part or whole. Never retried on the agent's behalf.
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Refused => "refused",
            Outcome::Unresolved => "unresolved",
            Outcome::InvalidArguments => "invalid_arguments",
            Outcome::NotGranted => "not_granted",
            Outcome::BudgetExhausted => "budget_exhausted",
            Outcome::Declined => "declined",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed_out",
            Outcome::Unsupported => "unsupported",
            Outcome::Unreachable => "unreachable",
            Outcome::InputRequired => "input_required",
            Outcome::Panicked => "panicked",
            Outcome::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The approval part of a record, present when approval was considered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// accepted, declined, cancelled, timed_out, unsupported, unreachable, `input_required` (the
    /// client was asked to relay the answer in its next request), or `auto` when a policy allow,
    /// a standing rule or developer mode approved without asking.
    pub outcome: String,
    /// Who answered: page, notification, cli, client, standing_rule, developer_mode, policy.
    pub channel: Option<String>,
    pub rule_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub time: String,
    pub id: String,
    pub client: String,
    /// The agent's own name from its `clientInfo` (`crate::agent`): untrusted, bounded, for the
    /// person's eyes; `client` is who the call was granted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// How the client reached archgate: `http` (its token), `bridge` (the daemon's bridge
    /// socket), `stdio` (served in its own process), `cli` (the person's command line). Two
    /// clients of one name stay apart by it. Empty in records written before it existed.
    #[serde(default)]
    pub transport: String,
    pub tool: String,
    pub route: Option<String>,
    /// The resolved target, as shown to the person.
    pub target: Option<String>,
    pub tier: Option<String>,
    /// allow, ask or deny.
    pub decision: Option<String>,
    pub reason: Option<String>,
    pub rule: Option<String>,
    pub approval: Option<ApprovalRecord>,
    pub outcome: Outcome,
    /// Typed error kind when the outcome is not `ok`.
    pub error_kind: Option<String>,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub args_sha256: String,
    pub args: Value,
    pub dev_mode: bool,
    /// Untrusted text: what this call's answer carried, or what this act call followed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ProvenanceRecord>,
    /// The MCP task (SEP-2663) the call was answered through, by its id; absent: the call was
    /// answered inline, in its own request (every call of a client without tasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
}

/// The provenance that applied to a call (`crate::untrusted`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProvenanceRecord {
    /// The source of the untrusted text this call's answer carried (`aur_files`, `clipboard` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    /// What the session read within the window before this act call: developer mode and
    /// standing rules did not approve it (a rule with `after_untrusted` still could).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Seconds between that read and this call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_s: Option<u64>,
}

/// Canonical JSON: object keys sorted (serde_json's map is a BTreeMap without
/// `preserve_order`), no insignificant whitespace.
pub fn canonical_json(v: &Value) -> String {
    let mut out = Vec::new();
    // Writing to a `Vec` cannot fail, and serde_json writes UTF-8 only.
    let _ = write_canonical(v, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// `canonical_json`, written straight to `out` (the digest hashes it as it is written).
fn write_canonical(v: &Value, out: &mut impl std::io::Write) -> std::io::Result<()> {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, k)?;
                out.write_all(b":")?;
                write_canonical(&m[k], out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(a) => {
            out.write_all(b"[")?;
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(x, out)?;
            }
            out.write_all(b"]")
        }
        other => Ok(serde_json::to_writer(out, other)?),
    }
}

/// Hex SHA-256 of the arguments' canonical JSON.
pub fn args_digest(args: &Value) -> String {
    let mut h = Sha256::new();
    // Hashing cannot fail.
    let _ = write_canonical(args, &mut h);
    hex_digest(&h.finalize().into())
}

/// A SHA-256 digest in lowercase hex, written in one go (`hex::encode` builds its string a
/// character at a time; digests are taken on every call).
pub(crate) fn hex_digest(d: &[u8; 32]) -> String {
    let mut hex = [0u8; 64];
    let _ = hex::encode_to_slice(d, &mut hex);
    String::from_utf8_lossy(&hex).into_owned()
}

/// The arguments with every string cut to `ARG_VALUE_LIMIT` bytes (on a char boundary) and
/// marked, and every other scalar kept.
pub fn truncate_args(args: &Value) -> Value {
    match args {
        Value::String(s) if s.len() > ARG_VALUE_LIMIT => {
            let mut end = ARG_VALUE_LIMIT;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            Value::String(format!("{}…[{} bytes]", &s[..end], s.len()))
        }
        Value::Array(a) => Value::Array(a.iter().map(truncate_args).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), truncate_args(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// What a record keeps of a private value (clipboard text, for tools whose arguments are
/// themselves private): its length.
fn redacted(v: &Value) -> Value {
    let n = v.as_str().map_or_else(|| v.to_string().len(), str::len);
    Value::String(format!("[redacted: {n} bytes]"))
}

/// The arguments as the record keeps them, in one copy: the values of `private` keys replaced by
/// their length, every other string cut (`truncate_args`).
pub fn recorded_args(args: &Value, private: &[&str]) -> Value {
    match args {
        Value::Object(m) if !private.is_empty() => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    if private.contains(&k.as_str()) {
                        (k.clone(), redacted(v))
                    } else {
                        (k.clone(), truncate_args(v))
                    }
                })
                .collect(),
        ),
        other => truncate_args(other),
    }
}

pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn digest_is_independent_of_key_order() {
        let a = json!({"b": 1, "a": {"y": [1, "x"], "x": null}});
        let b: Value = serde_json::from_str(r#"{"a":{"x":null,"y":[1,"x"]},"b":1}"#).unwrap();
        assert_eq!(args_digest(&a), args_digest(&b));
        assert_eq!(canonical_json(&a), r#"{"a":{"x":null,"y":[1,"x"]},"b":1}"#);
        assert_ne!(args_digest(&a), args_digest(&json!({"b": 2})));
    }

    /// Private values are replaced by their length, every other string is cut, in one copy.
    #[test]
    fn recorded_args_are_redacted_then_truncated() {
        let long = "é".repeat(ARG_VALUE_LIMIT);
        let a = json!({"text": long, "target": long, "n": 3, "list": [long, 1]});
        let cut = truncate_args(&json!(long));
        assert_ne!(cut, json!(long));
        let redacted = json!(format!("[redacted: {} bytes]", long.len()));
        assert_eq!(
            recorded_args(&a, &[]),
            json!({"text": cut, "target": cut, "n": 3, "list": [cut, 1]})
        );
        assert_eq!(
            recorded_args(&a, &["text"]),
            json!({"text": redacted, "target": cut, "n": 3, "list": [cut, 1]})
        );
        assert_eq!(
            recorded_args(&a, &["text", "n", "absent"]),
            json!({"text": redacted, "target": cut, "n": "[redacted: 1 bytes]", "list": [cut, 1]})
        );
        assert_eq!(recorded_args(&json!("x"), &["text"]), json!("x"));
    }

    #[test]
    fn digest_is_canonical_json_hashed() {
        let a = json!({"b": [1, {"d": "\u{e9}\"", "c": null}], "a": true});
        assert_eq!(
            args_digest(&a),
            hex::encode(Sha256::digest(canonical_json(&a).as_bytes()))
        );
        assert_eq!(canonical_json(&a), serde_json::to_string(&a).unwrap());
    }

    #[test]
    fn long_values_are_cut_on_char_boundaries() {
        let long = "é".repeat(600);
        let t = truncate_args(&json!({"text": long, "n": 5, "list": ["x".repeat(1000)]}));
        let s = t["text"].as_str().unwrap();
        assert!(s.len() < 600 && s.ends_with("[1200 bytes]"));
        assert_eq!(t["n"], 5);
        assert!(t["list"][0].as_str().unwrap().ends_with("[1000 bytes]"));
    }

    #[test]
    fn redaction_keeps_only_length() {
        let r = recorded_args(&json!({"text": "secret words", "x": 1}), &["text"]);
        assert_eq!(r, json!({"text": "[redacted: 12 bytes]", "x": 1}));
    }
}

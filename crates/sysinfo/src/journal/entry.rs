//! One journal entry as the agent gets it, from one line of `journalctl -o json`.
//!
//! journalctl writes a field as a string, as an array of byte values when it is not valid UTF-8
//! or holds control characters, and as an array of those when the entry holds the field more than
//! once (the first is taken). Anything else in a line is ignored.

use serde::Serialize;
use serde_json::Value;

use super::{MESSAGE_MAX, Priority};
use crate::diag::{DiagError, iso_time};

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// When it was logged (RFC 3339, UTC).
    pub time: String,
    /// The unit it came from (system or user), when it came from one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The syslog identifier (or the command name) when it tells more than the unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ident: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The message, cut to `MESSAGE_MAX` bytes.
    pub message: String,
    /// Arguments of a logged command line were withheld from `message` (`withheld.rs`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    /// Its cursor (paging only; not shown to the agent).
    #[serde(skip)]
    pub cursor: String,
    /// Its boot ID (shown through boots, not per entry).
    #[serde(skip)]
    pub boot_id: String,
}

/// A field's value as text (see the module doc for journalctl's shapes).
fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) if items.iter().all(Value::is_u64) => {
            let bytes: Vec<u8> = items
                .iter()
                .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect();
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Value::Array(items) => text(items.first()),
        _ => None,
    }
}

fn cut(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push('…');
    }
    s
}

impl Entry {
    /// The entry of one JSON object; `None` without a cursor or a timestamp.
    pub fn from_json(v: &Value) -> Option<Entry> {
        let cursor = text(v.get("__CURSOR"))?;
        let usec: u64 = text(v.get("__REALTIME_TIMESTAMP"))?.parse().ok()?;
        let unit = text(v.get("_SYSTEMD_USER_UNIT")).or_else(|| text(v.get("_SYSTEMD_UNIT")));
        let ident = text(v.get("SYSLOG_IDENTIFIER")).or_else(|| text(v.get("_COMM")));
        let message = text(v.get("MESSAGE")).unwrap_or_default();
        // Also without an identifier: the kernel's audit records carry none.
        let transport = text(v.get("_TRANSPORT")).unwrap_or_default();
        let (comm, exe) = (text(v.get("_COMM")), text(v.get("_EXE")));
        let (message_id, unit_field) = (
            text(v.get("MESSAGE_ID")),
            text(v.get("UNIT")).or_else(|| text(v.get("USER_UNIT"))),
        );
        let origin = super::writers::Origin {
            ident: ident.as_deref().unwrap_or(""),
            comm: comm.as_deref().unwrap_or(""),
            exe: exe.as_deref().unwrap_or(""),
            transport: &transport,
            message_id: message_id.as_deref().unwrap_or(""),
            unit: unit_field.as_deref().unwrap_or(""),
        };
        let withheld = super::withheld::withhold_entry(&origin, &message);
        // The identifier says nothing when it is the unit's own name.
        let ident = ident.filter(|i| {
            unit.as_deref()
                .is_none_or(|u| u.rsplit_once('.').map(|(s, _)| s) != Some(i.as_str()))
        });
        Some(Entry {
            time: iso_time(usec)?,
            unit,
            ident,
            priority: text(v.get("PRIORITY"))
                .and_then(|p| p.parse().ok())
                .and_then(Priority::from_number),
            pid: text(v.get("_PID")).and_then(|p| p.parse().ok()),
            withheld: withheld.as_ref().is_some_and(|w| *w != message),
            message: cut(withheld.unwrap_or(message), MESSAGE_MAX),
            cursor,
            boot_id: text(v.get("_BOOT_ID")).unwrap_or_default(),
        })
    }
}

/// The entries of `journalctl -o json` output, in order, and whether every line was whole.
/// Reading stops at the first line that does not parse (where the output cap cut the answer):
/// what comes before it is exact, so paging goes on from there.
pub(crate) fn parse_lines(text: &str, command: &str) -> Result<(Vec<Entry>, bool), DiagError> {
    let mut entries = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            if entries.is_empty() {
                return Err(DiagError::Malformed {
                    command: command.to_owned(),
                    what: "a line of its JSON output does not parse".into(),
                });
            }
            return Ok((entries, false));
        };
        if let Some(e) = Entry::from_json(&v) {
            entries.push(e);
        }
    }
    Ok((entries, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn journalctls_shapes_of_a_field_are_read() {
        let v = json!({
            "__CURSOR": "s=1;i=2",
            "__REALTIME_TIMESTAMP": "1764500011000000",
            "_SYSTEMD_UNIT": "sshd.service",
            "SYSLOG_IDENTIFIER": "sshd",
            "PRIORITY": "3",
            "_PID": "42",
            // Not valid UTF-8: journalctl gives the bytes.
            "MESSAGE": [104, 105, 255],
        });
        let e = Entry::from_json(&v).unwrap();
        assert_eq!(e.time, "2025-11-30T10:53:31Z");
        assert_eq!(e.unit.as_deref(), Some("sshd.service"));
        assert_eq!(e.ident, None, "the unit's own name is not repeated");
        assert_eq!(e.priority, Some(Priority::Err));
        assert_eq!(e.pid, Some(42));
        assert_eq!(e.message, "hi\u{fffd}");
        let v = json!({"__CURSOR": "c", "__REALTIME_TIMESTAMP": "1", "MESSAGE": ["first", "second"],
                       "SYSLOG_IDENTIFIER": "kernel"});
        let e = Entry::from_json(&v).unwrap();
        assert_eq!(e.message, "first");
        assert_eq!(e.ident.as_deref(), Some("kernel"));
        assert!(Entry::from_json(&json!({"MESSAGE": "no cursor"})).is_none());
    }

    #[test]
    fn long_messages_are_cut_and_a_cut_answer_stops_at_the_last_whole_line() {
        let long = "é".repeat(MESSAGE_MAX);
        let v = json!({"__CURSOR": "c", "__REALTIME_TIMESTAMP": "1", "MESSAGE": long});
        let m = Entry::from_json(&v).unwrap().message;
        assert!(m.len() <= MESSAGE_MAX + '…'.len_utf8() && m.ends_with('…'));
        let line = r#"{"__CURSOR":"a","__REALTIME_TIMESTAMP":"1","MESSAGE":"x"}"#;
        let (e, whole) = parse_lines(&format!("{line}\n{line}\n{{\"__CUR"), "j").unwrap();
        assert_eq!((e.len(), whole), (2, false));
        assert!(parse_lines("not json", "j").is_err());
    }
}

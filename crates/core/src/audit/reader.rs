//! Reading the audit log back, for `archgate log`, the activity resource and the approval page.
//! A torn last line (the process was killed mid-write) is skipped and counted, never fatal.

use super::record::Record;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// One line of the log: a call record or an event such as `dropped`.
#[derive(Debug, Clone)]
pub enum Entry {
    Call(Box<Record>),
    Event(serde_json::Value),
}

#[derive(Debug, Default)]
pub struct ReadReport {
    pub entries: Vec<Entry>,
    /// Lines that were not whole JSON (a torn last line after a crash).
    pub skipped: usize,
}

pub fn parse_line(line: &str) -> Option<Entry> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    if v.get("event").is_some() {
        return Some(Entry::Event(v));
    }
    serde_json::from_value(v)
        .ok()
        .map(|r| Entry::Call(Box::new(r)))
}

/// Reads the whole file (rotated files are not included).
pub fn read_log(path: &Path) -> std::io::Result<ReadReport> {
    let f = match crate::paths::open_private(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ReadReport::default()),
        Err(e) => return Err(e),
    };
    let mut report = ReadReport::default();
    for line in BufReader::new(f).split(b'\n') {
        let line = line?;
        if line.is_empty() {
            continue;
        }
        match std::str::from_utf8(&line).ok().and_then(parse_line) {
            Some(e) => report.entries.push(e),
            None => report.skipped += 1,
        }
    }
    Ok(report)
}

/// The last `n` call records, optionally of one client.
pub fn recent(path: &Path, client: Option<&str>, n: usize) -> std::io::Result<Vec<Record>> {
    let report = read_log(path)?;
    let mut out: Vec<Record> = report
        .entries
        .into_iter()
        .filter_map(|e| match e {
            Entry::Call(r) if client.is_none_or(|c| r.client == c) => Some(*r),
            _ => None,
        })
        .collect();
    let skip = out.len().saturating_sub(n);
    out.drain(..skip);
    Ok(out)
}

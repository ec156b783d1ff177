//! The load of the clients bench: each client's session making its cycle of calls, checking
//! every answer (its id, its echoed argument, its grant's tools/list, the refusal), and the tally
//! of what a run saw.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

use super::support::mcp::{Mcp, result_text};
use super::{Grant, names};

/// One client: its connection, its grant, and the tools/list its grant gives.
pub struct Client {
    pub index: usize,
    pub grant: &'static Grant,
    pub mcp: Mcp,
    pub expected_list: Arc<Value>,
}

/// What one run of many calls saw.
#[derive(Default)]
pub struct Tally {
    pub lat: Vec<Duration>,
    /// Latency from the time the call was due (paced runs), so a late start counts.
    pub from_due: Vec<Duration>,
    pub ok: usize,
    pub refused: usize,
    pub errors: usize,
    pub misrouted: usize,
    pub notes: Vec<String>,
    /// When each client finished, from the start of the run.
    pub finished: Vec<Duration>,
    /// The slowest calls: latency and what the call was.
    pub slowest: Vec<(Duration, String)>,
    /// Latencies by kind of call.
    pub by_kind: std::collections::BTreeMap<&'static str, Vec<Duration>>,
}

impl Tally {
    pub fn merge(&mut self, o: Tally) {
        self.lat.extend(o.lat);
        self.from_due.extend(o.from_due);
        self.ok += o.ok;
        self.refused += o.refused;
        self.errors += o.errors;
        self.misrouted += o.misrouted;
        self.finished.extend(o.finished);
        for (k, v) in o.by_kind {
            self.by_kind.entry(k).or_default().extend(v);
        }
        for (d, what) in o.slowest {
            self.slow(d, what);
        }
        for n in o.notes {
            if self.notes.len() < 8 {
                self.notes.push(n);
            }
        }
    }
    pub fn slow(&mut self, d: Duration, what: String) {
        if self.slowest.len() < 3 || d > self.slowest[2].0 {
            self.slowest.push((d, what));
            self.slowest.sort_by_key(|s| std::cmp::Reverse(s.0));
            self.slowest.truncate(3);
        }
    }
    pub fn note(&mut self, s: String) {
        if self.notes.len() < 8 {
            self.notes.push(s);
        }
    }
}

pub struct Row {
    pub name: String,
    pub tally: Tally,
    pub wall: Duration,
    pub server_cpu: f64,
}

/// The given clients one after another.
pub async fn run_each(
    clients: &[Arc<Client>],
    phase: &str,
    calls: usize,
    pace: Option<Duration>,
) -> Tally {
    let mut t = Tally::default();
    for c in clients {
        let start = tokio::time::Instant::now();
        t.merge(client_run(c.clone(), phase.to_owned(), calls, pace, start).await);
    }
    t
}

/// Every client at once, from one start (paced starts spread evenly over one interval).
pub async fn run_all(
    clients: &[Arc<Client>],
    phase: &str,
    calls: usize,
    pace: Option<Duration>,
) -> Tally {
    let start = tokio::time::Instant::now() + Duration::from_millis(20);
    let mut set = tokio::task::JoinSet::new();
    let n = clients.len() as u32;
    for c in clients {
        let offset = pace.map_or(Duration::ZERO, |p| p * c.index as u32 / n);
        set.spawn(client_run(
            c.clone(),
            phase.to_owned(),
            calls,
            pace,
            start + offset,
        ));
    }
    let mut t = Tally::default();
    while let Some(r) = set.join_next().await {
        match r {
            Ok(x) => t.merge(x),
            Err(e) => {
                t.errors += 1;
                t.note(format!("client task failed: {e}"));
            }
        }
    }
    t
}

/// One client's calls; with `pace`, call k is due at `start + k * pace`.
pub async fn client_run(
    c: Arc<Client>,
    phase: String,
    calls: usize,
    pace: Option<Duration>,
    start: tokio::time::Instant,
) -> Tally {
    let mut t = Tally::default();
    tokio::time::sleep_until(start).await;
    for k in 0..calls {
        let due = start + pace.map_or(Duration::ZERO, |p| p * k as u32);
        if pace.is_some() {
            tokio::time::sleep_until(due).await;
        }
        let id = ((c.index as u64 + 1) << 20) | k as u64;
        let (method, params, check) = call_of(&c, &phase, k);
        let sent = tokio::time::Instant::now();
        let r = c.mcp.exchange(id, method, params).await;
        let now = tokio::time::Instant::now();
        t.lat.push(now - sent);
        t.by_kind.entry(check.kind()).or_default().push(now - sent);
        if t.slowest.len() < 3 || now - sent > t.slowest[2].0 {
            let what = match params_name(method, &c, k) {
                Some(n) => format!("client {} call {k} {method} {n}", c.index),
                None => format!("client {} call {k} {method}", c.index),
            };
            t.slow(now - sent, what);
        }
        if pace.is_some() {
            t.from_due.push(now - due);
        }
        let msgs = match r {
            Ok(m) => m,
            Err(e) => {
                t.errors += 1;
                t.note(format!("client {} call {k} ({method}): {e:#}", c.index));
                continue;
            }
        };
        // Exactly one answer, with this request's id.
        let [answer] = msgs.as_slice() else {
            t.misrouted += 1;
            t.note(format!(
                "client {} call {k}: {} messages: {msgs:?}",
                c.index,
                msgs.len()
            ));
            continue;
        };
        if answer["id"] != id {
            t.misrouted += 1;
            t.note(format!(
                "client {} call {k}: sent id {id}, answer {answer}",
                c.index
            ));
            continue;
        }
        match check.judge(&c, answer) {
            Verdict::Ok => t.ok += 1,
            Verdict::Refused => t.refused += 1,
            Verdict::Error(s) => {
                t.errors += 1;
                t.note(format!("client {} call {k} ({method}): {s}", c.index));
            }
            Verdict::Misrouted(s) => {
                t.misrouted += 1;
                t.note(format!(
                    "client {} call {k} ({method}): WRONG CLIENT? {s}",
                    c.index
                ));
            }
        }
    }
    t.finished.push(tokio::time::Instant::now() - start);
    t
}

/// What an answer must show.
pub enum Check {
    List,
    Status,
    /// The answer's text must name this (the unique argument).
    Echo(String),
    Refused(&'static str),
}

pub enum Verdict {
    Ok,
    Refused,
    Error(String),
    Misrouted(String),
}

/// The tool a call names, for the list of slowest calls.
pub fn params_name(method: &str, c: &Client, k: usize) -> Option<String> {
    (method == "tools/call").then(|| {
        call_of(c, "", k).1["name"]
            .as_str()
            .unwrap_or("?")
            .to_owned()
    })
}

pub fn call_of(c: &Client, phase: &str, k: usize) -> (&'static str, Value, Check) {
    let unique = format!("zz-bench-{phase}-{:02}-{k:03}", c.index);
    // Each client starts at its own place in the cycle, so at any moment the clients together
    // send the whole mix, not fifty calls of one kind.
    match (k + c.index) % 10 {
        0 => ("tools/list", json!({}), Check::List),
        2 | 5 | 8 => (
            "tools/call",
            json!({"name": "system_status", "arguments": {}}),
            Check::Status,
        ),
        1 | 4 | 7 => (
            "tools/call",
            json!({"name": "pkg_info", "arguments": {"name": unique}}),
            Check::Echo(unique),
        ),
        3 | 6 => {
            let path = format!("/nonexistent/{unique}");
            (
                "tools/call",
                json!({"name": "pkg_owner", "arguments": {"path": path}}),
                Check::Echo(path),
            )
        }
        _ => (
            "tools/call",
            json!({"name": c.grant.refused, "arguments": refused_args(c.grant.refused)}),
            Check::Refused(c.grant.refused),
        ),
    }
}

/// Valid arguments for the refused tools, so only the grant can refuse them.
pub fn refused_args(tool: &str) -> Value {
    match tool {
        "notify" => json!({"title": "archgate bench: must be refused"}),
        "theme" => json!({"action": "list"}),
        _ => json!({}),
    }
}

impl Check {
    pub fn kind(&self) -> &'static str {
        match self {
            Check::List => "tools/list",
            Check::Status => "system_status",
            Check::Echo(s) if s.starts_with('/') => "pkg_owner",
            Check::Echo(_) => "pkg_info",
            Check::Refused(_) => "refused",
        }
    }

    pub fn judge(&self, c: &Client, answer: &Value) -> Verdict {
        if let Some(e) = answer.get("error") {
            return match self {
                Check::Refused(tool) if e.to_string().contains(tool) => Verdict::Refused,
                _ => Verdict::Error(format!("JSON-RPC error {e}")),
            };
        }
        match self {
            Check::List => {
                if answer["result"]["tools"] == *c.expected_list {
                    Verdict::Ok
                } else {
                    Verdict::Misrouted(format!(
                        "tools/list {:?}, this client's grant gives {:?}",
                        names(&answer["result"]["tools"]),
                        names(&c.expected_list)
                    ))
                }
            }
            Check::Status => {
                let cpus = std::thread::available_parallelism().map_or(0, |n| n.get() as u64);
                let (is_error, text) = result_text(answer);
                if is_error {
                    Verdict::Error(text)
                } else if answer["result"]["structuredContent"]["cpus"] == cpus {
                    Verdict::Ok
                } else {
                    Verdict::Error(format!("no cpus = {cpus} in {answer}"))
                }
            }
            Check::Echo(unique) => {
                let all = answer["result"].to_string();
                if all.contains(unique.as_str()) {
                    Verdict::Ok
                } else if all.contains("zz-bench-") {
                    Verdict::Misrouted(format!("asked about {unique}, answer: {all}"))
                } else {
                    Verdict::Error(format!("the answer does not name {unique}: {all}"))
                }
            }
            Check::Refused(tool) => {
                let (is_error, text) = result_text(answer);
                if is_error && text.contains(tool) {
                    Verdict::Refused
                } else {
                    Verdict::Error(format!("{tool} was not refused: {}", answer["result"]))
                }
            }
        }
    }
}

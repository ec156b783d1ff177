//! The byte pump between the client's stdio and the daemon's socket.
//!
//! Each line goes through unchanged, both ways (both protocol eras, notifications, elicitation,
//! cancellation). The pump only looks: it keeps the client's `initialize` and `initialized`
//! (to replay them to a restarted daemon, which then has a session) and the ids of the client's
//! requests that have no answer yet. When the daemon goes away, each of those gets an answer
//! from here — a `tools/call` an `isError` result of kind `unreachable` the agent can read, and
//! one audit record (`record.rs`); any other request a JSON-RPC error. The next line from the
//! client reconnects (waiting for a restarting daemon, or starting one); when none comes, that
//! line is answered the same way and the bridge exits, so the client starts it again.

use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

use super::Link;
use archgate_core::config::Config;
use archgate_core::paths::Paths;

/// A line longer than this from the client is refused (it could not be a sane MCP message).
const MAX_LINE: usize = 64 * 1024 * 1024;
/// How long a line waits for a daemon that went away to come back.
const RECONNECT_PATIENCE: Duration = Duration::from_secs(10);

pub struct Setup {
    pub name: String,
    pub paths: Paths,
    pub config: Config,
}

/// A request of the client the daemon has not answered.
#[derive(Debug, Clone)]
pub struct Inflight {
    pub method: String,
    /// For `tools/call`: the tool and its arguments as the gate sees them.
    pub tool: Option<(String, Value)>,
    pub sent: SystemTime,
    /// The same moment on the monotonic clock: what the bridge compares with its own moments
    /// (answers received), which a wall-clock step must not reorder.
    pub sent_at: std::time::Instant,
    /// Where the audit log stood when it was sent: what the daemon wrote of it since is read
    /// whole when it goes away (`record::settle`), never searched for in a bounded tail.
    pub mark: archgate_core::audit::orphans::LogMark,
}

struct Shared {
    inflight: Mutex<HashMap<String, Inflight>>,
    /// The calls the daemon answered lately (tool, argument digest, when): their records are in
    /// the log too, beside those of calls still in flight (`record::settle`).
    answered: Mutex<super::record::AnsweredLog>,
    /// Lines to the client are written straight to fd 1 (a pipe write of one line is quick),
    /// not through tokio's blocking pool: one thread hand-off less per answer.
    out: Mutex<std::io::Stdout>,
}

impl Shared {
    fn inflight(&self) -> std::sync::MutexGuard<'_, HashMap<String, Inflight>> {
        self.inflight.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn emit(&self, line: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        // A client that stops reading blocks this write; the runtime moves other tasks away.
        tokio::task::block_in_place(|| {
            let out = self.out.lock().unwrap_or_else(|p| p.into_inner());
            let mut out = out.lock();
            out.write_all(line)?;
            if line.last() != Some(&b'\n') {
                out.write_all(b"\n")?;
            }
            out.flush()
        })
    }
}

/// The few fields the pump looks at; everything else is skipped unread.
#[derive(Deserialize)]
struct Peek {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<serde_json::Map<String, Value>>,
    #[serde(default, rename = "requestId")]
    request_id: Option<Value>,
}

fn messages(line: &[u8]) -> Vec<Peek> {
    let trimmed = line.trim_ascii_start();
    if trimmed.first() == Some(&b'[') {
        serde_json::from_slice::<Vec<Peek>>(line).unwrap_or_default()
    } else {
        serde_json::from_slice::<Peek>(line)
            .map(|p| vec![p])
            .unwrap_or_default()
    }
}

fn key(id: &Value) -> String {
    id.to_string()
}

/// What a client line means to the pump.
#[derive(Default)]
struct Seen {
    requests: Vec<(String, Inflight)>,
    cancelled: Vec<String>,
    initialize: Option<String>,
    initialized: bool,
}

fn inspect(line: &[u8]) -> Seen {
    let mut seen = Seen::default();
    for m in messages(line) {
        let (Some(method), id) = (m.method, m.id) else {
            continue; // a response (to an elicitation or a ping): passes through
        };
        match id {
            Some(id) => {
                let tool = (method == "tools/call").then(|| {
                    let p = m.params.as_ref();
                    (
                        p.and_then(|p| p.name.clone()).unwrap_or_default(),
                        p.and_then(|p| p.arguments.clone())
                            .map(Value::Object)
                            .unwrap_or(Value::Null),
                    )
                });
                if method == "initialize" {
                    seen.initialize = Some(key(&id));
                }
                seen.requests.push((
                    key(&id),
                    Inflight {
                        method,
                        tool,
                        sent: SystemTime::now(),
                        sent_at: std::time::Instant::now(),
                        mark: archgate_core::audit::orphans::LogMark::default(),
                    },
                ));
            }
            None if method == "notifications/initialized" => seen.initialized = true,
            None if method == "notifications/cancelled" => {
                if let Some(r) = m.params.and_then(|p| p.request_id) {
                    seen.cancelled.push(key(&r));
                }
            }
            None => {}
        }
    }
    seen
}

/// The id of a response from the daemon, if the line is one.
fn response_id(line: &[u8]) -> Vec<String> {
    messages(line)
        .into_iter()
        .filter(|m| m.method.is_none())
        .filter_map(|m| m.id.as_ref().map(key))
        .collect()
}

/// What a restarted daemon is told first.
#[derive(Default)]
struct Replay {
    initialize: Option<(String, Vec<u8>)>,
    initialized: Option<Vec<u8>>,
}

pub async fn run(link: Link, setup: Setup) -> anyhow::Result<()> {
    let shared = Arc::new(Shared {
        inflight: Mutex::default(),
        answered: Mutex::default(),
        out: Mutex::new(std::io::stdout()),
    });
    let (lost_tx, mut lost_rx) = mpsc::unbounded_channel::<u64>();
    let mut generation = 0u64;
    let mut conn = Some(start_reader(
        link,
        shared.clone(),
        lost_tx.clone(),
        generation,
    ));
    let mut replay = Replay::default();
    let mut stdin = stdin_lines();
    loop {
        let line = tokio::select! {
            l = stdin.recv() => match l {
                Some(l) => l,
                None => break,
            },
            Some(g) = lost_rx.recv() => {
                if g == generation && conn.is_some() {
                    conn = None;
                    tracing::warn!("the archgate daemon went away");
                    answer_unreachable(&shared, &setup, None).await;
                }
                continue;
            }
        };
        let seen = inspect(&line);
        {
            let mut inflight = shared.inflight();
            for c in &seen.cancelled {
                inflight.remove(c);
            }
            let mark = (!seen.requests.is_empty())
                .then(|| archgate_core::audit::orphans::mark(&setup.paths.audit_log()));
            for (k, v) in &seen.requests {
                let mut v = v.clone();
                if let Some(m) = mark {
                    v.mark = m;
                }
                inflight.insert(k.clone(), v);
            }
        }
        if let Some(id) = &seen.initialize {
            replay.initialize = Some((id.clone(), line.clone()));
        }
        if seen.initialized {
            replay.initialized = Some(line.clone());
        }
        if conn.is_none() {
            // A restarted daemon gets the session's initialize first (this line's own, if it
            // is the initialize, goes as itself).
            let own_init = seen.initialize.is_some();
            match reconnect(&setup, &replay, own_init).await {
                Some(link) => {
                    generation += 1;
                    conn = Some(start_reader(
                        link,
                        shared.clone(),
                        lost_tx.clone(),
                        generation,
                    ));
                    tracing::info!("reconnected to the archgate daemon");
                }
                None => {
                    let ids: Vec<String> = seen.requests.iter().map(|(k, _)| k.clone()).collect();
                    answer_unreachable(&shared, &setup, Some(&ids)).await;
                    tracing::warn!(
                        "no archgate daemon came back; exiting so the client starts archgate again"
                    );
                    return Ok(());
                }
            }
        }
        if let Some(w) = conn.as_mut()
            && w.write_all(&line).await.is_err()
        {
            // The reader sees the same end and reports it; this line's requests are in flight,
            // so they are answered with the rest.
            tracing::debug!("writing to the daemon failed");
        }
    }
    // The client closed stdin: the daemon sees the end too and withdraws this session's calls.
    if let Some(mut w) = conn {
        let _ = w.shutdown().await;
    }
    Ok(())
}

/// The client's lines (newline included), read by a thread of their own: a blocking read of
/// fd 0 wakes the pump directly, without tokio's blocking pool in between. Ends at the end of
/// input, a read error, or a line over 64 MiB.
fn stdin_lines() -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let spawned = std::thread::Builder::new()
        .name("archgate-stdin".into())
        .spawn(move || {
            use std::io::{BufRead, Read};
            let stdin = std::io::stdin();
            let mut r = stdin.lock();
            loop {
                let mut line = Vec::new();
                match (&mut r).take(MAX_LINE as u64).read_until(b'\n', &mut line) {
                    Ok(0) => return,
                    Ok(n) => {
                        if line.last() != Some(&b'\n') {
                            if n >= MAX_LINE {
                                tracing::warn!("the client sent a line of more than 64 MiB");
                                return;
                            }
                            line.push(b'\n');
                        }
                        if tx.blocking_send(line).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        tracing::warn!("reading the client's stdin failed: {e}");
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("no thread to read stdin: {e}");
    }
    rx
}

/// Spawns the daemon → client copier; returns the write half.
fn start_reader(
    link: Link,
    shared: Arc<Shared>,
    lost: mpsc::UnboundedSender<u64>,
    generation: u64,
) -> tokio::net::unix::OwnedWriteHalf {
    let Link {
        mut read, write, ..
    } = link;
    tokio::spawn(async move {
        let mut line = Vec::new();
        loop {
            line.clear();
            match read.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            {
                let ids = response_id(&line);
                if !ids.is_empty() {
                    let mut inflight = shared.inflight();
                    let mut answered = shared.answered.lock().unwrap_or_else(|p| p.into_inner());
                    for id in ids {
                        if let Some(Inflight {
                            tool: Some((tool, args)),
                            ..
                        }) = inflight.remove(&id)
                        {
                            answered.push(super::record::Answered::now(tool, &args));
                        }
                    }
                }
            }
            if shared.emit(&line).await.is_err() {
                break;
            }
        }
        let _ = lost.send(generation);
    });
    write
}

/// Connects again (waiting for a restart, or starting a daemon) and replays the session.
async fn reconnect(setup: &Setup, replay: &Replay, own_init: bool) -> Option<Link> {
    let mut link = match super::reach_patiently(&setup.paths, &setup.name, RECONNECT_PATIENCE).await
    {
        Ok(l) => l,
        Err(super::LinkError::Refused { kind, reason }) => {
            tracing::warn!("the restarted daemon refused this client ({kind}): {reason}");
            return None;
        }
        Err(_) => {
            if let Err(why) = super::spawn::start_daemon(None, &setup.paths).await {
                tracing::info!("no daemon to start: {why}");
                return None;
            }
            super::reach_patiently(&setup.paths, &setup.name, RECONNECT_PATIENCE)
                .await
                .ok()?
        }
    };
    if own_init {
        return Some(link);
    }
    if let Some((id, init)) = &replay.initialize {
        link.write.write_all(init).await.ok()?;
        let answered = async {
            let mut line = Vec::new();
            loop {
                line.clear();
                if link.read.read_until(b'\n', &mut line).await.ok()? == 0 {
                    return None;
                }
                if response_id(&line).iter().any(|r| r == id) {
                    return Some(());
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(5), answered)
            .await
            .ok()??;
        if let Some(done) = &replay.initialized {
            link.write.write_all(done).await.ok()?;
        }
    }
    Some(link)
}

/// Answers the client's unanswered requests (all of them, or those of `only`): each
/// `tools/call` with an `unreachable` result and one audit record, anything else with an error.
async fn answer_unreachable(shared: &Shared, setup: &Setup, only: Option<&[String]>) {
    let taken: Vec<(String, Inflight)> = {
        let mut inflight = shared.inflight();
        match only {
            None => inflight.drain().collect(),
            Some(ids) => ids
                .iter()
                .filter_map(|k| inflight.remove(k).map(|v| (k.clone(), v)))
                .collect(),
        }
    };
    if taken.is_empty() {
        return;
    }
    let calls: Vec<(String, Inflight)> = taken
        .iter()
        .filter(|(_, v)| v.tool.is_some())
        .cloned()
        .collect();
    let mut settled = std::collections::HashMap::new();
    if !calls.is_empty() {
        let (name, paths, audit) = (
            setup.name.clone(),
            setup.paths.clone(),
            setup.config.audit.clone(),
        );
        let only: Vec<Inflight> = calls.iter().map(|(_, v)| v.clone()).collect();
        let (answered, forgotten) = shared
            .answered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .snapshot();
        let fates = tokio::task::spawn_blocking(move || {
            super::record::settle(&name, &paths, &audit, &only, &answered, forgotten)
        })
        .await
        .unwrap_or_default();
        tracing::info!(
            "{} call(s) the daemon did not answer settled: {:?}",
            fates.len(),
            fates
        );
        for ((id, _), fate) in calls.iter().zip(fates) {
            settled.insert(id.clone(), fate);
        }
    }
    for (id, v) in taken {
        let result = match settled.get(&id) {
            Some(super::record::Fate::Unknown) => unknown_result(),
            Some(super::record::Fate::RecordedByDaemon(o)) => recorded_result(*o),
            _ => unreachable_result(),
        };
        let Ok(id) = serde_json::from_str::<Value>(&id) else {
            continue;
        };
        let answer = if v.tool.is_some() {
            json!({"jsonrpc": "2.0", "id": id, "result": result})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603,
                "message": format!("{}: the archgate daemon went away before it answered", v.method),
            }})
        };
        let _ = shared.emit(answer.to_string().as_bytes()).await;
    }
}

pub const UNREACHABLE_MESSAGE: &str = "the archgate daemon went away during this call, so its answer is lost; nothing that acts had started (a call waiting for the person's approval did not run)";
pub const UNKNOWN_MESSAGE: &str = "the archgate daemon went away while this call's work was running: it may have run, in part or whole; archgate does not know, and will not try it again for you";
pub const UNKNOWN_NEXT: &str = "check before calling again: look at what the call was to change (the window, the setting, the file), and ask the person to see `archgate log` — the call's record says `unknown` with its route and approval";
pub const UNREACHABLE_NEXT: &str = "call again in a moment (archgate reconnects to the restarted daemon); if it keeps failing, ask the person to check `archgate status`";

/// The `CallToolResult` of a call the daemon did not answer, shaped like the gate's refusals.
pub fn unreachable_result() -> Value {
    json!({
        "content": [{"type": "text", "text": format!("unreachable: {UNREACHABLE_MESSAGE}\nNext: {UNREACHABLE_NEXT}")}],
        "isError": true,
        "structuredContent": {
            "error": {"kind": "unreachable", "message": UNREACHABLE_MESSAGE, "next": UNREACHABLE_NEXT},
            "outcome": "unreachable",
        },
    })
}

/// The `CallToolResult` of a call the daemon recorded as ended (`outcome`) and then went away
/// before its answer left.
pub fn recorded_result(outcome: archgate_core::audit::Outcome) -> Value {
    let message = format!(
        "the archgate daemon recorded this call as ended ({outcome}) and went away before its answer left; the answer itself is lost"
    );
    let next = "do not call again blindly: ask the person to look at `archgate log` for this call, or check what it was to change";
    json!({
        "content": [{"type": "text", "text": format!("answer_lost: {message}\nNext: {next}")}],
        "isError": true,
        "structuredContent": {
            "error": {"kind": "answer_lost", "message": message, "next": next},
            "outcome": outcome.as_str(),
        },
    })
}

/// The `CallToolResult` of a call whose work had started when the daemon went away.
pub fn unknown_result() -> Value {
    json!({
        "content": [{"type": "text", "text": format!("unknown: {UNKNOWN_MESSAGE}\nNext: {UNKNOWN_NEXT}")}],
        "isError": true,
        "structuredContent": {
            "error": {"kind": "unknown", "message": UNKNOWN_MESSAGE, "next": UNKNOWN_NEXT},
            "outcome": "unknown",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pump_sees_calls_cancellations_and_the_handshake() {
        let s = inspect(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"system_status","arguments":{"a":1}}}"#,
        );
        assert_eq!(s.requests.len(), 1);
        assert_eq!(s.requests[0].0, "7");
        let (tool, args) = s.requests[0].1.tool.clone().unwrap();
        assert_eq!(tool, "system_status");
        assert_eq!(args, json!({"a": 1}));
        let s = inspect(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#,
        );
        assert_eq!(s.cancelled, vec!["\"x\"".to_owned()]);
        let s = inspect(br#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{}}"#);
        assert_eq!(s.initialize.as_deref(), Some("\"i\""));
        assert!(inspect(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).initialized);
        // A response of the client (to an elicitation) is not a request of its own.
        assert!(
            inspect(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#)
                .requests
                .is_empty()
        );
        // Not JSON: passes through, nothing seen.
        assert!(inspect(b"garbage").requests.is_empty());
        // A batch.
        let s = inspect(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#);
        assert_eq!(s.requests.len(), 2);
    }

    #[test]
    fn only_responses_close_a_request() {
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            vec!["7"]
        );
        assert_eq!(
            response_id(br#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":""}}"#),
            vec!["7"]
        );
        // A request from the daemon (elicitation) with the same id is not an answer.
        assert!(
            response_id(br#"{"jsonrpc":"2.0","id":7,"method":"elicitation/create"}"#).is_empty()
        );
    }
}

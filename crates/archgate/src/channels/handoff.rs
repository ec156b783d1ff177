//! The control socket's side of a hand-off: the helper in the person's terminal claims one,
//! says when its command starts and reports how it ended, all on one connection.
//!
//! After `handoff_claim` the connection belongs to that hand-off: each later line is a step
//! (`started`, then `done` with the outcome), waited for without the control socket's usual
//! per-line deadline (the person reads, types a password, pacman runs) but never past the
//! hand-off's own life. The connection closing before `done` is the terminal going away:
//! `cancelled` before `started`, `unknown` after. Each hand-off that ends here leaves one
//! `handoff` event in the activity log: the exact command, the channel archgate observed,
//! whether the claimant was verified, the outcome, exit status and duration.

use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use crate::app::App;
use crate::tools::handoff::registry::{Claim, Outcome};

/// One step after the claim.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    /// The person pressed Enter; the helper runs the command once this is answered `ok`.
    Started,
    /// How it ended.
    Done { outcome: Outcome },
}

/// The channels a helper may name: the terminal archgate opened, or `archgate handoff ID` in
/// the person's own terminal. The word is checked for shape only: the channel recorded is what
/// archgate observed of the claimant (`registry.rs`, attack 5b F2).
pub const CHANNELS: &[&str] = &["terminal", "own_terminal"];

/// Serves a claimed hand-off on the rest of the connection, reading lines of at most
/// `max_line` bytes (the control socket's limit). `peer`: the claimant's pid, from the socket's
/// peer credentials at connect time.
pub async fn serve<R, W>(
    app: Arc<App>,
    id: String,
    channel: String,
    peer: Option<u32>,
    max_line: u64,
    mut reader: R,
    mut write: W,
) where
    R: tokio::io::AsyncBufRead + Unpin,
    W: tokio::io::AsyncWrite + Unpin,
{
    if !CHANNELS.contains(&channel.as_str()) {
        let _ = reply(&mut write, refusal("malformed", "unknown channel")).await;
        return;
    }
    let claimant = peer.map(crate::tools::handoff::claimant::Claimant::read);
    let mut claim = match app.handoffs.claim(&id, claimant.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            let _ = reply(&mut write, refusal("not_found", &e.to_string())).await;
            return;
        }
    };
    let prepared = serde_json::to_value(claim.prepared()).unwrap_or(Value::Null);
    if reply(&mut write, json!({"ok": true, "handoff": prepared}))
        .await
        .is_err()
    {
        return end(&app, claim, None);
    }
    loop {
        let mut line = Vec::new();
        let n = (&mut reader)
            .take(max_line)
            .read_until(b'\n', &mut line)
            .await
            .unwrap_or(0);
        if n == 0 {
            return end(&app, claim, None);
        }
        match serde_json::from_slice::<Step>(&line) {
            Ok(Step::Started) => {
                let r = match claim.start() {
                    Ok(()) => json!({"ok": true}),
                    Err(e) => refusal(
                        "withdrawn",
                        &format!("{e}: its deadline passed; nothing may run"),
                    ),
                };
                if reply(&mut write, r).await.is_err() {
                    return end(&app, claim, None);
                }
            }
            Ok(Step::Done { outcome }) => {
                let _ = reply(&mut write, json!({"ok": true})).await;
                return end(&app, claim, Some(outcome));
            }
            Err(e) => {
                let _ = reply(
                    &mut write,
                    refusal("malformed", &format!("not a hand-off step: {e}")),
                )
                .await;
            }
        }
    }
}

/// Ends the claim (with the helper's report, or as the terminal going away) and records it.
fn end(app: &App, claim: Claim, reported: Option<Outcome>) {
    let prepared = claim.prepared().clone();
    let outcome = reported.unwrap_or_else(|| claim.abandoned());
    let ended = claim.finish(outcome);
    let mut event = json!({
        "event": "handoff",
        "id": prepared.id,
        "client": prepared.client,
        "route": prepared.route,
        "command": prepared.argv,
        "channel": ended.channel,
        // An end reported by a claimant archgate did not see in its terminal is not the
        // person's confirmation: recorded as such (attack 5b, F2).
        "verified": ended.verified,
    });
    if let (Some(o), Ok(Value::Object(v))) =
        (event.as_object_mut(), serde_json::to_value(&ended.outcome))
    {
        for (k, v) in v {
            // The output's tail stays with the agent's answer; the record keeps its size.
            if k == "tail" {
                o.insert("tail_bytes".into(), v.as_str().map_or(0, str::len).into());
            } else {
                o.insert(k, v);
            }
        }
    }
    app.gate.audit().event(&event);
}

fn refusal(kind: &str, reason: &str) -> Value {
    json!({"ok": false, "error": kind, "reason": reason})
}

async fn reply<W: tokio::io::AsyncWrite + Unpin>(w: &mut W, v: Value) -> std::io::Result<()> {
    w.write_all(format!("{v}\n").as_bytes()).await?;
    w.flush().await
}

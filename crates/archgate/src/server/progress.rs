//! Progress while a call runs: MCP clients give up on a request after their own timeout (60 s
//! in the TypeScript SDK and Claude Code), unless progress resets it. A call that waits for the
//! person can take up to `approval.timeout_s`; when the request carries a `progressToken`, a
//! `notifications/progress` goes out every `EVERY` until the call ends, so such a client hears
//! archgate's answer ("declined" when the person stayed silent) rather than its own timeout.
//!
//! The ticker runs beside the gate call in the MCP layer; the gate knows nothing of it.

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use std::future::Future;
use std::time::Duration;

/// How often progress goes out while a call runs.
pub const EVERY: Duration = Duration::from_secs(5);

/// How long one notification may take to hand over before the tick is skipped (a slow or gone
/// client never holds the call up).
const SEND_WITHIN: Duration = Duration::from_secs(1);

/// Runs `call` to its end; with a token, sends progress every `EVERY` meanwhile.
pub async fn while_running<F: Future>(
    call: F,
    token: Option<ProgressToken>,
    peer: &Peer<RoleServer>,
) -> F::Output {
    let Some(token) = token else {
        return call.await;
    };
    tokio::pin!(call);
    let started = tokio::time::Instant::now();
    let mut tick = tokio::time::interval_at(started + EVERY, EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n: u32 = 0;
    loop {
        tokio::select! {
            r = &mut call => return r,
            _ = tick.tick() => {
                n += 1;
                let secs = started.elapsed().as_secs();
                let note = ProgressNotificationParam::new(token.clone(), f64::from(n))
                    .with_message(format!("still running after {secs} s (a call that asks the person waits at most approval.timeout_s; a hand-off waits for the person in their terminal at most tools.timeouts.handoff)"));
                match tokio::time::timeout(SEND_WITHIN, peer.notify_progress(note)).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::debug!("progress not sent: {e}"),
                    Err(_) => tracing::debug!("progress not sent within {SEND_WITHIN:?}"),
                }
            }
        }
    }
}

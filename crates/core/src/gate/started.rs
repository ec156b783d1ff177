//! A call's `started` line: before an act or destructive call's work begins, the gate writes
//! one event naming it — route, target, tier, how it was approved — and waits until it is in
//! the file. So a daemon killed while the work runs leaves the evidence on disk, and whoever
//! finds the call unanswered (the stdio bridge, the next daemon: `audit::orphans`) says
//! **unknown**, never "did not run". A call the person was asked about has one too, whatever
//! its tier (their yes is on disk before the work). Other reads have no such line: they change
//! nothing, and the hot path stays one write per call.
//!
//! A `started` line is an event, not a call record: the call's one record follows when it ends
//! (its outcome `unknown` when it was dropped after this line, `record.rs`).

use archgate_policy::{Decision, Tier};
use serde_json::{Value, json};

use super::record::{Pending, Trace, approval_record};
use super::refusal::{Kind, Refusal};
use super::{Call, Gate};
use crate::audit::Outcome;
use crate::tool::Action;

/// Whether a call of this decision writes a `started` line before its work.
pub(super) fn needs_start_line(decision: &Decision) -> bool {
    matches!(decision.tier, Tier::Act | Tier::Destructive)
}

impl Gate {
    /// Writes the call's `started` line and marks the trace, before `execute`; refuses the call
    /// when the line cannot be written (a change whose start could not be recorded would be
    /// invisible after a crash).
    pub(super) fn mark_started(
        &self,
        call: &Call<'_>,
        pending: &mut Pending<'_>,
        action: &Action,
        decision: &Decision,
    ) -> Result<(), Refusal> {
        // The request ended before act work started (`detach.rs`): nothing starts.
        if needs_start_line(decision) && !super::detach::may_start() {
            return Err(Refusal::new(
                Outcome::Unreachable,
                Kind::Unreachable,
                "the request ended before this call's work started; nothing ran",
            ));
        }
        // A call the person was asked about has a line too, whatever its tier: a killed daemon's
        // call that was approved and running is then `unknown`, never "withdrawn, nothing ran"
        // (attack 6 F4: an asked read-tier task's yes was lost).
        if !needs_start_line(decision) && pending.trace.approval.is_none() {
            return Ok(());
        }
        let line = start_line(
            call,
            &pending.trace,
            pending.args_sha256(),
            action,
            decision,
        );
        if !self.audit.event_now(&line) {
            return Err(Refusal::new(
                Outcome::Refused,
                Kind::Refused,
                "the activity log could not be written, so this call's start would leave no trace if archgate stopped while it ran; nothing ran",
            )
            .next("check the disk and the log's directory (`archgate doctor`), then call again"));
        }
        pending.trace.started = true;
        Ok(())
    }
}

fn start_line(
    call: &Call<'_>,
    trace: &Trace,
    args_sha256: &str,
    action: &Action,
    decision: &Decision,
) -> Value {
    let (pid, pid_start) = crate::audit::orphans::this_process();
    let mut line = json!({
        "event": "started",
        "id": call.id,
        "client": call.client.name,
        "transport": call.client.transport.as_str(),
        "tool": call.tool,
        "route": action.route,
        "target": action.summary(),
        "tier": decision.tier.to_string(),
        "decision": decision.verdict.to_string(),
        "approval": trace.approval.clone().map(approval_record),
        "dev_mode": trace.dev_mode,
        "args_sha256": args_sha256,
        "pid": pid,
        "pid_start": pid_start,
    });
    // The task the call runs as, if any: the `unknown` record after a restart names it.
    if let Some(task) = super::task::current().and_then(|w| w.task_id()) {
        line["task"] = Value::String(task);
    }
    line
}

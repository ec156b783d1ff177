//! A call's `asking` line: before the gate puts a call's question to the person, it writes one
//! event naming the call — as a `started` line names a call whose work begins (`started.rs`).
//! A daemon killed (SIGKILL, a crash) while the question waits can write no record of its own;
//! whoever finds the line unanswered (the next daemon at its start, a stdio bridge whose daemon
//! died: `audit::orphans`) writes the call's one record: `unreachable`, the question withdrawn
//! with the daemon, and nothing that acts ran — an act's work always writes its `started` line
//! first, and a call with one is recorded `unknown` instead.
//!
//! Class: *a call whose end nobody recorded* — the `started` line covers a run, this line a
//! wait. A stopped (SIGTERM) daemon records its waiting questions itself, as `unreachable`.

use serde_json::{Value, json};

use super::ask::Ask;
use super::record::Trace;
use super::refusal::{Kind, Refusal};
use super::{Call, Gate};
use crate::audit::Outcome;

impl Gate {
    /// Writes the call's `asking` line before its question goes out; a line that cannot be
    /// written refuses the call before anyone is asked (attack 33 F1: the question went out,
    /// and the person was asked about a call the log could not hold).
    pub(super) fn mark_asking(
        &self,
        call: &Call<'_>,
        trace: &Trace,
        a: &Ask<'_>,
    ) -> Result<(), Refusal> {
        if self.audit.event_now(&asking_line(call, trace, a)) {
            return Ok(());
        }
        Err(Refusal::new(
            Outcome::Refused,
            Kind::Refused,
            "the activity log could not be written, so this call's question would leave no trace if archgate stopped while it waited; nobody was asked and nothing ran",
        )
        .next("the person checks the disk and the log's directory (`archgate doctor`), then call again"))
    }
}

fn asking_line(call: &Call<'_>, trace: &Trace, a: &Ask<'_>) -> Value {
    let (pid, pid_start) = crate::audit::orphans::this_process();
    let mut line = json!({
        "event": "asking",
        "id": call.id,
        "client": call.client.name,
        "transport": call.client.transport.as_str(),
        "tool": call.tool,
        "route": a.route,
        "target": trace.target,
        "tier": a.tier.to_string(),
        "decision": trace.decision.as_ref().map(|d| d.verdict.to_string()),
        "dev_mode": trace.dev_mode,
        "args_sha256": call.args_sha256,
        "pid": pid,
        "pid_start": pid_start,
    });
    if let Some(task) = super::task::current().and_then(|w| w.task_id()) {
        line["task"] = Value::String(task);
    }
    line
}

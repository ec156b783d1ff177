//! The call's audit record. The stages leave typed results in a `Trace` (the route, the target,
//! the decision, the approval); the record is built once from it and from how the call ended,
//! when the call finishes — or when `Pending` is dropped unfinished (a panic, the client gone
//! mid-approval), so every call leaves exactly one record (a flood of budget refusals is
//! summarised instead, `flood.rs`).

use archgate_policy::Decision;
use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::flood::Fold;
use super::refusal::Refusal;
use super::{Client, Gate};
use crate::approval::ApprovalOutcome;
use crate::audit::{ApprovalRecord, Outcome, ProvenanceRecord, Record, args_digest, recorded_args};
use crate::tool::{Action, ToolOutput};

/// How approval went, when it was considered.
#[derive(Debug, Clone)]
pub(super) enum Approval {
    /// Approved without asking: developer mode, or the standing rule with this id.
    DeveloperMode,
    StandingRule(String),
    /// The person (or a relay) answered, or nobody did; `rule_id`: the rule "Always…" created.
    Settled {
        outcome: ApprovalOutcome,
        rule_id: Option<String>,
    },
    /// A trusted relay was handed the question (`input_required`).
    Relayed,
    /// No question could be asked (nag guard, no channel could park it).
    Unsupported,
}

/// What the stages settled, typed, for the record.
#[derive(Debug, Default)]
pub(super) struct Trace {
    pub route: Option<String>,
    /// The resolved target, as shown to the person.
    pub target: Option<String>,
    pub decision: Option<Decision>,
    pub approval: Option<Approval>,
    pub dev_mode: bool,
    /// A question is out: a call dropped now was abandoned while asking.
    pub asking: bool,
    /// The call's `started` line is in the log (`started.rs`): its work may have begun, so a call
    /// dropped now ended `unknown`.
    pub started: bool,
    /// The answer carried untrusted text from this source (`untrusted.rs`).
    pub read: Option<crate::provenance::Source>,
    /// The act call came within the window after the session read untrusted text.
    pub follows: Option<crate::untrusted::Follows>,
}

impl Trace {
    /// What resolution settled (before and after its programs are pinned).
    pub(super) fn resolved(&mut self, action: &Action) {
        self.route = Some(action.route.clone());
        self.target = Some(action.summary());
    }
}

/// What the record knows before any stage ran.
struct Opened {
    time: String,
    id: String,
    client: String,
    agent: Option<String>,
    transport: &'static str,
    tool: String,
    args_sha256: String,
    args: Value,
    started: Instant,
}

/// The call in flight. Writes its record when dropped if `finish` did not.
pub(super) struct Pending<'g> {
    gate: &'g Gate,
    opened: Opened,
    pub(super) trace: Trace,
    done: bool,
    /// The transport's task hook, when the call may become a task (`task.rs`): the record says
    /// whether it did.
    waits: Option<std::sync::Arc<dyn super::task::Waits>>,
}

impl<'g> Pending<'g> {
    pub(super) fn open(
        gate: &'g Gate,
        id: &str,
        client: &Client,
        tool: &str,
        args: &Value,
        private: &[&str],
    ) -> Pending<'g> {
        gate.in_flight.fetch_add(1, Ordering::SeqCst);
        Pending {
            gate,
            opened: Opened {
                time: crate::clock::rfc3339(gate.clock.now()),
                id: id.to_owned(),
                client: client.name.clone(),
                agent: client.agent.clone(),
                transport: client.transport.as_str(),
                tool: tool.to_owned(),
                args_sha256: args_digest(args),
                args: recorded_args(args, private),
                started: Instant::now(),
            },
            trace: Trace::default(),
            done: false,
            waits: super::task::current(),
        }
    }

    /// The call's argument digest, as its record will hold it.
    pub(super) fn args_sha256(&self) -> &str {
        &self.opened.args_sha256
    }

    /// The call ended with `result`: its record is built and handed to the log; its outcome
    /// returned, with where the log left the record.
    pub(super) fn finish(
        mut self,
        result: &Result<ToolOutput, Refusal>,
    ) -> (Outcome, crate::audit::Handed) {
        let outcome = match result {
            Ok(_) => Outcome::Ok,
            Err(r) => r.outcome,
        };
        let record = self.record(outcome, result.as_ref().err(), result.as_ref().ok());
        (outcome, self.write(record))
    }

    /// The one place a record is put together.
    fn record(
        &mut self,
        outcome: Outcome,
        refusal: Option<&Refusal>,
        output: Option<&ToolOutput>,
    ) -> Record {
        // Built once (by `finish` or by the drop), so what the record holds is moved, not copied.
        let o = &mut self.opened;
        let t = std::mem::take(&mut self.trace);
        let (tier, decision, reason, rule) = match &t.decision {
            Some(d) => (
                Some(d.tier.to_string()),
                Some(d.verdict.to_string()),
                Some(d.reason.to_string()),
                d.rule.clone(),
            ),
            None => (None, None, None, None),
        };
        Record {
            time: std::mem::take(&mut o.time),
            id: std::mem::take(&mut o.id),
            client: std::mem::take(&mut o.client),
            agent: o.agent.take(),
            transport: o.transport.to_owned(),
            tool: std::mem::take(&mut o.tool),
            route: t.route,
            target: t.target,
            tier,
            decision,
            reason: reason.or_else(|| refusal.map(|r| r.message.clone())),
            rule,
            approval: t.approval.map(approval_record),
            outcome,
            error_kind: refusal.map(|r| r.kind.as_str().to_owned()),
            exit_code: output.and_then(|o| o.exit_code),
            duration_ms: o.started.elapsed().as_millis() as u64,
            args_sha256: std::mem::take(&mut o.args_sha256),
            args: std::mem::take(&mut o.args),
            dev_mode: t.dev_mode,
            provenance: provenance_record(t.read, t.follows),
            task: self.waits.as_ref().and_then(|w| w.task_id()),
        }
    }

    fn write(&mut self, record: Record) -> crate::audit::Handed {
        let gate = self.gate;
        // A flood of budget refusals is summarised (`flood.rs`); everything else is recorded.
        let now = gate.clock.now_secs();
        let write = if record.outcome == Outcome::BudgetExhausted {
            match gate.floods.refused(&record.client, &record.transport, now) {
                Fold::Record(before) => {
                    if let Some(s) = before {
                        gate.audit.event(&s);
                    }
                    true
                }
                Fold::Folded(count) => {
                    // The count so far, on disk as it grows (a killed daemon keeps it).
                    if let Some(c) = count {
                        gate.audit.event(&c);
                    }
                    false
                }
            }
        } else {
            if let Some(s) = gate.floods.ended(&record.client, &record.transport) {
                gate.audit.event(&s);
            }
            true
        };
        // A refusal folded into a flood's count has no line of its own (`flood.rs`).
        let handed = if write {
            gate.audit.record(&record)
        } else {
            crate::audit::Handed::Written
        };
        gate.counters
            .bump(&record.client, &record.tool, record.outcome);
        if let Some(o) = &gate.observer {
            o(&record);
        }
        self.done = true;
        gate.in_flight.fetch_sub(1, Ordering::SeqCst);
        handed
    }
}

/// What the record says of untrusted text: what this call read, what it followed.
fn provenance_record(
    read: Option<crate::provenance::Source>,
    follows: Option<crate::untrusted::Follows>,
) -> Option<ProvenanceRecord> {
    if read.is_none() && follows.is_none() {
        return None;
    }
    let (after, after_s) = match follows {
        Some(f) => (Some(f.label), Some(f.age_s)),
        None => (None, None),
    };
    Some(ProvenanceRecord {
        read: read.map(|s| s.as_str().to_owned()),
        after,
        after_s,
    })
}

pub(super) fn approval_record(a: Approval) -> ApprovalRecord {
    let (outcome, channel, rule_id) = match a {
        Approval::DeveloperMode => ("auto".into(), Some("developer_mode".into()), None),
        Approval::StandingRule(id) => ("auto".into(), Some("standing_rule".into()), Some(id)),
        Approval::Settled { outcome, rule_id } => (
            outcome.name().to_owned(),
            outcome.channel().map(str::to_owned),
            rule_id,
        ),
        Approval::Relayed => ("input_required".into(), Some("client".into()), None),
        Approval::Unsupported => ("unsupported".into(), None, None),
    };
    ApprovalRecord {
        outcome,
        channel,
        rule_id,
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = if std::thread::panicking() {
                Outcome::Panicked
            } else if self.trace.started {
                // Dropped mid-run (the client went away): the work may have happened.
                Outcome::Unknown
            } else {
                Outcome::Unreachable
            };
            if self.trace.asking {
                self.trace.approval = Some(Approval::Settled {
                    outcome: ApprovalOutcome::Unreachable,
                    rule_id: None,
                });
            }
            let record = self.record(outcome, None, None);
            let _ = self.write(record);
        }
    }
}

//! The call's audit record under construction: `Pending` writes it when the call finishes, and
//! when dropped unfinished (a panic, the client gone mid-approval), so every call leaves exactly
//! one record.

use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::flood::{Floods, Fold};
use super::{Client, Gate};
use crate::audit::{
    ApprovalRecord, Outcome, Record, args_digest, now_rfc3339, redact, truncate_args,
};
use archgate_policy::Decision;

/// The record under construction. Writes itself when dropped if `finish` did not.
pub(super) struct Pending<'g> {
    gate: &'g Gate,
    pub(super) r: Record,
    started: Instant,
    pub(super) asking: bool,
    done: bool,
}

impl<'g> Pending<'g> {
    pub(super) fn new(
        gate: &'g Gate,
        id: &str,
        client: &Client,
        tool: &str,
        args: &Value,
        private: &[&str],
    ) -> Pending<'g> {
        let recorded = truncate_args(&redact(args, private));
        gate.in_flight.fetch_add(1, Ordering::SeqCst);
        Pending {
            gate,
            r: Record {
                time: now_rfc3339(),
                id: id.to_owned(),
                client: client.name.clone(),
                tool: tool.to_owned(),
                route: None,
                target: None,
                tier: None,
                decision: None,
                reason: None,
                rule: None,
                approval: None,
                outcome: Outcome::Unreachable,
                error_kind: None,
                exit_code: None,
                duration_ms: 0,
                args_sha256: args_digest(args),
                args: recorded,
                dev_mode: false,
            },
            started: Instant::now(),
            asking: false,
            done: false,
        }
    }

    pub(super) fn decision(&mut self, d: &Decision) {
        self.r.tier = Some(d.tier.to_string());
        self.r.decision = Some(d.verdict.to_string());
        self.r.reason = Some(d.reason.to_string());
        self.r.rule = d.rule.clone();
    }

    pub(super) fn finish(&mut self, outcome: Outcome) {
        self.r.outcome = outcome;
        self.r.duration_ms = self.started.elapsed().as_millis() as u64;
        // A flood of budget refusals is summarised (`flood.rs`); everything else is recorded.
        let write = if outcome == Outcome::BudgetExhausted {
            match self.gate.floods.refused(&self.r.client, Floods::now()) {
                Fold::Record(before) => {
                    if let Some(s) = before {
                        self.gate.audit.event(&s);
                    }
                    true
                }
                Fold::Folded => false,
            }
        } else {
            if let Some(s) = self.gate.floods.ended(&self.r.client) {
                self.gate.audit.event(&s);
            }
            true
        };
        if write {
            self.gate.audit.record(&self.r);
        }
        self.gate
            .counters
            .bump(&self.r.client, &self.r.tool, outcome);
        if let Some(o) = &self.gate.observer {
            o(&self.r);
        }
        self.done = true;
        self.gate.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            let outcome = if std::thread::panicking() {
                Outcome::Panicked
            } else {
                Outcome::Unreachable
            };
            if self.asking {
                self.r.approval = Some(ApprovalRecord {
                    outcome: "unreachable".into(),
                    channel: None,
                    rule_id: None,
                });
            }
            self.finish(outcome);
        }
    }
}

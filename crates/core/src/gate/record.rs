//! The call's audit record under construction: `Pending` writes it when the call finishes, and
//! when dropped unfinished (a panic, the client gone mid-approval), so every call leaves exactly
//! one record.

use serde_json::Value;
use std::sync::atomic::Ordering;
use std::time::Instant;

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
                tool: bounded_name(tool),
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
        self.gate.audit.record(&self.r);
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

/// Longest tool name kept whole in a record; a longer one (no tool has one) is cut and keeps
/// its digest, so a flood of huge unknown names cannot fill the log.
pub(super) const MAX_NAME: usize = 128;

/// `name`, or its first `MAX_NAME` bytes and the sha256 of the whole.
pub(super) fn bounded_name(name: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_owned();
    }
    let mut cut = MAX_NAME;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    use sha2::{Digest, Sha256};
    format!(
        "{}…[{} bytes, sha256 {}]",
        &name[..cut],
        name.len(),
        hex::encode(Sha256::digest(name.as_bytes()))
    )
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

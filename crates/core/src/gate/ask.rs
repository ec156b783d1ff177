//! Asking the person: the nag guard and the question budget, the broker (every channel at once,
//! plus the calling client when the person trusts it to relay), and what each outcome tells the
//! agent.
//!
//! A client the person marked `trusted_relay = true` is one more channel, in one of two ways.
//! On the handshake era it is asked while the call waits (MCP elicitation: `Relay::Live`). On the
//! stateless era a request cannot wait on its client, so the call ends `input_required` with a
//! ticket — the question stays parked on every other channel under its deadline — and the
//! client's next request (the same call, the person's answer, the ticket) settles it
//! (`Relay::Resume`). A ticket belongs to one client and one exact call (tool, route, resolved
//! command, arguments), and is used at most once. Whatever answers first wins, as always.

use archgate_policy::{Budget, Tier};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

use super::record::{Approval, Trace};
use super::refusal::{Details, InputRequired, Kind, Refusal};
use super::{Call, Client, Gate};
use crate::approval::{Answer, ApprovalOutcome, Broker, Channel, Question};
use crate::audit::{Outcome, args_digest};
use crate::clock::Clock;
use crate::config::Config;
use crate::person::PersonState;

/// How long a settled ticket waits for its client to come back before it is forgotten.
const KEEP_SETTLED: Duration = Duration::from_secs(120);

/// The calling client as a channel to the person, for this call.
#[derive(Clone, Default)]
pub enum Relay {
    /// The person's own channels only.
    #[default]
    None,
    /// The client is asked while the call waits (handshake-era elicitation).
    Live(Arc<dyn Channel>),
    /// The client answers between requests (input-required, 2026-07-28): `ticket` is `None` on
    /// the first request, and the ticket it was given, with the person's answer, on the next.
    Resume {
        ticket: Option<String>,
        answer: Option<Answer>,
    },
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Relay::None => f.write_str("None"),
            Relay::Live(c) => write!(f, "Live({})", c.name()),
            Relay::Resume { ticket, answer } => f
                .debug_struct("Resume")
                .field("ticket", ticket)
                .field("answer", answer)
                .finish(),
        }
    }
}

/// What a question ended with, and the standing rule an "Always…" created.
#[derive(Debug, Clone)]
struct Settled {
    outcome: ApprovalOutcome,
    rule_id: Option<String>,
}

/// A question handed to a relaying client, waiting for it to come back.
pub(super) struct Ticket {
    client: String,
    tool: String,
    route: String,
    summary: String,
    fingerprint: String,
    args_sha256: String,
    /// The files the question was asked about (programs, argument files), as pinned then: the
    /// call the client brings back is judged again, and runs only if it pins the same files.
    pins: Pins,
    settled: watch::Receiver<Option<Settled>>,
}

/// The pinned files of an action: its programs (with their interpreters) and argument files.
pub(super) type Pins = (Vec<archgate_exec::ProgramPin>, Vec<archgate_exec::FilePin>);

pub(super) type Tickets = Arc<Mutex<HashMap<String, Ticket>>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The relaying client's place among a ticket's channels: it is not reached while the question
/// is parked (it is between requests), it answers through `Broker::answer` when it comes back.
struct Deferred;

impl Channel for Deferred {
    fn name(&self) -> &'static str {
        "client"
    }
    fn ask(&self, _q: &Question, _broker: Broker) {}
    fn withdraw(&self, _id: &str) {}
}

/// The call that needs asking.
pub(super) struct Ask<'a> {
    pub config: &'a Config,
    pub client: &'a Client,
    pub tool: &'a str,
    pub route: &'a str,
    pub summary: &'a str,
    /// The question in one sentence (`crate::sentence`).
    pub sentence: crate::sentence::Sentence,
    /// What the question can show drawn.
    pub picture: Option<crate::picture::Picture>,
    /// The resolved action's fingerprint: a standing rule made from the answer covers this
    /// exact action only, a relay's ticket this exact call only.
    pub fingerprint: &'a str,
    /// The files the question is about, pinned: a ticket's call runs only on the same files.
    pub pins: Pins,
    pub tier: Tier,
    pub canonical: &'a Value,
    pub budget: &'a Budget,
    /// Whether "Always…" may be offered (false for always-ask tools).
    pub rule_allowed: bool,
    /// What the session read just before, when the call follows untrusted text.
    pub follows: Option<&'a crate::untrusted::Follows>,
}

impl Gate {
    /// Asks the person (and a trusted relay) and returns `Ok` only when the call may run.
    pub(super) async fn ask_person(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        a: Ask<'_>,
    ) -> Result<(), Refusal> {
        let relay = call.relay;
        // Whether this client may relay is the person's word, read from this call's snapshot.
        let trusted = a
            .config
            .clients
            .get(&a.client.name)
            .is_some_and(|c| c.trusted_relay);
        // A client cannot show the person's presence: where a yes to this call must be confirmed
        // through polkit, the client is not asked at all and the person answers on their own
        // channels.
        let needs_presence = !matches!(
            crate::presence::need(
                a.config.approval.presence,
                crate::presence::Act::Allow(a.tier)
            ),
            crate::presence::Need::Nothing
        );
        let relay = if trusted && !needs_presence {
            relay
        } else {
            &Relay::None
        };
        let settled = match relay {
            Relay::Resume {
                ticket: Some(t),
                answer,
            } => self.resume(trace, &a, t, *answer).await?,
            _ => {
                // A call its transport may make a task (`task.rs`) becomes one now, and its
                // question waits the task's deadline: no request is held open.
                let timeout = match super::task::current().map(|w| w.must_wait(call.id)) {
                    Some(Ok(Some(d))) => d,
                    Some(Ok(None)) | None => a.config.approval.timeout,
                    Some(Err(message)) => {
                        return Err(Refusal::new(
                            Outcome::Refused,
                            Kind::TooManyTasks,
                            message,
                        )
                        .next("wait for one of your tasks to finish (tasks/get) or cancel one (tasks/cancel), then call again"));
                    }
                };
                let q = self.question(call, trace, &a, timeout)?;
                let live = match relay {
                    Relay::Resume { .. } => return Err(self.issue_ticket(trace, &a, q)),
                    Relay::Live(c) => Some(c.clone()),
                    Relay::None => None,
                };
                // On disk before anyone is asked: a daemon killed while it waits leaves the
                // call's trace (`asking.rs`).
                self.mark_asking(call, trace, &a)?;
                trace.asking = true;
                let outcome = self.broker.ask_via(q, timeout, live).await;
                trace.asking = false;
                if let Some(w) = super::task::current() {
                    w.answered();
                }
                let rule_id =
                    OwnedAsk::of(&a).after_answer(&self.person, &*self.clock, &outcome, call.id);
                Settled { outcome, rule_id }
            }
        };
        let refused = refusal(&settled.outcome, &a);
        trace.approval = Some(Approval::Settled {
            outcome: settled.outcome,
            rule_id: settled.rule_id,
        });
        refused.map_or(Ok(()), Err)
    }

    /// The question for this call, once the nag guard and the question budget allow one.
    fn question(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        a: &Ask<'_>,
        timeout: Duration,
    ) -> Result<Question, Refusal> {
        let now = self.clock.now_secs();
        if let Err(e) = self.person.nag_may_ask(
            &a.client.name,
            a.route,
            now,
            a.config.approval.max_questions,
        ) {
            trace.approval = Some(Approval::Unsupported);
            return Err(
                Refusal::new(Outcome::Unsupported, Kind::Unsupported, e.to_string())
                    .next("do not ask again now; tell the person in chat what you wanted to do"),
            );
        }
        if let Err(e) = self.person.charge_question(&a.client.name, a.budget, now) {
            return Err(Refusal::budget_exhausted(e));
        }
        Ok(Question {
            id: call.id.to_owned(),
            client: a.client.name.clone(),
            token: a.client.token,
            agent: a.client.agent.clone(),
            tool: a.tool.to_owned(),
            route: a.route.to_owned(),
            summary: a.summary.to_owned(),
            sentence: a.sentence.clone(),
            picture: a.picture.clone(),
            tier: a.tier,
            // The person sees every argument whole (clipboard text included); the audit record
            // keeps its truncation and redaction.
            args: a.canonical.clone(),
            created: now,
            deadline: now + timeout.as_secs(),
            rule_allowed: a.rule_allowed,
            follows: a.follows.cloned().map(Box::new),
        })
    }

    /// Parks `q` on the person's channels without a waiter in this request, and answers the
    /// client `input_required` with the ticket to come back with.
    fn issue_ticket(&self, trace: &mut Trace, a: &Ask<'_>, q: Question) -> Refusal {
        let id = q.id.clone();
        let (tx, rx) = watch::channel(None);
        lock(&self.tickets).insert(
            id.clone(),
            Ticket {
                client: a.client.name.clone(),
                tool: a.tool.to_owned(),
                route: a.route.to_owned(),
                summary: a.summary.to_owned(),
                fingerprint: a.fingerprint.to_owned(),
                args_sha256: args_digest(a.canonical),
                pins: a.pins.clone(),
                settled: rx,
            },
        );
        let asked = InputRequired {
            ticket: id.clone(),
            client: q.client.clone(),
            tool: q.tool.clone(),
            command: q.summary.clone(),
            tier: q.tier,
            deadline: q.deadline,
            follows: q.follows.as_ref().map(|f| f.sentence.clone()),
        };
        let (broker, person, tickets, clock) = (
            self.broker.clone(),
            self.person.clone(),
            self.tickets.clone(),
            self.clock.clone(),
        );
        let timeout = a.config.approval.timeout;
        let owned = OwnedAsk::of(a);
        // Parked before this request answers, so the client's next request finds it.
        let parked = match broker.park(q, timeout, Some(Arc::new(Deferred))) {
            Ok(p) => p,
            Err(e) => {
                lock(&self.tickets).remove(&id);
                trace.approval = Some(Approval::Unsupported);
                return Refusal::new(Outcome::Unsupported, Kind::Unsupported, e.to_string());
            }
        };
        let ticket = id.clone();
        tokio::spawn(async move {
            let outcome = parked.wait().await;
            let rule_id = owned.after_answer(&person, &*clock, &outcome, &ticket);
            let _ = tx.send(Some(Settled { outcome, rule_id }));
            // The client may still be on its way back; then nothing more is kept.
            tokio::time::sleep(KEEP_SETTLED).await;
            lock(&tickets).remove(&ticket);
        });
        trace.approval = Some(Approval::Relayed);
        Refusal::new(
            Outcome::InputRequired,
            Kind::InputRequired,
            format!("this call needs the person's yes: {}", a.summary),
        )
        .next("ask the person, then call again with their answer and this ticket")
        .details(Details::Ticket(asked))
    }

    /// The client came back with `ticket` (and maybe the person's answer): the ticket must be
    /// this client's, for this exact call; then its question's outcome is this call's.
    async fn resume(
        &self,
        trace: &mut Trace,
        a: &Ask<'_>,
        ticket: &str,
        answer: Option<Answer>,
    ) -> Result<Settled, Refusal> {
        let unknown = || {
            Refusal::new(
                Outcome::Refused,
                Kind::TicketUnknown,
                format!("no approval is waiting under ticket {ticket:?}: it was used, expired, or never issued to this client"),
            )
            .next("call again without the ticket to ask the person anew")
        };
        let taken = {
            let mut m = lock(&self.tickets);
            let t = m
                .get(ticket)
                .filter(|t| t.client == a.client.name)
                .ok_or_else(unknown)?;
            if t.tool != a.tool
                || t.route != a.route
                || t.summary != a.summary
                || t.fingerprint != a.fingerprint
                || t.args_sha256 != args_digest(a.canonical)
            {
                return Err(Refusal::new(
                    Outcome::Refused,
                    Kind::TicketMismatch,
                    format!(
                        "ticket {ticket:?} was issued for a different call ({}: {}), not this one ({}: {})",
                        t.tool, t.summary, a.tool, a.summary
                    ),
                )
                .next("repeat exactly the call the ticket was issued for, or call again without it"));
            }
            if t.pins != a.pins {
                // The same words, other files: what the person was asked about is not what
                // would run. The question stays parked; its deadline ends it.
                return Err(Refusal::of_tool(
                    Outcome::Refused,
                    crate::tool::ToolError::new(
                        crate::tool::ErrorKind::ChangedSinceApproval,
                        format!(
                            "a file ticket {ticket:?} was asked about changed since the question ({})",
                            a.summary
                        ),
                    )
                    .next(crate::tool::CHANGED_NEXT),
                ));
            }
            m.remove(ticket).ok_or_else(unknown)?
        };
        if let Some(answer) = answer {
            // A relay never creates standing rules: only the person does, on their own channels.
            let answer = if answer == Answer::AllowAlways {
                Answer::Allow
            } else {
                answer
            };
            // Already decided elsewhere, or too late: then that decision stands.
            let _ = self.broker.answer(ticket, answer, "client");
        }
        trace.asking = true;
        let mut rx = taken.settled;
        let settled = match rx.wait_for(Option::is_some).await {
            Ok(s) => s.clone().unwrap_or(Settled {
                outcome: ApprovalOutcome::Unreachable,
                rule_id: None,
            }),
            Err(_) => Settled {
                outcome: ApprovalOutcome::Unreachable,
                rule_id: None,
            },
        };
        trace.asking = false;
        Ok(settled)
    }
}

/// What settling an answer needs of the call (kept past the request for a ticket).
struct OwnedAsk {
    client: String,
    tool: String,
    route: String,
    fingerprint: String,
    canonical: Value,
    rule_allowed: bool,
}

impl OwnedAsk {
    fn of(a: &Ask<'_>) -> OwnedAsk {
        OwnedAsk {
            client: a.client.name.clone(),
            tool: a.tool.to_owned(),
            route: a.route.to_owned(),
            fingerprint: a.fingerprint.to_owned(),
            canonical: a.canonical.clone(),
            rule_allowed: a.rule_allowed,
        }
    }

    /// What an answer changes for the person: the nag guard learns of it, and "Always…" creates
    /// the standing rule (returned by id).
    fn after_answer(
        &self,
        person: &PersonState,
        clock: &dyn Clock,
        o: &ApprovalOutcome,
        id: &str,
    ) -> Option<String> {
        let now = clock.now_secs();
        match o {
            ApprovalOutcome::Accepted { always, .. } => {
                person.nag_approved(&self.client, &self.route);
                if !(*always && self.rule_allowed) {
                    return None;
                }
                let rule = archgate_policy::NewRule {
                    id: format!("r-{id}"),
                    client: self.client.clone(),
                    tool: self.tool.clone(),
                    route: self.route.clone(),
                    command: self.fingerprint.clone(),
                    args: archgate_policy::ArgPattern::exact(self.canonical.clone()),
                    ttl: None,
                    max_uses_per_day: None,
                };
                match person.add_rule(rule, now) {
                    Ok(r) => Some(r.id),
                    Err(e) => {
                        tracing::warn!("standing rule not created: {e}");
                        None
                    }
                }
            }
            ApprovalOutcome::Declined { .. } => {
                person.nag_declined(&self.client, &self.route, now);
                None
            }
            _ => None,
        }
    }
}

/// The refusal an outcome means for the agent (`None`: accepted, the call runs).
fn refusal(outcome: &ApprovalOutcome, a: &Ask<'_>) -> Option<Refusal> {
    let run_yourself = format!("The person can run it themselves: {}", a.summary);
    let (o, kind, msg, next) = match outcome {
        ApprovalOutcome::Accepted { .. } => return None,
        ApprovalOutcome::Declined { .. } => (
            Outcome::Declined,
            Kind::Declined,
            "the person declined this call".to_owned(),
            "do not retry; ask the person in chat what they want instead",
        ),
        ApprovalOutcome::Cancelled { .. } => (
            Outcome::Cancelled,
            Kind::Cancelled,
            "the person dismissed the question without answering".to_owned(),
            "ask the person in chat before trying again",
        ),
        ApprovalOutcome::TimedOut => (
            Outcome::TimedOut,
            Kind::TimedOut,
            format!(
                "nobody answered within {} s; silence is no",
                a.config.approval.timeout.as_secs()
            ),
            "retry later when the person is present, or ask them in chat",
        ),
        ApprovalOutcome::Unsupported { reason } => (
            Outcome::Unsupported,
            Kind::Unsupported,
            format!("this call needs the person's approval: {reason}. {run_yourself}"),
            "tell the person the command, or ask them to start the approval page",
        ),
        ApprovalOutcome::Unreachable => (
            Outcome::Unreachable,
            Kind::Unreachable,
            "the client went away".to_owned(),
            "give up",
        ),
    };
    Some(
        Refusal::new(o, kind, msg)
            .next(next)
            .details(Details::Command(a.summary.to_owned())),
    )
}

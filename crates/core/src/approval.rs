//! The approval broker: a call that needs the person's yes parks here with a deadline.
//!
//! The deadline is the decision. Whoever removes a question from the pending map first decides
//! it — an answer (first channel wins) or the deadline — so two channels answering together run
//! a call at most once, and an answer after the deadline finds nothing to answer. Dropping the
//! waiting future (the client went away) withdraws the question: nothing runs later.
//!
//! Channels are of two kinds: push channels (`Channel`: desktop notifications) are told about
//! each question and withdrawn when it is decided; pull channels (the approval page, the CLI over
//! the control socket) read `pending()` and `subscribe()` and call `answer()`.
//!
//! Deadlines are judged on the broker's `Clock` (the gate's: `Gate::with_clock`), by its
//! monotonic reading: the system's monotonic time in the binary, a clock a test advances in tests.

use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, oneshot};

use archgate_policy::Tier;

use crate::clock::{Clock, SystemClock};

/// What the person is asked. Built after resolution, so `summary` is exactly what will run.
#[derive(Debug, Clone, Serialize)]
pub struct Question {
    pub id: String,
    pub client: String,
    /// The token that asked, as its digest (`gate::Client::token`): a question is its token's,
    /// withdrawn when that token stops authenticating whatever name it went by (attack 23 F1).
    /// Never shown to a channel.
    #[serde(skip)]
    pub token: Option<crate::token_id::TokenId>,
    /// The agent's own name from its `clientInfo` (`crate::agent::label`): untrusted, bounded
    /// and already visible-only (every control and bidi character written as an escape), still
    /// to be escaped for markup (HTML, notification bodies); absent when the client sent none
    /// (a stateless call, the CLI). Never used for identity or policy: `client` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub tool: String,
    pub route: String,
    /// The exact resolved command or target.
    pub summary: String,
    /// The question in one plain sentence, from the tool's own phrase (`crate::sentence`):
    /// every channel's headline. Already safe to show.
    pub sentence: crate::sentence::Sentence,
    /// What the question can show drawn (`crate::picture`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub picture: Option<crate::picture::Picture>,
    pub tier: Tier,
    /// Every argument, whole: the person sees exactly what will happen (clipboard text
    /// included). Only the person's channels read questions; the audit record keeps its
    /// truncation and redaction.
    pub args: serde_json::Value,
    /// Unix seconds.
    pub created: u64,
    pub deadline: u64,
    /// Whether "Always…" may be offered (false for always-ask tools).
    pub rule_allowed: bool,
    /// What the calling session read just before, when the call follows text archgate did not
    /// write (`crate::untrusted`): every channel shows its `sentence`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follows: Option<Box<crate::untrusted::Follows>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Allow,
    /// Allow, and create a standing rule for identical calls.
    AllowAlways,
    Deny,
    /// Dismissed without a choice.
    Cancel,
}

/// The six outcomes; exactly one (`Accepted`) runs the call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum ApprovalOutcome {
    Accepted { channel: String, always: bool },
    Declined { channel: String },
    Cancelled { channel: String },
    TimedOut,
    Unsupported { reason: String },
    Unreachable,
}

impl ApprovalOutcome {
    pub fn name(&self) -> &'static str {
        match self {
            ApprovalOutcome::Accepted { .. } => "accepted",
            ApprovalOutcome::Declined { .. } => "declined",
            ApprovalOutcome::Cancelled { .. } => "cancelled",
            ApprovalOutcome::TimedOut => "timed_out",
            ApprovalOutcome::Unsupported { .. } => "unsupported",
            ApprovalOutcome::Unreachable => "unreachable",
        }
    }
    pub fn channel(&self) -> Option<&str> {
        match self {
            ApprovalOutcome::Accepted { channel, .. }
            | ApprovalOutcome::Declined { channel }
            | ApprovalOutcome::Cancelled { channel } => Some(channel),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("no pending approval {0}: it was already decided, withdrawn, or never existed")]
    NotPending(String),
    #[error("approval {0} passed its deadline; the call was refused and this answer does nothing")]
    TooLate(String),
}

impl AnswerError {
    pub fn kind(&self) -> &'static str {
        match self {
            AnswerError::NotPending(_) => "not_pending",
            AnswerError::TooLate(_) => "too_late",
        }
    }
}

/// Events for live views (the page's server-sent events, bars).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum BrokerEvent {
    Asked { question: Box<Question> },
    Decided { id: String, outcome: String },
}

/// A push channel (desktop notifications).
pub trait Channel: Send + Sync {
    fn name(&self) -> &'static str;
    /// Shows the question. Answers come back through `Broker::answer`.
    fn ask(&self, q: &Question, broker: Broker);
    /// The question was decided elsewhere or expired: take it down.
    fn withdraw(&self, id: &str);
}

struct Entry {
    question: Question,
    /// On the broker's clock's monotonic reading.
    deadline: Duration,
    /// `Some` carries the person's answer; `None` says the client is gone (`withdraw_all`).
    tx: oneshot::Sender<Option<(Answer, String)>>,
}

/// How a parked question ended.
enum Got {
    Answer(Answer, String),
    Withdrawn,
    Deadline,
}

/// Whether a question's asker may still be asked for (`Broker::set_admit`).
type AdmitFn = dyn Fn(&Question) -> bool + Send + Sync;

struct Inner {
    pending: Mutex<HashMap<String, Entry>>,
    /// Judged once a question is in `pending`, before any channel sees it.
    admit: std::sync::OnceLock<Box<AdmitFn>>,
    push: Mutex<Vec<Arc<dyn Channel>>>,
    pull_channels: AtomicUsize,
    events: broadcast::Sender<BrokerEvent>,
    clock: Arc<dyn Clock>,
}

#[derive(Clone)]
pub struct Broker {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker")
            .field("pending", &self.pending().len())
            .finish()
    }
}

impl Default for Broker {
    fn default() -> Self {
        Self::new()
    }
}

impl Broker {
    /// A broker judging deadlines on the system's monotonic time.
    pub fn new() -> Broker {
        Broker::with_clock(Arc::new(SystemClock))
    }

    /// A broker judging deadlines on `clock`'s monotonic reading.
    pub fn with_clock(clock: Arc<dyn Clock>) -> Broker {
        let (events, _) = broadcast::channel(256);
        Broker {
            inner: Arc::new(Inner {
                pending: Mutex::new(HashMap::new()),
                admit: std::sync::OnceLock::new(),
                push: Mutex::new(Vec::new()),
                pull_channels: AtomicUsize::new(0),
                events,
                clock,
            }),
        }
    }

    /// Judges each question's asker once the question is in the pending list, before any
    /// channel sees it: refused, it ends `unreachable` at once and nobody is asked. With the
    /// withdrawal a change of the clients makes (`withdraw_where`, after the change is in
    /// force), no question of a token that stopped authenticating stays up, whether it was
    /// listed before the change or after (attack 23 F1: a call authenticated just before a
    /// revocation that parks just after it). Set once.
    pub fn set_admit(&self, f: impl Fn(&Question) -> bool + Send + Sync + 'static) {
        let _ = self.inner.admit.set(Box::new(f));
    }

    pub fn add_push_channel(&self, c: Arc<dyn Channel>) {
        self.inner
            .push
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(c);
    }

    /// A pull channel (page, control socket) came up. Returns a guard that counts it down.
    pub fn register_pull_channel(&self) -> PullChannelGuard {
        self.inner.pull_channels.fetch_add(1, Ordering::SeqCst);
        PullChannelGuard {
            broker: self.clone(),
        }
    }

    pub fn has_channels(&self) -> bool {
        self.inner.pull_channels.load(Ordering::SeqCst) > 0
            || !self
                .inner
                .push
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<BrokerEvent> {
        self.inner.events.subscribe()
    }

    pub fn pending(&self) -> Vec<Question> {
        let m = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<Question> = m.values().map(|e| e.question.clone()).collect();
        v.sort_by(|a, b| a.created.cmp(&b.created).then(a.id.cmp(&b.id)));
        v
    }

    fn take(&self, id: &str) -> Option<Entry> {
        self.inner
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id)
    }

    fn decided(&self, id: &str, outcome: &str) {
        for c in self
            .inner
            .push
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            c.withdraw(id);
        }
        let _ = self.inner.events.send(BrokerEvent::Decided {
            id: id.to_owned(),
            outcome: outcome.to_owned(),
        });
    }

    /// Asks every channel at once and waits for the first answer or the deadline.
    /// Cancel-safe: dropping the future withdraws the question.
    pub async fn ask(&self, question: Question, timeout: Duration) -> ApprovalOutcome {
        self.ask_via(question, timeout, None).await
    }

    /// `ask`, with one more channel for this question only: the calling client itself, when the
    /// person trusts it to relay their answer (`trusted_relay`).
    pub async fn ask_via(
        &self,
        question: Question,
        timeout: Duration,
        relay: Option<Arc<dyn Channel>>,
    ) -> ApprovalOutcome {
        match self.park(question, timeout, relay) {
            Ok(parked) => parked.wait().await,
            Err(e) => ApprovalOutcome::Unsupported {
                reason: e.to_string(),
            },
        }
    }

    /// Puts the question to every channel (and `relay`, for this question only) at once, before
    /// returning: from here an answer can decide it. `Err` when nobody can be asked.
    pub fn park(
        &self,
        question: Question,
        timeout: Duration,
        relay: Option<Arc<dyn Channel>>,
    ) -> Result<Parked, NoChannel> {
        if relay.is_none() && !self.has_channels() {
            return Err(NoChannel);
        }
        let id = question.id.clone();
        let (tx, rx) = oneshot::channel();
        let deadline = self.inner.clock.monotonic() + timeout;
        self.inner
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                id.clone(),
                Entry {
                    question: question.clone(),
                    deadline,
                    tx,
                },
            );
        let parked = Parked {
            broker: self.clone(),
            id,
            deadline,
            rx,
            relay,
            decided: false,
        };
        if let Some(admit) = self.inner.admit.get()
            && !admit(&question)
        {
            // Its sender dropped with it: the waiter ends `unreachable`, nothing was asked.
            drop(self.take(&parked.id));
            return Ok(parked);
        }
        let _ = self.inner.events.send(BrokerEvent::Asked {
            question: Box::new(question.clone()),
        });
        let push: Vec<_> = self
            .inner
            .push
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        for c in push.iter().chain(parked.relay.as_ref()) {
            c.ask(&question, self.clone());
        }
        Ok(parked)
    }

    /// The person's answer through `channel`. The first answer wins; a late one does nothing.
    pub fn answer(&self, id: &str, answer: Answer, channel: &str) -> Result<(), AnswerError> {
        let mut m = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
        let Some(entry) = m.get(id) else {
            return Err(AnswerError::NotPending(id.to_owned()));
        };
        if self.inner.clock.monotonic() >= entry.deadline {
            return Err(AnswerError::TooLate(id.to_owned()));
        }
        let entry = m.remove(id).expect("present above");
        drop(m);
        let answer = if answer == Answer::AllowAlways && !entry.question.rule_allowed {
            Answer::Allow
        } else {
            answer
        };
        // The waiter may have been dropped this instant (client gone); then nothing runs.
        let _ = entry.tx.send(Some((answer, channel.to_owned())));
        Ok(())
    }

    /// The only client of this process went away (stdio's stdin closed): every parked question
    /// ends `unreachable` at once, so no answer given afterwards can run its call. Returns how
    /// many were withdrawn.
    pub fn withdraw_all(&self) -> usize {
        let entries: Vec<Entry> = self
            .inner
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain()
            .map(|(_, e)| e)
            .collect();
        let n = entries.len();
        for e in entries {
            let _ = e.tx.send(None);
        }
        n
    }

    /// This client is gone (revoked): its parked questions end `unreachable` at once, so no
    /// answer given afterwards can run their calls. Returns how many were withdrawn.
    pub fn withdraw_client(&self, client: &str) -> usize {
        self.withdraw_where(|q| q.client == client)
    }

    /// The parked questions `gone` picks end `unreachable` at once (their asker is gone: a
    /// revoked or rotated token), so no answer given afterwards can run their calls. Returns
    /// how many were withdrawn.
    pub fn withdraw_where(&self, gone: impl Fn(&Question) -> bool) -> usize {
        let entries: Vec<Entry> = {
            let mut m = self.inner.pending.lock().unwrap_or_else(|p| p.into_inner());
            let ids: Vec<String> = m
                .iter()
                .filter(|(_, e)| gone(&e.question))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| m.remove(id)).collect()
        };
        let n = entries.len();
        for e in entries {
            let _ = e.tx.send(None);
        }
        n
    }
}

/// Nobody can be asked: no channel of the person's is running and there is no relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "no approval channel is running (start `archgate serve`, open `archgate ui`, or enable notifications)"
)]
pub struct NoChannel;

/// A question out with the channels. `wait` gives its outcome; dropping it unanswered withdraws
/// the question (the client went away): it ends `unreachable` and nothing runs later.
pub struct Parked {
    broker: Broker,
    id: String,
    /// On the broker's clock's monotonic reading.
    deadline: Duration,
    rx: oneshot::Receiver<Option<(Answer, String)>>,
    relay: Option<Arc<dyn Channel>>,
    decided: bool,
}

impl Parked {
    /// Waits for the first answer or the deadline, whichever removes the question first.
    pub async fn wait(mut self) -> ApprovalOutcome {
        let got = |r: Result<Option<(Answer, String)>, _>| match r {
            Ok(Some((a, c))) => Got::Answer(a, c),
            _ => Got::Withdrawn,
        };
        let clock = self.broker.inner.clock.clone();
        let answer = tokio::select! {
            a = &mut self.rx => got(a),
            _ = clock.sleep_until(self.deadline) => {
                if self.broker.take(&self.id).is_some() {
                    // The deadline removed it first: that is the decision.
                    Got::Deadline
                } else {
                    // An answer removed it first (before the deadline): it is in the channel.
                    got((&mut self.rx).await)
                }
            }
        };
        self.decided = true;
        let outcome = match answer {
            Got::Answer(Answer::Allow, channel) => ApprovalOutcome::Accepted {
                channel,
                always: false,
            },
            Got::Answer(Answer::AllowAlways, channel) => ApprovalOutcome::Accepted {
                channel,
                always: true,
            },
            Got::Answer(Answer::Deny, channel) => ApprovalOutcome::Declined { channel },
            Got::Answer(Answer::Cancel, channel) => ApprovalOutcome::Cancelled { channel },
            Got::Withdrawn => ApprovalOutcome::Unreachable,
            Got::Deadline => ApprovalOutcome::TimedOut,
        };
        self.broker.decided(&self.id, outcome.name());
        outcome
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        // Unanswered (the waiter went away before an outcome): withdraw the question.
        if !self.decided && self.broker.take(&self.id).is_some() {
            self.broker.decided(&self.id, "unreachable");
        }
        // However it ended, this question's relay is taken down with it (the shared push
        // channels are withdrawn by `decided`).
        if let Some(r) = &self.relay {
            r.withdraw(&self.id);
        }
    }
}

#[derive(Debug)]
pub struct PullChannelGuard {
    broker: Broker,
}

impl Drop for PullChannelGuard {
    fn drop(&mut self) {
        self.broker
            .inner
            .pull_channels
            .fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests;

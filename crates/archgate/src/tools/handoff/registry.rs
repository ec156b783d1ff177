//! The hand-offs a running archgate holds: at most one at a time.
//!
//! The `handoff` tool opens one and waits for its end; the person's helper (`archgate
//! handoff-run ID` in the terminal archgate opened, or `archgate handoff ID` in their own)
//! claims it over the control socket, says when the command starts, and reports how it ended.
//!
//! **Two hand-offs at once:** a second is refused at once (`busy`, naming the first), as a second
//! presence dialog is: two terminals asking for a password at the same moment would let the
//! person type it into the one they did not mean. **One claim:** a hand-off is claimed once; a
//! second helper is refused. A claim that ends without a report (the terminal closed) is
//! `cancelled` before its command started and `unknown` after.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// What the helper needs, built by the tool: the exact argv, and what to show around it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Prepared {
    pub id: String,
    /// Exactly what runs: `sudo -k -- /usr/bin/pacman …`.
    pub argv: Vec<String>,
    /// Why the agent asks, in its words (shown escaped).
    pub reason: String,
    /// What it will change, in archgate's words.
    pub changes: String,
    /// The canonical route (`handoff install`).
    pub route: String,
    /// The agent's client.
    pub client: String,
    /// pacman's lock, when the operation takes it.
    pub lock: Option<PathBuf>,
    /// pacman's log, to check an unknown outcome.
    pub log_file: Option<PathBuf>,
    /// An Omarchy route's script: then `argv` is the script and its arguments, not `sudo -k`
    /// of a program (the script runs sudo itself; `route.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<RouteScript>,
}

/// What the helper checks and gives a route's script: it runs only while it is the file shown.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct RouteScript {
    /// The script's content, SHA-256, when it was shown.
    pub sha256: String,
    /// The session's variables `omarchy_run` gives the route (the executor's allowlist applies).
    pub env: Vec<(String, String)>,
    /// Files its arguments name, with their SHA-256 when shown (`None`: a directory).
    pub files: Vec<(PathBuf, Option<String>)>,
}

/// How a hand-off ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The command ran to its end.
    Ran {
        exit_code: Option<i32>,
        signal: Option<i32>,
        duration_ms: u64,
        /// The output's tail, bounded, secrets redacted.
        tail: String,
    },
    /// The person cancelled (Escape, or closed the terminal before Enter): nothing ran.
    Cancelled { why: String },
    /// The helper refused before anything ran (sudo would not ask, pacman's lock held).
    Refused { why: String },
    /// The command could not start: nothing ran.
    Failed { why: String },
    /// The command started and nobody saw it end (the terminal closed mid-run).
    Unknown { why: String },
}

/// The end, with the channel the person confirmed on.
#[derive(Debug, Clone)]
pub struct Ended {
    pub outcome: Outcome,
    pub channel: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Waiting,
    Claimed,
    Running,
}

struct Slot {
    prepared: Arc<Prepared>,
    state: State,
    tx: Option<oneshot::Sender<Ended>>,
}

/// Why a claim was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("no hand-off {0} is waiting here")]
    NotFound(String),
    #[error("hand-off {0} is already being answered in another terminal")]
    Taken(String),
}

/// Why a second hand-off was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hand-off {0} is still waiting for the person; one at a time")]
pub struct Busy(pub String);

/// What the deadline found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expired {
    /// Withdrawn before its command started: nothing ran, and a late claim finds nothing.
    Withdrawn,
    /// Its command is running: the end is still awaited.
    Running,
    /// Already ended.
    Gone,
}

#[derive(Default)]
pub struct Handoffs {
    slot: Mutex<Option<Slot>>,
}

impl Handoffs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Slot>> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds `p` until it is claimed and ends, or is withdrawn; the receiver hears the end.
    pub fn open(&self, p: Prepared) -> Result<oneshot::Receiver<Ended>, Busy> {
        let mut slot = self.lock();
        if let Some(s) = &*slot {
            return Err(Busy(s.prepared.id.clone()));
        }
        let (tx, rx) = oneshot::channel();
        *slot = Some(Slot {
            prepared: Arc::new(p),
            state: State::Waiting,
            tx: Some(tx),
        });
        Ok(rx)
    }

    /// Claims hand-off `id` for one helper, on `channel`.
    pub fn claim(self: &Arc<Self>, id: &str, channel: &str) -> Result<Claim, ClaimError> {
        let mut slot = self.lock();
        let Some(s) = slot.as_mut().filter(|s| s.prepared.id == id) else {
            return Err(ClaimError::NotFound(id.to_owned()));
        };
        if s.state != State::Waiting {
            return Err(ClaimError::Taken(id.to_owned()));
        }
        s.state = State::Claimed;
        Ok(Claim {
            handoffs: self.clone(),
            prepared: s.prepared.clone(),
            channel: channel.to_owned(),
            started: false,
            done: false,
        })
    }

    /// The deadline passed: withdraws a hand-off whose command has not started.
    pub fn expire(&self, id: &str) -> Expired {
        let mut slot = self.lock();
        match slot.as_ref() {
            Some(s) if s.prepared.id == id => {
                if s.state == State::Running {
                    Expired::Running
                } else {
                    *slot = None;
                    Expired::Withdrawn
                }
            }
            _ => Expired::Gone,
        }
    }

    fn end(&self, id: &str, ended: Ended) {
        let mut slot = self.lock();
        if slot.as_ref().is_some_and(|s| s.prepared.id == id)
            && let Some(mut s) = slot.take()
            && let Some(tx) = s.tx.take()
        {
            let _ = tx.send(ended);
        }
    }
}

/// One helper's hold on a hand-off. Dropped without `finish`: the terminal went away —
/// `cancelled` before `start`, `unknown` after.
pub struct Claim {
    handoffs: Arc<Handoffs>,
    prepared: Arc<Prepared>,
    channel: String,
    started: bool,
    done: bool,
}

impl Claim {
    pub fn prepared(&self) -> &Prepared {
        &self.prepared
    }

    /// The person pressed Enter: the command is about to run. Refused when the deadline
    /// withdrew the hand-off meanwhile (then nothing may run).
    pub fn start(&mut self) -> Result<(), ClaimError> {
        let mut slot = self.handoffs.lock();
        match slot.as_mut() {
            Some(s) if s.prepared.id == self.prepared.id && s.state == State::Claimed => {
                s.state = State::Running;
                self.started = true;
                Ok(())
            }
            _ => Err(ClaimError::NotFound(self.prepared.id.clone())),
        }
    }

    /// How it ended, as the helper reported it. A helper may not report a run it never started.
    pub fn finish(mut self, outcome: Outcome) -> Ended {
        let outcome = match outcome {
            Outcome::Ran { .. } | Outcome::Unknown { .. } if !self.started => Outcome::Failed {
                why: "the helper reported a run it never started; nothing ran".into(),
            },
            o => o,
        };
        self.done = true;
        let ended = Ended {
            outcome,
            channel: self.channel.clone(),
        };
        self.handoffs.end(&self.prepared.id, ended.clone());
        ended
    }

    /// The outcome when the helper goes away without a report.
    pub fn abandoned(&self) -> Outcome {
        if self.started {
            Outcome::Unknown {
                why: "the terminal closed while the command ran".into(),
            }
        } else {
            Outcome::Cancelled {
                why: "the terminal closed before the person pressed Enter".into(),
            }
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.done {
            let ended = Ended {
                outcome: self.abandoned(),
                channel: self.channel.clone(),
            };
            self.handoffs.end(&self.prepared.id, ended);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(id: &str) -> Prepared {
        Prepared {
            id: id.into(),
            argv: vec![
                "sudo".into(),
                "-k".into(),
                "--".into(),
                "/usr/bin/pacman".into(),
            ],
            reason: "r".into(),
            changes: "c".into(),
            route: "handoff install".into(),
            client: "local".into(),
            lock: None,
            log_file: None,
            script: None,
        }
    }

    #[test]
    fn a_second_hand_off_is_refused_while_one_waits_and_taken_after_it_ends() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a")).unwrap();
        assert_eq!(h.open(prepared("b")).unwrap_err(), Busy("a".into()));
        let c = h.claim("a", "terminal").unwrap();
        drop(c);
        let ended = rx.blocking_recv().unwrap();
        assert!(matches!(ended.outcome, Outcome::Cancelled { .. }));
        assert!(h.open(prepared("b")).is_ok());
    }

    #[test]
    fn a_hand_off_is_claimed_once() {
        let h = Arc::new(Handoffs::default());
        let _rx = h.open(prepared("a")).unwrap();
        let _c = h.claim("a", "terminal").unwrap();
        assert_eq!(
            h.claim("a", "own_terminal").err(),
            Some(ClaimError::Taken("a".into()))
        );
        assert_eq!(
            h.claim("zz", "terminal").err(),
            Some(ClaimError::NotFound("zz".into()))
        );
    }

    #[test]
    fn a_terminal_gone_mid_run_is_unknown_and_before_enter_cancelled() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a")).unwrap();
        let mut c = h.claim("a", "terminal").unwrap();
        c.start().unwrap();
        drop(c);
        assert!(matches!(
            rx.blocking_recv().unwrap().outcome,
            Outcome::Unknown { .. }
        ));
    }

    #[test]
    fn past_the_deadline_nothing_may_start_and_a_running_one_is_still_awaited() {
        let h = Arc::new(Handoffs::default());
        let _rx = h.open(prepared("a")).unwrap();
        let mut c = h.claim("a", "terminal").unwrap();
        assert_eq!(h.expire("a"), Expired::Withdrawn);
        assert!(c.start().is_err());
        let rx = h.open(prepared("b")).unwrap();
        let mut c = h.claim("b", "terminal").unwrap();
        c.start().unwrap();
        assert_eq!(h.expire("b"), Expired::Running);
        c.finish(Outcome::Ran {
            exit_code: Some(0),
            signal: None,
            duration_ms: 1,
            tail: String::new(),
        });
        assert!(matches!(
            rx.blocking_recv().unwrap().outcome,
            Outcome::Ran { .. }
        ));
        assert_eq!(h.expire("b"), Expired::Gone);
    }

    #[test]
    fn a_run_reported_without_a_start_is_not_believed() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a")).unwrap();
        let c = h.claim("a", "terminal").unwrap();
        c.finish(Outcome::Ran {
            exit_code: Some(0),
            signal: None,
            duration_ms: 1,
            tail: String::new(),
        });
        assert!(matches!(
            rx.blocking_recv().unwrap().outcome,
            Outcome::Failed { .. }
        ));
    }
}

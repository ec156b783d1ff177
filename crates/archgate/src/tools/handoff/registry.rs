//! The hand-offs a running archgate holds: at most one at a time.
//!
//! The `handoff` tool opens one and waits for its end; the person's helper (`archgate
//! handoff-run ID` in the terminal archgate opened, or `archgate handoff ID` in their own)
//! claims it over the control socket, says when the command starts, and reports how it ended.
//!
//! **Two hand-offs at once:** a second is refused at once (`busy`, naming the first), as a second
//! presence dialog is: two terminals asking for a password at the same moment would let the
//! person type it into the one they did not mean. Every archgate process of the person holds
//! that one slot together (attack 5b, F8: *a one-at-a-time invariant kept in one process's
//! memory while several processes can put it on the screen*): opening a hand-off takes an
//! exclusive `flock` on `handoff.lock` in the runtime directory, held until the hand-off ends.
//! **One claim:** a hand-off is claimed once; a second helper is refused. A claim that ends
//! without a report (the terminal closed) is `cancelled` before its command started and
//! `unknown` after.
//!
//! **Who may claim** (attack 5b, F2: *a confirmation and outcome taken from whoever holds the id
//! on a same-uid socket, its channel the claimant's word*): ids are 128 random bits; a hand-off
//! archgate opened a terminal for is claimed only by the helper it asked that terminal to run
//! (`claimant.rs`: its direct child, this binary, `handoff-run ID` — read from the kernel; attack
//! 22 F1: a descendant was not enough) — nothing can claim it while the terminal is being opened
//! — and its channel is `terminal`, observed, not said. A hand-off without a
//! terminal (`archgate handoff ID` in the person's own) is claimed by whoever runs that: its
//! channel is `own_terminal` and its end is recorded and answered as **unverified**.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::claimant::Claimant;

/// What the helper needs, built by the tool: the exact argv, and what to show around it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Prepared {
    pub id: String,
    /// Exactly what runs: `/usr/bin/sudo -k -- /usr/bin/pacman …`.
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
    /// The operation of the closed set and its typed values: the helper builds the command from
    /// these itself and runs only that (attack 8 F1, F2: whatever the archgate process says the
    /// argv is, a process the agent started — or preloaded — could have said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<super::ops::Op>,
    #[serde(default)]
    pub values: super::ops::Values,
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
    /// The programs the script and the scripts it calls give `sudo`, as written: the helper asks
    /// sudo about each before the Enter (attack 7 F6).
    #[serde(default)]
    pub sudo_programs: Vec<String>,
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
    /// `terminal` (the claimant descends from the terminal archgate opened) or `own_terminal`.
    pub channel: String,
    /// Whether archgate saw the claimant descend from the terminal it opened. An unverified
    /// end is never recorded as the person's.
    pub verified: bool,
}

/// A new hand-off id: 128 random bits in hex (never derived from the pid or a counter).
pub fn new_id() -> Result<String, String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| format!("no randomness for a hand-off id: {e}"))?;
    Ok(hex::encode(b))
}

/// Where the hand-off's helper must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// archgate is opening a terminal: nothing may claim yet.
    Opening,
    /// The terminal archgate started: only its descendants may claim.
    Opened(u32),
    /// No terminal was opened: `archgate handoff ID` in the person's own (unverified).
    None,
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
    terminal: Terminal,
    tx: Option<oneshot::Sender<Ended>>,
    /// The lock every archgate process of the person shares; released when the slot goes.
    _held: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// Why a claim was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("no hand-off {0} is waiting here")]
    NotFound(String),
    #[error("hand-off {0} is already being answered in another terminal")]
    Taken(String),
    #[error(
        "hand-off {0} is answered only in the terminal archgate opened for it, by the helper archgate asked it to run; this process is not that helper"
    )]
    NotItsTerminal(String),
}

/// Why a second hand-off was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    /// Another hand-off (named) waits or runs.
    #[error("hand-off {0} is still waiting for the person; one at a time")]
    Waiting(String),
    /// The shared lock cannot be taken: none is opened (one at a time is not kept otherwise).
    #[error("hand-offs cannot be kept to one at a time here ({0}); none is opened")]
    NoLock(String),
}

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
    /// `RUNTIME_DIR/handoff.lock`, shared by every archgate process of the person.
    lock_file: Option<PathBuf>,
}

impl Handoffs {
    /// Hand-offs whose one-at-a-time holds across processes through `lock_file`.
    pub fn new(lock_file: PathBuf) -> Self {
        Self {
            slot: Mutex::default(),
            lock_file: Some(lock_file),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Slot>> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the person's one hand-off lock, writing this hand-off's id into it; `Busy` naming
    /// the holder's id when another process holds it.
    fn take_shared(&self, id: &str) -> Result<Option<nix::fcntl::Flock<std::fs::File>>, Busy> {
        use nix::fcntl::{Flock, FlockArg};
        use std::io::{Read, Seek, Write};
        let Some(path) = &self.lock_file else {
            return Ok(None);
        };
        // In archgate's own directory judged now, as archgate's own file: never a link, never
        // another's (class: a file written at a path judged once follows what is there now).
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let name = path.file_name().unwrap_or_default();
        let file = archgate_core::paths::OwnDir::create(dir)
            .and_then(|d| d.open_lock(name))
            .map_err(|e| Busy::NoLock(format!("{} cannot be opened: {e}", path.display())))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut held) => {
                let _ = held.set_len(0);
                let _ = held.rewind();
                let _ = held.write_all(id.as_bytes());
                Ok(Some(held))
            }
            Err((mut file, _)) => {
                let mut other = String::new();
                let _ = file.read_to_string(&mut other);
                let other: String = other
                    .chars()
                    .filter(char::is_ascii_hexdigit)
                    .take(64)
                    .collect();
                Err(Busy::Waiting(if other.is_empty() {
                    "(of another archgate process)".into()
                } else {
                    format!("{other} (of another archgate process)")
                }))
            }
        }
    }

    /// Holds `p` until it is claimed and ends, or is withdrawn; the receiver hears the end.
    /// `terminal`: `Opening` when archgate is about to open a terminal for it (then
    /// [`Handoffs::opened`] says which), `None` when the person runs `archgate handoff ID`.
    pub fn open(&self, p: Prepared, terminal: Terminal) -> Result<oneshot::Receiver<Ended>, Busy> {
        let mut slot = self.lock();
        if let Some(s) = &*slot {
            return Err(Busy::Waiting(s.prepared.id.clone()));
        }
        let held = self.take_shared(&p.id)?;
        let (tx, rx) = oneshot::channel();
        *slot = Some(Slot {
            prepared: Arc::new(p),
            state: State::Waiting,
            terminal,
            tx: Some(tx),
            _held: held,
        });
        Ok(rx)
    }

    /// The terminal for hand-off `id` started as `pid` (`Some`), or did not open (`None`: the
    /// person may run `archgate handoff ID`, unverified).
    pub fn opened(&self, id: &str, pid: Option<u32>) {
        let mut slot = self.lock();
        if let Some(s) = slot.as_mut().filter(|s| s.prepared.id == id) {
            s.terminal = pid.map_or(Terminal::None, Terminal::Opened);
        }
    }

    /// Claims hand-off `id` for the helper process `peer` (read from the kernel by the pid of
    /// the socket's peer credentials): the channel is what archgate observes, never the helper's
    /// word; a terminal's hand-off only by the helper it was asked to run (`claimant.rs`).
    pub fn claim(self: &Arc<Self>, id: &str, peer: Option<&Claimant>) -> Result<Claim, ClaimError> {
        let mut slot = self.lock();
        let Some(s) = slot.as_mut().filter(|s| s.prepared.id == id) else {
            return Err(ClaimError::NotFound(id.to_owned()));
        };
        let (channel, verified) = match s.terminal {
            Terminal::Opened(t) if peer.is_some_and(|p| p.is_the_helper(t, id)) => {
                ("terminal", true)
            }
            Terminal::Opened(_) | Terminal::Opening => {
                return Err(ClaimError::NotItsTerminal(id.to_owned()));
            }
            Terminal::None => ("own_terminal", false),
        };
        if s.state != State::Waiting {
            return Err(ClaimError::Taken(id.to_owned()));
        }
        s.state = State::Claimed;
        Ok(Claim {
            handoffs: self.clone(),
            prepared: s.prepared.clone(),
            channel: channel.to_owned(),
            verified,
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
    verified: bool,
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
            verified: self.verified,
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
                verified: self.verified,
            };
            self.handoffs.end(&self.prepared.id, ended);
        }
    }
}

#[cfg(test)]
impl Prepared {
    /// A hand-off of `pacman` with one id, for tests to change what they look at.
    pub(crate) fn for_tests(id: &str) -> Prepared {
        Prepared {
            id: id.into(),
            argv: ["/usr/bin/sudo", "-k", "--", "/usr/bin/pacman"]
                .map(String::from)
                .to_vec(),
            reason: "r".into(),
            changes: "c".into(),
            route: "handoff install".into(),
            client: "local".into(),
            lock: None,
            log_file: None,
            script: None,
            op: None,
            values: Default::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(id: &str) -> Prepared {
        Prepared::for_tests(id)
    }

    #[test]
    fn a_second_hand_off_is_refused_while_one_waits_and_taken_after_it_ends() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a"), Terminal::None).unwrap();
        assert_eq!(
            h.open(prepared("b"), Terminal::None).unwrap_err(),
            Busy::Waiting("a".into())
        );
        let c = h.claim("a", None).unwrap();
        drop(c);
        let ended = rx.blocking_recv().unwrap();
        assert!(matches!(ended.outcome, Outcome::Cancelled { .. }));
        assert!(h.open(prepared("b"), Terminal::None).is_ok());
    }

    #[test]
    fn a_hand_off_is_claimed_once() {
        let h = Arc::new(Handoffs::default());
        let _rx = h.open(prepared("a"), Terminal::None).unwrap();
        let _c = h.claim("a", None).unwrap();
        assert_eq!(
            h.claim("a", None).err(),
            Some(ClaimError::Taken("a".into()))
        );
        assert_eq!(
            h.claim("zz", None).err(),
            Some(ClaimError::NotFound("zz".into()))
        );
    }

    #[test]
    fn a_terminal_gone_mid_run_is_unknown_and_before_enter_cancelled() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a"), Terminal::None).unwrap();
        let mut c = h.claim("a", None).unwrap();
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
        let _rx = h.open(prepared("a"), Terminal::None).unwrap();
        let mut c = h.claim("a", None).unwrap();
        assert_eq!(h.expire("a"), Expired::Withdrawn);
        assert!(c.start().is_err());
        let rx = h.open(prepared("b"), Terminal::None).unwrap();
        let mut c = h.claim("b", None).unwrap();
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
        let rx = h.open(prepared("a"), Terminal::None).unwrap();
        let c = h.claim("a", None).unwrap();
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

    #[test]
    fn a_terminal_hand_off_is_claimed_only_by_its_helper_and_not_while_it_opens() {
        use super::super::claimant::{Claimant, own_exe};
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a"), Terminal::Opening).unwrap();
        let helper = |terminal: u32| Claimant {
            pid: 4242,
            parent: Some(terminal),
            exe: own_exe(),
            args: vec!["handoff-run".into(), "a".into()],
            loader_env: false,
        };
        // While the terminal opens nobody may claim, not even the helper.
        assert_eq!(
            h.claim("a", Some(&helper(77))).err(),
            Some(ClaimError::NotItsTerminal("a".into()))
        );
        h.opened("a", Some(77));
        // Another terminal's child, a grandchild of this one (attack 22 F1), nobody.
        let grandchild = Claimant {
            parent: Some(78),
            ..helper(77)
        };
        for peer in [Some(&helper(76)), Some(&grandchild), None] {
            assert_eq!(
                h.claim("a", peer).err(),
                Some(ClaimError::NotItsTerminal("a".into()))
            );
        }
        // The terminal's own child running archgate as `handoff-run a`: believed.
        let c = h.claim("a", Some(&helper(77))).unwrap();
        drop(c);
        let ended = rx.blocking_recv().unwrap();
        assert_eq!(ended.channel, "terminal");
        assert!(ended.verified);
    }

    #[test]
    fn without_a_terminal_the_claimant_is_unverified_whatever_it_says() {
        let h = Arc::new(Handoffs::default());
        let rx = h.open(prepared("a"), Terminal::None).unwrap();
        let me = super::super::claimant::Claimant::read(std::process::id());
        let c = h.claim("a", Some(&me)).unwrap();
        drop(c);
        let ended = rx.blocking_recv().unwrap();
        assert_eq!(ended.channel, "own_terminal");
        assert!(!ended.verified);
    }

    #[test]
    fn ids_are_random_and_long() {
        let a = new_id().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, new_id().unwrap());
    }

    #[test]
    fn one_hand_off_at_a_time_across_processes_through_the_runtime_lock() {
        // Two archgate processes share the runtime directory; two `Handoffs` with their own
        // open file of the same lock conflict as two processes do (flock is per open file).
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join("archgate").join("handoff.lock");
        let one = Arc::new(Handoffs::new(lock.clone()));
        let two = Arc::new(Handoffs::new(lock));
        let id = new_id().unwrap();
        let rx = one.open(prepared(&id), Terminal::None).unwrap();
        let busy = two.open(prepared("b"), Terminal::None).unwrap_err();
        assert!(
            matches!(&busy, Busy::Waiting(w) if w.contains(&id)),
            "{busy}"
        );
        drop(one.claim(&id, None).unwrap());
        rx.blocking_recv().unwrap();
        assert!(two.open(prepared("b"), Terminal::None).is_ok());
    }
}

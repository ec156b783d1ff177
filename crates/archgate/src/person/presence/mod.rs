//! Person presence over polkit: before a yes that needs it (`archgate_core::presence::need`),
//! archgate asks polkit's Authority on the system bus to authenticate one of archgate's actions
//! (`packaging/polkit/org.archgate.policy`, `auth_self` only, never `_keep`) for a subject
//! process, with user interaction allowed. The desktop's own polkit agent asks the person for
//! their password; archgate never sees it.
//!
//! The subject is the process that said yes: for the CLI, the control socket's peer (its pid
//! from SO_PEERCRED and its start time, read when it connected, so a reused pid is refused by
//! polkit); for the approval page and notifications, the daemon itself (the click reached it
//! over loopback or the session bus, and it runs in the person's session).
//!
//! **Whether presence applies is read from what root owns**, never from whether a connection
//! succeeds now: archgate's actions file in `/usr/share/polkit-1/actions/` (owned by root, not
//! writable by group or others) and polkitd's program ([`Installed`]). A same-user process can
//! make the system bus unreachable for this uid (it holds the uid's connections) or kill the
//! person's agent, but cannot change root's files — so once presence applies, every failure to
//! confirm refuses: the bus out of reach, polkit not answering, no agent, a wrong password, a
//! dismissed dialog, no answer before the deadline. Only under `auto`, and only when root's
//! files say polkit or archgate's actions are not installed, does a yes go through unconfirmed.
//! Every check that was needed is recorded (`confirm_recorded`): when presence was asked, when
//! it ended and how.
//!
//! The system bus is always the well-known socket: `DBUS_SYSTEM_BUS_ADDRESS` is not read, so a
//! process that starts archgate cannot point it at a bus of its own; and an Authority owned by
//! our own uid is not believed. The paths are fixed in [`Probe::system`]; only this module's
//! tests build another probe (no variable, flag or config key reaches one).
mod polkit;
mod root;
#[cfg(test)]
mod tests;

pub use polkit::reachable;
pub use root::{Installed, installed};

use archgate_core::audit::AuditLog;
use archgate_core::presence::{Act, Need, Presence, need};
use std::time::Duration;

use polkit::{check, reach};
use root::Probe;

/// The longest a person is given to authenticate a change that has no deadline of its own.
pub const CHANGE_WAIT: Duration = Duration::from_secs(120);

/// The process polkit is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Subject {
    pub pid: u32,
    /// Field 22 of /proc/PID/stat (clock ticks since boot).
    pub start_time: u64,
    pub uid: u32,
}

impl Subject {
    /// This process (the daemon, for the page and notifications; the CLI for its own changes).
    pub fn this_process() -> std::io::Result<Subject> {
        Subject::of(std::process::id(), nix::unistd::getuid().as_raw())
    }

    /// Another process, read now.
    pub fn of(pid: u32, uid: u32) -> std::io::Result<Subject> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
        Ok(Subject {
            pid,
            start_time: start_time(&stat).ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("/proc/{pid}/stat has no start time"),
                )
            })?,
            uid,
        })
    }
}

/// Field 22 of a /proc/PID/stat line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted from its last `)`.
fn start_time(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_ascii_whitespace().nth(19)?.parse().ok()
}

#[derive(Debug, thiserror::Error)]
pub enum PresenceError {
    #[error(
        "this needs you to confirm it through polkit (approval.presence = \"{setting}\"), but polkit is not available: {reason}. Refused; nothing was changed"
    )]
    Unavailable {
        setting: &'static str,
        reason: String,
    },
    #[error(
        "this needs you to confirm it through polkit, but no polkit authentication agent answered (start your desktop's agent, e.g. hyprpolkitagent). Refused; nothing was changed"
    )]
    NoAgent,
    #[error(
        "polkit did not confirm it was you (wrong password or the dialog was dismissed). Refused; nothing was changed"
    )]
    NotAuthorized,
    #[error("polkit's dialog was not answered within {0:?}. Refused; nothing was changed")]
    TimedOut(Duration),
    #[error("could not identify the process that asked ({0}). Refused; nothing was changed")]
    NoSubject(String),
    #[error(
        "this needs you to confirm it through polkit, which is installed here, but polkit could not be reached: {0}. Refused; nothing was changed"
    )]
    Unreachable(String),
    #[error("polkit could not check it ({0}). Refused; nothing was changed")]
    Failed(String),
    #[error(
        "another yes is being confirmed through polkit right now; answer that dialog first. Refused; nothing was changed"
    )]
    Busy,
}

impl PresenceError {
    pub fn kind(&self) -> &'static str {
        match self {
            PresenceError::Unavailable { .. } => "presence_unavailable",
            PresenceError::NoAgent => "presence_no_agent",
            PresenceError::NotAuthorized => "presence_refused",
            PresenceError::TimedOut(_) => "presence_timed_out",
            PresenceError::NoSubject(_) => "presence_no_subject",
            PresenceError::Unreachable(_) => "presence_unreachable",
            PresenceError::Failed(_) => "presence_failed",
            PresenceError::Busy => "presence_busy",
        }
    }
}

/// How a yes that may need presence went ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confirmed {
    /// The setting does not ask for this act.
    NotNeeded,
    /// `auto`, and root's files say polkit or archgate's actions are not installed.
    NotInstalled,
    /// The person authenticated to their polkit agent.
    ByPolkit,
}

impl Confirmed {
    fn as_str(self) -> &'static str {
        match self {
            Confirmed::NotNeeded => "not_needed",
            Confirmed::NotInstalled => "not_installed",
            Confirmed::ByPolkit => "confirmed",
        }
    }
}

/// Carries out the presence decision for one act: `Ok` when it may go ahead. `wait` bounds the
/// time the person has to authenticate (a question's remaining time, or `CHANGE_WAIT`).
pub async fn confirm(
    setting: Presence,
    act: Act,
    subject: Result<Subject, String>,
    wait: Duration,
) -> Result<Confirmed, PresenceError> {
    confirm_at(&Probe::system(), setting, act, subject, wait).await
}

/// What a recorded presence check was for, in the activity log.
pub struct Asked<'a> {
    /// `answer`, `developer_mode`, `client_add`, …
    pub what: &'a str,
    /// The question's id, for an answer.
    pub id: Option<&'a str>,
    /// The client's name, for a client change.
    pub client: Option<&'a str>,
    /// The person's channel (`cli`, `page`, `notification`).
    pub channel: &'a str,
}

/// [`confirm`], recorded: when a check was needed, one event says when presence was asked, when
/// it ended and how — `presence` when the yes may go ahead (confirmed, or not installed under
/// `auto`), `presence_refused` with the reason's kind when it may not.
pub async fn confirm_recorded(
    audit: &AuditLog,
    asked: Asked<'_>,
    setting: Presence,
    act: Act,
    subject: Result<Subject, String>,
    wait: Duration,
) -> Result<(), PresenceError> {
    let Need::Authenticate { action, .. } = need(setting, act) else {
        return Ok(());
    };
    let asked_at = archgate_core::audit::record::now_rfc3339();
    let r = confirm(setting, act, subject, wait).await;
    let ended_at = archgate_core::audit::record::now_rfc3339();
    let (event, ended) = match &r {
        Ok(c) => ("presence", c.as_str()),
        Err(e) => ("presence_refused", e.kind()),
    };
    audit.event(&serde_json::json!({
        "event": event,
        "what": asked.what,
        "id": asked.id,
        "client": asked.client,
        "channel": asked.channel,
        "setting": setting.as_str(),
        "action": action.id(),
        "asked_at": asked_at,
        "ended_at": ended_at,
        "ended": ended,
        "kind": r.as_ref().err().map(PresenceError::kind),
    }));
    match r {
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::warn!(
                what = asked.what,
                id = asked.id,
                client = asked.client,
                channel = asked.channel,
                "presence refused a yes: {e}"
            );
            Err(e)
        }
    }
}

async fn confirm_at(
    probe: &Probe,
    setting: Presence,
    act: Act,
    subject: Result<Subject, String>,
    wait: Duration,
) -> Result<Confirmed, PresenceError> {
    let Need::Authenticate { action, required } = need(setting, act) else {
        return Ok(Confirmed::NotNeeded);
    };
    let subject = subject.map_err(PresenceError::NoSubject)?;
    // One polkit dialog at a time: a same-user process repeating `archgate approve` cannot
    // stack dialogs on the person's screen.
    let Ok(_one) = IN_FLIGHT.try_lock() else {
        return Err(PresenceError::Busy);
    };
    // Whether presence applies is root's word; never whether the bus answers now.
    match probe.installed() {
        Installed::Yes => {}
        Installed::No(reason) if !required => {
            tracing::warn!(
                action = action.id(),
                "presence is not available ({reason}); approval.presence = \"auto\" lets this through"
            );
            return Ok(Confirmed::NotInstalled);
        }
        Installed::No(reason) | Installed::Untrusted(reason) => {
            return Err(PresenceError::Unavailable {
                setting: setting.as_str(),
                reason,
            });
        }
    }
    // From here every failure refuses: the bus out of reach is not polkit's absence.
    let conn = reach(&probe.bus)
        .await
        .map_err(PresenceError::Unreachable)?;
    tracing::info!(
        action = action.id(),
        pid = subject.pid,
        "asking polkit to confirm the person is there"
    );
    check(&conn, action, subject, wait).await?;
    Ok(Confirmed::ByPolkit)
}

static IN_FLIGHT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

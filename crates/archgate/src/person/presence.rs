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
//! The system bus is always the well-known socket: `DBUS_SYSTEM_BUS_ADDRESS` is not read, so a
//! process that starts archgate cannot point it at a bus of its own; and an Authority owned by
//! our own uid is not believed.
//!
//! Fails closed: a bus error, a missing agent, a wrong password, a dismissed dialog or no answer
//! before the deadline all refuse the yes. Only under `auto`, and only when polkit itself or
//! archgate's actions are not installed, does a yes go through unconfirmed.

use archgate_core::presence::{Act, Action, Need, Presence, need};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use zbus::Connection;
use zbus::Variant as Value;

/// Where the system bus listens; never taken from the environment.
const SYSTEM_BUS: &str = "unix:path=/run/dbus/system_bus_socket";
const POLKIT: &str = "org.freedesktop.PolicyKit1";
const AUTHORITY_PATH: &str = "/org/freedesktop/PolicyKit1/Authority";
const AUTHORITY: &str = "org.freedesktop.PolicyKit1.Authority";
/// `CheckAuthorizationFlags.AllowUserInteraction`.
const ALLOW_USER_INTERACTION: u32 = 1;
/// Reaching the bus and polkit must not take long; the authentication itself may.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
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
            PresenceError::Failed(_) => "presence_failed",
            PresenceError::Busy => "presence_busy",
        }
    }
}

/// Whether polkit and archgate's actions are there to ask.
pub enum Availability {
    Ready(Connection),
    /// Why not, for the person.
    Missing(String),
}

async fn connect() -> Result<Connection, String> {
    let conn = zbus::connection::Builder::address(SYSTEM_BUS)
        .build()
        .await
        .map_err(|e| format!("no system bus at /run/dbus/system_bus_socket ({e})"))?;
    let owner_uid: u32 = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus"),
            "GetConnectionUnixUser",
            &(POLKIT,),
        )
        .await
        .map_err(|_| "no polkit daemon on the system bus".to_owned())?
        .body()
        .deserialize()
        .map_err(|e| e.to_string())?;
    if owner_uid == nix::unistd::getuid().as_raw() && owner_uid != 0 {
        return Err(format!(
            "the polkit name on the system bus belongs to uid {owner_uid}, this user: not believed"
        ));
    }
    type ActionDescription = (
        String,
        String,
        String,
        String,
        String,
        String,
        u32,
        u32,
        u32,
        HashMap<String, String>,
    );
    let actions: Vec<ActionDescription> = conn
        .call_method(
            Some(POLKIT),
            AUTHORITY_PATH,
            Some(AUTHORITY),
            "EnumerateActions",
            &("",),
        )
        .await
        .map_err(|e| format!("polkit did not list its actions ({e})"))?
        .body()
        .deserialize()
        .map_err(|e| e.to_string())?;
    let missing: Vec<&str> = Action::ALL
        .iter()
        .map(|a| a.id())
        .filter(|id| !actions.iter().any(|a| a.0 == *id))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "archgate's polkit actions are not installed ({} missing from /usr/share/polkit-1/actions)",
            missing.join(", ")
        ));
    }
    Ok(conn)
}

/// Reaches polkit and checks archgate's actions are installed (also for `doctor`).
pub async fn availability() -> Availability {
    match tokio::time::timeout(CONNECT_TIMEOUT, connect()).await {
        Ok(Ok(c)) => Availability::Ready(c),
        Ok(Err(reason)) => Availability::Missing(reason),
        Err(_) => Availability::Missing(format!(
            "the system bus or polkit did not answer within {CONNECT_TIMEOUT:?}"
        )),
    }
}

/// Carries out the presence decision for one act: `Ok` when it may go ahead. `wait` bounds the
/// time the person has to authenticate (a question's remaining time, or `CHANGE_WAIT`).
pub async fn confirm(
    setting: Presence,
    act: Act,
    subject: Result<Subject, String>,
    wait: Duration,
) -> Result<(), PresenceError> {
    let Need::Authenticate { action, required } = need(setting, act) else {
        return Ok(());
    };
    let subject = subject.map_err(PresenceError::NoSubject)?;
    // One polkit dialog at a time: a same-user process repeating `archgate approve` cannot
    // stack dialogs on the person's screen.
    let Ok(_one) = IN_FLIGHT.try_lock() else {
        return Err(PresenceError::Busy);
    };
    let conn = match availability().await {
        Availability::Ready(c) => c,
        Availability::Missing(reason) if required => {
            return Err(PresenceError::Unavailable {
                setting: setting.as_str(),
                reason,
            });
        }
        Availability::Missing(reason) => {
            tracing::warn!(
                action = action.id(),
                "presence is not available ({reason}); approval.presence = \"auto\" lets this through"
            );
            return Ok(());
        }
    };
    tracing::info!(
        action = action.id(),
        pid = subject.pid,
        "asking polkit to confirm the person is there"
    );
    check(&conn, action, subject, wait).await
}

static CANCEL_SEQ: AtomicU64 = AtomicU64::new(0);
static IN_FLIGHT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn check(
    conn: &Connection,
    action: Action,
    subject: Subject,
    wait: Duration,
) -> Result<(), PresenceError> {
    let mut fields: HashMap<&str, Value<'_>> = HashMap::new();
    fields.insert("pid", Value::U32(subject.pid));
    fields.insert("start-time", Value::U64(subject.start_time));
    fields.insert(
        "uid",
        Value::I32(
            i32::try_from(subject.uid).map_err(|e| PresenceError::NoSubject(e.to_string()))?,
        ),
    );
    // polkit refuses details from callers other than root, so the dialog shows the action's
    // own message; the CLI and the page say which question is being confirmed.
    let details: HashMap<&str, &str> = HashMap::new();
    let cancel_id = format!(
        "archgate-{}-{}",
        std::process::id(),
        CANCEL_SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let body = (
        ("unix-process", fields),
        action.id(),
        details,
        ALLOW_USER_INTERACTION,
        cancel_id.as_str(),
    );
    let call = conn.call_method(
        Some(POLKIT),
        AUTHORITY_PATH,
        Some(AUTHORITY),
        "CheckAuthorization",
        &body,
    );
    let reply = match tokio::time::timeout(wait, call).await {
        Ok(r) => r,
        Err(_) => {
            let _ = conn
                .call_method(
                    Some(POLKIT),
                    AUTHORITY_PATH,
                    Some(AUTHORITY),
                    "CancelCheckAuthorization",
                    &(cancel_id.as_str(),),
                )
                .await;
            return Err(PresenceError::TimedOut(wait));
        }
    };
    let reply = reply.map_err(|e| PresenceError::Failed(e.to_string()))?;
    let ((authorized, challenge, _details),): ((bool, bool, HashMap<String, String>),) = reply
        .body()
        .deserialize()
        .map_err(|e| PresenceError::Failed(format!("an answer in an unknown shape: {e}")))?;
    outcome(authorized, challenge)
}

/// polkit's answer with interaction allowed: a challenge left standing means no agent took it.
fn outcome(authorized: bool, challenge: bool) -> Result<(), PresenceError> {
    match (authorized, challenge) {
        (true, _) => Ok(()),
        (false, true) => Err(PresenceError::NoAgent),
        (false, false) => Err(PresenceError::NotAuthorized),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_field_22_whatever_the_name() {
        // The shape of /proc/PID/stat (proc(5)); the name holds a space and a parenthesis.
        let stat = "4242 (a) b) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        assert_eq!(start_time(stat), Some(987654));
        assert_eq!(start_time("4242 (x) S 1"), None);
        assert_eq!(start_time("no parenthesis"), None);
    }

    #[test]
    fn this_process_has_a_start_time() {
        let me = Subject::this_process().unwrap();
        assert_eq!(me.pid, std::process::id());
        assert!(me.start_time > 0);
    }

    #[test]
    fn only_an_authorization_goes_ahead() {
        assert!(outcome(true, false).is_ok());
        assert!(matches!(outcome(false, true), Err(PresenceError::NoAgent)));
        assert!(matches!(
            outcome(false, false),
            Err(PresenceError::NotAuthorized)
        ));
    }

    #[tokio::test]
    async fn a_no_never_asks_polkit() {
        // No subject and (possibly) no polkit: a no goes ahead, under the strictest setting.
        for act in [Act::Deny, Act::DevModeOff, Act::RevokeRule] {
            confirm(Presence::Polkit, act, Err("none".into()), Duration::ZERO)
                .await
                .unwrap();
        }
        confirm(
            Presence::Off,
            Act::DevModeOn,
            Err("none".into()),
            Duration::ZERO,
        )
        .await
        .unwrap();
    }
}

//! Asking polkit over the system bus: reaching it (an Authority not owned by this uid, which
//! knows archgate's actions) and `CheckAuthorization` with user interaction allowed.

use archgate_core::presence::Action;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use zbus::Connection;
use zbus::Variant as Value;

use super::root::ACTIONS_FILE;
use super::{PresenceError, Subject};

const POLKIT: &str = "org.freedesktop.PolicyKit1";
const AUTHORITY_PATH: &str = "/org/freedesktop/PolicyKit1/Authority";
const AUTHORITY: &str = "org.freedesktop.PolicyKit1.Authority";
/// `CheckAuthorizationFlags.AllowUserInteraction`.
const ALLOW_USER_INTERACTION: u32 = 1;
/// Reaching the bus and polkit must not take long; the authentication itself may.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Whether polkit answers now (for `doctor` only: the decision never depends on it).
pub async fn reachable() -> Result<(), String> {
    reach(&super::root::Probe::system().bus).await.map(|_| ())
}

pub(super) async fn reach(bus: &Path) -> Result<Connection, String> {
    match tokio::time::timeout(CONNECT_TIMEOUT, connect(bus)).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "the system bus or polkit did not answer within {CONNECT_TIMEOUT:?}"
        )),
    }
}

async fn connect(bus: &Path) -> Result<Connection, String> {
    let address = format!("unix:path={}", bus.display());
    let conn = zbus::connection::Builder::address(address.as_str())
        .build()
        .await
        .map_err(|e| {
            format!(
                "the system bus at {} did not accept a connection ({e})",
                bus.display()
            )
        })?;
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
            "polkit does not know archgate's actions {} (installed in /{ACTIONS_FILE}, but polkit has not read them)",
            missing.join(", ")
        ));
    }
    Ok(conn)
}

static CANCEL_SEQ: AtomicU64 = AtomicU64::new(0);

pub(super) async fn check(
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
pub(super) fn outcome(authorized: bool, challenge: bool) -> Result<(), PresenceError> {
    match (authorized, challenge) {
        (true, _) => Ok(()),
        (false, true) => Err(PresenceError::NoAgent),
        (false, false) => Err(PresenceError::NotAuthorized),
    }
}

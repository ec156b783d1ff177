//! Desktop notifications with actions: a push channel of the approval broker over D-Bus
//! (`org.freedesktop.Notifications` on the session bus — mako, dunst, swaync, GNOME, KDE).
//!
//! Each question becomes a notification with the actions Allow and Deny. `ActionInvoked` answers
//! it; `NotificationClosed` with reason 2 (dismissed by the person) answers `cancelled`; an
//! expired notification says nothing (the deadline decides). When the question is decided
//! elsewhere, the notification is withdrawn with `CloseNotification`.
//!
//! Signals are accepted only from the bus name that owns `org.freedesktop.Notifications` (the
//! bus daemon stamps the sender, so another program on the bus cannot forge a click), and only
//! for notifications this process showed.

use archgate_core::approval::{Answer, Broker, Channel, Question};
use futures::StreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use zbus::Variant as Value;
use zbus::{Connection, MatchRule, MessageStream};

use crate::app::App;
use crate::person::actions::{Choice, answer_confirmed};
use crate::person::presence::Subject;

const DEST: &str = "org.freedesktop.Notifications";
const PATH: &str = "/org/freedesktop/Notifications";
const CHANNEL: &str = "notification";
/// `NotificationClosed` reason: dismissed by the user.
const DISMISSED: u32 = 2;
/// Connecting to the bus and asking the server about itself must not hold up the start.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Clone, Copy)]
enum Slot {
    /// `Notify` was sent; its id is not known yet.
    Sending,
    Shown(u32),
    /// Decided while `Notify` was still on its way: close it when the id arrives.
    Withdrawn,
}

#[derive(Default)]
struct Map {
    by_question: HashMap<String, Slot>,
    by_notification: HashMap<u32, String>,
}

pub struct Notifications {
    conn: Connection,
    map: Arc<Mutex<Map>>,
    rt: tokio::runtime::Handle,
    listener: tokio::task::JoinHandle<()>,
}

impl Drop for Notifications {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    #[error("no session bus (DBUS_SESSION_BUS_ADDRESS is unset)")]
    NoBus,
    #[error("could not reach the session bus: {0}")]
    Bus(#[from] zbus::Error),
    #[error("the session bus did not answer within {0:?}")]
    TimedOut(Duration),
    #[error("no notification server on the session bus")]
    NoServer,
    #[error("the notification server does not support actions")]
    NoActions,
}

impl NotifyError {
    pub fn kind(&self) -> &'static str {
        match self {
            NotifyError::NoBus | NotifyError::NoServer | NotifyError::NoActions => "not_available",
            NotifyError::Bus(_) => "could_not_reach",
            NotifyError::TimedOut(_) => "timed_out",
        }
    }
}

fn lock(m: &Mutex<Map>) -> std::sync::MutexGuard<'_, Map> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Connects to the session bus and checks for a notification server with actions.
pub async fn start(app: Arc<App>) -> Result<Arc<Notifications>, NotifyError> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err(NotifyError::NoBus);
    }
    tokio::time::timeout(CONNECT_TIMEOUT, connect(app))
        .await
        .map_err(|_| NotifyError::TimedOut(CONNECT_TIMEOUT))?
}

async fn connect(app: Arc<App>) -> Result<Arc<Notifications>, NotifyError> {
    let broker = app.gate.broker().clone();
    let conn = Connection::session().await?;
    let owner: String = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus"),
            "GetNameOwner",
            &(DEST,),
        )
        .await
        .map_err(|_| NotifyError::NoServer)?
        .body()
        .deserialize()?;
    let caps: Vec<String> = conn
        .call_method(Some(DEST), PATH, Some(DEST), "GetCapabilities", &())
        .await?
        .body()
        .deserialize()?;
    if !caps.iter().any(|c| c == "actions") {
        return Err(NotifyError::NoActions);
    }
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(owner.as_str())
        .interface(DEST)
        .path(PATH)
        .build();
    let rule = rule?;
    let mut stream = MessageStream::for_match_rule(rule, &conn, None).await?;
    let map: Arc<Mutex<Map>> = Arc::default();
    let listen_map = map.clone();
    let listener = tokio::spawn(async move {
        while let Some(Ok(msg)) = stream.next().await {
            let header = msg.header();
            if header.sender().map(|s| s.as_str()) != Some(owner.as_str()) {
                continue;
            }
            let member = header.member().map(|m| m.as_str().to_owned());
            match member.as_deref() {
                Some("ActionInvoked") => {
                    let Ok((nid, action)) = msg.body().deserialize::<(u32, String)>() else {
                        continue;
                    };
                    let Some(qid) = forget(&listen_map, nid) else {
                        continue;
                    };
                    let choice = match action.as_str() {
                        "allow" => Choice::Allow,
                        "deny" => Choice::Deny,
                        _ => continue,
                    };
                    // Anyone of this user can invoke an action (`makoctl invoke`): a yes is
                    // confirmed through polkit, for the daemon itself, when presence needs it.
                    let app = app.clone();
                    tokio::spawn(async move {
                        let me = Subject::this_process().map_err(|e| e.to_string());
                        if let Err(e) = answer_confirmed(&app.gate, &qid, choice, CHANNEL, me).await
                        {
                            tracing::info!(id = %qid, "notification answer did nothing: {e}");
                        }
                    });
                }
                Some("NotificationClosed") => {
                    let Ok((nid, reason)) = msg.body().deserialize::<(u32, u32)>() else {
                        continue;
                    };
                    let Some(qid) = forget(&listen_map, nid) else {
                        continue;
                    };
                    if reason == DISMISSED
                        && let Err(e) = broker.answer(&qid, Answer::Cancel, CHANNEL)
                    {
                        tracing::info!(id = %qid, "dismissal did nothing: {e}");
                    }
                }
                _ => {}
            }
        }
    });
    tracing::info!("desktop notifications with actions are an approval channel");
    Ok(Arc::new(Notifications {
        conn,
        map,
        rt: tokio::runtime::Handle::current(),
        listener,
    }))
}

/// Removes a shown notification from the map, returning its question.
fn forget(map: &Mutex<Map>, nid: u32) -> Option<String> {
    let mut g = lock(map);
    let qid = g.by_notification.remove(&nid)?;
    g.by_question.remove(&qid);
    Some(qid)
}

/// How much of the command and of the arguments a notification shows; the rest is on the page
/// and in `archgate show ID`.
const COMMAND_SHOWN: usize = 200;
const ARGS_SHOWN: usize = 300;
/// How much of "this follows text from …" a notification shows.
const FOLLOWS_SHOWN: usize = 300;

/// The notification's summary and body for `q`: every agent-written string escaped for the
/// screen (`for_terminal`) and for markup, the command and the arguments cut to a bounded length,
/// with a pointer to where the whole question is when something was cut.
fn texts(q: &Question) -> (String, String) {
    use archgate_core::text::{cut, display_args, for_terminal, for_terminal_cut};
    let summary = format!(
        "archgate: {} asks to run",
        escape(&for_terminal_cut(&q.tool, 64))
    );
    let command = for_terminal(&q.summary);
    let args: Vec<String> = display_args(&q.args)
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let args = args.join("; ");
    let was_cut = command.chars().count() > COMMAND_SHOWN || args.chars().count() > ARGS_SHOWN;
    let mut body = escape(&for_terminal_cut(&q.summary, COMMAND_SHOWN));
    if let Some(f) = &q.follows {
        // What the agent read just before: the person decides knowing it.
        body.push_str(&format!(
            "\n<b>After untrusted text:</b> {}",
            escape(&for_terminal_cut(&f.sentence, FOLLOWS_SHOWN))
        ));
    }
    if !args.is_empty() {
        body.push('\n');
        body.push_str(&escape(&cut(&args, ARGS_SHOWN)));
    }
    if was_cut {
        body.push_str(&format!(
            "\n… see <b>archgate show {}</b> or the approval page for all of it",
            escape(&for_terminal(&q.id))
        ));
    }
    body.push_str(&format!(
        "\n<i>{} · {} · id {}</i>",
        escape(&for_terminal(&q.client)),
        q.tier,
        escape(&for_terminal(&q.id))
    ));
    (summary, body)
}

/// Notification bodies may be markup: what an agent wrote is shown as text.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

async fn close(conn: &Connection, nid: u32) {
    if let Err(e) = conn
        .call_method(Some(DEST), PATH, Some(DEST), "CloseNotification", &(nid,))
        .await
    {
        tracing::debug!(nid, "CloseNotification failed: {e}");
    }
}

impl Channel for Notifications {
    fn name(&self) -> &'static str {
        CHANNEL
    }

    fn ask(&self, q: &Question, _broker: Broker) {
        lock(&self.map)
            .by_question
            .insert(q.id.clone(), Slot::Sending);
        let conn = self.conn.clone();
        let map = self.map.clone();
        let qid = q.id.clone();
        let (summary, body) = texts(q);
        let now = archgate_core::person::now_secs();
        let expire_ms =
            i32::try_from(q.deadline.saturating_sub(now).saturating_mul(1000)).unwrap_or(i32::MAX);
        self.rt.spawn(async move {
            let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
            hints.insert("urgency", Value::U8(1));
            hints.insert("category", Value::from("archgate.approval"));
            let actions = vec!["allow", "Allow", "deny", "Deny"];
            let sent = conn
                .call_method(
                    Some(DEST),
                    PATH,
                    Some(DEST),
                    "Notify",
                    &(
                        "archgate",
                        0u32,
                        "dialog-question",
                        summary.as_str(),
                        body.as_str(),
                        actions,
                        hints,
                        expire_ms,
                    ),
                )
                .await
                .and_then(|m| m.body().deserialize::<u32>());
            let nid = match sent {
                Ok(n) => n,
                Err(e) => {
                    tracing::warn!(id = %qid, "could not show the notification: {e}");
                    lock(&map).by_question.remove(&qid);
                    return;
                }
            };
            let withdrawn = {
                let mut g = lock(&map);
                match g.by_question.get(&qid).copied() {
                    Some(Slot::Sending) => {
                        g.by_question.insert(qid.clone(), Slot::Shown(nid));
                        g.by_notification.insert(nid, qid.clone());
                        false
                    }
                    _ => {
                        g.by_question.remove(&qid);
                        true
                    }
                }
            };
            if withdrawn {
                close(&conn, nid).await;
            }
        });
    }

    fn withdraw(&self, id: &str) {
        let shown = {
            let mut g = lock(&self.map);
            match g.by_question.get(id).copied() {
                Some(Slot::Shown(nid)) => {
                    g.by_question.remove(id);
                    g.by_notification.remove(&nid);
                    Some(nid)
                }
                Some(Slot::Sending) => {
                    g.by_question.insert(id.to_owned(), Slot::Withdrawn);
                    None
                }
                _ => None,
            }
        };
        if let Some(nid) = shown {
            let conn = self.conn.clone();
            self.rt.spawn(async move { close(&conn, nid).await });
        }
    }
}

/// A plain notification without actions (e.g. a config file that does not parse). Best effort:
/// no session bus or no server is an error the caller may ignore.
pub async fn plain(summary: &str, body: &str) -> Result<(), NotifyError> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err(NotifyError::NoBus);
    }
    let send = async {
        let conn = Connection::session().await?;
        let hints: HashMap<&str, Value<'_>> = HashMap::new();
        conn.call_method(
            Some(DEST),
            PATH,
            Some(DEST),
            "Notify",
            &(
                "archgate",
                0u32,
                "dialog-warning",
                summary,
                body,
                Vec::<&str>::new(),
                hints,
                -1i32,
            ),
        )
        .await?;
        Ok::<(), NotifyError>(())
    };
    tokio::time::timeout(CONNECT_TIMEOUT, send)
        .await
        .map_err(|_| NotifyError::TimedOut(CONNECT_TIMEOUT))?
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(summary: &str, args: serde_json::Value) -> Question {
        Question {
            id: "c-7".into(),
            client: "local".into(),
            tool: "omarchy_run".into(),
            route: "omarchy_run theme set".into(),
            summary: summary.into(),
            sentence: archgate_core::sentence::Sentence {
                parts: Vec::new(),
                replaces: None,
            },
            picture: None,
            tier: archgate_policy::Tier::Act,
            args,
            created: 0,
            deadline: 60,
            rule_allowed: true,
            follows: None,
        }
    }

    #[test]
    fn the_body_shows_the_command_and_the_arguments_escaped() {
        let q = question(
            "omarchy-theme-set \u{202e}x",
            serde_json::json!({"route": "theme set", "args": ["--help; rm -rf ~", "\u{1b}[2K<b>"]}),
        );
        let (summary, body) = texts(&q);
        assert_eq!(summary, "archgate: omarchy_run asks to run");
        assert!(body.contains("omarchy-theme-set \\u{202e}x"), "{body}");
        assert!(body.contains("--help; rm -rf ~"), "{body}");
        assert!(body.contains("\\x1b[2K&lt;b&gt;"), "{body}");
        assert!(!body.contains("archgate show"), "nothing was cut: {body}");
        assert!(
            !body.chars().any(|c| c.is_control() && c != '\n'),
            "{body:?}"
        );
    }

    #[test]
    fn the_body_says_what_the_session_read_before_escaped() {
        let mut q = question("omarchy-theme-set nord", serde_json::json!({}));
        let label = "AUR package \u{1b}[2K<b>evil's PKGBUILD and files".to_owned();
        q.follows = Some(Box::new(archgate_core::untrusted::Follows {
            source: archgate_core::provenance::Source::AurFiles,
            sentence: format!("this follows text from {label}, read 12 s ago"),
            label,
            age_s: 12,
            matched: vec![],
        }));
        let (_, body) = texts(&q);
        assert!(body.contains("After untrusted text:"), "{body}");
        assert!(body.contains("\\x1b[2K&lt;b&gt;evil's PKGBUILD"), "{body}");
        assert!(body.contains("read 12 s ago"), "{body}");
        assert!(
            !body.chars().any(|c| c.is_control() && c != '\n'),
            "{body:?}"
        );
    }

    #[test]
    fn a_long_body_is_cut_and_points_to_the_whole_question() {
        let q = question("wl-copy", serde_json::json!({"text": "z".repeat(2048)}));
        let (_, body) = texts(&q);
        assert!(body.len() < 1000, "{} bytes", body.len());
        assert!(body.contains("archgate show c-7"), "{body}");
    }

    #[test]
    fn agent_text_cannot_become_markup() {
        assert_eq!(
            escape("<b>rm</b> & <a href=x>"),
            "&lt;b&gt;rm&lt;/b&gt; &amp; &lt;a href=x&gt;"
        );
    }
}

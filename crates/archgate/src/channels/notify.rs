//! Desktop notifications with actions: a push channel of the approval broker over D-Bus
//! (`org.freedesktop.Notifications` on the session bus — mako, dunst, swaync, GNOME, KDE).
//!
//! Each question becomes a notification (texts: `notify_text.rs`) with a default action and the
//! actions Allow and Deny. The default action (mako's click and `makoctl invoke`, Omarchy's
//! Super+Alt+Comma) opens the approval page at that call, logged in once, through the person's
//! browser opener (`xdg-open`, found by their `[exec]` settings); it never answers. Allow and
//! Deny answer it; `NotificationClosed` with reason 2 (dismissed by the person) answers
//! `cancelled`; an expired notification says nothing (the deadline decides). When the question
//! is decided anywhere, or its deadline passes, the notification is withdrawn with
//! `CloseNotification`. A question that ran out unanswered leaves one plain follow-up
//! notification (no actions, no expiry; it replaces the previous follow-up), so a person who had
//! do-not-disturb on learns that something was declined.
//!
//! Omarchy's own notification daemon (its Quickshell shell, since it replaced mako) is served the
//! same way: its card's click invokes "default" and then closes the notification as dismissed
//! (the `opened` set keeps that from being a no); in do-not-disturb it closes a new notification
//! as dismissed before `Notify` returns — a close received before the `Notify` answer (the
//! connection's receive order, not which task handles it first) is not a no either; a closed notification leaves the server, while its card keeps its own timer (≤ 30 s).
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

use super::notify_text::{expired, texts};
use super::page::PageHandle;
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
    /// Notifications whose default action opened the page: the server may close them right
    /// after (mako does), and that close is not the person dismissing the question.
    opened: std::collections::HashSet<u32>,
    /// Where each notification's `Notify` answer came in the connection's stream: a close that
    /// came in before it was sent before `Notify` returned (Omarchy's shell in do-not-disturb),
    /// however late the two are handled (two tasks), and is not the person's no.
    answered_at: HashMap<u32, zbus::message::Sequence>,
    /// Every question shown, until it is decided: what the follow-up names if it runs out.
    asked: HashMap<String, Question>,
    /// The follow-up on screen (its id is replaced by the next one) and how many it counts.
    follow_up: Option<(u32, usize)>,
}

pub struct Notifications {
    conn: Connection,
    map: Arc<Mutex<Map>>,
    rt: tokio::runtime::Handle,
    listener: tokio::task::JoinHandle<()>,
    outcomes: tokio::task::JoinHandle<()>,
}

impl Drop for Notifications {
    fn drop(&mut self) {
        self.listener.abort();
        self.outcomes.abort();
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
/// `page`, when it runs, is where the default action leads.
pub async fn start(
    app: Arc<App>,
    page: Option<PageHandle>,
) -> Result<Arc<Notifications>, NotifyError> {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return Err(NotifyError::NoBus);
    }
    tokio::time::timeout(CONNECT_TIMEOUT, connect(app, page))
        .await
        .map_err(|_| NotifyError::TimedOut(CONNECT_TIMEOUT))?
}

async fn connect(
    app: Arc<App>,
    page: Option<PageHandle>,
) -> Result<Arc<Notifications>, NotifyError> {
    let broker = app.gate.broker().clone();
    let outcome_broker = broker.clone();
    // Subscribed before the first question can be shown: no outcome is missed.
    let decided = broker.subscribe();
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
                    if action == "default" {
                        // Opens the page at the call; the question stays open.
                        let qid = {
                            let mut g = lock(&listen_map);
                            let qid = g.by_notification.get(&nid).cloned();
                            if qid.is_some() {
                                g.opened.insert(nid);
                            }
                            qid
                        };
                        if let Some(qid) = qid {
                            open_page(&app, page.as_ref(), &qid);
                        }
                        continue;
                    }
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
                        // The clients as they are now (`control.rs` `Request::Answer`).
                        app.sync_clients().await;
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
                    let (opened, before_shown) = {
                        let mut g = lock(&listen_map);
                        let before = g
                            .answered_at
                            .get(&nid)
                            .is_some_and(|at| msg.recv_position() < *at);
                        (g.opened.remove(&nid), before)
                    };
                    let Some(qid) = forget(&listen_map, nid) else {
                        continue;
                    };
                    if reason == DISMISSED
                        && !opened
                        && !before_shown
                        && let Err(e) = broker.answer(&qid, Answer::Cancel, CHANNEL)
                    {
                        tracing::info!(id = %qid, "dismissal did nothing: {e}");
                    }
                }
                _ => {}
            }
        }
    });
    let outcomes = tokio::spawn(follow_ups(
        conn.clone(),
        map.clone(),
        outcome_broker,
        decided,
    ));
    tracing::info!("desktop notifications with actions are an approval channel");
    Ok(Arc::new(Notifications {
        conn,
        map,
        rt: tokio::runtime::Handle::current(),
        listener,
        outcomes,
    }))
}

/// Removes a shown notification from the map, returning its question.
fn forget(map: &Mutex<Map>, nid: u32) -> Option<String> {
    let mut g = lock(map);
    g.opened.remove(&nid);
    g.answered_at.remove(&nid);
    let qid = g.by_notification.remove(&nid)?;
    g.by_question.remove(&qid);
    Some(qid)
}

/// The default action: the approval page at call `qid`, logged in once, in the person's
/// browser. Anyone of this user can invoke it (`makoctl invoke`): it opens what `archgate ui`
/// opens, and answers nothing.
fn open_page(app: &App, page: Option<&PageHandle>, qid: &str) {
    let Some(page) = page else {
        tracing::info!(id = %qid, "no approval page runs here; the notification's Allow and Deny, or `archgate approve`, answer it");
        return;
    };
    let file = match page.login_file_at(qid) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!(id = %qid, "could not open the approval page: {e}");
            return;
        }
    };
    let spec = archgate_exec::CommandSpec::new("xdg-open").arg(file.display().to_string());
    let exec = app.gate.config().current().executor_config();
    if let Err(e) = archgate_exec::spawn_for_person_with(exec, spec) {
        tracing::warn!(id = %qid, "could not start the browser opener: {e}");
    }
}

/// Watches the broker's outcomes: a question shown here that ran out unanswered leaves one
/// plain follow-up (replacing the previous one, counting them).
async fn follow_ups(
    conn: Connection,
    map: Arc<Mutex<Map>>,
    broker: Broker,
    mut decided: tokio::sync::broadcast::Receiver<archgate_core::approval::BrokerEvent>,
) {
    use archgate_core::approval::BrokerEvent;
    use tokio::sync::broadcast::error::RecvError;
    loop {
        let (id, outcome) = match decided.recv().await {
            Ok(BrokerEvent::Decided { id, outcome }) => (id, outcome),
            Ok(BrokerEvent::Asked { .. }) => continue,
            Err(RecvError::Lagged(_)) => {
                // Outcomes were missed: forget every question no longer waiting (no follow-up
                // for those), so the map stays as small as what waits.
                let waiting: std::collections::HashSet<String> =
                    broker.pending().into_iter().map(|q| q.id).collect();
                lock(&map).asked.retain(|id, _| waiting.contains(id));
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        let (q, replaces, n) = {
            let mut g = lock(&map);
            let Some(q) = g.asked.remove(&id) else {
                continue;
            };
            if outcome != "timed_out" {
                continue;
            }
            let (replaces, n) = g.follow_up.map_or((0, 1), |(nid, n)| (nid, n + 1));
            (q, replaces, n)
        };
        let (summary, body) = expired(&q, n);
        let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
        hints.insert("urgency", Value::U8(1));
        hints.insert("category", Value::from("archgate.expired"));
        let sent = conn
            .call_method(
                Some(DEST),
                PATH,
                Some(DEST),
                "Notify",
                &(
                    "archgate",
                    replaces,
                    "dialog-information",
                    summary.as_str(),
                    body.as_str(),
                    Vec::<&str>::new(),
                    hints,
                    // Never expires: it waits for the person (do-not-disturb keeps it hidden).
                    0i32,
                ),
            )
            .await
            .and_then(|m| m.body().deserialize::<u32>());
        match sent {
            Ok(nid) => lock(&map).follow_up = Some((nid, n)),
            Err(e) => tracing::info!(id = %id, "could not show the follow-up: {e}"),
        }
    }
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
        let now = archgate_core::person::now_secs();
        let (summary, body) = texts(q, now);
        lock(&self.map).asked.insert(q.id.clone(), q.clone());
        let expire_ms =
            i32::try_from(q.deadline.saturating_sub(now).saturating_mul(1000)).unwrap_or(i32::MAX);
        self.rt.spawn(async move {
            let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
            hints.insert("urgency", Value::U8(1));
            hints.insert("category", Value::from("archgate.approval"));
            // Popup only, never kept in a server's history: once answered a question must not
            // wait there as if it still did. (Omarchy's shell keeps every other notification
            // in its "pending" list, and closing one there does not remove it.) The follow-up
            // for a question that ran out is kept: that is what a person in do-not-disturb
            // finds later.
            hints.insert("transient", Value::Bool(true));
            // "default" is what a click and a bare `makoctl invoke` do: open the page, never
            // answer.
            let actions = vec!["default", "Open", "allow", "Allow", "deny", "Deny"];
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
                .and_then(|m| Ok((m.body().deserialize::<u32>()?, m.recv_position())));
            let (nid, at) = match sent {
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
                        g.answered_at.insert(nid, at);
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

/// Whether the notification server on the session bus at `address` can ask a question: its
/// name when it is there and supports actions (`archgate doctor`'s verdict).
pub async fn probe(address: &str) -> Result<String, NotifyError> {
    let ask = async {
        let conn = zbus::connection::Builder::address(address).build().await?;
        let caps: Vec<String> = conn
            .call_method(Some(DEST), PATH, Some(DEST), "GetCapabilities", &())
            .await
            .map_err(|_| NotifyError::NoServer)?
            .body()
            .deserialize()?;
        if !caps.iter().any(|c| c == "actions") {
            return Err(NotifyError::NoActions);
        }
        let (name, _vendor, version, _spec): (String, String, String, String) = conn
            .call_method(Some(DEST), PATH, Some(DEST), "GetServerInformation", &())
            .await?
            .body()
            .deserialize()?;
        Ok(format!("{name} {version}"))
    };
    tokio::time::timeout(CONNECT_TIMEOUT, ask)
        .await
        .map_err(|_| NotifyError::TimedOut(CONNECT_TIMEOUT))?
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

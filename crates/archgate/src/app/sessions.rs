//! Live MCP sessions, so changes the person makes reach connected agents at once.
//!
//! After a config reload or a change to the clients file, `refresh` recomputes each session's
//! visible tool set: a session whose set changed gets exactly one `tools/list_changed` (a
//! policy-only edit sends nothing); a session whose token no longer authenticates (revoked) is
//! closed; a session whose client was renamed carries on under the new name.
//!
//! It also remembers when each HTTP client last made an authenticated request, and counts live
//! sessions per client, for the approval page (in memory, since this process started).
//!
//! Stateful HTTP sessions are tracked from the answer that opened them: each belongs to the
//! token that opened it, a client keeps at most `server.max_sessions_per_client` live (opening
//! one more closes its least recently used one), and a session that ends — deleted by its
//! client, closed to make room, or its client revoked — ends at once for its parked calls too:
//! their questions are withdrawn before anyone can answer them. A revoked client's questions
//! are withdrawn whatever transport asked them, and a question asked with a token is withdrawn
//! once that token no longer authenticates, whatever its name is now (a stateless call's, a
//! task's: attack 23 F1, class *a grant's waiting work keyed by the client's name, while the
//! grant is the token*).

use archgate_core::config::Config;
use archgate_core::gate::Catalogue;
use rmcp::model::{ServerNotification, ToolListChangedNotification};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

use archgate_core::clients::{ClientStore, LOCAL_CLIENT};
use archgate_core::gate::Client;

struct Live {
    client: String,
    /// The bearer token the session authenticated with (HTTP); `None` for stdio.
    token: Option<String>,
    session_id: Option<SessionId>,
    to: Notify,
    visible: BTreeSet<String>,
}

/// Where a session's notifications go: its peer (handshake era) or its open
/// `subscriptions/listen` stream (2026-07-28).
#[derive(Clone)]
pub enum Notify {
    Peer(Peer<RoleServer>),
    Listen(SubscriptionSink),
}

impl Notify {
    fn closed(&self) -> bool {
        match self {
            Notify::Peer(p) => p.is_transport_closed(),
            Notify::Listen(_) => false,
        }
    }

    async fn tools_changed(&self) {
        let r = match self {
            Notify::Peer(p) => p
                .notify_tool_list_changed()
                .await
                .map_err(|e| e.to_string()),
            Notify::Listen(s) => s
                .send(ServerNotification::ToolListChangedNotification(
                    ToolListChangedNotification::default(),
                ))
                .await
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = r {
            tracing::debug!("tools/list_changed not delivered: {e}");
        }
    }
}

/// A stateful HTTP session, from the answer that opened it.
struct Opened {
    client: String,
    /// The token that opened it; another token may not use it.
    token: String,
    last_used: Instant,
    /// Cancelled when the session ends; parked calls of the session wait on it.
    ended: CancellationToken,
}

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<u64, Live>>,
    next: AtomicU64,
    manager: Mutex<Option<Arc<LocalSessionManager>>>,
    broker: Mutex<Option<archgate_core::approval::Broker>>,
    /// Client name → Unix seconds of its last authenticated HTTP request.
    seen: super::last_seen::LastSeen,
    opened: Mutex<HashMap<SessionId, Opened>>,
    /// `tools/call` answers under way in a session, by (session, JSON-RPC id as JSON): cancelled
    /// when the answer's stream is dropped unfinished (the client hung up) or the session ends.
    streams: Mutex<HashMap<(SessionId, String), CancellationToken>>,
    /// The stored clients' names as of the last change (`note_stored`, `withdraw_orphans`): a
    /// name that was stored and is no longer is a revoked or renamed grant, even when a bridged
    /// client may also go by it (`claude-code`).
    stored: Mutex<BTreeSet<String>>,
}

/// Watches one `tools/call` answer in a session: dropped before `finished`, it cancels the call
/// (its parked question is withdrawn).
pub struct AnswerWatch {
    sessions: Arc<Sessions>,
    key: (SessionId, String),
    token: CancellationToken,
    finished: bool,
}

impl AnswerWatch {
    pub fn finished(&mut self) {
        self.finished = true;
    }
}

impl Drop for AnswerWatch {
    fn drop(&mut self) {
        if !self.finished {
            self.token.cancel();
        }
        self.sessions
            .streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

pub fn visible_names(catalogue: &Catalogue, client: &Client, config: &Config) -> BTreeSet<String> {
    catalogue
        .visible(client, config)
        .map(|t| t.spec().name.to_owned())
        .collect()
}

impl Sessions {
    pub fn set_manager(&self, m: Arc<LocalSessionManager>) {
        *self.manager.lock().unwrap_or_else(|p| p.into_inner()) = Some(m);
    }

    /// The broker whose questions a revoked client's calls left behind are withdrawn from.
    pub fn set_broker(&self, b: archgate_core::approval::Broker) {
        *self.broker.lock().unwrap_or_else(|p| p.into_inner()) = Some(b);
    }

    fn manager(&self) -> Option<Arc<LocalSessionManager>> {
        self.manager
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn lock_opened(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Opened>> {
        self.opened.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A session was opened by `token` (client `client`). Sessions the SDK no longer holds are
    /// forgotten; past `cap` live sessions of this client, the least recently used are closed.
    pub async fn opened(&self, client: &str, token: &str, id: SessionId, cap: usize) {
        let held: Option<BTreeSet<SessionId>> = match self.manager() {
            Some(m) => Some(m.sessions.read().await.keys().cloned().collect()),
            None => None,
        };
        let evict: Vec<SessionId> = {
            let mut o = self.lock_opened();
            if let Some(held) = &held {
                let gone: Vec<SessionId> =
                    o.keys().filter(|k| !held.contains(*k)).cloned().collect();
                for k in gone {
                    if let Some(s) = o.remove(&k) {
                        s.ended.cancel();
                    }
                }
            }
            o.insert(
                id.clone(),
                Opened {
                    client: client.to_owned(),
                    token: token.to_owned(),
                    last_used: Instant::now(),
                    ended: CancellationToken::new(),
                },
            );
            let mut mine: Vec<(Instant, SessionId)> = o
                .iter()
                .filter(|(k, s)| s.token == token && **k != id)
                .map(|(k, s)| (s.last_used, k.clone()))
                .collect();
            mine.sort();
            let over = (mine.len() + 1).saturating_sub(cap.max(1));
            mine.into_iter().take(over).map(|(_, k)| k).collect()
        };
        for sid in evict {
            tracing::info!(client, session = %sid, "closing the least recently used session: the client opened more than {cap}");
            self.end(&sid).await;
        }
    }

    /// Ends a session now: its parked calls are withdrawn, and the SDK closes it.
    async fn end(&self, sid: &SessionId) {
        self.ended(sid);
        if let Some(m) = self.manager() {
            let _ = m.close_session(sid).await;
        }
    }

    /// The session ended (its client deleted it): its parked calls are withdrawn at once.
    pub fn ended(&self, sid: &SessionId) {
        if let Some(s) = self.lock_opened().remove(sid) {
            s.ended.cancel();
        }
    }

    /// A `tools/call` with JSON-RPC id `id` (as JSON) is sent in session `sid`; the guard goes
    /// with its answer's body.
    pub fn call_started(self: &Arc<Self>, sid: &SessionId, id: String) -> AnswerWatch {
        let token = self.end_token(Some(sid)).child_token();
        let key = (sid.clone(), id);
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), token.clone());
        AnswerWatch {
            sessions: self.clone(),
            key,
            token,
            finished: false,
        }
    }

    /// Cancelled when this call must stop for archgate's reasons: its session ended, or its
    /// answer's stream was dropped unfinished. Never, outside a tracked session.
    pub fn call_token(&self, sid: Option<&str>, id: &str) -> CancellationToken {
        if let Some(sid) = sid {
            let key = (SessionId::from(sid.to_owned()), id.to_owned());
            if let Some(t) = self
                .streams
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&key)
            {
                return t.clone();
            }
        }
        self.end_token(sid)
    }

    /// Cancelled when this session ends; never, for no session or one not tracked.
    pub fn end_token(&self, sid: Option<&str>) -> CancellationToken {
        let Some(sid) = sid else {
            return CancellationToken::new();
        };
        self.lock_opened()
            .get(sid)
            .map(|s| s.ended.clone())
            .unwrap_or_default()
    }

    /// Whether the session exists but was opened with another token.
    pub fn owned_by_other(&self, sid: &SessionId, token: &str) -> bool {
        self.lock_opened()
            .get(sid)
            .is_some_and(|s| !archgate_core::clients::secrets_equal(&s.token, token))
    }

    /// Whether the SDK holds this session.
    pub async fn exists(&self, sid: &SessionId) -> bool {
        match self.manager() {
            Some(m) => m.sessions.read().await.contains_key(sid),
            None => false,
        }
    }

    pub fn used(&self, sid: &SessionId) {
        if let Some(s) = self.lock_opened().get_mut(sid) {
            s.last_used = Instant::now();
        }
    }

    /// Stateful sessions the SDK holds now, all clients together.
    pub async fn live_total(&self) -> usize {
        match self.manager() {
            Some(m) => m.sessions.read().await.len(),
            None => 0,
        }
    }

    /// Tracked stateful sessions per client name.
    pub fn tracked_by_client(&self) -> std::collections::BTreeMap<String, usize> {
        let mut n = std::collections::BTreeMap::new();
        for s in self.lock_opened().values() {
            *n.entry(s.client.clone()).or_insert(0) += 1;
        }
        n
    }

    /// Notes the stored clients' names: the baseline `withdraw_orphans` compares with.
    pub fn note_stored(&self, clients: &ClientStore) {
        *self.stored.lock().unwrap_or_else(|p| p.into_inner()) =
            clients.list().into_iter().map(|c| c.name).collect();
    }

    /// Withdraws the questions of clients that no longer exist (revoked; a renamed client's
    /// open questions go too — its agent asks again under the new name). A client is every name
    /// the daemon serves (`server::bridge::known_client`): the stored ones, `local`, `default`,
    /// a `[clients.NAME]` section, and the kinds a bridged client may be named by — a bridged
    /// `cursor` is no orphan because some other client was added; but a stored client revoked or
    /// renamed since the last change is gone whatever its name (`claude-code`, which `setup`
    /// gives an HTTP client, is also a kind).
    /// And the questions of a token that no longer authenticates, whatever name they carry.
    fn withdraw_orphans(&self, clients: &ClientStore, config: &Config) {
        let Some(broker) = self
            .broker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        else {
            return;
        };
        let stored: BTreeSet<String> = clients.list().into_iter().map(|c| c.name).collect();
        // Revoked or renamed since the last change: stored then, not now.
        let removed: BTreeSet<String> = {
            let mut before = self.stored.lock().unwrap_or_else(|p| p.into_inner());
            let removed = before.difference(&stored).cloned().collect();
            *before = stored.clone();
            removed
        };
        let known: BTreeSet<String> = stored
            .iter()
            .cloned()
            .chain([
                LOCAL_CLIENT.to_owned(),
                archgate_core::clients::DEFAULT_CLIENT.to_owned(),
            ])
            .chain(config.clients.keys().cloned())
            .chain(
                crate::cli::ClientKind::ALL
                    .iter()
                    .map(|k| k.names().0.to_owned()),
            )
            .collect();
        let gone: BTreeSet<String> = broker
            .pending()
            .into_iter()
            .map(|q| q.client)
            .filter(|c| !known.contains(c) || removed.contains(c))
            .collect();
        for c in gone {
            let n = broker.withdraw_client(&c);
            if n > 0 {
                tracing::info!(client = %c, "withdrew {n} question(s) of a client that no longer exists");
            }
        }
        // A question is its token's: one whose token no longer authenticates goes, whatever
        // name it was asked under — `default` revoked (its token rotated, the name stays), or a
        // client revoked and added again before this change was noticed (attack 23 F1). The same
        // judgement the sessions below get; a task's question and a relay ticket's are such
        // questions too.
        let n = broker.withdraw_where(|q| q.token.is_some_and(|t| !clients.holds(&t)));
        if n > 0 {
            tracing::info!("withdrew {n} question(s) of a token that no longer authenticates");
        }
    }

    /// Registers a session; returns its key (for `unregister`).
    pub fn register(
        &self,
        client: &Client,
        token: Option<String>,
        session_id: Option<SessionId>,
        to: Notify,
        visible: BTreeSet<String>,
    ) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        // A session id seen again replaces its old entry (re-initialize).
        if let Some(sid) = &session_id {
            live.retain(|_, l| l.session_id.as_ref() != Some(sid));
        }
        live.insert(
            id,
            Live {
                client: client.name.clone(),
                token,
                session_id,
                to,
                visible,
            },
        );
        id
    }

    pub fn unregister(&self, key: u64) {
        self.live
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
    }

    /// Notes an authenticated request from this client, now.
    pub fn touch(&self, client: &str) {
        self.seen.touch(client, archgate_core::person::now_secs());
    }

    /// When this client last made an authenticated request (Unix seconds), if it did since start.
    pub fn last_seen(&self, client: &str) -> Option<u64> {
        self.seen.get(client)
    }

    /// A client was renamed: what is remembered of it follows the new name.
    pub fn renamed(&self, from: &str, to: &str) {
        self.seen.rename(from, to);
    }

    /// A client was revoked: forget when it was last seen.
    pub fn forget(&self, client: &str) {
        self.seen.forget(client);
    }

    /// Live (not yet closed) sessions per client name.
    pub fn count_by_client(&self) -> std::collections::BTreeMap<String, usize> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let mut n = std::collections::BTreeMap::new();
        for l in live.values().filter(|l| !l.to.closed()) {
            *n.entry(l.client.clone()).or_insert(0) += 1;
        }
        n
    }

    /// Recomputes every session against the config and clients in force now.
    pub async fn refresh(&self, catalogue: &Catalogue, config: &Config, clients: &ClientStore) {
        let mut notify = Vec::new();
        let mut close = Vec::new();
        {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            live.retain(|_, l| !l.to.closed());
            let mut gone = Vec::new();
            for (id, l) in live.iter_mut() {
                let client = match &l.token {
                    None => Some(Client {
                        name: LOCAL_CLIENT.into(),
                        grant: archgate_core::clients::grant_for(LOCAL_CLIENT, None, config),
                        agent: None,
                        transport: archgate_core::gate::Transport::Stdio,
                        token: None,
                    }),
                    // Tokens are unique, so a token that now names another client is that
                    // client renamed: the session follows the new name.
                    Some(t) => clients.authenticate(t, config),
                };
                match client {
                    None => {
                        gone.push(*id);
                        if let Some(sid) = &l.session_id {
                            close.push(sid.clone());
                        }
                    }
                    Some(c) => {
                        if c.name != l.client {
                            l.client = c.name.clone();
                        }
                        let now = visible_names(catalogue, &c, config);
                        if now != l.visible {
                            l.visible = now;
                            notify.push(l.to.clone());
                        }
                    }
                }
            }
            for id in gone {
                live.remove(&id);
            }
        }
        // Questions first: nothing a revoked client asked may be answered from here on.
        self.withdraw_orphans(clients, config);
        // Tracked sessions whose token no longer authenticates end too (even without a peer).
        {
            let o = self.lock_opened();
            for (sid, s) in o.iter() {
                if !s.token.is_empty()
                    && clients.authenticate(&s.token, config).is_none()
                    && !close.contains(sid)
                {
                    close.push(sid.clone());
                }
            }
        }
        for sid in &close {
            self.ended(sid);
        }
        for n in notify {
            n.tools_changed().await;
        }
        if let Some(m) = self.manager() {
            for sid in close {
                tracing::info!(session = %sid, "closing the session of a revoked client");
                let _ = m.close_session(&sid).await;
            }
        }
    }
}

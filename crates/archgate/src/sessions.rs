//! Live MCP sessions, so changes the person makes reach connected agents at once.
//!
//! After a config reload or a change to the clients file, `refresh` recomputes each session's
//! visible tool set: a session whose set changed gets exactly one `tools/list_changed` (a
//! policy-only edit sends nothing); a session whose token no longer authenticates (revoked) is
//! closed; a session whose client was renamed carries on under the new name.
//!
//! It also remembers when each HTTP client last made an authenticated request, and counts live
//! sessions per client, for the approval page (in memory, since this process started).

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

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<u64, Live>>,
    next: AtomicU64,
    manager: Mutex<Option<Arc<LocalSessionManager>>>,
    /// Client name → Unix seconds of its last authenticated HTTP request.
    seen: Mutex<HashMap<String, u64>>,
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
        let now = archgate_core::person::now_secs();
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        match seen.get_mut(client) {
            Some(t) => *t = now,
            None => {
                seen.insert(client.to_owned(), now);
            }
        }
    }

    /// When this client last made an authenticated request (Unix seconds), if it did since start.
    pub fn last_seen(&self, client: &str) -> Option<u64> {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(client)
            .copied()
    }

    /// A client was renamed: what is remembered of it follows the new name.
    pub fn renamed(&self, from: &str, to: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = seen.remove(from) {
            seen.insert(to.to_owned(), t);
        }
    }

    /// A client was revoked: forget when it was last seen.
    pub fn forget(&self, client: &str) {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(client);
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
        for n in notify {
            n.tools_changed().await;
        }
        let manager = self
            .manager
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(m) = manager {
            for sid in close {
                tracing::info!(session = %sid, "closing the session of a revoked client");
                let _ = m.close_session(&sid).await;
            }
        }
    }
}

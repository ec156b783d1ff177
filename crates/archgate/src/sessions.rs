//! Live MCP sessions, so changes the person makes reach connected agents at once.
//!
//! After a config reload or a change to the clients file, `refresh` recomputes each session's
//! visible tool set: a session whose set changed gets exactly one `tools/list_changed` (a
//! policy-only edit sends nothing); a session whose token no longer authenticates (revoked) is
//! closed.

use archgate_core::config::Config;
use archgate_core::gate::Catalogue;
use rmcp::service::{Peer, RoleServer};
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
    peer: Peer<RoleServer>,
    visible: BTreeSet<String>,
}

#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<u64, Live>>,
    next: AtomicU64,
    manager: Mutex<Option<Arc<LocalSessionManager>>>,
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

    pub fn register(
        &self,
        client: &Client,
        token: Option<String>,
        session_id: Option<SessionId>,
        peer: Peer<RoleServer>,
        visible: BTreeSet<String>,
    ) {
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
                peer,
                visible,
            },
        );
    }

    /// Recomputes every session against the config and clients in force now.
    pub async fn refresh(&self, catalogue: &Catalogue, config: &Config, clients: &ClientStore) {
        let mut notify = Vec::new();
        let mut close = Vec::new();
        {
            let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
            live.retain(|_, l| !l.peer.is_transport_closed());
            let mut gone = Vec::new();
            for (id, l) in live.iter_mut() {
                let client = match &l.token {
                    None => Some(Client {
                        name: LOCAL_CLIENT.into(),
                        grant: archgate_core::clients::grant_for(LOCAL_CLIENT, None, config),
                    }),
                    Some(t) => clients
                        .authenticate(t, config)
                        .filter(|c| c.name == l.client),
                };
                match client {
                    None => {
                        gone.push(*id);
                        if let Some(sid) = &l.session_id {
                            close.push(sid.clone());
                        }
                    }
                    Some(c) => {
                        let now = visible_names(catalogue, &c, config);
                        if now != l.visible {
                            l.visible = now;
                            notify.push(l.peer.clone());
                        }
                    }
                }
            }
            for id in gone {
                live.remove(&id);
            }
        }
        for p in notify {
            if let Err(e) = p.notify_tool_list_changed().await {
                tracing::debug!("tools/list_changed not delivered: {e}");
            }
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

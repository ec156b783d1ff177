//! What the person does with HTTP clients: list them with their grants, budgets and sessions,
//! add one (its token shown once), revoke one, rename one. One implementation behind
//! `archgate clients` and the approval page, so both validate, take effect and are audited the
//! same way.
//!
//! A change takes effect in this process at once: the store's in-memory list is what the HTTP
//! guard checks on the next request, and live sessions are refreshed here (a revoked client's
//! sessions end, a renamed one's carry on under the new name). Other running instances see the
//! clients file change within half a second (`ClientStore::reload_if_changed`).
//!
//! The token exists only in the value `add` returns: it is never logged, never audited, never
//! part of any view.

use archgate_core::clients::{ClientError, DEFAULT_CLIENT, LOCAL_CLIENT, StoredClient, grant_for};
use archgate_core::gate::Client;
use archgate_policy::{BudgetCounters, BudgetState};
use serde::Serialize;
use std::collections::BTreeMap;

use crate::app::App;
use crate::app::sessions::visible_names;
use crate::person::presence::{self, PresenceError, Subject};

/// A client as the person sees it. Counts and names only: never a token or its hash.
#[derive(Debug, Clone, Serialize)]
pub struct ClientView {
    pub name: String,
    /// `stdio` for `local`, `http` for the others.
    pub transport: &'static str,
    /// `local` and `default` exist always: `local` cannot be revoked or renamed; revoking
    /// `default` gives it a new token.
    pub builtin: bool,
    pub preset: String,
    /// Only these tools (within the preset's tiers); `None` is every tool of the preset.
    pub tools: Option<Vec<String>>,
    /// The grant comes from `[clients.NAME]` in config, which wins over the stored one.
    pub grant_from_config: bool,
    /// How many tools its tools/list shows under the config in force.
    pub visible_tools: usize,
    pub created: Option<String>,
    /// Unix seconds of its last authenticated HTTP request, if any since this process started.
    pub last_request: Option<u64>,
    /// Live MCP sessions in this process.
    pub live_sessions: usize,
    /// Its calls since this process started, by outcome (as in /health).
    pub calls: BTreeMap<String, u64>,
    pub budget: BudgetView,
}

/// Budget counters with the limits in force.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetView {
    #[serde(flatten)]
    pub counters: BudgetCounters,
    pub per_minute: u32,
    pub per_day: u32,
    pub questions_per_hour: u32,
}

/// A client just added. `token` is shown to the person once and kept nowhere.
pub struct Added {
    pub name: String,
    pub preset: String,
    pub token: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ClientActionError {
    #[error(transparent)]
    Store(#[from] ClientError),
    #[error("there is no tool named {name:?} (see `archgate tools`)")]
    UnknownTool { name: String },
    #[error("{name:?} is archgate's stdio client; its grant is `[clients.local]` in config")]
    Local { name: String },
    #[error(transparent)]
    Presence(#[from] PresenceError),
}

impl ClientActionError {
    pub fn kind(&self) -> &'static str {
        match self {
            ClientActionError::Store(e) => e.kind(),
            ClientActionError::UnknownTool { .. } => "unknown_tool",
            ClientActionError::Local { .. } => "not_allowed",
            ClientActionError::Presence(e) => e.kind(),
        }
    }

    /// The HTTP status the page answers with.
    pub fn status(&self) -> u16 {
        match self {
            ClientActionError::Store(ClientError::Exists(_)) => 409,
            ClientActionError::Store(ClientError::NotFound(_)) => 404,
            ClientActionError::Store(ClientError::Io { .. } | ClientError::Random(_)) => 500,
            ClientActionError::Presence(_) => 403,
            ClientActionError::Store(_)
            | ClientActionError::UnknownTool { .. }
            | ClientActionError::Local { .. } => 400,
        }
    }
}

/// Adding, renaming and revoking a client are confirmed through polkit first when
/// `approval.presence` needs it (`subject`: the process that asked). Recorded: when presence
/// was asked and how it ended (`presence::confirm_recorded`).
async fn confirm(
    app: &App,
    what: &str,
    name: &str,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), ClientActionError> {
    let setting = app.gate.config().current().approval.presence;
    let act = archgate_core::presence::Act::ChangeClient;
    let asked = presence::Asked {
        what,
        id: None,
        client: Some(name),
        channel,
    };
    presence::confirm_recorded(
        app.gate.audit(),
        asked,
        setting,
        act,
        subject,
        presence::CHANGE_WAIT,
    )
    .await?;
    Ok(())
}

/// Every client: `local`, `default`, then the added ones in the order they were added.
pub fn list(app: &App) -> Vec<ClientView> {
    let config = app.gate.config().current();
    let now = archgate_core::person::now_secs();
    let budgets = app.gate.person().budget_counters(now);
    let sessions = app.sessions.count_by_client();
    let mut calls = app.gate.counters().snapshot().by_client;
    let stored = app.clients.list();
    let mut names: Vec<(&str, Option<&StoredClient>)> =
        vec![(LOCAL_CLIENT, None), (DEFAULT_CLIENT, None)];
    names.extend(stored.iter().map(|c| (c.name.as_str(), Some(c))));
    names
        .into_iter()
        .map(|(name, s)| {
            let (preset, tools) = archgate_core::clients::grant_parts(name, s, &config);
            let preset = preset.as_str().to_owned();
            let client = Client {
                name: name.to_owned(),
                grant: grant_for(name, s, &config),
                agent: None,
                transport: if name == LOCAL_CLIENT {
                    archgate_core::gate::Transport::Stdio
                } else {
                    archgate_core::gate::Transport::Http
                },
                token: None,
            };
            ClientView {
                name: name.to_owned(),
                transport: if name == LOCAL_CLIENT {
                    "stdio"
                } else {
                    "http"
                },
                builtin: s.is_none(),
                preset,
                tools,
                grant_from_config: config
                    .clients
                    .get(name)
                    .is_some_and(|c| c.preset.is_some() || c.tools.is_some()),
                visible_tools: visible_names(app.gate.catalogue(), &client, &config).len(),
                created: s.map(|s| s.created.clone()),
                last_request: app.sessions.last_seen(name),
                live_sessions: sessions.get(name).copied().unwrap_or(0),
                calls: calls.remove(name).unwrap_or_default(),
                budget: BudgetView {
                    counters: budgets
                        .get(name)
                        .copied()
                        .unwrap_or_else(|| BudgetState::new().counters(now)),
                    per_minute: config.budgets.per_minute,
                    per_day: config.budgets.per_day,
                    questions_per_hour: config.budgets.questions_per_hour,
                },
            }
        })
        .collect()
}

/// Adds a client. Tool names must be tools archgate has; an empty list means every tool of the
/// preset. Audited without the token.
pub async fn add(
    app: &App,
    name: &str,
    preset: &str,
    tools: Option<Vec<String>>,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<Added, ClientActionError> {
    let tools: Option<Vec<String>> = tools
        .map(|t| {
            t.iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .filter(|t| !t.is_empty());
    if let Some(unknown) = tools
        .iter()
        .flatten()
        .find(|t| app.gate.catalogue().get(t).is_none())
    {
        return Err(ClientActionError::UnknownTool {
            name: unknown.clone(),
        });
    }
    confirm(app, "client_add", name, channel, subject).await?;
    // Another process may have changed the file a moment ago: start from what it wrote.
    app.sync_clients().await;
    let token = app.clients.add(name, preset, tools.clone())?;
    // Rules made under this name so far were a stdio client's: never the token holder's.
    let dropped = app.person_channel.client_rules_follow(name, None);
    app.gate.audit().event(&serde_json::json!({
        "event": "client_added",
        "client": name,
        "preset": preset,
        "tools": tools,
        "channel": channel,
        "rules_dropped": dropped,
    }));
    tracing::info!(client = name, preset, channel, "client added");
    // What a stdio client of this name waits on is withdrawn (`Sessions::refresh`).
    app.refresh_sessions().await;
    Ok(Added {
        name: name.to_owned(),
        preset: preset.to_owned(),
        token,
    })
}

/// Revokes a client: its token is refused from the next request, its live sessions end and the
/// standing rules made for it are removed; a bridge is refused its name from now on.
/// Revoking `default` gives it a new token (in the token file).
pub async fn revoke(
    app: &App,
    name: &str,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), ClientActionError> {
    if name == LOCAL_CLIENT {
        return Err(ClientActionError::Local {
            name: name.to_owned(),
        });
    }
    confirm(app, "client_revoke", name, channel, subject).await?;
    app.sync_clients().await;
    app.clients.revoke(name)?;
    // The person's "Always…" for this client go with its token (attack 18 F6).
    let dropped = app.person_channel.client_rules_follow(name, None);
    app.gate.audit().event(&serde_json::json!({
        "event": "client_revoked", "client": name, "channel": channel,
        "rules_dropped": dropped,
    }));
    tracing::warn!(client = name, channel, "client revoked");
    app.sessions.forget(name);
    app.refresh_sessions().await;
    Ok(())
}

/// Renames a client; its token keeps working, records from now on carry the new name, and its
/// standing rules move with it (a bridge is refused the old name from now on).
pub async fn rename(
    app: &App,
    from: &str,
    to: &str,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), ClientActionError> {
    if from == LOCAL_CLIENT {
        return Err(ClientActionError::Local {
            name: from.to_owned(),
        });
    }
    confirm(app, "client_rename", from, channel, subject).await?;
    app.sync_clients().await;
    app.clients.rename(from, to)?;
    // Its rules move with it; any a stdio client of the new name had are not the token's.
    let dropped = app.person_channel.client_rules_follow(to, None);
    let moved = app.person_channel.client_rules_follow(from, Some(to));
    app.gate.audit().event(&serde_json::json!({
        "event": "client_renamed", "from": from, "to": to, "channel": channel,
        "rules_moved": moved, "rules_dropped": dropped,
    }));
    tracing::info!(from, to, channel, "client renamed");
    app.sessions.renamed(from, to);
    app.refresh_sessions().await;
    Ok(())
}

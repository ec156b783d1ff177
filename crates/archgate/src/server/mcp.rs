//! The MCP face of archgate: rmcp's `ServerHandler`, adapting the catalogue and the gate.
//!
//! Both transports share this handler. Over HTTP the client is the one the bearer token named
//! (the auth layer puts it in the request's extensions); over stdio it is `local`. tools/list
//! shows only what that client is granted and config enables; tools/call goes to `Gate::call`.

use archgate_core::clients::LOCAL_CLIENT;
use archgate_core::gate::{CallResult, Client};
use rmcp::ErrorData as McpError;
use rmcp::handler::server::ServerHandler;
// `logging/setLevel` is deprecated by SEP-2577; an extension (the conformance suite's) serves it.
#[allow(deprecated)]
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use std::sync::Arc;

use super::render::{to_mcp_tool, to_response};
use crate::app::App;
use crate::app::extension::Extension;

/// Protocol versions archgate speaks (both eras).
pub const PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

pub const INSTRUCTIONS: &str = "archgate gives you the person's Arch Linux machine: packages from pacman's own \
databases, the AUR with a safety audit, the ArchWiki, and their desktop. Every call passes a gate: some \
calls wait for the person's yes on a channel you cannot reach, and silence means no. A refusal is an \
answer: read its `next` field and do not try to work around it. archgate never elevates privilege; for \
installs and upgrades it gives the exact command for the person to run.";

#[derive(Clone)]
pub struct McpServer {
    app: Arc<App>,
    /// Set for stdio; over HTTP the client comes with each request.
    fixed_client: Option<Client>,
    /// A bridged connection's end (`bridge.rs`): its calls end with it.
    conn_ended: Option<tokio_util::sync::CancellationToken>,
    /// The session of a stdio or bridged connection (over HTTP, the request's `mcp-session-id`):
    /// what it read before counts for its act calls (`archgate_core::untrusted`).
    session: Option<String>,
}

/// A session name no other connection of this process has.
fn connection_session(kind: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{kind}:{n}")
}

impl McpServer {
    pub fn stdio(app: Arc<App>) -> McpServer {
        let config = app.gate.config().current();
        let grant = archgate_core::clients::grant_for(LOCAL_CLIENT, None, &config);
        McpServer {
            app,
            fixed_client: Some(Client {
                name: LOCAL_CLIENT.into(),
                grant,
                agent: None,
                transport: archgate_core::gate::Transport::Stdio,
                token: None,
            }),
            conn_ended: None,
            session: Some(connection_session("stdio")),
        }
    }

    pub fn http(app: Arc<App>) -> McpServer {
        McpServer {
            app,
            fixed_client: None,
            conn_ended: None,
            session: None,
        }
    }

    /// A bridged stdio client (`server/bridge.rs`): the client its hello named, its calls
    /// ended when `ended` fires.
    pub fn bridged(
        app: Arc<App>,
        name: &str,
        ended: tokio_util::sync::CancellationToken,
    ) -> McpServer {
        let config = app.gate.config().current();
        let grant = archgate_core::clients::grant_for(name, None, &config);
        McpServer {
            app,
            fixed_client: Some(Client {
                name: name.into(),
                grant,
                agent: None,
                transport: archgate_core::gate::Transport::Bridge,
                token: None,
            }),
            conn_ended: Some(ended),
            session: Some(connection_session("bridge")),
        }
    }

    /// Who calls: over HTTP the client the token named, read in place from the request; with
    /// the agent's own name from this connection's or session's `initialize` beside it.
    fn client<'c>(
        &self,
        cx: &'c RequestContext<RoleServer>,
    ) -> Result<std::borrow::Cow<'c, Client>, McpError> {
        let mut client = self.granted_client(cx)?;
        let agent = agent_of(cx);
        if agent.is_some() {
            client.to_mut().agent = agent;
        }
        Ok(client)
    }

    fn granted_client<'c>(
        &self,
        cx: &'c RequestContext<RoleServer>,
    ) -> Result<std::borrow::Cow<'c, Client>, McpError> {
        if let Some(c) = &self.fixed_client {
            // The grant follows live config; never a token client's (`named_client.rs`).
            return super::named_client::for_call(&self.app, c).map(std::borrow::Cow::Owned);
        }
        cx.extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.extensions.get::<Client>())
            .map(std::borrow::Cow::Borrowed)
            .ok_or_else(|| {
                McpError::invalid_request("no authenticated client on this request", None)
            })
    }
}

impl McpServer {
    /// Who a task of this request belongs to (`server::tasks::owner`): over HTTP the bearer
    /// token itself; a bridged or stdio client's own grant.
    fn task_owner(&self, cx: &RequestContext<RoleServer>) -> Result<String, McpError> {
        if let Some(c) = &self.fixed_client {
            let stored = self
                .app
                .clients
                .list()
                .into_iter()
                .find(|s| s.name == c.name);
            return Ok(match stored {
                Some(s) => super::tasks::owner("grant", &s.token_sha256),
                None => super::tasks::owner(c.transport.as_str(), &c.name),
            });
        }
        cx.extensions
            .get::<http::request::Parts>()
            .and_then(|p| super::bearer::bearer(&p.headers))
            .map(|token| super::tasks::owner("token", token))
            .ok_or_else(|| {
                McpError::invalid_request("no authenticated client on this request", None)
            })
    }
}

/// The agent's own name from the peer's `initialize` (`clientInfo`): untrusted, bounded, shown
/// to the person only (`archgate_core::agent`). None for a stateless request.
fn agent_of(cx: &RequestContext<RoleServer>) -> Option<String> {
    let info = cx.peer.peer_info()?;
    // A stateless request has no `initialize`: the SDK fills in its own name ("rmcp" and its
    // version), which names no agent (attack 4 F1); nor does a client that left it unset.
    let sdk = rmcp::model::Implementation::from_build_env();
    if info.client_info.name == sdk.name && info.client_info.version == sdk.version {
        return None;
    }
    archgate_core::agent::label(&info.client_info.name, &info.client_info.version)
}

impl McpServer {
    /// A `tools/call` as every client's runs: through the extension for its own tools, else
    /// through the gate with the request's relay. `detached`: the call runs apart from its
    /// request (a call that may become a task, `server/tasks`): the request's end does not end
    /// it, and no progress goes to a request that may be answered already.
    async fn run_call(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
        detached: bool,
    ) -> Result<CallToolResponse, McpError> {
        if let Some(x) = self.extension()
            && x.owns_tool(&request.name)
        {
            let client = self.client(&cx)?.into_owned();
            return x.call_tool(&self.app.gate, &client, request, cx).await;
        }
        let client = self.client(&cx)?;
        // Inside a task, a trusted relay answers through tasks/update.
        let mut relay = super::tasks::relay::for_task(&cx)
            .unwrap_or_else(|| super::relay::for_request(&request, &cx));
        // A relay's ticket is the identity's it was handed to, not its name's
        // (`app/ticket_owners.rs`). The identity is a digest, made only for a call that brings
        // a ticket back or is handed one (issue 34: not for every call).
        let owner = || self.task_owner(&cx).ok();
        if let archgate_core::gate::Relay::Resume {
            ticket: Some(t), ..
        } = &mut relay
        {
            // No identity to check it against: no ticket (fails closed).
            *t = match owner() {
                Some(o) => self.app.ticket_owners.brought_back(t, &o),
                None => format!("{t} (no identity to check it against)"),
            };
        }
        let handed = |r: &CallResult| {
            if let Some(asked) = r.output.as_ref().err().and_then(|e| e.input_required())
                && let Some(o) = owner()
            {
                self.app.ticket_owners.handed(&asked.ticket, &o);
            }
        };
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        // A cancelled request (the client's notifications/cancelled, or the session ending)
        // drops the call: a question still parked is withdrawn and recorded `unreachable`.
        // `ended` fires the moment archgate ends the session (DELETE, evicted, revoked) or the
        // client drops this call's answer stream.
        // A stateless request has no session to end: only its own cancellation applies.
        let sid = cx
            .extensions
            .get::<http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok());
        let ended = match (&self.conn_ended, sid) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(sid)) => Some(self.app.sessions.call_token(
                Some(sid),
                &serde_json::to_string(&cx.id).unwrap_or_default(),
            )),
            (None, None) => None,
        };
        let ended = async {
            match ended {
                Some(t) => t.cancelled_owned().await,
                None => std::future::pending().await,
            }
        };
        // While the call runs (an approval can wait up to approval.timeout_s), a request that
        // carries a progressToken hears progress every few seconds: clients that reset their
        // own timeout on progress then wait for archgate's answer instead of giving up.
        let session = self.session_of(&cx);
        if detached {
            let r = self
                .app
                .gate
                .call_in_session(&client, session.as_deref(), &request.name, args, &relay)
                .await;
            handed(&r);
            return to_response(r);
        }
        // The call runs apart from its request: when the request ends first, a call whose act
        // work has not started is stopped (a waiting question withdrawn, nothing ran), and one
        // whose work started runs to its end in a task of its own, its record saying what it
        // did — as a task's does (`apart.rs`; attack 15 F3).
        let mut work = super::apart::start(
            self.app.gate.clone(),
            client.into_owned(),
            session,
            request.name.to_string(),
            args,
            relay,
        );
        let token = cx.meta.get_progress_token();
        let r = tokio::select! {
            r = super::progress::while_running(&mut work, token, &cx.peer) => r,
            _ = cx.ct.cancelled() => {
                return Err(McpError::internal_error("the request was cancelled", None));
            }
            _ = ended => {
                return Err(McpError::internal_error("the session ended", None));
            }
        };
        let r = r.map_err(|_| McpError::internal_error("the call ended abnormally", None))?;
        handed(&r);
        to_response(r)
    }

    /// The session whose reads a request's call follows: the connection's, else the HTTP
    /// session's, else none (a stateless request: the gate takes the client's).
    fn session_of(&self, cx: &RequestContext<RoleServer>) -> Option<String> {
        self.session.clone().or_else(|| {
            cx.extensions
                .get::<http::request::Parts>()
                .and_then(|p| p.headers.get("mcp-session-id"))
                .and_then(|v| v.to_str().ok())
                .map(|s| format!("mcp:{s}"))
        })
    }

    fn extension(&self) -> Option<&dyn Extension> {
        self.app.extension.as_deref()
    }

    /// Records a live session so person-made changes reach it (see `app/sessions.rs`).
    fn register_session(
        &self,
        parts: Option<&http::request::Parts>,
        to: crate::app::sessions::Notify,
    ) -> Option<u64> {
        let client = match (
            &self.fixed_client,
            parts.and_then(|p| p.extensions.get::<Client>()),
        ) {
            (Some(c), _) => c.clone(),
            (None, Some(c)) => c.clone(),
            (None, None) => return None,
        };
        let token = parts
            .and_then(|p| super::bearer::bearer(&p.headers))
            .map(str::to_owned);
        let session_id = parts
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map(|s| s.to_owned().into());
        let config = self.app.gate.config().current();
        let visible =
            crate::app::sessions::visible_names(self.app.gate.catalogue(), &client, &config);
        Some(
            self.app
                .sessions
                .register(&client, token, session_id, to, visible),
        )
    }
}

/// archgate's capabilities, or an extension's instead.
pub fn server_info(extension: Option<&dyn Extension>) -> ServerConfig {
    let capabilities = match extension {
        Some(x) => x.capabilities(),
        None => ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_resources()
            .enable_prompts()
            // SEP-2663: a call that must wait is a task for a client that declares this too.
            .enable_tasks()
            .build(),
    };
    ServerConfig::new(capabilities)
        .with_server_info(
            Implementation::new("archgate", env!("CARGO_PKG_VERSION")).with_title("archgate"),
        )
        .with_instructions(INSTRUCTIONS)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        server_info(self.extension())
    }

    async fn on_initialized(&self, cx: NotificationContext<RoleServer>) {
        let parts = cx.extensions.get::<http::request::Parts>();
        self.register_session(parts, crate::app::sessions::Notify::Peer(cx.peer.clone()));
    }

    // 2026-07-28: list_changed travels on the client's `subscriptions/listen` stream.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(match self.extension() {
            Some(x) => x.accepted_subscription_filter(requested),
            None => requested.supported_by(&server_info(None).capabilities),
        })
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        if let Some(x) = self.extension() {
            return x.listen(context).await;
        }
        let parts = context
            .request_context()
            .extensions
            .get::<http::request::Parts>();
        let key = self.register_session(
            parts,
            crate::app::sessions::Notify::Listen(context.sink().clone()),
        );
        context.cancelled().await;
        if let Some(k) = key {
            self.app.sessions.unregister(k);
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let client = self.granted_client(&cx)?;
        let config = self.app.gate.config().current();
        let tools = self
            .app
            .gate
            .catalogue()
            .visible(&client, &config)
            .map(|t| to_mcp_tool(t.as_ref()))
            .collect();
        let mut res = ListToolsResult::with_all_items(tools);
        // Each client sees its own list, and grants change live.
        res.cache_scope = Some(rmcp::model::CacheScope::Private);
        res.ttl_ms = Some(0);
        Ok(res)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A client that declares the tasks extension gets a task for a call that must wait
        // (`server/tasks`); the call itself runs as below either way.
        if super::tasks::declared(&cx) {
            let owner = self.task_owner(&cx)?;
            let d = super::tasks::declared_call(
                &self.app,
                owner,
                &self.client(&cx)?.name,
                &request.name,
            );
            let (server, ct) = (self.clone(), cx.ct.clone());
            let run = async move { server.run_call(request, cx, true).await };
            return Box::pin(super::tasks::call::call(d, run, ct.cancelled_owned())).await;
        }
        // Boxed: the SDK moves this future into a task of its own for every request (and the
        // task's cell moves it again), so what it holds inline is copied each time; a call's
        // state (the gate's, the progress timer's, the select) stays put on the heap (issue 34).
        Box::pin(self.run_call(request, cx, false)).await
    }

    // An extension's tool lookup lets rmcp check `x-mcp-header` arguments (SEP-2243); without
    // one, rmcp's default (no lookup) stays.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.extension()?;
        let t = self.app.gate.catalogue().get(name)?;
        Some(to_mcp_tool(t.as_ref()))
    }

    // SEP-2663 tasks (rmcp answers -32021 to a request that did not declare the extension).
    async fn get_task(
        &self,
        request: GetTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let owner = self.task_owner(&cx)?;
        Ok(GetTaskResult::new(
            self.app.tasks.get(&owner, &request.task_id)?,
        ))
    }
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let owner = self.task_owner(&cx)?;
        self.app
            .tasks
            .update(&owner, &request.task_id, request.input_responses)
    }
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let owner = self.task_owner(&cx)?;
        self.app.tasks.cancel(&owner, &request.task_id)
    }

    // archgate's own resources and prompts, or an extension's instead; completions, logging and
    // resource subscriptions only an extension serves.
    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        match self.extension() {
            Some(x) => x.list_resources(),
            None => Ok(super::resources::list()),
        }
    }
    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        match self.extension() {
            Some(x) => x.list_resource_templates(),
            None => Ok(super::resources::templates()),
        }
    }
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if let Some(x) = self.extension() {
            return x.read_resource(request);
        }
        let client = self.client(&cx)?;
        // Boxed as `call_tool`'s call is: the SDK's per-request task holds the largest of the
        // handlers' futures inline.
        Ok(Box::pin(super::resources::read(
            &self.app.gate,
            &client,
            self.session_of(&cx).as_deref(),
            &request.uri,
        ))
        .await?
        .into())
    }
    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        match self.extension() {
            Some(x) => x.list_prompts(),
            None => Ok(super::prompts::list()),
        }
    }
    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        match self.extension() {
            Some(x) => x.get_prompt(request),
            None => Ok(super::prompts::get(&request.name, &request.arguments)?.into()),
        }
    }
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match self.extension() {
            Some(x) => {
                x.subscribe(request.uri);
                Ok(())
            }
            None => Err(McpError::method_not_found::<
                rmcp::model::SubscribeRequestMethod,
            >()),
        }
    }
    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match self.extension() {
            Some(x) => {
                x.unsubscribe(&request.uri);
                Ok(())
            }
            None => Err(McpError::method_not_found::<
                rmcp::model::UnsubscribeRequestMethod,
            >()),
        }
    }
    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        match self.extension() {
            Some(x) => x.complete(request),
            None => Err(McpError::method_not_found::<
                rmcp::model::CompleteRequestMethod,
            >()),
        }
    }
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        match self.extension() {
            Some(x) => {
                x.set_level(request);
                Ok(())
            }
            None => Err(McpError::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >()),
        }
    }
}

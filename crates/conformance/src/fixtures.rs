//! The MCP conformance suite's fixtures, an `archgate::Extension`.
//!
//! The official suite (`@modelcontextprotocol/conformance`) drives a server through scenarios that
//! expect particular tools (`test_simple_text`, `test_sampling`, the input-required family …),
//! resources under `test://`, prompts, completions, logging and subscriptions. This binary serves
//! them through archgate's library so the suite judges the real handler, transport and guards;
//! the shipped `archgate` never links them.
//!
//! The fixture tools are ordinary catalogue tools of tier `read`: a call passes the same gate as
//! every tool (admission, policy, audit record). What the gate cannot carry — the request context
//! a fixture needs to talk back to the client, and MCP answers richer than archgate's text and
//! images — travels around it: `call_fixture` puts the request in a task-local for the duration of
//! the gate call, and a fixture's output is its own MCP result as JSON, which `call_fixture` turns
//! back into the protocol answer. Resources, prompts, completions, logging and subscriptions have no
//! gate equivalent; archgate's handler hands them to [`Fixtures`] directly.

// Logging, sampling and roots are deprecated by SEP-2577; the suite still exercises them.
#![allow(deprecated)]

use archgate_core::gate::{Catalogue, Client, Gate, Kind};
use futures::future::BoxFuture;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, InputResponses, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, LoggingLevel, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, SetLevelRequestParams, SubscriptionFilter,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

mod answer;
mod client;
mod input_required;
mod prompts;
mod resources;
mod tasks;
mod tools;

/// A 1×1 PNG (the suite asks for "a minimal test image").
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The `ToolError` kind that carries a JSON-RPC error a fixture must answer with (a tampered
/// `requestState`, a missing client capability): `details` holds the `ErrorData`.
const PROTOCOL_ERROR: archgate_core::tool::ErrorKind =
    archgate_core::tool::ErrorKind::ProtocolError;

/// What every fixture sees of the request that called it.
struct FixtureRequest {
    cx: RequestContext<RoleServer>,
    input_responses: Option<InputResponses>,
    request_state: Option<String>,
}

tokio::task_local! {
    static REQUEST: Arc<FixtureRequest>;
}

/// Process-wide fixture state. The HTTP transport builds one `McpServer` per session (and per
/// request when stateless), so what outlives a request lives here.
struct State {
    /// Open `subscriptions/listen` streams (2026-07-28), by a local key.
    listeners: Mutex<HashMap<u64, SubscriptionSink>>,
    next_listener: AtomicU64,
    /// URIs named by `resources/subscribe` (handshake era).
    subscribed: Mutex<BTreeSet<String>>,
    /// The level `logging/setLevel` asked for (handshake era).
    log_level: Mutex<LoggingLevel>,
}

static STATE: LazyLock<State> = LazyLock::new(|| State {
    listeners: Mutex::default(),
    next_listener: AtomicU64::new(0),
    subscribed: Mutex::default(),
    log_level: Mutex::new(LoggingLevel::Debug),
});

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// archgate's tools plus everything the fixtures serve.
fn capabilities() -> ServerCapabilities {
    ServerCapabilities::builder()
        .enable_logging()
        .enable_completions()
        .enable_prompts()
        .enable_prompts_list_changed()
        .enable_resources()
        .enable_resources_subscribe()
        .enable_resources_list_changed()
        .enable_tools()
        .enable_tool_list_changed()
        .enable_tasks()
        .build()
}

/// Runs a fixture tool through the gate with its request at hand, then renders its answer.
async fn call_fixture(
    gate: &Gate,
    client: &Client,
    request: CallToolRequestParams,
    cx: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    // SEP-2663: a fixture registered as needing a task is refused to a client without tasks,
    // before the gate (the suite's `tasks-required-task-error`).
    if tasks::TASK_REQUIRED.contains(&request.name.as_ref()) && !archgate::declares_tasks(&cx) {
        return Err(McpError::missing_required_client_capability(
            rmcp::model::ClientCapabilities::builder()
                .enable_tasks()
                .build(),
        ));
    }
    let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
    let fixture = Arc::new(FixtureRequest {
        cx,
        input_responses: request.input_responses,
        request_state: request.request_state,
    });
    let r = REQUEST
        .scope(fixture, gate.call(client, &request.name, args))
        .await;
    match &r.output {
        Ok(out) => answer::answer_of(out),
        Err(e) if e.kind == Kind::Tool(PROTOCOL_ERROR) => Err(e
            .tool_details()
            .cloned()
            .and_then(|d| serde_json::from_value::<McpError>(d).ok())
            .unwrap_or_else(|| McpError::internal_error(e.message.clone(), None))),
        Err(_) => Ok(archgate::to_call_result(r).into()),
    }
}

/// The fixtures as archgate's library takes them; `front` gives every request to `/mcp` the
/// bearer token of the sandbox's `conformance` client, which the suite cannot send itself.
pub struct Fixtures {
    /// `Bearer <token>`, made once.
    pub authorization: axum::http::HeaderValue,
}

impl archgate::Extension for Fixtures {
    /// The fixture tools, tier `read`.
    fn add_tools(&self, catalogue: &mut Catalogue) {
        tools::add_all(catalogue);
    }

    fn capabilities(&self) -> ServerCapabilities {
        capabilities()
    }

    fn owns_tool(&self, name: &str) -> bool {
        tools::is_fixture(name)
    }

    fn call_tool<'a>(
        &'a self,
        gate: &'a Gate,
        client: &'a Client,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> BoxFuture<'a, Result<CallToolResponse, McpError>> {
        Box::pin(call_fixture(gate, client, request, cx))
    }

    fn list_resources(&self) -> Result<ListResourcesResult, McpError> {
        resources::list_resources()
    }

    fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, McpError> {
        resources::list_resource_templates()
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, McpError> {
        resources::read_resource(request)
    }

    fn subscribe(&self, uri: String) {
        lock(&STATE.subscribed).insert(uri);
    }

    fn unsubscribe(&self, uri: &str) {
        lock(&STATE.subscribed).remove(uri);
    }

    /// Every notification kind the fixtures advertise is accepted.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        requested.supported_by(&capabilities())
    }

    /// Holds a `subscriptions/listen` stream open until the client cancels it.
    fn listen(&self, context: SubscriptionContext) -> BoxFuture<'_, Result<(), McpError>> {
        Box::pin(async move {
            let key = STATE.next_listener.fetch_add(1, Ordering::Relaxed);
            lock(&STATE.listeners).insert(key, context.sink().clone());
            context.cancelled().await;
            lock(&STATE.listeners).remove(&key);
            Ok(())
        })
    }

    fn list_prompts(&self) -> Result<ListPromptsResult, McpError> {
        prompts::list_prompts()
    }

    fn get_prompt(&self, request: GetPromptRequestParams) -> Result<GetPromptResponse, McpError> {
        prompts::get_prompt(request)
    }

    fn complete(&self, request: CompleteRequestParams) -> Result<CompleteResult, McpError> {
        prompts::complete(request)
    }

    fn set_level(&self, request: SetLevelRequestParams) {
        *lock(&STATE.log_level) = request.level;
    }

    /// Adds the token where a request has none: the suite's requests then pass archgate's own
    /// bearer check, unchanged (a request that brings its own token keeps it).
    fn front(&self, router: axum::Router) -> axum::Router {
        let authorization = self.authorization.clone();
        router.layer(axum::middleware::map_request(
            move |mut req: axum::extract::Request| {
                let authorization = authorization.clone();
                async move {
                    req.headers_mut()
                        .entry(axum::http::header::AUTHORIZATION)
                        .or_insert(authorization);
                    req
                }
            },
        ))
    }
}

/// Whether a handshake-era log message at `level` passes the level the client set.
fn log_enabled(level: LoggingLevel) -> bool {
    severity(level) >= severity(*lock(&STATE.log_level))
}

fn severity(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn listeners() -> Vec<SubscriptionSink> {
    lock(&STATE.listeners).values().cloned().collect()
}

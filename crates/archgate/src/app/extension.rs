//! What another binary built on this library may add to the server it assembles.
//!
//! archgate's own binary never builds an [`Extension`] (`archgate::main` passes none). The MCP
//! conformance suite's binary (`crates/conformance`) passes its fixtures: tools added to the
//! catalogue (they pass the gate like every tool), and the protocol surface archgate does not
//! serve the suite's way — resources, prompts, completions, logging and subscriptions — which
//! replaces archgate's own while an extension is present.
//!
//! Nothing here touches authentication: [`Extension::front`] may put a layer in front of the
//! HTTP router, but every request to `/mcp` still passes `server/http.rs`'s bearer-token check,
//! which has no other branch.

// `logging/setLevel` is deprecated by SEP-2577; the conformance suite still exercises it.
#![allow(deprecated)]

use archgate_core::gate::{Catalogue, Client, Gate};
use futures::future::BoxFuture;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    SetLevelRequestParams, SubscriptionFilter,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext};

/// Additions to the assembled server: tools, the capabilities that announce them, and the
/// handlers for everything beyond tools.
pub trait Extension: Send + Sync + 'static {
    /// Adds tools to the catalogue, after archgate's own (the policy view does not list them).
    fn add_tools(&self, catalogue: &mut Catalogue);

    /// The capabilities advertised instead of archgate's.
    fn capabilities(&self) -> ServerCapabilities;

    /// Whether `tools/call` of `name` goes to [`Extension::call_tool`] rather than archgate's
    /// own path (relay, progress, cancellation).
    fn owns_tool(&self, name: &str) -> bool;

    /// A `tools/call` of a tool it owns. It should call the tool through `gate`.
    fn call_tool<'a>(
        &'a self,
        gate: &'a Gate,
        client: &'a Client,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> BoxFuture<'a, Result<CallToolResponse, McpError>>;

    fn list_resources(&self) -> Result<ListResourcesResult, McpError>;
    fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, McpError>;
    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResponse, McpError>;
    fn subscribe(&self, uri: String);
    fn unsubscribe(&self, uri: &str);
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> SubscriptionFilter;
    /// Holds a `subscriptions/listen` stream (2026-07-28) until the client cancels it.
    fn listen(&self, context: SubscriptionContext) -> BoxFuture<'_, Result<(), McpError>>;
    fn list_prompts(&self) -> Result<ListPromptsResult, McpError>;
    fn get_prompt(&self, request: GetPromptRequestParams) -> Result<GetPromptResponse, McpError>;
    fn complete(&self, request: CompleteRequestParams) -> Result<CompleteResult, McpError>;
    fn set_level(&self, request: SetLevelRequestParams);

    /// The HTTP router as served: archgate's, with whatever this puts in front of it (a layer
    /// sees each request before archgate's guards and its bearer-token check do).
    fn front(&self, router: axum::Router) -> axum::Router {
        router
    }
}

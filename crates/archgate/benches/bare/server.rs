//! The bare rmcp server both bench targets run (`bare_rmcp.rs`: the system allocator, as the SDK
//! comes; `bare_rmcp_mimalloc.rs`: the allocator archgate ships with). See `bare_rmcp.rs`.

use rmcp::ErrorData;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value, json};
use std::sync::Arc;

#[derive(Clone)]
struct Bare {
    /// Each tool's constant answer, by name.
    answers: Arc<Vec<(String, Value)>>,
}

fn tool(name: &str) -> Tool {
    let schema: Map<String, Value> = json!({"type": "object", "properties": {}})
        .as_object()
        .cloned()
        .unwrap_or_default();
    Tool::new(name.to_owned(), "A constant answer", Arc::new(schema))
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.answers.iter().map(|(n, _)| tool(n)).collect(),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match self.answers.iter().find(|(n, _)| *n == request.name) {
            Some((_, v)) => Ok(CallToolResult::structured(v.clone()).into()),
            None => Err(ErrorData::invalid_params("no such tool", None)),
        }
    }
}

// A benchmark prints its one line on stdout, as archgate's HTTP mode prints its frame.
#[allow(clippy::print_stdout)]
#[tokio::main]
pub async fn main() -> std::io::Result<()> {
    if !std::env::args().any(|a| a == "--bench") {
        return Ok(()); // `cargo test --all-targets` builds benches too; bench/rmcp/run.sh runs this.
    }
    let mut answers = Vec::new();
    for a in std::env::args().skip(1).filter(|a| !a.starts_with("--")) {
        let Some((name, path)) = a.split_once('=') else {
            return Err(std::io::Error::other(format!("{a}: expected NAME=FILE")));
        };
        answers.push((
            name.to_owned(),
            serde_json::from_slice(&std::fs::read(path)?)?,
        ));
    }
    if answers.is_empty() {
        answers.push(("system_status".to_owned(), json!({"ok": true})));
    }
    let bare = Bare {
        answers: Arc::new(answers),
    };
    let service = StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    println!(
        "{}",
        json!({"event": "listening", "port": listener.local_addr()?.port()})
    );
    use axum::serve::ListenerExt;
    // Without TCP_NODELAY a kept-alive answer's last write waits for the delayed ACK (~40 ms).
    let listener = listener.tap_io(|t| {
        let _ = t.set_nodelay(true);
    });
    axum::serve(listener, router).await
}

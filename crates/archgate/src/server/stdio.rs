//! MCP over stdio: the client that started us is `local`. stdout carries only protocol.

use rmcp::ServiceExt;
use std::sync::Arc;

use super::mcp::McpServer;
use crate::app::App;

pub async fn serve(app: Arc<App>) -> anyhow::Result<()> {
    let service = McpServer::stdio(app)
        .serve(rmcp::transport::stdio())
        .await?;
    service.waiting().await?;
    Ok(())
}

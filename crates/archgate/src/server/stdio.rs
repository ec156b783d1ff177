//! MCP over stdio: the client that started us is `local`. stdout carries only protocol.

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use std::sync::Arc;

use super::mcp::McpServer;
use crate::app::App;

pub async fn serve(app: Arc<App>) -> anyhow::Result<()> {
    let service = match McpServer::stdio(app).serve(rmcp::transport::stdio()).await {
        Ok(s) => s,
        // The client left before it initialized (it only probed with `server/discover`, or closed
        // at once): an ordinary end of a stdio session, not a failure.
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("the client closed stdin before initializing");
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    service.waiting().await?;
    Ok(())
}

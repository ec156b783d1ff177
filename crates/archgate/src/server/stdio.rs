//! MCP over stdio: the client that started us is `local`. stdout carries only protocol.

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use std::sync::Arc;

use super::mcp::McpServer;
use crate::app::App;

pub async fn serve(app: Arc<App>) -> anyhow::Result<()> {
    // When stdin closes, the one client of this process is gone: its parked approvals end
    // `unreachable` at once, so no later answer can run them (rmcp itself lets in-flight
    // requests drain for a few seconds before it cancels them).
    let broker = app.gate.broker().clone();
    let stdin = WatchEof {
        inner: tokio::io::stdin(),
        on_eof: Some(Box::new(move || {
            let n = broker.withdraw_all();
            if n > 0 {
                tracing::info!("the client closed stdin; {n} parked approval(s) withdrawn");
            }
        })),
    };
    let service = match McpServer::stdio(app)
        .serve((stdin, tokio::io::stdout()))
        .await
    {
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

/// A reader that calls `on_eof` once when its inner reader reaches end of file.
pub(crate) struct WatchEof<R> {
    inner: R,
    on_eof: Option<Box<dyn FnOnce() + Send>>,
}

impl<R> WatchEof<R> {
    pub(crate) fn new(inner: R, on_eof: impl FnOnce() + Send + 'static) -> WatchEof<R> {
        WatchEof {
            inner,
            on_eof: Some(Box::new(on_eof)),
        }
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WatchEof<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = &r
            && buf.filled().len() == before
            && buf.remaining() > 0
            && let Some(f) = self.on_eof.take()
        {
            f();
        }
        r
    }
}

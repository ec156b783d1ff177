//! MCP over stdio: the client that started us is `local`. stdout carries only protocol.

use rmcp::ServiceExt;
use rmcp::service::ServerInitializeError;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::mcp::McpServer;
use crate::app::App;

/// Serves the client on stdin/stdout until it leaves or `shutdown` fires. On `shutdown` the
/// SDK's service is cancelled and awaited (at most `STOP_WITHIN`), so its stdin reader is dropped
/// rather than failed by the runtime's shutdown (which would log an error for a clean stop).
pub async fn serve(app: Arc<App>, shutdown: CancellationToken) -> anyhow::Result<()> {
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
    let stop = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    tokio::select! {
        r = &mut waiting => {
            r?;
            return Ok(());
        }
        _ = shutdown.cancelled() => {}
    }
    stop.cancel();
    if tokio::time::timeout(STOP_WITHIN, waiting).await.is_err() {
        tracing::debug!("the stdio session did not end within {STOP_WITHIN:?} of the stop");
    }
    Ok(())
}

/// How long a stop waits for the stdio session to end.
const STOP_WITHIN: std::time::Duration = std::time::Duration::from_secs(1);

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

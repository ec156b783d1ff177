//! A plain `tools/call` runs apart from its request (class: *work that acts is stopped midway
//! by the agent*, attack 15 F3; the latch: `archgate_core::gate::detach`). When the request
//! ends first — the client's `notifications/cancelled`, a closed connection, a bridged client
//! gone — the call is stopped only while its act work has not started (a waiting question is
//! withdrawn, nothing ran); started work runs to its end or its timeout and its one record says
//! what it did, as a task's does after `tasks/cancel`.
//!
//! The call is polled by its request while the request lasts, and becomes a task of its own only
//! if the request ends while its act work runs ([`Apart`]'s `drop`). A task for every call (as
//! before) cost a quiet machine 15% of its calls/s at 1 client (bench/RESULTS.md, rmcp, issue 34
//! fourth pass): the spawn handed each call to the other worker thread.

use archgate_core::gate::{CallResult, Client, Gate, ON_START, Relay, StartLatch};
use futures::FutureExt;
use serde_json::Value;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// The call's work, boxed so it can move to a task of its own midway; a panic is its output.
type Work<T> = Pin<Box<dyn Future<Output = std::thread::Result<T>> + Send>>;

/// The call through the gate, apart from its request.
pub fn start(
    gate: Arc<Gate>,
    client: Client,
    session: Option<String>,
    tool: String,
    args: Value,
    relay: Relay,
) -> Apart<CallResult> {
    Apart::new(async move {
        gate.call_in_session(&client, session.as_deref(), &tool, args, &relay)
            .await
    })
}

/// A call held by its request: polled, it runs the call (`Err` when the call panicked); dropped
/// before the call ended, it stops the call if no act work has started, and otherwise hands the
/// rest of the call to a task of its own, which runs it to its end.
pub struct Apart<T: Send + 'static> {
    latch: Arc<StartLatch>,
    work: Option<Work<T>>,
}

impl<T: Send + 'static> Apart<T> {
    pub fn new(work: impl Future<Output = T> + Send + 'static) -> Apart<T> {
        let latch = StartLatch::new();
        let work = ON_START.scope(latch.clone(), work);
        Apart {
            latch,
            work: Some(Box::pin(AssertUnwindSafe(work).catch_unwind())),
        }
    }
}

impl<T: Send + 'static> Future for Apart<T> {
    type Output = std::thread::Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(work) = self.work.as_mut() else {
            return Poll::Pending; // polled after its end: nothing more comes
        };
        let out = std::task::ready!(work.as_mut().poll(cx));
        self.work = None;
        Poll::Ready(out)
    }
}

impl<T: Send + 'static> Drop for Apart<T> {
    fn drop(&mut self) {
        let Some(work) = self.work.take() else {
            return; // the call ended
        };
        if self.latch.abandon() {
            return; // no act work started: dropped here, nothing runs
        }
        // Act work started: it runs to its end (or its timeout), its record saying what it did.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(work);
            }
            Err(_) => tracing::warn!("a started call could not go on: no runtime"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A call's work: marks act work started (as the gate does before it), then waits for `go`
    /// and says it finished.
    async fn acting(
        starts: bool,
        go: tokio::sync::oneshot::Receiver<()>,
        done: Arc<AtomicBool>,
    ) -> bool {
        if starts && !ON_START.with(|l| l.start()) {
            return false;
        }
        let _ = go.await;
        done.store(true, Ordering::SeqCst);
        true
    }

    /// The request ends while the call's act work runs: the work goes on to its end.
    #[tokio::test]
    async fn started_work_runs_to_its_end_after_its_request_ended() {
        let done = Arc::new(AtomicBool::new(false));
        let (go, wait) = tokio::sync::oneshot::channel();
        let mut call = Apart::new(acting(true, wait, done.clone()));
        // The request polls the call once (its act work starts), then ends.
        assert!(futures::poll!(&mut call).is_pending());
        drop(call);
        go.send(()).unwrap();
        for _ in 0..1000 {
            if done.load(Ordering::SeqCst) {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("the started work was stopped with its request");
    }

    /// The request ends before any act work started: the call is stopped, nothing runs.
    #[tokio::test]
    async fn work_not_started_is_stopped_with_its_request() {
        let done = Arc::new(AtomicBool::new(false));
        let (go, wait) = tokio::sync::oneshot::channel();
        let mut call = Apart::new(acting(false, wait, done.clone()));
        assert!(futures::poll!(&mut call).is_pending());
        drop(call);
        assert!(go.send(()).is_err(), "the call's work was dropped");
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!done.load(Ordering::SeqCst));
    }

    /// A call that ends with its request answers it, and a panicking call is an `Err`, not a
    /// request that dies with it.
    #[tokio::test]
    async fn a_call_answers_its_request_and_a_panic_is_an_error() {
        let done = Arc::new(AtomicBool::new(false));
        let (go, wait) = tokio::sync::oneshot::channel();
        go.send(()).unwrap();
        assert!(Apart::new(acting(true, wait, done.clone())).await.unwrap());
        assert!(done.load(Ordering::SeqCst));
        let r: std::thread::Result<u8> = Apart::new(async { panic!("a tool's bug") }).await;
        assert!(r.is_err());
    }
}

//! A stateless POST's event stream ends with its answer: the HTTP body carrying it says so as
//! soon as the JSON-RPC response has gone out, so hyper writes that last event and the chunked
//! body's end in one `write` (one TCP segment, one wake-up of the client) instead of two.
//!
//! Why (issue 34): the SDK's stream for a stateless request ends only when its per-request
//! service task has finished, which it does a moment after handing over the answer. When the
//! call runs on the thread that serves the connection, hyper has already flushed the answer by
//! then and writes the body's end (`0\r\n\r\n`) in a second `writev`: with one client, a second
//! segment on every round trip, the reader woken twice.
//!
//! So the body says it has ended as soon as the event carrying the JSON-RPC response has been
//! handed to hyper, which then writes that event and the body's end in one `writev`. Nothing is
//! cut short: the SDK's stream is read to its own end by a task of its own (unless it has ended
//! already), so the request's cancellation token is never fired by an early drop (a task's work,
//! a call still finishing, go on as before); in a single request's stream the answer is the last
//! message, so nothing after it is lost. Holding the answer until the stream ended instead (no
//! task) was measured and is worse: while the body waits, hyper flushes the headers on their own,
//! which is again two writes.

use axum::body::{Body, Bytes};
use http_body::{Body as _, Frame, SizeHint};
use std::pin::Pin;
use std::task::{Context, Poll};

/// The body of one POST's event stream, ended with the JSON-RPC response in it.
pub struct EndsWithAnswer {
    inner: Option<Body>,
}

impl EndsWithAnswer {
    pub fn new(inner: Body) -> EndsWithAnswer {
        EndsWithAnswer { inner: Some(inner) }
    }
}

impl http_body::Body for EndsWithAnswer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let r = Pin::new(inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(f))) = &r
            && f.data_ref().is_some_and(|d| carries_response(d))
            && let Some(mut rest) = self.inner.take()
        {
            // Ended already (the SDK's task finished first): nothing left to read.
            if !matches!(Pin::new(&mut rest).poll_frame(cx), Poll::Ready(None)) {
                tokio::spawn(drain(rest));
            }
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(|b| b.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        match &self.inner {
            Some(b) => b.size_hint(),
            None => SizeHint::with_exact(0),
        }
    }
}

/// Reads the SDK's stream to its own end, dropping what comes after the answer.
async fn drain(mut body: Body) {
    while let Some(Ok(_)) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {}
}

/// Whether one SSE event carries a JSON-RPC response (a `result` or an `error`, no `method`):
/// not a notification, not a request to the client, not a keep-alive comment.
pub fn carries_response(event: &[u8]) -> bool {
    // The SDK writes each message as one `data:` line (JSON has no raw newline).
    event
        .split(|b| *b == b'\n')
        .filter_map(|line| line.strip_prefix(b"data:"))
        .any(|data| is_response(data.trim_ascii()))
}

/// Reads the message's top-level keys only as far as the first that decides (`method`, or
/// `result` / `error`), which the SDK writes within its first few dozen bytes: a whole parse of
/// the answer cost 32,000 instructions a call (callgrind), this a few hundred.
fn is_response(json: &[u8]) -> bool {
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    use std::cell::Cell;
    #[derive(serde::Deserialize)]
    #[serde(field_identifier, rename_all = "lowercase")]
    enum Key {
        Method,
        Result,
        Error,
        #[serde(other)]
        Other,
    }
    struct Keys<'a>(&'a Cell<bool>);
    impl<'de> Visitor<'de> for Keys<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
            while let Some(k) = m.next_key::<Key>()? {
                match k {
                    Key::Method => return Ok(()),
                    Key::Result | Key::Error => {
                        self.0.set(true);
                        return Ok(());
                    }
                    Key::Other => {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }
    let verdict = Cell::new(false);
    let mut de = serde_json::Deserializer::from_slice(json);
    // Left early on purpose: the rest of the object is never read, so the parse itself reports
    // an unfinished object; the verdict is what the keys said.
    let _ = serde::Deserializer::deserialize_map(&mut de, Keys(&verdict));
    verdict.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_response_ends_the_stream() {
        assert!(carries_response(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"
        ));
        assert!(carries_response(
            b"id: 0\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":1,\"message\":\"x\"}}\n\n"
        ));
        // Progress, a request to the client (it has an id too), a keep-alive, a priming event.
        assert!(!carries_response(
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
        ));
        assert!(!carries_response(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{}}\n\n"
        ));
        assert!(!carries_response(b":ping\n\n"));
        // Keys in another order; a `result` inside the params is not the message's own.
        assert!(carries_response(
            b"data: {\"result\":{},\"jsonrpc\":\"2.0\",\"id\":1}\n\n"
        ));
        assert!(!carries_response(
            b"data: {\"jsonrpc\":\"2.0\",\"params\":{\"result\":1,\"error\":2},\"method\":\"x\"}\n\n"
        ));
        assert!(!carries_response(b"data: [1,2]\n\n"));
        assert!(!carries_response(b"data:\n\n"));
    }

    const PROGRESS: &str =
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n";
    const ANSWER: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n\n";

    /// The events before the answer and the answer pass unchanged; the body ends with the answer
    /// although the stream behind it is still open, and that stream is still read to its end.
    #[tokio::test]
    async fn the_body_ends_with_the_answer_and_the_stream_behind_it_is_read_to_its_end() {
        let (tx, rx) = futures::channel::mpsc::unbounded::<Result<Bytes, std::io::Error>>();
        let read_on = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = read_on.clone();
        let stream = futures::StreamExt::chain(
            rx,
            futures::stream::once(async move {
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(Bytes::from_static(b":after\n\n"))
            }),
        );
        tx.unbounded_send(Ok(Bytes::from(PROGRESS))).unwrap();
        tx.unbounded_send(Ok(Bytes::from(ANSWER))).unwrap();
        let mut body = EndsWithAnswer::new(Body::from_stream(stream));
        let mut got = Vec::new();
        while !body.is_end_stream() {
            let f = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
            got.push(f.expect("a frame").unwrap().into_data().unwrap());
        }
        assert_eq!(got, [Bytes::from(PROGRESS), Bytes::from(ANSWER)]);
        let after = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
        assert!(after.is_none(), "nothing after the answer's end");
        // The SDK's side: its stream goes on being read until it ends by itself.
        drop(tx);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !read_on.load(std::sync::atomic::Ordering::SeqCst)
            && std::time::Instant::now() < until
        {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        assert!(
            read_on.load(std::sync::atomic::Ordering::SeqCst),
            "read to its own end"
        );
    }
}

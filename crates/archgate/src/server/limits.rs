//! Bounded listeners: every TCP listener archgate serves (`/mcp` and `/health`, the approval
//! page) goes through `serve` here instead of `axum::serve`, which has no header timeout.
//!
//! - **Header timeout** (`server.header_timeout_s`): hyper's `header_read_timeout` closes a
//!   connection that has not sent a whole request header in time — counted from the accept, and
//!   on a kept-alive connection from the end of the previous answer.
//! - **Another user** is closed at once: the peer's socket is looked up in the kernel's socket
//!   table (`peer::tcp_owner`) right after the accept, and a connection whose socket belongs to
//!   any uid but this process's — or whose owner cannot be named — is dropped before a byte of it
//!   is read, and counted (`refused_peer` in `/health`'s `connections`). The same rule as the
//!   Unix sockets' SO_PEERCRED check.
//! - **Body deadline** (`server.header_timeout_s` again): a request's body must arrive whole
//!   within that long of its header — a total, not an idle, deadline: a body trickled a byte at
//!   a time is closed when it runs out (counted `body_timeout`). The routes read a body only
//!   after its token (or session) was judged from the header (`http.rs`, the page).
//! - **Header size**: at most `MAX_HEADER_BUFFER` (64 KiB) of a header is buffered; past it the
//!   request is answered 431 and the connection closed, so an unfinished header holds little.
//! - **Idle timeout** (`server.idle_timeout_s`): a connection on which no byte moved either way
//!   for that long is closed — an answer nobody reads — except while archgate itself is working
//!   on a request it has received whole (a call waiting for the person is bounded by the
//!   approval deadline, not by this). Event streams ping within it.
//! - **Connection caps** (`server.max_connections`, `server.max_connections_per_peer`): when a
//!   new connection would pass either, the connection of that scope that has been quiet longest
//!   and is not busy is closed to make room; when every one is busy, the new one is closed at
//!   once. Busy means archgate has a request whole and is working on it or answering it; a
//!   request still waiting for its body, or one being refused, is not busy, so connections that
//!   trickle bodies cannot hold slots the person's requests need. The global cap is lowered to
//!   fit the process's `RLIMIT_NOFILE` with headroom, so a flood of connections cannot take the
//!   descriptors the rest of archgate needs (the audit log, the control socket, the other
//!   listener).
//!
//! An honest client's connection is new and sends its header at once, so it is never the one
//! closed; 200 half-open connections cost archgate nothing they can keep.

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::moved::{Watched, now_ms};

/// Descriptors kept free for everything but this listener's connections.
const HEADROOM: u64 = 128;

/// The most of a connection's unparsed input buffered at once: a header past it gets 431.
pub const MAX_HEADER_BUFFER: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
    pub max_per_peer: usize,
}

impl Limits {
    /// How long a request's body may take to arrive whole, from its header: the header's time.
    pub fn body_timeout(&self) -> Duration {
        self.header_timeout
    }
}

impl Limits {
    /// From the config in force, the global cap lowered to `share` of the descriptors this
    /// process may open (less headroom).
    pub fn from_config(c: &archgate_core::config::ServerConfig, share: u64) -> Limits {
        let fit = (nofile_limit().saturating_sub(HEADROOM) / share.max(1)).max(8) as usize;
        let max_connections = c.max_connections.min(fit);
        Limits {
            header_timeout: c.header_timeout,
            idle_timeout: c.idle_timeout,
            max_connections,
            max_per_peer: c.max_connections_per_peer.min(max_connections),
        }
    }
}

/// The soft `RLIMIT_NOFILE` of this process (from /proc; 1024 when it cannot be read).
pub fn nofile_limit() -> u64 {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3).map(str::to_owned))
        })
        .and_then(|soft| soft.parse().ok())
        .unwrap_or(1024)
}

pub use crate::app::listener_stats::Stats;

struct Conn {
    peer: IpAddr,
    /// Requests whose answer has not been sent to its end.
    in_flight: Arc<AtomicUsize>,
    /// `now_ms()` when a byte last moved.
    last: Arc<AtomicU64>,
    close: CancellationToken,
    /// The request being served on it, if any.
    current: Arc<Current>,
}

impl Conn {
    /// Busy: a request is in flight, received whole, and not being refused. A request still
    /// waiting for its body is not busy — its connection may be closed to make room.
    fn busy(&self) -> bool {
        self.in_flight.load(Ordering::SeqCst) > 0
            && self.current.body_done.load(Ordering::SeqCst)
            && !self.current.refused.load(Ordering::SeqCst)
    }
}

/// The request on a connection (HTTP/1: one at a time): received whole, answered yet?
#[derive(Default)]
struct Current {
    body_done: AtomicBool,
    head_ready: AtomicBool,
    /// A route is refusing it (`RequestState::refusing`): it holds nothing worth keeping.
    refused: AtomicBool,
    /// `now_ms()` when its header arrived.
    since: AtomicU64,
}

impl Current {
    /// archgate is working on a request it has whole: no byte need move until it answers.
    fn thinking(&self) -> bool {
        self.body_done.load(Ordering::SeqCst) && !self.head_ready.load(Ordering::SeqCst)
    }

    /// A request's header came and its body has not come whole, nor has an answer begun.
    fn awaiting_body(&self) -> bool {
        !self.body_done.load(Ordering::SeqCst) && !self.head_ready.load(Ordering::SeqCst)
    }
}

/// What a route may tell the listener about the request it serves (in its extensions).
#[derive(Clone)]
pub struct RequestState(Arc<Current>);

impl RequestState {
    /// The request is being refused (a wrong token, answered after a delay): while it waits,
    /// its connection is not busy and may be closed to make room.
    pub fn refusing(&self) {
        self.0.refused.store(true, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Registry {
    conns: Mutex<HashMap<u64, Conn>>,
    next: AtomicU64,
}

impl Registry {
    /// Admits a connection from `peer`, closing a quiet one to make room when a cap is reached.
    /// `None`: every connection in scope is busy; the new one must be closed.
    fn admit(&self, peer: IpAddr, limits: &Limits, stats: &Stats) -> Option<(u64, Conn)> {
        let mut m = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        // A connection told to close keeps its descriptor until its task has dropped it: past a
        // ceiling of those too, a new one is closed at once, so a flood cannot outrun the closing.
        if m.len() >= limits.max_connections + limits.max_connections / 4 {
            return None;
        }
        let open = |c: &&Conn| !c.close.is_cancelled();
        let from_peer = m.values().filter(open).filter(|c| c.peer == peer).count();
        let scope_peer = if from_peer >= limits.max_per_peer {
            Some(true)
        } else if m.values().filter(open).count() >= limits.max_connections {
            Some(false)
        } else {
            None
        };
        if let Some(same_peer) = scope_peer {
            // The quietest goes; among connections quiet since the same millisecond (a flood
            // accepted in one burst), the oldest, so the choice never rests on hash order.
            let victim = m
                .iter()
                .filter(|(_, c)| open(c))
                .filter(|(_, c)| !same_peer || c.peer == peer)
                .filter(|(_, c)| !c.busy())
                .min_by_key(|(id, c)| (c.last.load(Ordering::Relaxed), **id));
            match victim {
                Some((_, c)) => {
                    c.close.cancel();
                    stats.evicted.fetch_add(1, Ordering::Relaxed);
                }
                None => return None,
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Conn {
            peer,
            in_flight: Arc::default(),
            last: Arc::new(AtomicU64::new(now_ms())),
            close: CancellationToken::new(),
            current: Arc::default(),
        };
        let handle = Conn {
            peer,
            in_flight: conn.in_flight.clone(),
            last: conn.last.clone(),
            close: conn.close.clone(),
            current: conn.current.clone(),
        };
        m.insert(id, conn);
        Some((id, handle))
    }

    fn remove(&self, id: u64) {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }
}

/// How often, and how long apart, a connection past a cap is admitted again before it is refused.
const ADMIT_RETRIES: usize = 5;
const ADMIT_PAUSE: Duration = Duration::from_millis(20);

/// Serves `router` on `listener` under `limits` until `shutdown`; open connections get a
/// graceful close and at most `drain` to finish.
pub async fn serve(
    listener: TcpListener,
    beside: Option<TcpListener>,
    router: Router,
    limits: Limits,
    stats: Arc<Stats>,
    shutdown: CancellationToken,
    drain: Duration,
) {
    let registry = Arc::new(Registry::default());
    // Connections are taken, and another uid's refused, by threads that do nothing else
    // (`accept.rs`); only this uid's arrive here.
    // A channel of one: a connection is a descriptor, and what waits here is not under the
    // caps (at most one per acceptor thread more, within the descriptors' headroom); the
    // kernel's backlog holds the rest, as before.
    let (tx, mut rx) = tokio::sync::mpsc::channel(1);
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_acceptors = StopOnDrop(stop.clone());
    // The IPv6 loopback's listener, when there is one, feeds the same connections (`accept.rs`
    // `bind_v6_beside`): the same uid check, the same caps.
    let taken = beside
        .map(|b| {
            b.into_std()
                .and_then(|l| super::accept::acceptors(l, tx.clone(), stats.clone(), stop.clone()))
        })
        .unwrap_or(Ok(()))
        .and_then(|()| listener.into_std())
        .and_then(|l| super::accept::acceptors(l, tx, stats.clone(), stop.clone()));
    if let Err(e) = taken {
        tracing::error!("the listener's acceptors could not start: {e}");
        return;
    }
    loop {
        let (tcp, peer) = tokio::select! {
            r = rx.recv() => match r.map(|(tcp, peer)| {
                tcp.set_nonblocking(true)
                    .and_then(|()| tokio::net::TcpStream::from_std(tcp))
                    .map(|tcp| (tcp, peer))
            }) {
                Some(Ok(x)) => x,
                Some(Err(e)) => {
                    tracing::warn!("a connection could not be served: {e}");
                    continue;
                }
                None => break,
            },
            _ = shutdown.cancelled() => break,
        };
        // Past a cap, connections told to close may still be on their way out: give them a few
        // moments (the kernel's backlog holds the next ones meanwhile) before refusing this one,
        // so a flood that just stopped does not shut out the honest client that comes after it.
        let mut admitted = registry.admit(peer.ip(), &limits, &stats);
        for _ in 0..ADMIT_RETRIES {
            if admitted.is_some() {
                break;
            }
            tokio::time::sleep(ADMIT_PAUSE).await;
            admitted = registry.admit(peer.ip(), &limits, &stats);
        }
        let Some((id, conn)) = admitted else {
            stats.refused.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(%peer, "connection refused: every connection in scope is busy");
            drop(tcp);
            continue;
        };
        stats.accepted.fetch_add(1, Ordering::Relaxed);
        // TCP_NODELAY: an answer goes out in several small writes (head, SSE event, last
        // chunk); Nagle would hold the last one until the client's delayed ACK, ~40 ms.
        let _ = tcp.set_nodelay(true);
        let router = router.clone();
        let registry = registry.clone();
        let stats = stats.clone();
        let shutdown = shutdown.clone();
        tokio::spawn(async move {
            stats.open.fetch_add(1, Ordering::Relaxed);
            serve_connection(tcp, peer, router, &conn, limits, &stats, shutdown, drain).await;
            stats.open.fetch_sub(1, Ordering::Relaxed);
            registry.remove(id);
        });
    }
}

/// Stops the acceptor threads when `serve` ends.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[allow(clippy::too_many_arguments)]
async fn serve_connection(
    tcp: tokio::net::TcpStream,
    peer: SocketAddr,
    router: Router,
    conn: &Conn,
    limits: Limits,
    stats: &Stats,
    shutdown: CancellationToken,
    drain: Duration,
) {
    let io = Watched {
        inner: tcp,
        last: conn.last.clone(),
    };
    let in_flight = conn.in_flight.clone();
    let current = conn.current.clone();
    let now = current.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        req.extensions_mut().insert(RequestState(now.clone()));
        let mut router = router.clone();
        let now = now.clone();
        now.head_ready.store(false, Ordering::SeqCst);
        now.refused.store(false, Ordering::SeqCst);
        now.since.store(now_ms(), Ordering::SeqCst);
        now.body_done
            .store(http_body::Body::is_end_stream(req.body()), Ordering::SeqCst);
        let guard = InFlight::enter(in_flight.clone());
        let req = req.map(|b| {
            Body::new(EndWatch {
                inner: b,
                now: now.clone(),
            })
        });
        async move {
            let res = router.call(req).await;
            now.head_ready.store(true, Ordering::SeqCst);
            res.map(|r| {
                r.map(|b| {
                    Body::new(Guarded {
                        inner: b,
                        _guard: guard,
                    })
                })
            })
        }
    });
    let http = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(Some(limits.header_timeout))
        // A request's header (token included) fits well within this; an unfinished larger one
        // is answered 431 at once instead of being buffered up to hyper's ~400 KiB.
        .max_buf_size(MAX_HEADER_BUFFER)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(http);
    let step = (limits.idle_timeout.min(limits.body_timeout()) / 4).max(Duration::from_millis(100));
    let mut tick = tokio::time::interval(step);
    let body_ms = limits.body_timeout().as_millis() as u64;
    let mut drain_until: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            r = http.as_mut() => {
                if let Err(e) = r {
                    tracing::debug!(%peer, "connection ended: {e}");
                }
                return;
            }
            _ = conn.close.cancelled() => {
                tracing::debug!(%peer, "connection closed to make room for a new one");
                return;
            }
            _ = tick.tick() => {
                let quiet = now_ms().saturating_sub(conn.last.load(Ordering::Relaxed));
                let waited = now_ms().saturating_sub(current.since.load(Ordering::SeqCst));
                if conn.in_flight.load(Ordering::SeqCst) > 0
                    && current.awaiting_body()
                    && waited >= body_ms
                {
                    stats.body_timeout.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "connection closed: its body took over {waited} ms");
                    return;
                }
                if current.thinking() {
                    // Quiet because archgate is working: the clock starts again after it answers.
                    conn.last.store(now_ms(), Ordering::Relaxed);
                } else if quiet >= limits.idle_timeout.as_millis() as u64 {
                    stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(%peer, "connection closed: idle for {quiet} ms");
                    return;
                }
            }
            _ = shutdown.cancelled(), if drain_until.is_none() => {
                http.as_mut().graceful_shutdown();
                drain_until = Some(tokio::time::Instant::now() + drain);
            }
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(tokio::time::Instant::now)),
                if drain_until.is_some() => return,
        }
    }
}

/// Counts a request in flight until its answer's body is dropped (sent, or the client gone).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn enter(n: Arc<AtomicUsize>) -> InFlight {
        n.fetch_add(1, Ordering::SeqCst);
        InFlight(n)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Guarded {
    inner: Body,
    _guard: InFlight,
}

impl http_body::Body for Guarded {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// A request body that notes when it has been received whole.
struct EndWatch {
    inner: Incoming,
    now: Arc<Current>,
}

impl http_body::Body for EndWatch {
    type Data = axum::body::Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.now.body_done.store(true, Ordering::SeqCst);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max: usize, per_peer: usize) -> Limits {
        Limits {
            header_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(20),
            max_connections: max,
            max_per_peer: per_peer,
        }
    }

    #[test]
    fn among_connections_quiet_since_the_same_millisecond_the_oldest_makes_room() {
        let r = Registry::default();
        let s = Stats::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let l = limits(64, 8);
        let held: Vec<Conn> = (0..8)
            .map(|_| {
                let (_, c) = r.admit(a, &l, &s).unwrap();
                c.last.store(0, Ordering::Relaxed);
                c
            })
            .collect();
        for n in 0..4 {
            r.admit(a, &l, &s).unwrap();
            let closed: Vec<bool> = held.iter().map(|c| c.close.is_cancelled()).collect();
            assert_eq!(closed, (0..8).map(|i| i <= n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn past_a_cap_the_quietest_idle_connection_makes_room_and_busy_ones_never_do() {
        let r = Registry::default();
        let s = Stats::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let l = limits(4, 2);
        let (first_id, first) = r.admit(a, &l, &s).unwrap();
        first.last.store(0, Ordering::Relaxed);
        let (_, second) = r.admit(a, &l, &s).unwrap();
        // Heard from later than `first` (set, not left to the clock: both may read 0 ms).
        second.last.store(1_000, Ordering::Relaxed);
        // Per peer: the third from `a` closes the quietest of `a`'s.
        let (_, third) = r.admit(a, &l, &s).unwrap();
        assert!(first.close.is_cancelled() && !second.close.is_cancelled());
        // Its task ends and lets it go.
        r.remove(first_id);
        // A request waiting for its body is not busy: its connection makes room.
        third.in_flight.fetch_add(1, Ordering::SeqCst);
        second.in_flight.fetch_add(1, Ordering::SeqCst);
        second.current.body_done.store(true, Ordering::SeqCst);
        let (fourth_id, _) = r
            .admit(a, &l, &s)
            .expect("the one awaiting its body makes room");
        assert!(third.close.is_cancelled() && !second.close.is_cancelled());
        r.remove(fourth_id);
        r.conns
            .lock()
            .unwrap()
            .retain(|_, c| !c.close.is_cancelled());
        let (_, third) = r.admit(a, &l, &s).unwrap();
        // A request being refused is not busy either.
        third.in_flight.fetch_add(1, Ordering::SeqCst);
        third.current.body_done.store(true, Ordering::SeqCst);
        third.current.refused.store(true, Ordering::SeqCst);
        assert!(r.admit(a, &l, &s).is_some(), "the refused one makes room");
        assert!(third.close.is_cancelled());
        r.conns
            .lock()
            .unwrap()
            .retain(|_, c| !c.close.is_cancelled());
        let (_, third) = r.admit(a, &l, &s).unwrap();
        third.in_flight.fetch_add(1, Ordering::SeqCst);
        third.current.body_done.store(true, Ordering::SeqCst);
        // Busy connections are never closed: with both of `a`'s busy, a new one is refused.
        r.conns
            .lock()
            .unwrap()
            .retain(|_, c| !c.close.is_cancelled());
        assert!(r.admit(a, &l, &s).is_none());
        // Another peer is not affected by `a`'s cap, up to the global one.
        assert!(r.admit(b, &l, &s).is_some());
        assert!(r.admit(b, &l, &s).is_some());
        assert!(r.admit("127.0.0.3".parse().unwrap(), &l, &s).is_some());
        let m = r.conns.lock().unwrap();
        let open = m.values().filter(|c| !c.close.is_cancelled()).count();
        assert_eq!(open, 4, "the global cap holds");
        drop(m);
        // Closing ones count against a ceiling until their tasks have let them go.
        assert!(r.admit("127.0.0.4".parse().unwrap(), &l, &s).is_none());
    }

    #[test]
    fn the_descriptor_limit_lowers_the_cap() {
        let mut c = archgate_core::config::Config::default().server;
        c.max_connections = 1 << 16;
        let l = Limits::from_config(&c, 2);
        assert!((l.max_connections as u64) < nofile_limit(), "{l:?}");
        assert!(l.max_per_peer <= l.max_connections);
    }
}

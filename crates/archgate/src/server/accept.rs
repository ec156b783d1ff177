//! Taking connections as fast as another uid can make them (attack 2 F7).
//!
//! **Class closed here, as far as the kernel allows:** *another uid's connections cost archgate
//! the person's service*. Another user's connections are closed before a byte is read
//! (`limits.rs`, `peer.rs`), but one that opens connections in a loop kept the listen backlog full
//! faster than archgate took them in, and the person's `/health` and `/mcp` SYNs were dropped and
//! retried (seconds; a 10 s timeout failed with four flooding threads). What costs a refusal here:
//!
//! - **a deep backlog**: the listeners ask for [`BACKLOG`] (the kernel keeps the smaller of it and
//!   `net.core.somaxconn`, 4096 on current kernels, where tokio's default is 1024), so a burst
//!   waits in the queue instead of having the person's SYN dropped;
//! - **threads that only accept**: connections are taken by [`acceptors`] — plain threads
//!   (one per core, at most four) polling the listener and accepting until it is empty — and the
//!   peer's uid is judged there, on the blocking socket, before the connection ever reaches the
//!   async runtime (no reactor registration, no task, no wake-up for a stranger's connection);
//!   only the person's are handed on;
//! - **nothing but the uid check before the close**: the refusal is counted; the log gets the
//!   first refused connection and then one line per [`LOG_EVERY`] saying how many followed, never
//!   a line per connection (a flood used to write one each: a stranger filling the person's disk
//!   through `daemon.log`); the socket is closed with a reset (`SO_LINGER` 0), leaving no
//!   `TIME_WAIT` behind; and the netlink socket that asks the kernel for the owner is kept per
//!   thread, opened as the thread starts (`peer.rs`), rather than for each connection;
//! - **a socket its process already closed is no one's** (`peer.rs`): the kernel reports an
//!   orphaned socket's uid as root's, so a daemon run as root served a flood that closed each
//!   socket at once as its own.
//!
//! What the kernel does not allow: a loopback listener has no per-uid queue, so a process that
//! connects faster than archgate can refuse still delays the person's connections. The person's
//! stdio clients do not queue there: the bridge socket is a Unix socket in a 0700 directory that
//! no other uid can reach at all (`e2e/bridge.rs` `another_user_is_refused_by_its_peer_uid_and_counted`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpSocket};

/// The listen backlog asked for (the kernel caps it at `net.core.somaxconn`).
pub const BACKLOG: u32 = 65_535;
/// At most one log line per this long about refused connections.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// A loopback listener at `addr` with a deep backlog (see the module documentation).
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As `TcpListener::bind` does on Unix: a restarted daemon takes its port back at once.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The IPv6 loopback at the port a listener on `127.0.0.1` took, so no other uid can: a client
/// configured with `localhost` tries `[::1]` first on most systems, and another user's listener
/// there received its bearer token (attack 34 F5; class: *another uid answering on archgate's
/// port is taken for archgate*, its other loopback family). `None` where this machine has no
/// IPv6 loopback; a port held there already is said loudly, with its holder when it can be named.
pub fn bind_v6_beside(v4: &TcpListener, what: &str) -> Option<TcpListener> {
    let port = v4.local_addr().ok()?.port();
    match bind((std::net::Ipv6Addr::LOCALHOST, port).into()) {
        Ok(l) => Some(l),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            tracing::warn!(
                "[::1]:{port}, {what}'s port on the IPv6 loopback, is held by another process ({}): a \
                 client configured with `localhost` may send its token and calls there; configure \
                 clients with 127.0.0.1 (as `archgate client-config` does), or free the port",
                crate::server::port_holder::v6_holder_text(port)
            );
            None
        }
        Err(e) => {
            tracing::debug!("no IPv6 loopback listener beside 127.0.0.1:{port}: {e}");
            None
        }
    }
}

/// Closes a refused connection with a reset: no `TIME_WAIT` kept for a stranger.
pub fn refuse(tcp: std::net::TcpStream) {
    let reset = nix::libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    let _ = nix::sys::socket::setsockopt(&tcp, nix::sys::socket::sockopt::Linger, &reset);
    drop(tcp);
}

/// How long an acceptor waits for a connection before it looks at `stop` again (µs).
const WAKE_US: i64 = 200_000;

/// Starts the threads that take `listener`'s connections (see the module documentation): each
/// connection whose peer is this uid's is sent on `to`; any other is counted in `refused_peer`
/// and reset. The threads end once `stop` is set or `to` is closed.
pub fn acceptors(
    listener: std::net::TcpListener,
    to: tokio::sync::mpsc::Sender<(std::net::TcpStream, SocketAddr)>,
    stats: Arc<crate::app::listener_stats::Stats>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    // Blocking accepts that give up every `WAKE` (Linux's accept honours SO_RCVTIMEO): each
    // connection wakes one waiting thread, and a stopped listener is noticed.
    listener.set_nonblocking(false)?;
    nix::sys::socket::setsockopt(
        &listener,
        nix::sys::socket::sockopt::ReceiveTimeout,
        &nix::sys::time::TimeVal::new(0, WAKE_US),
    )
    .map_err(std::io::Error::from)?;
    let ours = listener.local_addr()?;
    let listener = Arc::new(listener);
    let log = Arc::new(RefusalLog::default());
    let n = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4);
    for i in 0..n {
        let (listener, to, stats, stop, log) = (
            listener.clone(),
            to.clone(),
            stats.clone(),
            stop.clone(),
            log.clone(),
        );
        std::thread::Builder::new()
            .name(format!("archgate-accept-{}-{i}", ours.port()))
            .spawn(move || take(&listener, ours, &to, &stats.refused_peer, &stop, &log))?;
    }
    Ok(())
}

fn take(
    listener: &std::net::TcpListener,
    ours: SocketAddr,
    to: &tokio::sync::mpsc::Sender<(std::net::TcpStream, SocketAddr)>,
    refused_peer: &std::sync::atomic::AtomicU64,
    stop: &AtomicBool,
    log: &RefusalLog,
) {
    super::peer::prepare_this_thread();
    while !stop.load(Ordering::Relaxed) && !to.is_closed() {
        match listener.accept() {
            Ok((tcp, peer)) => {
                if let Err(why) = own_user(ours, peer) {
                    refused_peer.fetch_add(1, Ordering::Relaxed);
                    log.refused(peer, &why);
                    refuse(tcp);
                    continue;
                }
                if to.blocking_send((tcp, peer)).is_err() {
                    return;
                }
            }
            // The receive timeout: a look at `stop`.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => {
                // EMFILE and friends: wait a little instead of spinning.
                tracing::warn!("accept failed: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// Whether the socket at `peer` (connected to our `ours`) belongs to this process's uid; else
/// why not.
fn own_user(ours: SocketAddr, peer: SocketAddr) -> Result<(), String> {
    match super::peer::peer_owner(ours, peer) {
        Ok(uid) if uid == super::peer::my_uid() => Ok(()),
        Ok(uid) => Err(format!("its socket belongs to uid {uid}, not this user")),
        Err(e) => Err(e.to_string()),
    }
}

/// The log of refused connections: the first one, then a count at most every [`LOG_EVERY`].
#[derive(Default)]
pub struct RefusalLog(Mutex<Option<(Instant, u64)>>);

impl RefusalLog {
    pub fn refused(&self, peer: SocketAddr, why: &str) {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match g.as_mut() {
            None => {
                tracing::warn!(%peer, "connection refused before reading it: {why}");
                *g = Some((Instant::now(), 0));
            }
            Some((since, n)) => {
                *n += 1;
                if since.elapsed() >= LOG_EVERY {
                    tracing::warn!(
                        "{n} more connections refused before reading them in the last {} s \
                         (the last: {peer}, {why}); /health counts them as refused_peer",
                        since.elapsed().as_secs()
                    );
                    *g = Some((Instant::now(), 0));
                }
            }
        }
    }
}

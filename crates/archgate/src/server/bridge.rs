//! The daemon's Unix socket for bridged stdio clients (`archgate serve --client NAME`).
//!
//! `bridge.sock` in the runtime directory (0700), mode 0600, or the socket systemd's
//! `archgate.socket` unit passed in (socket activation). Every connection's peer uid
//! (SO_PEERCRED) must be this process's, else it is closed before a byte is read and counted.
//! A connection starts with one hello line,
//! `{"archgate_bridge":1,"client":"NAME","config":"PATH","state":"DIR"}` (`config`: the config
//! file the bridge would use; `state`: its state directory), within
//! `server.header_timeout_s` and 4 KiB; the daemon answers one line (`ok`, or the refusal's kind
//! and reason) and then serves MCP over the same stream, as a session of client NAME with the
//! grant, budgets and limits an HTTP client of that name has. Bounded like the HTTP listener: at
//! most 32 connections saying hello at once (past it the one waiting longest is closed to make
//! room, answered `unfinished`: silent connections cannot keep a bridge out),
//! `server.max_connections` in all and `server.max_sessions_per_client` per client name.
//!
//! A bridge whose state directory is not this daemon's is refused too (`other_state`, attack 4
//! F4): its tokens, log and the records it writes for calls it watched would not be the ones the
//! daemon and the person read.
//!
//! A bridge whose config file is not this daemon's is refused (`other_config`): the daemon's
//! policy is the one config it was started with, never one a client's environment named
//! (`ARCHGATE_CONFIG` in a project's `.mcp.json`), and a client is never served under another
//! config than the one it names (attack 3 F7; `e2e/bridge.rs`
//! `a_bridge_naming_another_config_is_refused_and_starts_no_daemon`).
//!
//! When a bridged connection closes, its calls still parked are withdrawn at once (recorded
//! `unreachable` by the gate). When the daemon stops, `close` ends parked calls first, so each
//! bridged call's answer (and its one record) is written before the socket goes.

use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::mcp::McpServer;
use crate::app::App;

/// The socket's file name in the runtime directory.
pub const SOCKET: &str = "bridge.sock";
/// The hello's protocol version.
pub const VERSION: u64 = 1;
/// Longest hello line accepted, newline included.
pub const MAX_HELLO: usize = 4096;
/// Connections in their hello at once; past it the one waiting longest is closed to make room
/// (an honest bridge says hello at once, so a flood of silent connections cannot keep it out).
const MAX_GREETING: usize = 32;

/// The connections still in their hello, oldest first, each with what closes it.
#[derive(Default)]
struct Greeting {
    waiting: Mutex<std::collections::VecDeque<(u64, CancellationToken)>>,
    next: std::sync::atomic::AtomicU64,
}

/// One connection's place among those in their hello; given up when dropped.
struct GreetingSlot {
    greeting: Arc<Greeting>,
    id: u64,
    closed: CancellationToken,
}

impl Greeting {
    /// A place for a new connection, closing the one waiting longest when all are taken.
    fn enter(self: &Arc<Self>) -> GreetingSlot {
        let mut w = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        while w.len() >= MAX_GREETING {
            if let Some((_, oldest)) = w.pop_front() {
                oldest.cancel();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let closed = CancellationToken::new();
        w.push_back((id, closed.clone()));
        GreetingSlot {
            greeting: self.clone(),
            id,
            closed,
        }
    }
}

impl Drop for GreetingSlot {
    fn drop(&mut self) {
        let mut w = self
            .greeting
            .waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        w.retain(|(id, _)| *id != self.id);
    }
}

/// Why a hello was refused; `kind` is what the bridge reports to its client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HelloError {
    #[error("the hello line is longer than {MAX_HELLO} bytes")]
    TooLarge,
    #[error("the connection ended (or went quiet) before a whole hello line")]
    Unfinished,
    #[error("not a bridge hello: {0}")]
    Malformed(String),
    #[error("{0:?} is not a valid client name (letters, digits, '-', '_', at most 64)")]
    BadName(String),
    #[error(
        "no client named {0:?}: use `local`, a [clients.NAME] section of config.toml, or claude-code, claude-desktop, cursor, vscode"
    )]
    UnknownClient(String),
    #[error(
        "{0:?} is an HTTP client of `archgate clients`: its grant, standing rules and relay trust \
         belong to its token, and a bridge's name proves nothing. Give this stdio client another \
         name (a [clients.NAME] section, or claude-code, claude-desktop, cursor, vscode)"
    )]
    TokenClient(String),
    #[error(
        "{0:?} was an HTTP client of `archgate clients` (revoked or renamed): the grant, standing \
         rules and relay trust the person gave it were its token's, and a bridge's name proves \
         nothing. Give this stdio client another name (a [clients.NAME] section, or claude-code, \
         claude-desktop, cursor, vscode)"
    )]
    FormerTokenClient(String),
    #[error("client {0:?} has {1} bridged sessions open already (server.max_sessions_per_client)")]
    TooManySessions(String, usize),
    #[error("the daemon serves {0} connections already (server.max_connections)")]
    Busy(usize),
    #[error(
        "this daemon runs with the config file {daemon}, and this client names {asked}: a client is \
         served only under the config it names, and the daemon's policy is never a client's. Use the \
         same file (unset ARCHGATE_CONFIG / --config for the person's own), or stop the daemon"
    )]
    OtherConfig { daemon: String, asked: String },
    #[error(
        "this daemon keeps its state (tokens, log) in {daemon}, and this client's is {asked}: a \
         client whose environment moved archgate's state directory (XDG_STATE_HOME) is not served \
         by the session's daemon. Unset it for the person's own, or stop the daemon"
    )]
    OtherState { daemon: String, asked: String },
}

impl HelloError {
    pub fn kind(&self) -> &'static str {
        match self {
            HelloError::TooLarge => "too_large",
            HelloError::Unfinished => "unfinished",
            HelloError::Malformed(_) => "malformed",
            HelloError::BadName(_) => "invalid_name",
            HelloError::UnknownClient(_) => "unknown_client",
            HelloError::TokenClient(_) => "token_client",
            HelloError::FormerTokenClient(_) => "former_token_client",
            HelloError::TooManySessions(..) => "too_many_sessions",
            HelloError::Busy(_) => "busy",
            HelloError::OtherConfig { .. } => "other_config",
            HelloError::OtherState { .. } => "other_state",
        }
    }
}

/// What a hello names: the client, and the config file the bridge would use (absent from a
/// bridge that predates the field).
#[derive(Debug, PartialEq, Eq)]
pub struct Hello {
    pub client: String,
    pub config: Option<PathBuf>,
    /// The bridge's state directory (absent from a bridge that predates the field).
    pub state: Option<PathBuf>,
}

/// The hello's line (newline included or not), to what it names. `known` says whether a
/// well-formed name is a client this daemon knows.
pub fn parse_hello(line: &[u8], known: impl Fn(&str) -> bool) -> Result<Hello, HelloError> {
    if line.len() > MAX_HELLO {
        return Err(HelloError::TooLarge);
    }
    let v: Value =
        serde_json::from_slice(line).map_err(|e| HelloError::Malformed(e.to_string()))?;
    let Some(o) = v.as_object() else {
        return Err(HelloError::Malformed("not a JSON object".into()));
    };
    if o.get("archgate_bridge").and_then(Value::as_u64) != Some(VERSION) {
        return Err(HelloError::Malformed(format!(
            "\"archgate_bridge\" must be {VERSION}"
        )));
    }
    if let Some(k) = o
        .keys()
        .find(|k| !["archgate_bridge", "client", "config", "state"].contains(&k.as_str()))
    {
        return Err(HelloError::Malformed(format!("unknown field {k:?}")));
    }
    let name = match o.get("client") {
        None => archgate_core::clients::LOCAL_CLIENT,
        Some(Value::String(s)) => s.as_str(),
        Some(_) => return Err(HelloError::Malformed("\"client\" must be a string".into())),
    };
    if !valid_name(name) {
        return Err(HelloError::BadName(
            archgate_core::text::for_terminal(name).into_owned(),
        ));
    }
    if !known(name) {
        return Err(HelloError::UnknownClient(name.to_owned()));
    }
    let path = |key: &str| match o.get(key) {
        None => Ok(None),
        Some(Value::String(p)) if Path::new(p).is_absolute() => Ok(Some(PathBuf::from(p))),
        Some(_) => Err(HelloError::Malformed(format!(
            "{key:?} must be an absolute path"
        ))),
    };
    Ok(Hello {
        client: name.to_owned(),
        config: path("config")?,
        state: path("state")?,
    })
}

/// Whether two config paths name one file: by their real paths when both resolve, else as
/// written (a file not made yet is still named by its path).
pub fn same_config(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The hello's config file and state directory against this daemon's: refused when either is
/// another.
fn check_config(app: &App, hello: Hello) -> Result<String, HelloError> {
    match &hello.config {
        Some(asked) if !same_config(asked, &app.paths.config_file) => {
            Err(HelloError::OtherConfig {
                daemon: app.paths.config_file.display().to_string(),
                asked: archgate_core::text::for_terminal(&asked.display().to_string()).into_owned(),
            })
        }
        _ => match &hello.state {
            Some(asked) if !same_config(asked, &app.paths.state_dir) => {
                Err(HelloError::OtherState {
                    daemon: app.paths.state_dir.display().to_string(),
                    asked: archgate_core::text::for_terminal(&asked.display().to_string())
                        .into_owned(),
                })
            }
            _ => Ok(hello.client),
        },
    }
}

/// The names `archgate clients` accepts: letters, digits, '-', '_', 1 to 64 bytes.
pub fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `name` is a client of this daemon: `local`, `default`, a `[clients.NAME]` section, a
/// client of `archgate clients`, or one of the kinds `archgate client-config` names. (A bridge is
/// then refused the name of a client of `archgate clients`: [`not_token_client`].)
pub fn known_client(app: &App, name: &str) -> bool {
    use archgate_core::clients::{DEFAULT_CLIENT, LOCAL_CLIENT};
    name == LOCAL_CLIENT
        || name == DEFAULT_CLIENT
        || app.gate.config().current().clients.contains_key(name)
        || app.clients.list().iter().any(|c| c.name == name)
        || crate::cli::ClientKind::ALL
            .iter()
            .any(|k| k.names().0 == name)
}

/// A bridge may not take the name of a client of `archgate clients` (class: *an identity the
/// person trusts, claimed by a name*, attack 15 F1): that client proves itself with its token,
/// and its grant, standing rules and `trusted_relay` are the person's trust in that token's
/// holder; a bridge's name is a label. Nor a name that was one (attack 18 F6: the section and
/// rules the person wrote for it outlive the token). (`default`'s token is in a file every process of the
/// person reads, so naming it gains nothing the file does not give.)
pub fn not_token_client(app: &Arc<App>, name: String) -> Result<String, HelloError> {
    if super::named_client::is_token_client(app, &name) {
        return Err(HelloError::TokenClient(name));
    }
    if super::named_client::was_token_client(app, &name) {
        return Err(HelloError::FormerTokenClient(name));
    }
    Ok(name)
}

/// The listening socket; `close` ends it in order.
pub struct BridgeServer {
    path: Option<PathBuf>,
    stop: CancellationToken,
    tasks: Tasks,
    accept: tokio::task::JoinHandle<()>,
}

/// The connections' tasks (finished ones reaped as new ones come).
type Tasks = Arc<Mutex<JoinSet<()>>>;

impl BridgeServer {
    /// Ends every bridged connection and waits (at most `within`) for their answers to be
    /// written. Parked calls are withdrawn by the caller first, so each has answered by now.
    pub async fn close(self, within: Duration) {
        self.accept.abort();
        self.stop.cancel();
        let mut set = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        let _ =
            tokio::time::timeout(within, async { while set.join_next().await.is_some() {} }).await;
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Binds (or takes from systemd) the bridge socket and serves it until closed. The caller holds
/// the daemon lock, so a `bridge.sock` already there is left over from a daemon that died.
pub fn start(app: Arc<App>) -> std::io::Result<BridgeServer> {
    let (listener, own_path) = match activated()? {
        Some(l) => (l, None),
        None => {
            let path = app.paths.runtime_dir.join(SOCKET);
            (bind_private(&path)?, Some(path))
        }
    };
    let shown = own_path
        .clone()
        .unwrap_or_else(|| app.paths.runtime_dir.join(SOCKET));
    let _ = app.bridge.socket.set(shown.clone());
    tracing::info!(socket = %shown.display(), activated = own_path.is_none(), "bridge socket ready");
    let stop = CancellationToken::new();
    let tasks: Tasks = Arc::default();
    let accept = tokio::spawn(accept_loop(app, listener, stop.clone(), tasks.clone()));
    Ok(BridgeServer {
        path: own_path,
        stop,
        tasks,
        accept,
    })
}

/// The socket systemd passed (`LISTEN_FDS`, for this pid), if any.
fn activated() -> std::io::Result<Option<UnixListener>> {
    let mut fds = listenfd::ListenFd::from_env();
    if fds.len() == 0 {
        return Ok(None);
    }
    match fds.take_unix_listener(0)? {
        Some(l) => {
            l.set_nonblocking(true)?;
            Ok(Some(UnixListener::from_std(l)?))
        }
        None => Ok(None),
    }
}

pub fn bind_private(path: &Path) -> std::io::Result<UnixListener> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() || m.is_dir() => {
            return Err(std::io::Error::other(format!(
                "{} is not a socket archgate left; remove it",
                path.display()
            )));
        }
        Ok(_) => std::fs::remove_file(path)?,
        Err(_) => {}
    }
    let l = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(l)
}

async fn accept_loop(app: Arc<App>, listener: UnixListener, stop: CancellationToken, tasks: Tasks) {
    let greeting = Arc::new(Greeting::default());
    loop {
        let stream = tokio::select! {
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(e) => {
                    tracing::warn!("bridge socket accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => return,
        };
        let stats = &app.bridge;
        if !peer_is_me(&stream) {
            stats.refused_peer.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("bridge socket: refused a connection from another user");
            continue;
        }
        // The connection closed to make room answers `unfinished` and is counted so.
        let slot = greeting.enter();
        let app = app.clone();
        let stop = stop.clone();
        let mut set = tasks.lock().unwrap_or_else(|p| p.into_inner());
        while set.try_join_next().is_some() {}
        set.spawn(async move {
            serve_connection(app, stream, slot, stop).await;
        });
    }
}

/// Whether the process at the other end runs as this process's uid.
pub fn peer_is_me(stream: &UnixStream) -> bool {
    super::peer::uid(stream).is_ok_and(|uid| uid == nix::unistd::getuid().as_raw())
}

/// Decrements the open counts when the connection ends.
struct Open {
    app: Arc<App>,
    client: String,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.app.bridge.open.fetch_sub(1, Ordering::Relaxed);
        let mut by = self
            .app
            .bridge
            .by_client
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(n) = by.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                by.remove(&self.client);
            }
        }
    }
}

/// Admits one more connection of `client` under the caps, or says which cap.
fn admit(app: &Arc<App>, client: &str) -> Result<Open, HelloError> {
    let server = app.gate.config().current().server.clone();
    let mut by = app
        .bridge
        .by_client
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let open = app.bridge.open.load(Ordering::Relaxed);
    if open >= server.max_connections {
        return Err(HelloError::Busy(open));
    }
    let n = by.get(client).copied().unwrap_or(0);
    if n >= server.max_sessions_per_client {
        return Err(HelloError::TooManySessions(client.to_owned(), n));
    }
    by.insert(client.to_owned(), n + 1);
    app.bridge.open.fetch_add(1, Ordering::Relaxed);
    Ok(Open {
        app: app.clone(),
        client: client.to_owned(),
    })
}

async fn read_hello(
    reader: &mut tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>,
    patience: Duration,
) -> Result<Vec<u8>, HelloError> {
    let mut line = Vec::new();
    let read = tokio::time::timeout(
        patience,
        (&mut *reader)
            .take(MAX_HELLO as u64 + 1)
            .read_until(b'\n', &mut line),
    )
    .await;
    match read {
        Ok(Ok(_)) if line.last() == Some(&b'\n') => Ok(line),
        Ok(Ok(_)) if line.len() > MAX_HELLO => Err(HelloError::TooLarge),
        _ => Err(HelloError::Unfinished),
    }
}

async fn serve_connection(
    app: Arc<App>,
    stream: UnixStream,
    greeting: GreetingSlot,
    stop: CancellationToken,
) {
    let (read, mut write) = stream.into_split();
    let mut reader = tokio::io::BufReader::new(read);
    let patience = app.gate.config().current().server.header_timeout;
    let hello = tokio::select! {
        r = read_hello(&mut reader, patience) => r,
        _ = greeting.closed.cancelled() => Err(HelloError::Unfinished),
    };
    let admitted = match hello {
        Ok(line) => parse_hello(&line, |n| known_client(&app, n))
            .and_then(|hello| check_config(&app, hello))
            .and_then(|name| not_token_client(&app, name))
            .and_then(|name| admit(&app, &name).map(|open| (name, open))),
        Err(e) => Err(e),
    };
    drop(greeting);
    let (name, _open) = match admitted {
        Ok(x) => x,
        Err(e) => {
            match e {
                HelloError::Busy(_) | HelloError::TooManySessions(..) => {
                    app.bridge.refused_cap.fetch_add(1, Ordering::Relaxed)
                }
                _ => app.bridge.refused_hello.fetch_add(1, Ordering::Relaxed),
            };
            tracing::info!(kind = e.kind(), "bridge socket: refused a hello: {e}");
            let reply = json!({"archgate_bridge": VERSION, "ok": false, "error": e.kind(), "reason": e.to_string()});
            let _ = write.write_all(format!("{reply}\n").as_bytes()).await;
            let _ = write.shutdown().await;
            return;
        }
    };
    app.bridge.accepted.fetch_add(1, Ordering::Relaxed);
    let reply =
        json!({"archgate_bridge": VERSION, "ok": true, "client": name, "pid": std::process::id()});
    if write
        .write_all(format!("{reply}\n").as_bytes())
        .await
        .is_err()
    {
        return;
    }
    tracing::debug!(client = %name, "bridged session opened");
    // The connection's end (EOF from the bridge, or the daemon stopping) ends its calls.
    let ended = stop.child_token();
    let on_eof = ended.clone();
    let reader = super::stdio::WatchEof::new(reader, move || on_eof.cancel());
    let server = McpServer::bridged(app.clone(), &name, ended.clone());
    use rmcp::ServiceExt;
    let service = match server.serve((reader, write)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::debug!(client = %name, "bridged session ended before it initialized: {e}");
            return;
        }
    };
    let mut service = service;
    let quit = ended.clone();
    tokio::select! {
        _ = quit.cancelled() => {
            // Give the ended calls a moment to send their answers, then close.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let _ = service.close_with_timeout(Duration::from_secs(1)).await;
        }
        _ = wait_closed(&service) => {}
    }
    tracing::debug!(client = %name, "bridged session closed");
}

/// Resolves when the service loop has ended by itself (the bridge closed the stream).
async fn wait_closed<S: rmcp::Service<rmcp::RoleServer>>(
    service: &rmcp::service::RunningService<rmcp::RoleServer, S>,
) {
    while !service.is_closed() {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

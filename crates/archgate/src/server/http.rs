//! Streamable HTTP on loopback: `/mcp` behind the guards, `/health` without a token.
//!
//! Connections are bounded first (`limits.rs`: only this user's sockets, header, body and idle
//! timeouts, caps per peer and in all). Guards, outermost first, all judged from the header
//! alone, before any byte of a body is read: a foreign `Host` → 421 (DNS rebinding; archgate
//! answers before the SDK, whose own check would say 403); a foreign `Origin` → 403; a declared
//! body over 4 MiB → 413; on `/mcp`, a missing or wrong bearer token → 401 with
//! `WWW-Authenticate: Bearer realm="archgate"` (RFC 6750; `error="invalid_token"` when a token
//! was sent) and a JSON reason, compared in constant time, with a growing delay after repeated
//! failures from one peer. A refused request's body is never read: it is dropped, and the
//! connection closes after the answer. Only then is a chunked body read, at most 4 MiB (→ 413);
//! no route but `/mcp` reads a body at all. The token names
//! the client, which travels to the MCP handler in the request's extensions. A stateful session
//! belongs to the token that opened it (another token gets 404), each client keeps at most
//! `server.max_sessions_per_client` live, and `DELETE /mcp` answers 200 for a live session, 404
//! for an unknown one. archgate has no OAuth: the discovery URLs clients probe answer 404
//! without a token, so a client reports the missing token instead of a failed OAuth flow.
//! `/health` shows counts to anyone, client names and per-client details only with a token.

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::bearer::{bearer, bearer_of};
use super::limits::{self, Limits, Stats};
use super::mcp::McpServer;
use crate::app::App;
use crate::server::frames;

pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// What every request's guards and `/mcp` share, made once per listener.
struct Inner {
    app: Arc<App>,
    /// `Host` and `Origin` values answered (`allowed_hosts`, `allowed_origins`), made once.
    hosts: Box<[String]>,
    origins: Box<[String]>,
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
    /// Whether `failures` may hold anything: while it does not (the common case), a request with
    /// a valid token takes no lock all requests share (issue 34). Written under `failures`' lock.
    failing: AtomicBool,
    /// What the listener did with its connections.
    connections: Arc<Stats>,
    /// The SDK's streamable HTTP service, called in place (`handle` takes `&self`).
    mcp: McpService,
}

type McpService = StreamableHttpService<McpServer, LocalSessionManager>;

/// One `Arc` per request, whatever the route: the guards and `/mcp` read it in place.
#[derive(Clone)]
struct Shared(Arc<Inner>);

impl std::ops::Deref for Shared {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

pub async fn serve(app: Arc<App>, port: u16, shutdown: CancellationToken) -> anyhow::Result<()> {
    let listener = match super::accept::bind((std::net::Ipv4Addr::LOCALHOST, port).into()) {
        Ok(l) => l,
        Err(e) => {
            let reason = format!("cannot listen on 127.0.0.1:{port}: {e}");
            frames::emit(&json!({"event": "failed", "reason": reason}));
            crate::server::state_file::failed(&app.paths, &reason);
            anyhow::bail!(reason);
        }
    };
    let port = listener.local_addr()?.port();
    // Held before anyone is told the port: a client may connect through `localhost` at once.
    let beside = super::accept::bind_v6_beside(&listener, "archgate");
    // The approval page's "add client" snippet names the port actually listened on.
    let _ = app.http_port.set(port);
    let config = app.gate.config().current();
    // Two listeners (this and the page) share the descriptors.
    let limits = Limits::from_config(&config.server, 2);
    let stats = Arc::new(Stats::default());
    let router = router(app.clone(), port, shutdown.clone(), stats.clone());
    // state.json for bars, kept current while serving; marked stopped when this guard drops.
    // Written before the listening frame, so a supervisor that sees the frame finds the file.
    let _bar_state = crate::server::state_file::start(app.clone(), port, shutdown.clone());
    frames::emit(&json!({"event": "listening", "port": port}));
    tracing::info!(
        header_timeout_s = limits.header_timeout.as_secs(),
        idle_timeout_s = limits.idle_timeout.as_secs(),
        max_connections = limits.max_connections,
        max_connections_per_peer = limits.max_per_peer,
        "serving MCP at http://127.0.0.1:{port}/mcp"
    );
    // Open streams (SSE) would hold a graceful shutdown open; bound it.
    limits::serve(
        listener,
        beside,
        router,
        limits,
        stats,
        shutdown,
        Duration::from_millis(1500),
    )
    .await;
    Ok(())
}

/// The paths OAuth-aware clients probe before they send a token (RFC 9728, RFC 8414, OpenID
/// discovery, dynamic registration). archgate has no OAuth: each answers 404 without a token.
pub const OAUTH_PROBES: [&str; 7] = [
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/mcp",
    "/register",
];

/// `/mcp` always requires a client's bearer token: there is no other way in.
pub fn router(
    app: Arc<App>,
    port: u16,
    shutdown: CancellationToken,
    connections: Arc<Stats>,
) -> Router {
    let server = app.gate.config().current().server.clone();
    let mut config = StreamableHttpServerConfig::default();
    // `Host` and `Origin` are checked by `guards`, outermost, before any
    // request reaches the SDK (a foreign one never does): the SDK's own lists stay empty (its
    // checks off), which spares cloning and dropping them with its service on every request.
    config.allowed_hosts = Vec::new();
    config.allowed_origins = Vec::new();
    config.cancellation_token = shutdown.child_token();
    // A stream pings well within the idle timeout, so a quiet stream is never taken for idle.
    config.sse_keep_alive = Some((server.idle_timeout / 4).min(Duration::from_secs(15)));
    let mcp_app = app.clone();
    let manager = Arc::new(LocalSessionManager::default());
    app.sessions.set_manager(manager.clone());
    app.sessions.set_broker(app.gate.broker().clone());
    // A stdio client's questions under a name the person just gave to a token client are
    // withdrawn before that token authenticates (attack 18 F6: an "Always…" on one would be the
    // token client's rule).
    let broker = app.gate.broker().clone();
    app.clients.on_added(move |names| {
        for n in names {
            let w = broker.withdraw_client(n);
            if w > 0 {
                tracing::info!(client = %n, "withdrew {w} question(s) asked under a name now a token client's");
            }
        }
    });
    let service = StreamableHttpService::new(
        move || Ok(McpServer::http(mcp_app.clone())),
        manager,
        config,
    );
    let extension = app.extension.clone();
    let shared = Shared(Arc::new(Inner {
        app,
        hosts: allowed_hosts(port).into(),
        origins: allowed_origins(port).into(),
        failures: Mutex::default(),
        failing: AtomicBool::new(false),
        connections,
        mcp: service,
    }));

    // `/mcp` is one service that runs every guard in turn and calls the SDK in place: no
    // middleware layer (each `from_fn` clones the whole service below it on every request) and
    // no copy of the SDK's service per request. The other routes share the same guards as one
    // layer; `/mcp` is added after it, so it is not guarded twice.
    let mut open = Router::new().route("/health", get(health));
    for p in OAUTH_PROBES {
        open = open.route(p, axum::routing::any(no_oauth));
    }
    let router = open
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(shared.clone(), guarded))
        .route_service("/mcp", McpEndpoint(shared.clone()))
        .with_state(shared);
    // An extension (the conformance suite's binary) may put a layer in front; what it passes
    // on meets every guard above, the token check included.
    match extension {
        Some(x) => x.front(router),
        None => router,
    }
}

/// `/mcp`: the guards, the bearer token, the session, then the SDK.
#[derive(Clone)]
struct McpEndpoint(Shared);

impl tower::Service<Request> for McpEndpoint {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Response, Self::Error>> + Send + 'static>,
    >;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let s = self.0.clone();
        Box::pin(async move {
            Ok(closing_refused(match guards(&s, req) {
                Ok(req) => authenticate(&s, req).await,
                Err(refused) => refused,
            }))
        })
    }
}

fn allowed_hosts(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .flat_map(|h| [h.to_string(), format!("{h}:{port}")])
        .collect()
}

fn allowed_origins(port: u16) -> Vec<String> {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .map(|h| format!("http://{h}:{port}"))
        .collect()
}

fn reject(status: StatusCode, error: &str, reason: &str) -> Response {
    (status, Json(json!({"error": error, "reason": reason}))).into_response()
}

/// 401 in RFC 6750's form: the realm always, `error="invalid_token"` when a token was sent.
fn unauthorized(error: &str, reason: &str, token_sent: bool) -> Response {
    let challenge = if token_sent {
        "Bearer realm=\"archgate\", error=\"invalid_token\", error_description=\"the bearer token is not valid for any client\""
    } else {
        "Bearer realm=\"archgate\""
    };
    let mut r = reject(StatusCode::UNAUTHORIZED, error, reason);
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static(challenge),
    );
    r
}

async fn no_oauth() -> Response {
    reject(
        StatusCode::NOT_FOUND,
        "no_oauth",
        "archgate has no OAuth: send Authorization: Bearer <token> (see `archgate client-config`)",
    )
}

async fn not_found() -> Response {
    reject(
        StatusCode::NOT_FOUND,
        "not_found",
        "archgate serves /mcp and /health here",
    )
}

/// The guards every route passes, outermost first: `Host`, `Origin`, the body's declared size.
/// From the header alone: no byte of the body is read here.
// The refusal is the answer itself, built only when a request is refused.
#[allow(clippy::result_large_err)]
fn guards(s: &Inner, req: Request) -> Result<Request, Response> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !s.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return Err(reject(
            StatusCode::MISDIRECTED_REQUEST,
            "foreign_host",
            "archgate answers only to 127.0.0.1, localhost or [::1]",
        ));
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        if !s.origins.iter().any(|a| a.eq_ignore_ascii_case(o)) {
            return Err(reject(
                StatusCode::FORBIDDEN,
                "foreign_origin",
                "requests from web pages of other origins are refused",
            ));
        }
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return Err(too_large());
    }
    Ok(req)
}

/// The guards as the layer of the routes other than `/mcp`. None of them reads a body, so none
/// is passed on: it is dropped unread (and the connection closes after the answer).
async fn guarded(State(s): State<Shared>, req: Request, next: Next) -> Response {
    closing_refused(match guards(&s, req) {
        Ok(req) => {
            let (parts, _unread) = req.into_parts();
            next.run(Request::from_parts(parts, Body::empty())).await
        }
        Err(refused) => refused,
    })
}

/// A refused request's body is never read, so its connection is never reused: a body sent whole
/// with a request pipelined behind it would otherwise be drained by hyper and the next request
/// served. Every client error (4xx) says `Connection: close`, and hyper ends the connection
/// after the answer without reading on (`adversary/unauthenticated.rs`
/// `nothing_pipelined_behind_a_refused_request_is_served`; the page does the same).
pub(crate) fn closing_refused(mut r: Response) -> Response {
    if r.status().is_client_error() {
        r.headers_mut().insert(
            header::CONNECTION,
            header::HeaderValue::from_static("close"),
        );
    }
    r
}

fn too_large() -> Response {
    reject(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        "request bodies are limited to 4 MiB",
    )
}

/// An authenticated request's chunked body, read whole (at most 4 MiB) before the SDK sees it.
async fn limit_body(req: Request) -> Result<Request, Response> {
    let declared = req.headers().contains_key(header::CONTENT_LENGTH);
    if !declared && req.method() == http::Method::POST {
        // Chunked: read at most the limit, then pass the buffered body on.
        let (parts, body) = req.into_parts();
        return match axum::body::to_bytes(body, MAX_BODY).await {
            Ok(bytes) => Ok(Request::from_parts(parts, Body::from(bytes))),
            Err(_) => Err(too_large()),
        };
    }
    Ok(req)
}

async fn authenticate(s: &Inner, mut req: Request) -> Response {
    // The listener (`limits.rs`) gives every request its peer.
    let Some(&ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return reject(
            StatusCode::INTERNAL_SERVER_ERROR,
            "no_peer",
            "the request came without its peer address",
        );
    };
    let config = s.app.gate.config().current();
    // A client revoked a moment ago is refused on its very next request. Its sessions end too:
    // whoever notices a change refreshes them (the poll will not see this change again), here
    // beside the request rather than in its way.
    if s.app.clients.reload_if_changed() {
        let app = s.app.clone();
        tokio::spawn(async move { app.refresh_sessions().await });
    }
    let delay = s.backoff(peer.ip());
    // From the header alone: the body is read only once a client's token was found.
    let client = match bearer(req.headers()) {
        Some(t) => s.clients_authenticate(t, &config),
        None => {
            return unauthorized(
                "missing_token",
                "send Authorization: Bearer <token> (see `archgate client-config`)",
                false,
            );
        }
    };
    match client {
        Some(c) => {
            s.forgive(peer.ip());
            s.app.sessions.touch(&c.name);
            req.extensions_mut().insert(c);
            match limit_body(req).await {
                Ok(req) => track_session(s, req).await,
                Err(refused) => refused,
            }
        }
        None => {
            s.failed(peer.ip());
            // The delay holds nothing: the body stays unread and the connection is not busy.
            if let Some(r) = req.extensions().get::<limits::RequestState>() {
                r.refusing();
            }
            drop(req);
            tokio::time::sleep(delay).await;
            unauthorized(
                "wrong_token",
                "the bearer token is not valid for any client",
                true,
            )
        }
    }
}

/// Stateful sessions: bound to the token that opened them, capped per client, and ended at
/// once for archgate too when the client deletes one (its parked questions are withdrawn).
async fn track_session(s: &Inner, req: Request) -> Response {
    let sid: Option<SessionId> = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.to_owned().into());
    let Some(sid) = sid else {
        // No session named: a stateless call, or an `initialize` that may open one. The token
        // and the client are kept (by reference count) only for the latter's bookkeeping.
        let token = req.headers().get(header::AUTHORIZATION).cloned();
        let client = req
            .extensions()
            .get::<archgate_core::gate::Client>()
            .map(|c| c.name.clone());
        let post = req.method() == http::Method::POST;
        let mut res = sdk(s, req).await;
        let opened = res
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(|v| SessionId::from(v.to_owned()));
        // A stateless POST's event stream: its body ends with its answer, so the answer and
        // the body's end go out in one write (`answer_end.rs`).
        let events = res
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if post && opened.is_none() && res.status() == StatusCode::OK && events {
            res = res.map(|b| Body::new(super::answer_end::EndsWithAnswer::new(b)));
        }
        if let Some(new) = opened {
            let token = token.as_ref().and_then(bearer_of).unwrap_or("");
            let cap = s.app.gate.config().current().server.max_sessions_per_client;
            s.app
                .sessions
                .opened(&client.unwrap_or_default(), token, new, cap)
                .await;
        }
        return res;
    };
    let token = bearer(req.headers()).unwrap_or("").to_owned();
    let delete = req.method() == http::Method::DELETE;
    let unknown = || {
        reject(
            StatusCode::NOT_FOUND,
            "unknown_session",
            "no live session has this id: initialize a new one",
        )
    };
    if s.app.sessions.owned_by_other(&sid, &token) {
        return unknown();
    }
    if delete && !s.app.sessions.exists(&sid).await {
        return unknown();
    }
    s.app.sessions.used(&sid);
    // A `tools/call` inside a session: its answer's stream is watched, so a client that hangs
    // up withdraws its question (the SDK keeps a session's calls running otherwise).
    let (req, watch) = if req.method() == http::Method::POST {
        let (parts, body) = req.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
            return too_large();
        };
        let watch = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .filter(|v| v["method"] == "tools/call")
            .and_then(|v| v.get("id").map(|id| id.to_string()))
            .map(|id| s.app.sessions.call_started(&sid, id));
        (Request::from_parts(parts, Body::from(bytes)), watch)
    } else {
        (req, None)
    };
    let mut res = sdk(s, req).await;
    if let Some(watch) = watch {
        res = res.map(|b| {
            Body::new(Watched {
                inner: b,
                watch: Some(watch),
            })
        });
    }
    if delete && res.status().is_success() {
        s.app.sessions.ended(&sid);
        // The session is gone and nothing follows: 200, as the spec's clients expect.
        *res.status_mut() = StatusCode::OK;
    }
    res
}

/// The SDK's answer to a request that passed every guard.
async fn sdk(s: &Inner, req: Request) -> Response {
    s.mcp.handle(req).await.map(Body::new)
}

/// An answer's body that tells its `AnswerWatch` when it was sent to its end.
struct Watched {
    inner: Body,
    watch: Option<crate::app::sessions::AnswerWatch>,
}

impl http_body::Body for Watched {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let r = std::pin::Pin::new(&mut self.inner).poll_frame(cx);
        let end = matches!(r, std::task::Poll::Ready(None)) || self.inner.is_end_stream();
        if end && let Some(w) = self.watch.as_mut() {
            w.finished();
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

impl Inner {
    /// Back off after repeated failures from one peer: each failure past the fifth within ten
    /// minutes delays the answer a little more (at most 5 s), which makes guessing pointless.
    fn backoff(&self, peer: IpAddr) -> Duration {
        if !self.failing.load(Ordering::Acquire) {
            return Duration::ZERO;
        }
        let f = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        f.get(&peer)
            .filter(|(_, since)| since.elapsed() < Duration::from_secs(600))
            .map(|(n, _)| Duration::from_millis(((*n).saturating_sub(5) as u64 * 250).min(5000)))
            .unwrap_or_default()
    }

    /// A peer that sent a valid token starts again from no failures.
    fn forgive(&self, peer: IpAddr) {
        if !self.failing.load(Ordering::Acquire) {
            return;
        }
        let mut f = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        f.remove(&peer);
        if f.is_empty() {
            self.failing.store(false, Ordering::Release);
        }
    }

    fn failed(&self, peer: IpAddr) {
        let mut f = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        // Bounded: a flood of peers (all of 127/8) cannot grow the map without end.
        if f.len() >= 4096 {
            f.retain(|_, (_, since)| since.elapsed() < Duration::from_secs(600));
            if f.len() >= 4096 {
                f.clear();
            }
        }
        let e = f.entry(peer).or_insert((0, Instant::now()));
        if e.1.elapsed() > Duration::from_secs(600) {
            *e = (0, Instant::now());
        }
        e.0 += 1;
        self.failing.store(true, Ordering::Release);
    }

    fn clients_authenticate(
        &self,
        token: &str,
        config: &archgate_core::config::Config,
    ) -> Option<archgate_core::gate::Client> {
        self.app.clients.authenticate(token, config)
    }
}

async fn health(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    state: Option<axum::Extension<limits::RequestState>>,
    headers: HeaderMap,
) -> Response {
    let mut body = super::health::body(&s.app);
    body["connections"] = s.connections.json();
    body["page_connections"] = s.app.page_connections.json();
    body["sessions"] = json!({"live": s.app.sessions.live_total().await});
    let Some(token) = bearer(&headers) else {
        return Json(body).into_response();
    };
    let delay = s.backoff(peer.ip());
    let config = s.app.gate.config().current();
    if s.clients_authenticate(token, &config).is_none() {
        s.failed(peer.ip());
        if let Some(axum::Extension(r)) = state {
            r.refusing();
        }
        tokio::time::sleep(delay).await;
        return unauthorized(
            "wrong_token",
            "the bearer token is not valid for any client; without one /health shows counts only",
            true,
        );
    }
    let now = archgate_core::person::now_secs();
    let calls = s.app.gate.counters().snapshot();
    body["calls"]["by_tool"] = json!(calls.by_tool);
    body["calls"]["by_client"] = json!(calls.by_client);
    body["budgets"] = json!(s.app.gate.person().budget_counters(now));
    body["sessions"]["by_client"] = json!(s.app.sessions.tracked_by_client());
    Json(body).into_response()
}

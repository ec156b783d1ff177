//! Streamable HTTP on loopback: `/mcp` behind the guards, `/health` without a token.
//!
//! Guards, outermost first: a foreign `Host` → 421 (DNS rebinding; archgate answers before the
//! SDK, whose own check would say 403); a foreign `Origin` → 403; a body over 4 MiB → 413; on
//! `/mcp`, a missing or wrong bearer token → 401 with a JSON reason, compared in constant time,
//! with a growing delay after repeated failures from one peer. The token names the client, which
//! travels to the MCP handler in the request's extensions.

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::mcp::McpServer;
use crate::app::App;
use crate::frames;

pub const MAX_BODY: usize = 4 * 1024 * 1024;

/// Protocol versions archgate speaks (both eras).
pub const PROTOCOL_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

#[derive(Clone)]
struct Shared {
    app: Arc<App>,
    port: u16,
    /// Whether `/mcp` requires a bearer token (always, except the conformance build).
    require_token: bool,
    failures: Arc<Mutex<HashMap<IpAddr, (u32, Instant)>>>,
}

pub async fn serve(app: Arc<App>, port: u16, shutdown: CancellationToken) -> anyhow::Result<()> {
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            let reason = format!("cannot listen on 127.0.0.1:{port}: {e}");
            frames::emit(&json!({"event": "failed", "reason": reason}));
            crate::commands::state_file::failed(&app.paths, &reason);
            anyhow::bail!(reason);
        }
    };
    let port = listener.local_addr()?.port();
    // The approval page's "add client" snippet names the port actually listened on.
    let _ = app.http_port.set(port);
    let router = router(
        app.clone(),
        port,
        !cfg!(feature = "conformance"),
        shutdown.clone(),
    );
    // state.json for bars, kept current while serving; marked stopped when this guard drops.
    // Written before the listening frame, so a supervisor that sees the frame finds the file.
    let _bar_state = crate::commands::state_file::start(app.clone(), port, shutdown.clone());
    frames::emit(&json!({"event": "listening", "port": port}));
    tracing::info!("serving MCP at http://127.0.0.1:{port}/mcp");
    // TCP_NODELAY: an answer goes out in several small writes (head, SSE event, last chunk); on a
    // kept-alive connection Nagle would hold the last one until the client's delayed ACK, ~40 ms.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
    });
    let server = axum::serve(
        listener,
        router.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown.clone().cancelled_owned());
    // Open streams (SSE) would hold a graceful shutdown open; bound it.
    tokio::select! {
        r = server => r?,
        _ = async { shutdown.cancelled().await; tokio::time::sleep(Duration::from_millis(1500)).await } => {}
    }
    Ok(())
}

pub fn router(
    app: Arc<App>,
    port: u16,
    require_token: bool,
    shutdown: CancellationToken,
) -> Router {
    let hosts = allowed_hosts(port);
    let mut config = StreamableHttpServerConfig::default();
    config.allowed_hosts = hosts;
    config.allowed_origins = allowed_origins(port);
    config.cancellation_token = shutdown.child_token();
    let mcp_app = app.clone();
    let manager = Arc::new(LocalSessionManager::default());
    app.sessions.set_manager(manager.clone());
    let service = StreamableHttpService::new(
        move || Ok(McpServer::http(mcp_app.clone())),
        manager,
        config,
    );
    let shared = Shared {
        app,
        port,
        require_token,
        failures: Arc::default(),
    };

    let mcp = Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(shared.clone(), authenticate));
    Router::new()
        .route("/health", get(health))
        .merge(mcp)
        .layer(middleware::from_fn(limit_body))
        .layer(middleware::from_fn_with_state(shared.clone(), check_origin))
        .layer(middleware::from_fn_with_state(shared.clone(), check_host))
        .with_state(shared)
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

async fn check_host(State(s): State<Shared>, req: Request, next: Next) -> Response {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !allowed_hosts(s.port)
        .iter()
        .any(|h| h.eq_ignore_ascii_case(host))
    {
        return reject(
            StatusCode::MISDIRECTED_REQUEST,
            "foreign_host",
            "archgate answers only to 127.0.0.1, localhost or [::1]",
        );
    }
    next.run(req).await
}

async fn check_origin(State(s): State<Shared>, req: Request, next: Next) -> Response {
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        if !allowed_origins(s.port)
            .iter()
            .any(|a| a.eq_ignore_ascii_case(o))
        {
            return reject(
                StatusCode::FORBIDDEN,
                "foreign_origin",
                "requests from web pages of other origins are refused",
            );
        }
    }
    next.run(req).await
}

async fn limit_body(req: Request, next: Next) -> Response {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        return reject(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            "request bodies are limited to 4 MiB",
        );
    }
    if declared.is_none() && req.method() == http::Method::POST {
        // Chunked: read at most the limit, then pass the buffered body on.
        let (parts, body) = req.into_parts();
        return match axum::body::to_bytes(body, MAX_BODY).await {
            Ok(bytes) => {
                next.run(Request::from_parts(parts, Body::from(bytes)))
                    .await
            }
            Err(_) => reject(
                StatusCode::PAYLOAD_TOO_LARGE,
                "too_large",
                "request bodies are limited to 4 MiB",
            ),
        };
    }
    next.run(req).await
}

pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

async fn authenticate(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    mut req: Request,
    next: Next,
) -> Response {
    let config = s.app.gate.config.current();
    // A client revoked a moment ago is refused on its very next request. Its sessions end too:
    // whoever notices a change refreshes them (the poll will not see this change again), here
    // beside the request rather than in its way.
    if s.app.clients.reload_if_changed() {
        let app = s.app.clone();
        tokio::spawn(async move { app.refresh_sessions().await });
    }
    if !s.require_token {
        let grant = archgate_core::clients::grant_for("conformance", None, &config);
        req.extensions_mut().insert(archgate_core::gate::Client {
            name: "conformance".into(),
            grant,
        });
        return next.run(req).await;
    }
    // Back off after repeated failures from one peer: each failure past the fifth within ten
    // minutes delays the answer a little more (at most 5 s), which makes guessing pointless.
    let delay = {
        let f = s.failures.lock().unwrap_or_else(|p| p.into_inner());
        f.get(&peer.ip())
            .filter(|(_, since)| since.elapsed() < Duration::from_secs(600))
            .map(|(n, _)| Duration::from_millis(((*n).saturating_sub(5) as u64 * 250).min(5000)))
            .unwrap_or_default()
    };
    let client = match bearer(req.headers()) {
        Some(t) => s.clients_authenticate(t, &config),
        None => {
            return reject(
                StatusCode::UNAUTHORIZED,
                "missing_token",
                "send Authorization: Bearer <token> (see `archgate client-config`)",
            );
        }
    };
    match client {
        Some(c) => {
            s.failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&peer.ip());
            s.app.sessions.touch(&c.name);
            req.extensions_mut().insert(c);
            next.run(req).await
        }
        None => {
            {
                let mut f = s.failures.lock().unwrap_or_else(|p| p.into_inner());
                let e = f.entry(peer.ip()).or_insert((0, Instant::now()));
                if e.1.elapsed() > Duration::from_secs(600) {
                    *e = (0, Instant::now());
                }
                e.0 += 1;
            }
            tokio::time::sleep(delay).await;
            reject(
                StatusCode::UNAUTHORIZED,
                "wrong_token",
                "the bearer token is not valid for any client",
            )
        }
    }
}

impl Shared {
    fn clients_authenticate(
        &self,
        token: &str,
        config: &archgate_core::config::Config,
    ) -> Option<archgate_core::gate::Client> {
        self.app.clients.authenticate(token, config)
    }
}

async fn health(State(s): State<Shared>) -> Response {
    Json(health_body(&s.app)).into_response()
}

/// Status for people and bars. Counts only: never arguments, never secrets.
pub fn health_body(app: &App) -> serde_json::Value {
    let gate = &app.gate;
    let now = archgate_core::person::now_secs();
    json!({
        "status": "serving",
        "name": "archgate",
        "version": env!("CARGO_PKG_VERSION"),
        "uptime_s": app.started.elapsed().as_secs(),
        "protocol_versions": PROTOCOL_VERSIONS,
        "calls": gate.counters.snapshot(),
        "pending_approvals": gate.broker.pending().len(),
        "developer_mode": gate.person.dev_mode_until(now).is_some(),
        "config": {
            "ok": !gate.config.is_broken(),
            "problems": gate.config.problems().iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        },
        "audit": {
            "written": gate.audit.stats().written.load(std::sync::atomic::Ordering::Relaxed),
            "dropped": gate.audit.stats().dropped_total.load(std::sync::atomic::Ordering::Relaxed),
            "write_failures": gate.audit.stats().write_failures.load(std::sync::atomic::Ordering::Relaxed),
        },
        "budgets": gate.person.budget_counters(now),
        "session": session_facts(app),
    })
}

/// Where the control socket is, and which session variables archgate found in the runtime
/// directory rather than its environment (a client that started it with HOME and PATH only).
fn session_facts(app: &App) -> serde_json::Value {
    let env = archgate_desktop::DesktopEnv::from_process();
    json!({
        "runtime_dir": app.paths.runtime_dir,
        "discovered": env.discovered,
    })
}

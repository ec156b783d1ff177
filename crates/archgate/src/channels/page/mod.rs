//! The approval page: a small loopback web page where the person answers pending approvals,
//! sees recent activity, revokes standing rules, switches developer mode, and manages HTTP
//! clients (their grants, budget counters and sessions; add, revoke, rename).
//!
//! It listens on `127.0.0.1:approval.page_port` (default 8766), or on a free port when that one
//! is taken (another instance has it). Its URL (without any secret) is written to
//! `page-<pid>.url` in the runtime directory. Access: see `auth` — a one-time login (a 0600
//! login file for `archgate ui`'s browser opener), then a session cookie; every page, asset and
//! API answers 401 without it.
//! Assets are embedded (no build step) and served with a strict Content-Security-Policy.
//! Connections are bounded as on `/mcp` (`server/limits.rs`): only this user's sockets are
//! served (another uid's is closed before a byte is read, so a stranger cannot even type a
//! wrong login code), bodies have a total deadline, and a body is read only by a handler that
//! runs after the session check (`/login`'s form post, at most 16 KiB, is the one exception:
//! it is how a session starts).

mod api;
pub mod auth;
mod capture;
mod clients;
mod shown;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use auth::Auth;

/// Request bodies on the page's API are small JSON objects.
const MAX_BODY: usize = 16 * 1024;

/// What the control socket needs of a running page.
#[derive(Clone)]
pub struct PageHandle {
    auth: Arc<Auth>,
    runtime_dir: PathBuf,
}

impl PageHandle {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.auth.port())
    }

    /// A link that logs a browser in, once. Empty when no safe random token could be made.
    pub fn login_link(&self) -> String {
        match self.auth.mint_link_token() {
            Some(t) => format!("http://127.0.0.1:{}/login?t={t}", self.auth.port()),
            None => String::new(),
        }
    }

    /// A one-time short code for the page's login form (`archgate ui --print`).
    pub fn login_code(&self) -> Option<String> {
        self.auth.mint_code()
    }

    /// A one-time login as a private file in the runtime directory (see `auth`): what
    /// `archgate ui` hands the browser opener instead of the link. Removed when used or expired.
    pub fn login_file(&self) -> std::io::Result<PathBuf> {
        self.login_file_to("")
    }

    /// [`PageHandle::login_file`] that opens the page at the call `id` (`#call=ID`, for the
    /// notification's default action); an id with other characters than `[A-Za-z0-9_.-]` opens
    /// the page at its top.
    pub fn login_file_at(&self, id: &str) -> std::io::Result<PathBuf> {
        let plain = !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        self.login_file_to(&if plain {
            format!("#call={id}")
        } else {
            String::new()
        })
    }

    fn login_file_to(&self, fragment: &str) -> std::io::Result<PathBuf> {
        let file = self.auth.mint_login_file_to(&self.runtime_dir, fragment)?;
        let auth = self.auth.clone();
        tokio::spawn(async move {
            tokio::time::sleep(auth::LINK_TTL + std::time::Duration::from_secs(1)).await;
            auth.sweep();
        });
        Ok(file)
    }
}

/// The running page; its URL file is removed when dropped.
pub struct Page {
    pub handle: PageHandle,
    url_file: PathBuf,
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.url_file);
    }
}

#[derive(Clone)]
pub(crate) struct Shared {
    pub app: Arc<App>,
    pub auth: Arc<Auth>,
    pub activity: Arc<api::ActivityCache>,
}

/// Binds the page and serves it until `shutdown`.
pub async fn start(app: Arc<App>, shutdown: CancellationToken) -> std::io::Result<Page> {
    let wanted = app.gate.config().current().approval.page_port;
    let at = |port: u16| crate::server::accept::bind((std::net::Ipv4Addr::LOCALHOST, port).into());
    let listener = match at(wanted) {
        Ok(l) => l,
        Err(e) if wanted != 0 => {
            // Another instance of the person's may hold it; another uid holding it is said
            // loudly, here and by `status` and `doctor` (attack 5a F1).
            match crate::server::port_holder::other_holder(wanted) {
                Some(uid) => tracing::warn!(
                    "{}; the page is on a free port instead",
                    crate::server::port_holder::page_text(wanted, uid)
                ),
                None => {
                    tracing::info!("approval page port {wanted} is taken ({e}); using a free one")
                }
            }
            at(0)?
        }
        Err(e) => return Err(e),
    };
    let port = listener.local_addr()?.port();
    // Held before the page's address is written anywhere (`bind_v6_beside`).
    let beside = crate::server::accept::bind_v6_beside(&listener, "the approval page");
    let auth = Arc::new(Auth::new(port));
    let shared = Shared {
        app: app.clone(),
        auth: auth.clone(),
        activity: Arc::default(),
    };
    let router = router(shared);
    let url = format!("http://127.0.0.1:{port}/");
    let url_file = app
        .paths
        .runtime_dir
        .join(format!("page-{}.url", std::process::id()));
    if let Err(e) = archgate_core::paths::write_private_file(&url_file, url.as_bytes()) {
        tracing::warn!("could not record the page URL: {e}");
    }
    tracing::info!("approval page at {url} (open it with `archgate ui`)");
    // Bounded like /mcp (header and idle timeouts, connection caps): a flood of half-open
    // connections to the page cannot keep the person from answering.
    let limits = crate::server::limits::Limits::from_config(&app.gate.config().current().server, 2);
    tokio::spawn(crate::server::limits::serve(
        listener,
        beside,
        router,
        limits,
        app.page_connections.clone(),
        shutdown,
        std::time::Duration::from_millis(500),
    ));
    Ok(Page {
        handle: PageHandle {
            auth,
            runtime_dir: app.paths.runtime_dir.clone(),
        },
        url_file,
    })
}

fn router(shared: Shared) -> Router {
    let authed = Router::new()
        .route("/", get(api::index))
        .route("/app.js", get(api::script))
        .route("/style.css", get(api::style))
        .route("/api/state", get(api::state))
        .route("/events", get(api::events))
        .route("/api/answer", post(api::answer))
        .route("/api/deny-all", post(api::deny_all))
        .route("/api/picture", get(api::picture))
        .route("/api/capture", get(capture::show).post(capture::take))
        .route("/api/dev-mode", post(api::dev_mode))
        .route("/api/rules/revoke", post(api::revoke))
        .route("/api/rules/revoke-all", post(api::revoke_all))
        .route("/api/clients/add", post(clients::add))
        .route("/api/clients/revoke", post(clients::revoke))
        .route("/api/clients/rename", post(clients::rename))
        .layer(middleware::from_fn_with_state(
            shared.clone(),
            require_session,
        ));
    Router::new()
        .route("/login", get(api::login).post(api::login_code))
        .merge(authed)
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .layer(middleware::from_fn(security_headers))
        .with_state(shared)
}

pub(crate) fn refuse(status: StatusCode, error: &str, reason: &str) -> Response {
    (
        status,
        axum::Json(serde_json::json!({"error": error, "reason": reason})),
    )
        .into_response()
}

/// Host, Origin and Sec-Fetch-Site: only this page itself, on loopback.
async fn guard(State(s): State<Shared>, req: Request, next: Next) -> Response {
    let h = req.headers();
    let host = h.get(header::HOST).and_then(|v| v.to_str().ok());
    if !s.auth.host_ok(host) {
        return refuse(
            StatusCode::MISDIRECTED_REQUEST,
            "foreign_host",
            "the approval page answers only to 127.0.0.1 and localhost on its own port",
        );
    }
    let origin = match h.get(header::ORIGIN).map(|v| v.to_str()) {
        Some(Ok(o)) => Some(o),
        Some(Err(_)) => Some("invalid"),
        None => None,
    };
    let cross_site = h
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "cross-site" || v == "same-site");
    // A login link typed or pasted arrives as "none"; one forwarded by a login file (see
    // `auth`) arrives "cross-site" — a file:// page is a foreign origin to the browser. So a
    // top-level GET of /login alone may come cross-site: it changes nothing but the browser's
    // own session, with a token only the person's login file holds. Everything else from
    // another site is refused.
    // A frame's navigation is not the person's: `Sec-Fetch-Dest` says `iframe` (attack 5a F2,
    // hidden frames on any web page); only a top-level document may arrive from another site.
    let login_navigation = req.method() == http::Method::GET
        && req.uri().path() == "/login"
        && h.get("sec-fetch-mode").and_then(|v| v.to_str().ok()) == Some("navigate")
        && h.get("sec-fetch-dest")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|d| d == "document");
    if !s.auth.origin_ok(origin) || (cross_site && !login_navigation) {
        return refuse(
            StatusCode::FORBIDDEN,
            "foreign_origin",
            "requests from other web pages are refused",
        );
    }
    next.run(req).await
}

/// The session cookie, and the CSRF token for anything but GET.
async fn require_session(State(s): State<Shared>, mut req: Request, next: Next) -> Response {
    let cookie = req
        .headers()
        .get(header::COOKIE)
        .and_then(|v| v.to_str().ok());
    let Some(csrf) = s
        .auth
        .cookie_from(cookie)
        .and_then(|c| s.auth.session_csrf(&c))
    else {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "no_session",
            "log in with the link `archgate ui` opens",
        );
    };
    if req.method() != http::Method::GET && req.method() != http::Method::HEAD {
        let sent = req
            .headers()
            .get("x-csrf-token")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if !auth::same_secret(sent, &csrf) {
            return refuse(
                StatusCode::FORBIDDEN,
                "csrf",
                "a change needs the page's CSRF token; reload the page",
            );
        }
    }
    req.extensions_mut().insert(api::Csrf(csrf));
    next.run(req).await
}

async fn security_headers(req: Request, next: Next) -> Response {
    // A refusal's connection is not reused (its body was not read): `server/http.rs`.
    let mut res = crate::server::http::closing_refused(next.run(req).await);
    let h = res.headers_mut();
    // The login form sets a policy of its own (it may post to itself, and its post must carry
    // its Origin, which `no-referrer` would make "null"); nothing else sets these headers.
    for (k, v) in [
        (
            "content-security-policy",
            "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
             img-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
        ),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cache-control", "no-store"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ] {
        if !h.contains_key(k) {
            h.insert(k, HeaderValue::from_static(v));
        }
    }
    res
}

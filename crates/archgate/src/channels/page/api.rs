//! The approval page's routes: the login link, the embedded page, its state (JSON and live
//! server-sent events), and the person's actions.

use axum::Json;
use axum::extract::{Extension, Query, State};
use axum::http::{StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{Shared, refuse};
use crate::person::actions::{self as actions, Choice};

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/style.css");

/// How many recent calls the page shows.
const ACTIVITY: usize = 25;
/// The live view is refreshed at least this often (rules, developer mode and activity change
/// from other channels too).
const REFRESH: Duration = Duration::from_secs(5);

/// The session's CSRF token, put here by `require_session`.
#[derive(Clone)]
pub(crate) struct Csrf(pub String);

#[derive(Deserialize)]
pub(crate) struct LoginQuery {
    t: Option<String>,
}

/// A page that sends the browser on to `/` by itself: after a cross-site arrival (a login file),
/// a redirect would stay part of that cross-site navigation and the `SameSite=Strict` cookie
/// would not go along; a navigation the page starts is same-origin.
const ONWARD: &str = "<!doctype html><html><head><meta charset=\"utf-8\">\
<meta http-equiv=\"refresh\" content=\"0; url=/\"><title>archgate</title></head>\
<body><p>Logged in. <a href=\"/\">Open the approval page</a>.</p></body></html>\n";

pub(crate) async fn login(
    State(s): State<Shared>,
    headers: axum::http::HeaderMap,
    Query(q): Query<LoginQuery>,
) -> Response {
    match q.t.as_deref().and_then(|t| s.auth.redeem_link(t)) {
        Some(session) => {
            tracing::info!("approval page: a browser logged in");
            let cookie = (header::SET_COOKIE, s.auth.set_cookie(&session));
            let cross_site = headers
                .get("sec-fetch-site")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v != "none" && v != "same-origin");
            if cross_site {
                return (
                    StatusCode::OK,
                    [
                        cookie,
                        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
                    ],
                    ONWARD,
                )
                    .into_response();
            }
            (
                StatusCode::SEE_OTHER,
                [cookie, (header::LOCATION, "/".to_owned())],
            )
                .into_response()
        }
        None if q.t.is_none() => login_form(StatusCode::OK, ""),
        None => (
            StatusCode::UNAUTHORIZED,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            "This login link was already used, has expired, or is not one archgate made.\n\
             Run `archgate ui` for a new one.\n",
        )
            .into_response(),
    }
}

/// The form where the person types the short code `archgate ui --print` showed them.
fn login_form(status: StatusCode, note: &str) -> Response {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>archgate: log in</title></head>\
         <body><h1>archgate approval page</h1><p>{note}Type the code <code>archgate ui --print</code> \
         showed you (it works once, for two minutes).</p>\
         <form method=\"post\" action=\"/login\"><input name=\"code\" autocomplete=\"off\" \
         autofocus aria-label=\"code\" maxlength=\"32\"> <button>Log in</button></form></body></html>\n"
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            ),
            (header::REFERRER_POLICY, "same-origin"),
        ],
        html,
    )
        .into_response()
}

/// The login form's post: `code=XXXX-XXXX` (form-encoded), used once.
pub(crate) async fn login_code(State(s): State<Shared>, body: String) -> Response {
    let typed = body
        .split('&')
        .find_map(|kv| kv.strip_prefix("code="))
        .unwrap_or("")
        .replace('+', " ")
        .replace("%2D", "-")
        .replace("%2d", "-");
    let code = super::auth::Auth::normalize_code(&typed);
    match (!code.is_empty())
        .then(|| s.auth.redeem_code(&code))
        .flatten()
    {
        Some(session) => {
            tracing::info!("approval page: a browser logged in with a code");
            (
                StatusCode::SEE_OTHER,
                [
                    (header::SET_COOKIE, s.auth.set_cookie(&session)),
                    (header::LOCATION, "/".to_owned()),
                ],
            )
                .into_response()
        }
        None => login_form(
            StatusCode::UNAUTHORIZED,
            "That code was already used, has expired, or is not one archgate made. ",
        ),
    }
}

pub(crate) async fn index(Extension(Csrf(csrf)): Extension<Csrf>) -> Response {
    // The token is hex, so it needs no escaping inside the attribute.
    let html = INDEX.replace("{{CSRF}}", &csrf);
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response()
}

pub(crate) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

pub(crate) async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

/// Recent activity, read from the audit log again only when records were written since.
#[derive(Default)]
pub(crate) struct ActivityCache {
    last: Mutex<Option<(u64, Vec<Value>)>>,
}

#[derive(Serialize)]
struct ActivityItem<'a> {
    time: &'a str,
    client: &'a str,
    tool: &'a str,
    target: Option<&'a str>,
    outcome: &'a str,
    approval: Option<&'a str>,
    channel: Option<&'a str>,
    rule_id: Option<&'a str>,
    dev_mode: bool,
}

impl ActivityCache {
    fn get(&self, s: &Shared) -> Vec<Value> {
        let gate = &s.app.gate;
        let written = gate.audit().stats().written.load(Ordering::Relaxed);
        let mut g = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((w, v)) = g.as_ref()
            && *w == written
        {
            return v.clone();
        }
        let records = archgate_core::audit::recent(&s.app.paths.audit_log(), None, ACTIVITY)
            .unwrap_or_default();
        let items: Vec<Value> = records
            .iter()
            .rev()
            .map(|r| {
                serde_json::to_value(ActivityItem {
                    time: &r.time,
                    client: &r.client,
                    tool: &r.tool,
                    target: r.target.as_deref(),
                    outcome: r.outcome.as_str(),
                    approval: r.approval.as_ref().map(|a| a.outcome.as_str()),
                    channel: r.approval.as_ref().and_then(|a| a.channel.as_deref()),
                    rule_id: r.approval.as_ref().and_then(|a| a.rule_id.as_deref()),
                    dev_mode: r.dev_mode,
                })
                .unwrap_or(Value::Null)
            })
            .collect();
        *g = Some((written, items.clone()));
        items
    }
}

/// Rules and activity for the page, escaped the same way (a rule's arguments shown as a person
/// reads them); ids are archgate's own and stay usable.
fn shown_rules(rules: Value) -> Value {
    use archgate_core::text::{display_value, json_for_display};
    match rules {
        Value::Array(list) => list
            .into_iter()
            .map(|r| {
                let mut shown = json_for_display(&r);
                shown["shown_args"] = json!(display_value(&r["args"]));
                shown
            })
            .collect(),
        other => other,
    }
}

fn view(s: &Shared) -> Value {
    let gate = &s.app.gate;
    let presence = gate.config().current().approval.presence;
    let mut waiting = actions::pending(gate);
    // The one that ends first comes first; among equals, the one asked first (an id ends in
    // its instance's call counter).
    let seq = |id: &str| id.rsplit('-').next().and_then(|n| n.parse::<u64>().ok());
    waiting.sort_by_key(|q| (q.deadline, q.created, seq(&q.id), q.id.clone()));
    let pending: Vec<Value> = waiting
        .iter()
        .map(|q| super::shown::question(q, presence, gate.previews().is_open(&q.id)))
        .collect();
    let rules = shown_rules(serde_json::to_value(actions::rules(gate)).unwrap_or(Value::Null));
    let activity: Vec<Value> = s
        .activity
        .get(s)
        .iter()
        .map(archgate_core::text::json_for_display)
        .collect();
    json!({
        "now": archgate_core::person::now_secs(),
        "pid": std::process::id(),
        "pending": pending,
        "rules": rules,
        "developer_mode": actions::dev_mode(gate),
        "activity": activity,
        "clients": crate::person::clients::list(&s.app),
        "config": gate.config().status(),
    })
}

pub(crate) async fn state(State(s): State<Shared>) -> Response {
    Json(view(&s)).into_response()
}

/// The whole view on connect, on every broker event, and every few seconds.
pub(crate) async fn events(
    State(s): State<Shared>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let rx = s.app.gate.broker().subscribe();
    let tick = tokio::time::interval(REFRESH);
    let stream = futures::stream::unfold((s, rx, tick), |(s, mut rx, mut tick)| async move {
        tokio::select! {
            _ = tick.tick() => {}
            r = rx.recv() => {
                if let Err(tokio::sync::broadcast::error::RecvError::Closed) = r {
                    return None;
                }
                // Lagged or an event: either way the whole view is sent again.
            }
        }
        let ev = Event::default().event("state").data(view(&s).to_string());
        Some((Ok(ev), (s, rx, tick)))
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AnswerBody {
    id: String,
    answer: Choice,
}

pub(crate) async fn answer(State(s): State<Shared>, Json(b): Json<AnswerBody>) -> Response {
    // The page's yes is confirmed for the daemon itself: it runs in the person's session.
    let me = crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
    // The clients as they are now (`control.rs` `Request::Answer`).
    s.app.sync_clients().await;
    match actions::answer_confirmed(&s.app.gate, &b.id, b.answer, "page", me).await {
        Ok(()) => Json(json!({"ok": true})).into_response(),
        Err(e @ actions::YesError::Presence(_)) => {
            refuse(StatusCode::FORBIDDEN, e.kind(), &e.to_string())
        }
        Err(e) => refuse(StatusCode::CONFLICT, e.kind(), &e.to_string()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DevModeBody {
    /// Minutes to turn it on for; `null` turns it off.
    minutes: Option<u64>,
}

pub(crate) async fn dev_mode(State(s): State<Shared>, Json(b): Json<DevModeBody>) -> Response {
    let secs = b.minutes.map(|m| m.saturating_mul(60));
    let me = crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
    match actions::set_dev_mode_confirmed(&s.app.gate, &s.app.person_channel, secs, "page", me)
        .await
    {
        Ok(d) => Json(json!({"ok": true, "developer_mode": d})).into_response(),
        Err(e @ actions::YesError::Presence(_)) => {
            refuse(StatusCode::FORBIDDEN, e.kind(), &e.to_string())
        }
        Err(e) => refuse(StatusCode::BAD_REQUEST, e.kind(), &e.to_string()),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevokeBody {
    id: String,
}

pub(crate) async fn revoke(State(s): State<Shared>, Json(b): Json<RevokeBody>) -> Response {
    match actions::revoke(&s.app.gate, &s.app.person_channel, &b.id, "page") {
        Ok(()) => Json(json!({"ok": true})).into_response(),
        Err(e) => refuse(StatusCode::NOT_FOUND, e.kind(), &e.to_string()),
    }
}

#[derive(Deserialize)]
pub(crate) struct PictureQuery {
    id: String,
}

/// The image of a waiting question's picture (a new background, a theme's preview), read now
/// from the file resolution named: only for a question still waiting, only a PNG, JPEG or WebP
/// by its bytes, at most `picture::MAX_IMAGE_BYTES`. Nothing else is served from disk.
pub(crate) async fn picture(State(s): State<Shared>, Query(q): Query<PictureQuery>) -> Response {
    use archgate_core::picture::{Picture, read_image};
    let path = actions::pending(&s.app.gate)
        .into_iter()
        .find(|w| w.id == q.id)
        .and_then(|w| match w.picture {
            Some(Picture::Image { path, .. }) => Some(path),
            _ => None,
        });
    let Some(path) = path else {
        return refuse(
            StatusCode::NOT_FOUND,
            "no_picture",
            "no waiting question with an image by that id",
        );
    };
    match tokio::task::spawn_blocking(move || read_image(&path)).await {
        Ok(Some((data, mime))) => ([(header::CONTENT_TYPE, mime)], data).into_response(),
        _ => refuse(
            StatusCode::NOT_FOUND,
            "no_picture",
            "the image is gone, too large, or not a PNG, JPEG or WebP",
        ),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DenyAllBody {
    client: String,
}

/// "Deny all from this agent": every question of that client waiting now is declined (a
/// question that ended meanwhile is skipped). A no needs no confirmation.
pub(crate) async fn deny_all(State(s): State<Shared>, Json(b): Json<DenyAllBody>) -> Response {
    let mut denied = 0;
    for q in actions::pending(&s.app.gate)
        .into_iter()
        .filter(|q| q.client == b.client)
    {
        let me = crate::person::presence::Subject::this_process().map_err(|e| e.to_string());
        if actions::answer_confirmed(&s.app.gate, &q.id, Choice::Deny, "page", me)
            .await
            .is_ok()
        {
            denied += 1;
        }
    }
    Json(json!({"ok": true, "denied": denied})).into_response()
}

pub(crate) async fn revoke_all(State(s): State<Shared>) -> Response {
    let n = actions::revoke_all(&s.app.gate, &s.app.person_channel, "page");
    Json(json!({"ok": true, "revoked": n})).into_response()
}

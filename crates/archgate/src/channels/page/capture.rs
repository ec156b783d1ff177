//! "See exactly what the agent will receive before it does": a waiting call whose output the
//! person may see first (a screenshot; `archgate_core::preview`). `POST /api/capture` takes it —
//! the call runs once, as a yes would run it, and its output is held with the waiting call —
//! and `GET /api/capture?id=` shows what is held, byte for byte, never taking anything. A yes
//! gives the agent those bytes; a no or the deadline drops them. Behind the session, CSRF and
//! Host/Origin guard as every `/api` route.

use archgate_core::preview::Preview;
use axum::Json;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::{Shared, refuse};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CaptureBody {
    id: String,
}

/// Takes the output of waiting call `id` now, unless it is held already.
pub(crate) async fn take(State(s): State<Shared>, Json(b): Json<CaptureBody>) -> Response {
    match s.app.gate.previews().request(&b.id, true).await {
        Ok(Preview::Image { data, mime }) => {
            Json(json!({"ok": true, "mime": mime, "bytes": data.len()})).into_response()
        }
        Ok(Preview::Failed(why)) => refuse(StatusCode::CONFLICT, "capture_failed", &why),
        Ok(Preview::NotTaken) => refuse(
            StatusCode::CONFLICT,
            "no_preview",
            "the output could not be taken",
        ),
        Err(e) => refuse(StatusCode::NOT_FOUND, e.kind(), &e.to_string()),
    }
}

#[derive(Deserialize)]
pub(crate) struct CaptureQuery {
    id: String,
}

/// The held output of waiting call `id`, as the agent would receive it.
pub(crate) async fn show(State(s): State<Shared>, Query(q): Query<CaptureQuery>) -> Response {
    match s.app.gate.previews().request(&q.id, false).await {
        Ok(Preview::Image { data, mime }) => (
            [
                (header::CONTENT_TYPE, mime),
                (header::CACHE_CONTROL, "no-store"),
            ],
            data.to_vec(),
        )
            .into_response(),
        Ok(_) => refuse(
            StatusCode::NOT_FOUND,
            "no_preview",
            "nothing was taken for this call",
        ),
        Err(e) => refuse(StatusCode::NOT_FOUND, e.kind(), &e.to_string()),
    }
}

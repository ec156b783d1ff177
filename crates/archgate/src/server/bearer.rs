//! The client's token from an `Authorization: Bearer <token>` header (RFC 6750 §2.1: the scheme
//! is matched case-insensitively). Read by the HTTP guard (`http.rs`) and by the MCP handler for
//! a stateless request (`mcp.rs`).

use axum::http::{HeaderMap, header};

/// The token of a request's `Authorization` header, when it names the Bearer scheme.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    bearer_of(headers.get(header::AUTHORIZATION)?)
}

/// The token of an `Authorization: Bearer <token>` value.
pub(crate) fn bearer_of(v: &header::HeaderValue) -> Option<&str> {
    let v = v.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

//! An MCP client over streamable HTTP for the benches, in either era:
//! - stateful (the handshake era, 2025-11-25): `initialize` → `Mcp-Session-Id`, then every
//!   request carries the session id; answers come as SSE or JSON;
//! - stateless (2026-07-28): no session; each request carries `_meta` and the
//!   `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` headers.
//!
//! Each `Mcp` has its own `reqwest::Client`, so its own kept-alive connection(s): one agent.

use anyhow::{Context, bail};
use serde_json::{Value, json};

pub const HANDSHAKE: &str = "2025-11-25";
pub const MODERN: &str = "2026-07-28";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Stateful,
    Stateless,
}

impl Era {
    pub fn describe(self) -> &'static str {
        match self {
            Era::Stateful => "stateful streamable HTTP (2025-11-25: initialize, Mcp-Session-Id)",
            Era::Stateless => {
                "stateless streamable HTTP (2026-07-28: no session, _meta per request)"
            }
        }
    }
}

/// A fresh HTTP client: kept-alive connections, never a proxy (loopback only).
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .pool_max_idle_per_host(4)
        .timeout(std::time::Duration::from_secs(900))
        .build()
        .expect("an HTTP client with no TLS or proxy to set up")
}

pub struct Mcp {
    http: reqwest::Client,
    url: String,
    token: String,
    era: Era,
    session: Option<String>,
}

impl Mcp {
    /// A client with `token`; in the stateful era the handshake is done here.
    pub async fn connect(port: u16, token: &str, era: Era) -> anyhow::Result<Mcp> {
        let mut c = Mcp {
            http: http_client(),
            url: format!("http://127.0.0.1:{port}/mcp"),
            token: token.to_owned(),
            era,
            session: None,
        };
        if era == Era::Stateful {
            let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": HANDSHAKE, "capabilities": {},
                "clientInfo": {"name": "archgate-bench", "version": "0"}}});
            let (headers, body) = c.post(&init, None).await?;
            c.session = Some(
                headers
                    .get("mcp-session-id")
                    .and_then(|v| v.to_str().ok())
                    .context("initialize answered without Mcp-Session-Id")?
                    .to_owned(),
            );
            find(&messages(&headers, &body)?, 0).context("no initialize answer")?;
            c.post(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
            )
            .await?;
        }
        Ok(c)
    }

    /// Sends a request and returns every JSON-RPC message of its answer (normally one).
    pub async fn exchange(
        &self,
        id: u64,
        method: &str,
        params: Value,
    ) -> anyhow::Result<Vec<Value>> {
        let mut params = params;
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned);
        if self.era == Era::Stateless {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
        }
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let (headers, body) = self.post(&msg, Some((method, name.as_deref()))).await?;
        messages(&headers, &body)
    }

    /// The answer with JSON-RPC id `id` (an error if there is none).
    pub async fn request(&self, id: u64, method: &str, params: Value) -> anyhow::Result<Value> {
        let msgs = self.exchange(id, method, params).await?;
        find(&msgs, id).with_context(|| format!("no answer with id {id} in {msgs:?}"))
    }

    async fn post(
        &self,
        msg: &Value,
        routing: Option<(&str, Option<&str>)>,
    ) -> anyhow::Result<(reqwest::header::HeaderMap, String)> {
        let mut req = self
            .http
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", format!("Bearer {}", self.token))
            .body(msg.to_string());
        match (self.era, &self.session) {
            (Era::Stateful, Some(s)) => {
                req = req
                    .header("Mcp-Session-Id", s)
                    .header("MCP-Protocol-Version", HANDSHAKE);
            }
            (Era::Stateful, None) => {}
            (Era::Stateless, _) => {
                req = req.header("MCP-Protocol-Version", MODERN);
                if let Some((method, name)) = routing {
                    req = req.header("Mcp-Method", method);
                    if let Some(n) = name {
                        req = req.header("Mcp-Name", n);
                    }
                }
            }
        }
        let r = req.send().await?;
        let status = r.status();
        let headers = r.headers().clone();
        let body = r.text().await?;
        if !status.is_success() {
            bail!("HTTP {status}: {body}");
        }
        Ok((headers, body))
    }
}

/// The JSON-RPC messages in an answer body: SSE `data:` lines, or one JSON document.
fn messages(headers: &reqwest::header::HeaderMap, body: &str) -> anyhow::Result<Vec<Value>> {
    let sse = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    if sse {
        let mut out = Vec::new();
        for line in body.lines() {
            if let Some(data) = line.strip_prefix("data:") {
                let data = data.trim();
                if !data.is_empty() {
                    out.push(
                        serde_json::from_str(data).with_context(|| format!("SSE data: {data}"))?,
                    );
                }
            }
        }
        return Ok(out);
    }
    if body.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![
        serde_json::from_str(body).with_context(|| format!("JSON body: {body}"))?,
    ])
}

fn find(msgs: &[Value], id: u64) -> Option<Value> {
    msgs.iter().find(|m| m["id"] == id).cloned()
}

/// A tools/call result's text (the first text content) and whether it is an error.
pub fn result_text(answer: &Value) -> (bool, String) {
    let r = &answer["result"];
    let text = r["content"]
        .as_array()
        .and_then(|c| c.iter().find_map(|i| i["text"].as_str()))
        .unwrap_or_default()
        .to_owned();
    (r["isError"] == true, text)
}

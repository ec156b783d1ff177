//! MCP over streamable HTTP by hand: the headers, the session id, JSON or SSE answers; a
//! stateless-era `tools/call` request; what a tools/call result says.

use serde_json::{Value, json};

use super::wire::{Request, Response};

pub const PROTOCOL: &str = "2025-11-25";

pub struct McpHttp {
    pub port: u16,
    pub token: String,
    pub session: Option<String>,
}

impl McpHttp {
    /// Connects and completes the initialize handshake; returns the client and the result.
    pub fn initialize(port: u16, token: &str) -> (McpHttp, Value) {
        let mut c = McpHttp {
            port,
            token: token.to_owned(),
            session: None,
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "archgate-e2e", "version": "0.0.0"},
        }});
        let r = c.post(&init);
        assert_eq!(r.status, 200, "initialize: {}", r.text());
        c.session = r.header("mcp-session-id").map(str::to_owned);
        let result = answer(&r, 0);
        let r = c.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(
            r.status == 202 || r.status == 200,
            "initialized: {} {}",
            r.status,
            r.text()
        );
        (c, result)
    }

    pub fn post(&self, msg: &Value) -> Response {
        let mut req = Request::post("/mcp", msg.to_string())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Authorization", format!("Bearer {}", self.token));
        if let Some(s) = &self.session {
            req = req
                .header("Mcp-Session-Id", s.clone())
                .header("MCP-Protocol-Version", PROTOCOL);
        }
        req.send(self.port)
    }

    /// A request's `result` (a JSON-RPC error fails the test).
    pub fn request(&self, id: u64, method: &str, params: Value) -> Value {
        let r = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        assert_eq!(r.status, 200, "{method}: {}", r.text());
        answer(&r, id)
    }

    pub fn call_tool(&self, id: u64, name: &str, args: Value) -> Value {
        self.request(id, "tools/call", json!({"name": name, "arguments": args}))
    }
}

fn answer(r: &Response, id: u64) -> Value {
    let msgs = r.messages();
    let m = msgs
        .iter()
        .find(|m| m["id"] == id)
        .unwrap_or_else(|| panic!("no answer with id {id} in {}", r.text()));
    assert_eq!(m["jsonrpc"], "2.0");
    assert!(m.get("error").is_none(), "error answer: {m}");
    m["result"].clone()
}

/// The checks every `system_status` answer must pass, against what this process reads itself.
pub fn check_system_status(result: &Value) {
    assert_ne!(result["isError"], true, "system_status failed: {result}");
    let s = &result["structuredContent"];
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(s["cpus"], cpus, "{s}");
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(s["kernel"]["release"], release.trim());
    assert!(s["memory"]["total_bytes"].as_u64().unwrap() > 0);
    assert!(s["uptime_seconds"].as_u64().unwrap() > 0);
    assert!(
        s["disks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"] == "/"),
        "{s}"
    );
    // The same facts as text for clients that read only content.
    let text = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "text")
        .and_then(|c| c["text"].as_str())
        .expect("a text content block");
    let parsed: Value = serde_json::from_str(text).expect("text content is the JSON");
    assert_eq!(parsed["cpus"], s["cpus"]);
}

pub fn check_tool_list(result: &Value) {
    let tools = result["tools"].as_array().expect("tools array");
    let t = tools
        .iter()
        .find(|t| t["name"] == "system_status")
        .unwrap_or_else(|| panic!("no system_status in {result}"));
    assert_eq!(t["annotations"]["readOnlyHint"], true);
    // A read-only tool is not destructive (the hint may be left out: it only means something
    // when readOnlyHint is false).
    assert_ne!(t["annotations"]["destructiveHint"], true);
    assert_eq!(t["inputSchema"]["type"], "object");
    assert!(!t["description"].as_str().unwrap_or("").is_empty());
}

/// The stateless protocol era (one request, no session).
pub const MODERN: &str = "2026-07-28";

/// The request of a stateless-era `tools/call` with a bearer token.
pub fn call_request(token: &str, tool: &str, args: Value, id: u64) -> Request<'static> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut r = Request::post("/mcp", body.to_string());
    r.headers = vec![
        ("Authorization", format!("Bearer {token}")),
        ("MCP-Protocol-Version", MODERN.into()),
        ("Mcp-Method", "tools/call".into()),
        ("Mcp-Name", tool.into()),
    ];
    r
}

/// The outcome a tools/call result reports: `ok`, or the outcome of an error result.
pub fn outcome(result: &Value) -> String {
    if result["isError"] == true {
        result["structuredContent"]["outcome"]
            .as_str()
            .unwrap_or("unknown")
            .to_owned()
    } else {
        "ok".to_owned()
    }
}

/// Whether a tools/call response is a success, and its text.
pub fn result_text(r: &Value) -> (bool, String) {
    let res = &r["result"];
    let text = res["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    (res["isError"] != true && r.get("error").is_none(), text)
}

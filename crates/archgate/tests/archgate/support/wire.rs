//! A deliberately small HTTP/1.1 client over `TcpStream`: one request per connection
//! (`Connection: close`), the whole answer read to EOF, chunked bodies decoded, SSE `data:`
//! lines picked out. Enough to speak to archgate's loopback server the way any client would,
//! without a client library between the test and the wire.

use std::io::{Read, Write};
use std::net::TcpStream;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", self.text()))
    }

    /// The JSON-RPC messages in the body: a plain JSON body, or every JSON `data:` line of an
    /// event stream.
    pub fn messages(&self) -> Vec<serde_json::Value> {
        let is_sse = self
            .header("content-type")
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !is_sse {
            return if self.body.is_empty() {
                Vec::new()
            } else {
                vec![self.json()]
            };
        }
        self.text()
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }
}

/// A request to 127.0.0.1:`port`. `Host` is `127.0.0.1:port` unless `headers` names one.
pub struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub headers: Vec<(&'a str, String)>,
    pub body: Vec<u8>,
}

impl<'a> Request<'a> {
    pub fn get(path: &'a str) -> Self {
        Request {
            method: "GET",
            path,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn post(path: &'a str, body: impl Into<Vec<u8>>) -> Self {
        Request {
            method: "POST",
            path,
            headers: Vec::new(),
            body: body.into(),
        }
    }

    pub fn header(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// The request as bytes on the wire. A POST without them gets `Content-Type:
    /// application/json` and the `Accept` streamable HTTP asks for; every request gets a
    /// `Content-Length` unless it names one, and `Connection: close`.
    pub fn bytes(&self, port: u16) -> Vec<u8> {
        let named = |h: &str| self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(h));
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !named("host") {
            head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
        }
        for (k, v) in &self.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if self.method == "POST" {
            if !named("content-type") {
                head.push_str("Content-Type: application/json\r\n");
            }
            if !named("accept") {
                head.push_str("Accept: application/json, text/event-stream\r\n");
            }
        }
        if !named("content-length") {
            head.push_str(&format!("Content-Length: {}\r\n", self.body.len()));
        }
        head.push_str("Connection: close\r\n\r\n");
        let mut b = head.into_bytes();
        b.extend_from_slice(&self.body);
        b
    }

    /// Sends the request on a fresh connection and reads the answer to EOF.
    pub fn send(&self, port: u16) -> Response {
        let mut s = connect(port);
        // The server may answer (and close) before it has read a body it refuses.
        let _ = s.write_all(&self.bytes(port));
        read_response(&mut s)
    }
}

pub fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to archgate");
    s.set_read_timeout(Some(super::PATIENCE)).unwrap();
    s
}

pub fn read_response(s: &mut TcpStream) -> Response {
    let mut raw = Vec::new();
    if let Err(e) = s.read_to_end(&mut raw) {
        // A reset after the answer arrived still leaves the answer readable.
        assert!(!raw.is_empty(), "reading the response: {e}");
    }
    parse(&raw)
}

fn parse(raw: &[u8]) -> Response {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers.iter().any(|(k, v)| {
        k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Response {
        status,
        headers,
        body,
    }
}

fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&rest[..eol]);
        let size_hex = size_text.split(';').next().unwrap_or("").trim();
        let Ok(size) = usize::from_str_radix(size_hex, 16) else {
            break;
        };
        if size == 0 {
            break;
        }
        let start = eol + 2;
        let stop = (start + size).min(rest.len());
        body.extend_from_slice(&rest[start..stop]);
        rest = rest.get(stop + 2..).unwrap_or_default();
    }
    body
}

/// Sends one request on a fresh connection and reads the answer to EOF.
pub fn send(port: u16, req: &Request) -> Response {
    req.send(port)
}

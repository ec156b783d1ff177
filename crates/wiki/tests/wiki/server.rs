//! A tiny HTTP/1.1 server on 127.0.0.1:0 for the online tests: it answers from a handler
//! function the way the MediaWiki API or the news feed would, or misbehaves on purpose.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as the handler sees it.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub query: HashMap<String, String>,
}

/// What the server does with a request.
pub enum Reply {
    /// 200 with a JSON body.
    Json(String),
    /// Any status, content type and body.
    Raw(u16, &'static str, Vec<u8>),
    /// Any status and body with more header lines (`Retry-After: 120`).
    Headed(u16, Vec<String>, Vec<u8>),
    /// Headers promising a body, then nothing, forever.
    Hang,
    /// Close the connection without answering.
    Close,
    /// Read the request and never answer at all.
    Silent,
}

pub type Handler = Arc<dyn Fn(&Request) -> Reply + Send + Sync>;

/// A running server; it stops when the test's runtime ends.
pub struct Server {
    pub base: String,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

pub async fn start(handler: Handler) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = requests.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let target = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let req = Request {
                    path: path.to_owned(),
                    query: query
                        .split('&')
                        .filter(|kv| !kv.is_empty())
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                            (decode(k), decode(v))
                        })
                        .collect(),
                };
                log.lock().unwrap().push(req.clone());
                let mut extra = String::new();
                let (status, ctype, body) = match handler(&req) {
                    Reply::Json(s) => (200, "application/json; charset=utf-8", s.into_bytes()),
                    Reply::Raw(status, ctype, body) => (status, ctype, body),
                    Reply::Headed(status, lines, body) => {
                        for l in lines {
                            extra.push_str(&l);
                            extra.push_str("\r\n");
                        }
                        (status, "text/html; charset=utf-8", body)
                    }
                    Reply::Hang => {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{")
                            .await;
                        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                        return;
                    }
                    Reply::Close => return,
                    Reply::Silent => {
                        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
                        return;
                    }
                };
                let head = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&body).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    Server {
        base: format!("http://{addr}"),
        requests,
    }
}

/// A port on 127.0.0.1 where nothing listens.
pub fn closed_port_base() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(v) => {
                    out.push(v);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

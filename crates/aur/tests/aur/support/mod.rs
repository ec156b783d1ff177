//! Test support: a tiny HTTP/1.1 server on 127.0.0.1:0 that plays the AUR (RPC JSON and cgit
//! HTML in their real formats) from a routing closure.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub mod fake_aur;

/// What the server answers.
pub enum Reply {
    Ok(&'static str, Vec<u8>),
    Status(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Accept, then never answer (until the client gives up).
    Hang,
    /// Claim a huge body and stream it.
    Huge(usize),
}

/// The routing function: (path, decoded query pairs) → reply.
type Route = dyn Fn(&str, &[(String, String)]) -> Reply + Send + Sync;

pub struct Server {
    pub base: String,
    pub hits: Arc<AtomicUsize>,
}

impl Server {
    pub fn start<F>(route: F) -> Server
    where
        F: Fn(&str, &[(String, String)]) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        let route = Arc::new(route);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let route = route.clone();
                let h = h.clone();
                std::thread::spawn(move || serve(conn, &*route, &h));
            }
        });
        Server { base, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let h = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match h {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn serve(mut conn: TcpStream, route: &Route, hits: &AtomicUsize) {
    let mut reader = BufReader::new(conn.try_clone().expect("clone"));
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).is_err() || l == "\r\n" || l.is_empty() {
            break;
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let target = first.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let q: Vec<(String, String)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    let reply = route(&decode(path), &q);
    let (status, headers, body): (u16, Vec<(&str, String)>, Vec<u8>) = match reply {
        Reply::Ok(ct, body) => (200, vec![("Content-Type", ct.to_owned())], body),
        Reply::Status(s, h, b) => (s, h, b),
        Reply::Hang => {
            std::thread::sleep(Duration::from_secs(20));
            return;
        }
        Reply::Huge(n) => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n";
            let _ = conn.write_all(head.as_bytes());
            let chunk = vec![b' '; 64 * 1024];
            let mut sent = 0;
            while sent < n {
                if conn.write_all(&chunk).is_err() {
                    return;
                }
                sent += chunk.len();
            }
            return;
        }
    };
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        429 => "Too Many Requests",
        _ => "Error",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(&body);
    let _ = conn.flush();
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
}

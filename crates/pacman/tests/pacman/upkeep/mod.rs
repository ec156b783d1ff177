//! Mirrors, advisories and the keyring (issue 22 items 4, 5, 7, 10): local stand-ins for
//! archlinux.org's mirror status and the security tracker serving their real JSON shapes with
//! records we wrote; real `vercmp` as the oracle of "affected"; a real GnuPG home made here.
//!
//! Shared here: a one-answer HTTP server, a closed port, the network settings.

mod advisories;
mod keyring;
mod mirrors;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use archgate_pacman::netjson::NetSettings;

/// Serves `body` with `status` for every request; counts requests.
pub fn serve(status: u16, body: String) -> (u16, Arc<AtomicUsize>) {
    serve_with(status, "", body)
}

/// `serve`, with more header lines (each ending `\r\n`), e.g. `Retry-After: 120\r\n`.
pub fn serve_with(status: u16, headers: &'static str, body: String) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let h = hits.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            h.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let r = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(r.as_bytes());
        }
    });
    (port, hits)
}

/// A port nothing listens on.
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

pub fn settings(cache: Option<&Path>) -> NetSettings {
    NetSettings {
        timeout: Duration::from_secs(5),
        cache_dir: cache.map(Into::into),
        ttl: Duration::from_secs(600),
        ..NetSettings::default()
    }
}

pub fn secs(rfc: &str) -> i64 {
    time::OffsetDateTime::parse(rfc, &time::format_description::well_known::Rfc3339)
        .unwrap()
        .unix_timestamp()
}

pub fn set_mtime(path: &Path, unix: i64) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(unix as u64))
        .unwrap();
}

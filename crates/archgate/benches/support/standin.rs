//! A stand-in for archlinux.org on loopback, so the benches never leave the machine: every GET
//! is answered with the packages search API's JSON and no results (what the real API says for a
//! name that does not exist). On a machine without pacman's sync databases `pkg_info` asks this
//! API; with the stand-in its answer is a quick, local `not_found`. One thread per connection,
//! kept alive like the real service.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const EMPTY: &str = r#"{"version":2,"limit":250,"valid":true,"results":[],"num_pages":1,"page":1}"#;

pub struct StandIn {
    pub url: String,
    /// Requests answered so far.
    pub served: Arc<AtomicU64>,
}

impl StandIn {
    pub fn start() -> std::io::Result<StandIn> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let url = format!("http://{}", listener.local_addr()?);
        let served = Arc::new(AtomicU64::new(0));
        let count = served.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let count = count.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &count);
                });
            }
        });
        Ok(StandIn { url, served })
    }
}

fn serve(stream: TcpStream, count: &AtomicU64) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        // The request line and headers; a GET has no body.
        let mut close = false;
        let mut first = true;
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Ok(());
            }
            if line == "\r\n" || line == "\n" {
                break;
            }
            if first {
                first = false;
            } else if line.to_ascii_lowercase().starts_with("connection: close") {
                close = true;
            }
        }
        count.fetch_add(1, Ordering::Relaxed);
        write!(
            writer,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{EMPTY}",
            EMPTY.len()
        )?;
        writer.flush()?;
        if close {
            return Ok(());
        }
    }
}

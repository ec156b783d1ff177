//! Asking a running archgate how it is: `GET /health` on 127.0.0.1, bounded in time and size.
//!
//! A tiny HTTP/1.1 client on a `TcpStream` (the CLI needs one request to its own server on
//! loopback; a full client library would be the heaviest part of `archgate status`). The answer
//! must come within the timeout, be at most 64 KiB, be a 200 with a JSON body, and name archgate:
//! anything else on the port is "something else is there", not a server that is ours. The
//! listener must be the person's own (its socket's uid, as the daemon judges its peers): another
//! uid's is never asked, whatever it would answer (attack 3 F12).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const MAX_ANSWER: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("nothing answers on 127.0.0.1:{port} ({source})")]
    CouldNotReach {
        port: u16,
        #[source]
        source: std::io::Error,
    },
    #[error("127.0.0.1:{port} did not answer within {after:?}")]
    TimedOut { port: u16, after: Duration },
    #[error("127.0.0.1:{port} answered something that is not archgate's /health ({what})")]
    NotArchgate { port: u16, what: String },
    #[error("127.0.0.1:{port} sent more than {MAX_ANSWER} bytes for /health")]
    TooLarge { port: u16 },
    #[error(
        "127.0.0.1:{port} is held by uid {uid}, not you: that is not your archgate, whatever it answers"
    )]
    OtherUser { port: u16, uid: u32 },
    #[error(
        "the owner of 127.0.0.1:{port} cannot be named ({why}): its answer is not taken for archgate's"
    )]
    OwnerUnknown { port: u16, why: String },
}

impl ProbeError {
    pub fn kind(&self) -> &'static str {
        match self {
            ProbeError::CouldNotReach { .. } => "could_not_reach",
            ProbeError::TimedOut { .. } => "timed_out",
            ProbeError::NotArchgate { .. } => "malformed",
            ProbeError::TooLarge { .. } => "too_large",
            ProbeError::OtherUser { .. } => "other_user",
            ProbeError::OwnerUnknown { .. } => "owner_unknown",
        }
    }
}

/// `GET /health` on `127.0.0.1:port`; the parsed JSON of an archgate that answered in time.
pub fn health(port: u16, timeout: Duration) -> Result<serde_json::Value, ProbeError> {
    let started = Instant::now();
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let timed_out = |_: std::io::Error| ProbeError::TimedOut {
        port,
        after: timeout,
    };
    let mut stream = TcpStream::connect_timeout(&addr, timeout).map_err(|source| {
        if source.kind() == std::io::ErrorKind::TimedOut {
            ProbeError::TimedOut {
                port,
                after: timeout,
            }
        } else {
            ProbeError::CouldNotReach { port, source }
        }
    })?;
    // Whoever listens must be the person: another uid's answer is never taken for archgate's
    // (it would be shown as "serving"), and nothing is sent to it (`port_holder.rs`).
    let ours = stream
        .local_addr()
        .map_err(|source| ProbeError::CouldNotReach { port, source })?;
    match crate::server::peer::tcp_owner(ours, addr) {
        Ok(uid) if uid == crate::server::peer::my_uid() => {}
        Ok(uid) => return Err(ProbeError::OtherUser { port, uid }),
        Err(e) => {
            return Err(ProbeError::OwnerUnknown {
                port,
                why: e.to_string(),
            });
        }
    }
    stream.set_write_timeout(Some(timeout)).map_err(timed_out)?;
    let request = format!(
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).map_err(timed_out)?;
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = timeout.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(ProbeError::TimedOut {
                port,
                after: timeout,
            });
        }
        stream.set_read_timeout(Some(left)).map_err(timed_out)?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.len() > MAX_ANSWER {
                    return Err(ProbeError::TooLarge { port });
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Err(ProbeError::TimedOut {
                    port,
                    after: timeout,
                });
            }
            Err(source) => return Err(ProbeError::CouldNotReach { port, source }),
        }
    }
    parse(port, &answer)
}

fn parse(port: u16, answer: &[u8]) -> Result<serde_json::Value, ProbeError> {
    let not = |what: &str| ProbeError::NotArchgate {
        port,
        what: what.to_owned(),
    };
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| not("no HTTP header"))?;
    let head = std::str::from_utf8(&answer[..split]).map_err(|_| not("header is not text"))?;
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or("");
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if !status.starts_with("HTTP/1.") || code != "200" {
        return Err(not(&format!("status line {status:?}")));
    }
    let chunked = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("transfer-encoding")
                && v.trim().eq_ignore_ascii_case("chunked")
        })
    });
    let raw = &answer[split + 4..];
    let body = if chunked {
        dechunk(raw).ok_or_else(|| not("broken chunked body"))?
    } else {
        raw.to_vec()
    };
    let v: serde_json::Value =
        serde_json::from_slice(&body).map_err(|_| not("body is not JSON"))?;
    if v["name"] != "archgate" {
        return Err(not("JSON without \"name\": \"archgate\""));
    }
    Ok(v)
}

fn dechunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let eol = raw.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&raw[..eol]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[eol + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_answer_is_parsed() {
        let a = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 33\r\n\r\n{\"name\":\"archgate\",\"status\":\"x\"}";
        assert_eq!(parse(1, a).unwrap()["status"], "x");
    }

    #[test]
    fn a_chunked_answer_is_parsed() {
        let a = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"name\":\"archgat\r\n3\r\ne\"}\r\n0\r\n\r\n";
        assert_eq!(parse(1, a).unwrap()["name"], "archgate");
    }

    #[test]
    fn another_server_is_not_archgate() {
        let a = b"HTTP/1.1 200 OK\r\n\r\n{\"status\":\"ok\"}";
        assert_eq!(parse(1, a).unwrap_err().kind(), "malformed");
        let a = b"HTTP/1.1 404 Not Found\r\n\r\n{\"name\":\"archgate\"}";
        assert_eq!(parse(1, a).unwrap_err().kind(), "malformed");
        assert_eq!(parse(1, b"garbage").unwrap_err().kind(), "malformed");
    }

    #[test]
    fn a_closed_port_cannot_be_reached() {
        // Bind and drop: the port is free again and nothing listens on it.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err = health(port, Duration::from_secs(2)).unwrap_err();
        assert_eq!(err.kind(), "could_not_reach", "{err}");
    }

    #[test]
    fn a_server_that_never_answers_times_out() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // Accepts (the kernel does, via the backlog) and then says nothing.
        let err = health(port, Duration::from_millis(300)).unwrap_err();
        assert_eq!(err.kind(), "timed_out", "{err}");
        drop(l);
    }
}

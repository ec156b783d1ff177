//! Test support: a tiny HTTP/1.1 server on 127.0.0.1:0 that plays the AUR (RPC JSON, and the
//! package repositories over git's smart HTTP by `git http-backend`, both in their real
//! formats) from a routing closure; and the audit tests' shared pieces — the packages several
//! `misfires_*` files build and [`max_of`], what they read of a report.

use archgate_aur::audit::{AuditInput, AuditReport, ScriptFile, Severity, Verdict};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

pub mod fake_aur;
pub mod git_http;

// Packages for the audit's tests, and what to read of its report.

/// The highest severity among the findings `id` (none: `None`).
pub fn max_of(r: &AuditReport, id: &str) -> Option<Severity> {
    r.findings
        .iter()
        .filter(|f| f.id == id)
        .map(|f| f.severity)
        .max()
}

/// The verdict is ok and finding `id` is still shown, at most low, saying `why`.
#[track_caller]
pub fn low_with(r: &AuditReport, id: &str, why: &str) {
    assert_eq!(r.verdict, Verdict::Ok, "{}", r.to_text());
    let f = r
        .findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("{id} is still shown: {}", r.to_text()));
    assert!(f.severity <= Severity::Low, "{}", r.to_text());
    assert!(f.why.contains(why), "{}", f.why);
}

/// A package built with its project's `make DESTDIR="$pkgdir" install`, depending on
/// `depends`, shipping one local file `file` (installed to /usr/bin, or as a user unit when it
/// ends in `.service`), with `install=` naming `script` when given.
pub fn made_package(
    pkgname: &str,
    depends: &str,
    file: Option<(&str, &str)>,
    script: Option<&str>,
) -> AuditInput {
    let mut files = Vec::new();
    let mut sources = String::new();
    let mut sums = String::new();
    let mut install_line = String::new();
    if let Some((name, text)) = file {
        files.push(ScriptFile {
            name: name.into(),
            content: text.into(),
        });
        sources.push_str(&format!(" {name}"));
        sums.push_str(" '1111111111111111111111111111111111111111111111111111111111111111'");
        let dest = if name.ends_with(".service") {
            "usr/lib/systemd/user"
        } else {
            "usr/bin"
        };
        install_line = format!("  install -Dm755 {name} -t \"$pkgdir/{dest}/\"\n");
    }
    let mut install = String::new();
    if let Some(text) = script {
        install = format!("install={pkgname}.install\n");
        files.push(ScriptFile {
            name: format!("{pkgname}.install"),
            content: text.into(),
        });
    }
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('any')\nurl=\"https://example.org/{pkgname}\"\nlicense=('MIT')\ndepends=({depends})\n{install}source=(\"https://example.org/{pkgname}-$pkgver.tar.gz\"{sources})\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000'{sums})\npackage() {{\n  cd {pkgname}-$pkgver\n  make DESTDIR=\"$pkgdir\" install\n  cd ..\n{install_line}}}\n"
        ),
        install_scripts: files,
        srcinfo: None,
    }
}

/// A package `pkgname` (release tarball, depends on glibc) with extra global lines, a package() body, an optional install script
/// and extra local files (listed in `source=` with a fake checksum).
pub fn package_with(
    pkgname: &str,
    globals: &str,
    package_body: &str,
    script: Option<&str>,
    files: &[(&str, &str)],
) -> AuditInput {
    let mut out = Vec::new();
    let mut sources = String::new();
    let mut sums = String::new();
    for (name, text) in files {
        out.push(ScriptFile {
            name: (*name).into(),
            content: (*text).into(),
        });
        sources.push_str(&format!(" {name}"));
        sums.push_str(" '1111111111111111111111111111111111111111111111111111111111111111'");
    }
    let mut install = String::new();
    if let Some(text) = script {
        install = format!("install={pkgname}.install\n");
        out.push(ScriptFile {
            name: format!("{pkgname}.install"),
            content: text.into(),
        });
    }
    AuditInput {
        pkgbuild: format!(
            "pkgname={pkgname}\npkgver=1.0\npkgrel=1\narch=('x86_64')\nurl=\"https://example.org/{pkgname}\"\nlicense=('MIT')\ndepends=('glibc')\n{globals}{install}source=(\"https://example.org/{pkgname}-$pkgver.tar.gz\"{sources})\nsha256sums=('0000000000000000000000000000000000000000000000000000000000000000'{sums})\npackage() {{\n{package_body}\n}}\n"
        ),
        install_scripts: out,
        srcinfo: None,
    }
}

pub fn scriptlet(body: &str) -> String {
    format!("post_install() {{\n    {body}\n}}\npost_upgrade() {{\n    post_install\n}}\n")
}

/// One request as the server read it.
pub struct Request {
    pub method: String,
    /// Decoded path.
    pub path: String,
    /// The query string as sent.
    pub raw_query: String,
    /// Decoded query pairs.
    pub query: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers.
pub enum Reply {
    Ok(&'static str, Vec<u8>),
    Status(u16, Vec<(&'static str, String)>, Vec<u8>),
    /// Accept, then never answer (until the client gives up).
    Hang,
    /// Claim a huge body and stream it.
    Huge(usize),
}

/// The routing function: request → reply.
type Route = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Server {
    pub base: String,
    pub hits: Arc<AtomicUsize>,
}

impl Server {
    /// Routes by (path, decoded query pairs).
    pub fn start<F>(route: F) -> Server
    where
        F: Fn(&str, &[(String, String)]) -> Reply + Send + Sync + 'static,
    {
        Server::start_req(move |r: &Request| route(&r.path, &r.query))
    }

    /// Routes by the whole request (method, headers and body too).
    pub fn start_req<F>(route: F) -> Server
    where
        F: Fn(&Request) -> Reply + Send + Sync + 'static,
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
    let mut headers = Vec::new();
    loop {
        let mut l = String::new();
        if reader.read_line(&mut l).is_err() || l == "\r\n" || l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let get = |k: &str| headers.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if let Some(n) = get("content-length").and_then(|n| n.parse::<usize>().ok()) {
        body.resize(n, 0);
        if reader.read_exact(&mut body).is_err() {
            return;
        }
    } else if get("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            if reader.read_line(&mut size).is_err() {
                return;
            }
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            if reader.read_exact(&mut chunk).is_err() {
                return;
            }
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let method = first.split_whitespace().next().unwrap_or("GET").to_owned();
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
    let req = Request {
        method,
        path: decode(path),
        raw_query: query.to_owned(),
        query: q,
        headers,
        body,
    };
    let reply = route(&req);
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

/// A permit for the code under test to run `git` (the executor's default rules: trusted
/// directories, allowlisted environment).
pub fn permit() -> archgate_exec::Permit {
    archgate_exec::Permit::for_tests(archgate_exec::ExecConfig::default())
}

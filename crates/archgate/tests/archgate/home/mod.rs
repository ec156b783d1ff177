//! archgate at home on the desktop, with the real binary: `archgate status --waybar` against a
//! real `serve --http` (golden JSON), `state.json` for bars, the systemd user unit (golden file,
//! `systemd-analyze verify`), `archgate setup`, and the Omarchy plugin's contract with the daemon
//! (qmllint, every command, frame, /health field and state field the QML uses exists; the plugin
//! never writes inside its own directory; the manifest is what `omarchy plugin add` accepts).

mod client_config;
mod doctor;
mod plugin;
mod service;
mod setup;
mod status;

/// Compares `actual` with `tests/archgate/home/golden/NAME`. `ARCHGATE_BLESS=1` rewrites the file instead
/// (then review the diff).
pub fn golden(name: &str, actual: &str) {
    let path = crate::manifest_dir()
        .join("tests/archgate/home/golden")
        .join(name);
    if std::env::var_os("ARCHGATE_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("golden file {} ({e})", path.display()));
    assert_eq!(
        actual,
        want,
        "output differs from {} (ARCHGATE_BLESS=1 rewrites it)",
        path.display()
    );
}

/// Something that answers `GET /health` like a serving archgate, on a fixed port, for as long
/// as it lives. `on` returns `None` when the port is taken (then whatever holds it plays the
/// part).
pub struct FakeArchgate {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FakeArchgate {
    pub fn on(port: u16) -> Option<FakeArchgate> {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
        listener.set_nonblocking(true).ok()?;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            while !flag.load(std::sync::atomic::Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut s, _)) => {
                        let _ = s.set_nonblocking(false);
                        let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                        let mut buf = [0u8; 4096];
                        let _ = s.read(&mut buf);
                        let body =
                            r#"{"name":"archgate","status":"serving","version":"0.0.0-fake"}"#;
                        let _ = write!(
                            s,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    Err(_) => std::thread::sleep(crate::support::POLL),
                }
            }
        });
        Some(FakeArchgate { stop })
    }
}

impl Drop for FakeArchgate {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

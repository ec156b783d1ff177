//! The Hyprland target: the real `HyprlandClient` asks a Unix socket that answers with fuzzed
//! replies. One runtime and one socket serve every input; the input is cut into the replies to
//! `j/monitors`, `j/workspaces`, `j/clients`, `j/activewindow` and `j/version` at each `\0\0`.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Fake {
    runtime: tokio::runtime::Runtime,
    client: archgate_desktop::HyprlandClient,
    replies: Arc<Mutex<Vec<Vec<u8>>>>,
    _dir: tempfile::TempDir,
}

const COMMANDS: [&str; 5] = [
    "j/monitors",
    "j/workspaces",
    "j/clients",
    "j/activewindow",
    "j/version",
];

fn fake() -> &'static Fake {
    static FAKE: OnceLock<Fake> = OnceLock::new();
    FAKE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let sock = dir.path().join(".socket.sock");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let replies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let listener = {
            let _g = runtime.enter();
            tokio::net::UnixListener::bind(&sock).expect("bind")
        };
        let served = replies.clone();
        runtime.spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let mut buf = vec![0u8; 4096];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                let reply = COMMANDS
                    .iter()
                    .position(|c| *c == request)
                    .and_then(|i| served.lock().ok()?.get(i).cloned())
                    .unwrap_or_else(|| b"unknown request".to_vec());
                let _ = stream.write_all(&reply).await;
            }
        });
        Fake {
            client: archgate_desktop::HyprlandClient::at(sock, Duration::from_secs(5)),
            runtime,
            replies,
            _dir: dir,
        }
    })
}

/// Fuzzed Hyprland replies through the real client.
pub fn hyprland_ipc(data: &[u8]) {
    let f = fake();
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut rest = data;
    while parts.len() < COMMANDS.len() - 1 {
        match rest.windows(2).position(|w| w == b"\0\0") {
            Some(i) => {
                parts.push(rest[..i].to_vec());
                rest = &rest[i + 2..];
            }
            None => break,
        }
    }
    parts.push(rest.to_vec());
    *f.replies.lock().expect("lock") = parts;
    f.runtime.block_on(async {
        match f.client.state().await {
            Ok(state) => {
                for m in &state.monitors {
                    assert!(
                        m.scale.is_finite() && m.scale > 0.0,
                        "monitor scale {}",
                        m.scale
                    );
                }
                let _ = serde_json::to_string(&state).expect("state serializes");
            }
            Err(e) => {
                assert_ne!(e.kind(), "timed_out", "the fake always answers: {e}");
            }
        }
        let _ = f.client.version().await;
    });
}

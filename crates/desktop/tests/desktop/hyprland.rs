//! Hyprland: a Unix socket speaking its request protocol, serving our snapshots of several
//! releases' JSON, plus a socket that never answers and one that answers garbage.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use archgate_desktop::{
    Compositor, CompositorKind, Desktop, DesktopConfig, DesktopEnv, HyprlandClient,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

use crate::common::data;

#[derive(Clone, Copy)]
enum Behaviour {
    /// Answers from the snapshot directory of one release.
    Release(&'static str),
    /// Accepts, reads, never answers.
    Silent,
    /// Answers every request with broken JSON.
    Garbage,
}

struct FakeHyprland {
    _dir: tempfile::TempDir,
    runtime: PathBuf,
    signature: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl FakeHyprland {
    fn env(&self) -> DesktopEnv {
        DesktopEnv::from_vars([
            ("XDG_RUNTIME_DIR", self.runtime.to_str().expect("utf-8")),
            ("HYPRLAND_INSTANCE_SIGNATURE", self.signature.as_str()),
            // Hyprland wins over Sway when both are set.
            ("SWAYSOCK", "/nonexistent/sway.sock"),
        ])
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("lock").clone()
    }
}

fn answer(release: &Path, request: &str) -> Vec<u8> {
    if let Some(cmd) = request.strip_prefix("j/") {
        let file = release.join(format!("{}.json", cmd.trim()));
        return std::fs::read(file).unwrap_or_else(|_| b"unknown request".to_vec());
    }
    match request.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["dispatch", "workspace", _] | ["dispatch", "exec", ..] => b"ok".to_vec(),
        ["dispatch", ..] => b"Invalid dispatcher".to_vec(),
        _ => b"unknown request".to_vec(),
    }
}

async fn start(behaviour: Behaviour) -> FakeHyprland {
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = dir.path().join("run");
    let signature = "fakesig_1700000000_123456".to_owned();
    let sock_dir = runtime.join("hypr").join(&signature);
    std::fs::create_dir_all(&sock_dir).expect("mkdir");
    let listener = UnixListener::bind(sock_dir.join(".socket.sock")).expect("bind");
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&requests);
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                // Hyprland reads the request with one read.
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                log.lock().expect("lock").push(request.clone());
                match behaviour {
                    Behaviour::Release(v) => {
                        let body = answer(&data("hyprland").join(v), &request);
                        let _ = stream.write_all(&body).await;
                        // Dropping the stream closes it: the client reads to EOF.
                    }
                    Behaviour::Garbage => {
                        let _ = stream.write_all(b"{\"monitors\": [ {oops").await;
                    }
                    Behaviour::Silent => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    FakeHyprland {
        _dir: dir,
        runtime,
        signature,
        requests,
    }
}

fn desktop(env: DesktopEnv) -> Desktop {
    Desktop::new(
        env,
        DesktopConfig {
            ipc_timeout: Duration::from_millis(500),
            ..DesktopConfig::default()
        },
    )
}

#[tokio::test]
async fn hyprland_0_34_two_monitors_and_a_fullscreen_window() {
    let fake = start(Behaviour::Release("v0.34")).await;
    let d = desktop(fake.env());
    assert_eq!(
        d.compositor().expect("compositor").kind(),
        CompositorKind::Hyprland
    );
    let s = d.desktop_state().await.expect("state");
    assert_eq!(s.compositor, CompositorKind::Hyprland);
    assert_eq!(s.monitors.len(), 2);
    let edp = s.monitor("eDP-1").expect("eDP-1");
    assert_eq!((edp.width, edp.height, edp.scale), (2880, 1800, 2.0));
    assert_eq!((edp.logical.width, edp.logical.height), (1440, 900));
    assert_eq!(edp.active_workspace.as_deref(), Some("1"));
    assert!(edp.focused);
    // The unmapped client is not a window.
    assert_eq!(s.windows.len(), 3);
    let calc = s
        .windows
        .iter()
        .find(|w| w.class.as_deref() == Some("org.gnome.Calculator"))
        .expect("calc");
    assert!(calc.floating && !calc.fullscreen && !calc.focused);
    assert_eq!((calc.geometry.x, calc.geometry.width), (500, 400));
    let mpv = s.window("55d0c1a2f000").expect("found without 0x");
    assert!(mpv.fullscreen);
    assert_eq!(mpv.workspace.as_deref(), Some("4"));
    assert_eq!(s.focus.window.as_deref(), Some("0x55d0c1a2b3c0"));
    assert_eq!(s.focus.monitor.as_deref(), Some("eDP-1"));
    assert_eq!(s.focus.workspace.as_deref(), Some("1"));
    let ws4 = s.workspaces.iter().find(|w| w.name == "4").expect("ws 4");
    assert!(ws4.visible && !ws4.focused);
    assert_eq!(ws4.windows, Some(1));
    // One connection per request: monitors, workspaces, clients, activewindow.
    assert_eq!(
        fake.requests(),
        vec!["j/monitors", "j/workspaces", "j/clients", "j/activewindow"]
    );
    assert_eq!(
        d.compositor().unwrap().version().await.unwrap().as_deref(),
        Some("v0.34.0")
    );
}

#[tokio::test]
async fn hyprland_0_41_extra_fields_rotation_and_a_bare_workspace_id() {
    let fake = start(Behaviour::Release("v0.41")).await;
    let s = desktop(fake.env()).desktop_state().await.expect("state");
    let hdmi = s.monitor("HDMI-A-1").expect("hdmi");
    assert_eq!((hdmi.logical.width, hdmi.logical.height), (2560, 1440));
    let portrait = s.monitor("DP-3").expect("portrait");
    assert_eq!(
        (portrait.logical.width, portrait.logical.height),
        (1080, 1920)
    );
    let scratch = s
        .windows
        .iter()
        .find(|w| w.title == "scratch")
        .expect("scratch");
    assert_eq!(scratch.workspace.as_deref(), Some("-98"));
    assert!(scratch.floating);
    assert_eq!(s.focus.window.as_deref(), Some("0x5f00aa000010"));
    assert!(
        s.workspaces
            .iter()
            .any(|w| w.name == "special:scratch" && !w.visible)
    );
}

#[tokio::test]
async fn hyprland_0_48_fullscreen_modes_disabled_monitor_and_no_focus() {
    let fake = start(Behaviour::Release("v0.48")).await;
    let s = desktop(fake.env()).desktop_state().await.expect("state");
    // The disabled laptop panel is not a monitor.
    assert_eq!(
        s.monitors
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        vec!["DP-1"]
    );
    let game = s.windows.iter().find(|w| w.title == "Game").expect("game");
    assert!(game.fullscreen, "fullscreen: 2 is fullscreen");
    let browser = s
        .windows
        .iter()
        .find(|w| w.title == "Browser")
        .expect("browser");
    assert!(!browser.fullscreen, "fullscreen: 0 is not");
    // activewindow `{}`: nothing focused.
    assert_eq!(s.focus.window, None);
    assert!(s.windows.iter().all(|w| !w.focused));
    let json = serde_json::to_value(&s).expect("serializes");
    assert_eq!(json["compositor"], "hyprland");
    assert_eq!(json["windows"][0]["geometry"]["width"], 3440);
}

#[tokio::test]
async fn hyprland_dispatch_sends_the_command_and_reads_refusals() {
    let fake = start(Behaviour::Release("v0.48")).await;
    let client = HyprlandClient::from_env(&fake.env(), Duration::from_millis(500)).expect("client");
    client.dispatch("workspace 2").await.expect("ok");
    let err = client
        .dispatch("nosuchdispatcher 1")
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), "refused");
    assert!(err.to_string().contains("Invalid dispatcher"), "{err}");
    assert_eq!(
        fake.requests(),
        vec!["dispatch workspace 2", "dispatch nosuchdispatcher 1"]
    );
    let compositor = Compositor::from_env(&fake.env(), Duration::from_millis(500)).unwrap();
    compositor
        .command("dispatch workspace 3")
        .await
        .expect("ok");
}

#[tokio::test]
async fn hyprland_that_never_answers_times_out() {
    let fake = start(Behaviour::Silent).await;
    let err = desktop(fake.env())
        .desktop_state()
        .await
        .expect_err("times out");
    assert_eq!(err.kind(), "timed_out", "{err}");
}

#[tokio::test]
async fn hyprland_answering_garbage_is_malformed() {
    let fake = start(Behaviour::Garbage).await;
    let err = desktop(fake.env())
        .desktop_state()
        .await
        .expect_err("malformed");
    assert_eq!(err.kind(), "malformed", "{err}");
}

#[tokio::test]
async fn missing_socket_and_missing_compositor_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let env = DesktopEnv::from_vars([
        ("XDG_RUNTIME_DIR", dir.path().to_str().unwrap()),
        ("HYPRLAND_INSTANCE_SIGNATURE", "gone"),
    ]);
    let err = desktop(env).desktop_state().await.expect_err("no socket");
    assert_eq!(err.kind(), "could_not_reach", "{err}");
    let err = desktop(DesktopEnv::default())
        .desktop_state()
        .await
        .expect_err("nothing");
    assert_eq!(err.kind(), "not_available");
    assert!(err.to_string().contains("install"), "{err}");
}

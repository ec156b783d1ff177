//! The real thing: a headless Sway desktop with mako on a private D-Bus and PipeWire +
//! WirePlumber with a null sink, started once per test binary by `scripts/desktop-session.sh` in
//! a directory of this run's own (two runs at once never share one), and stopped by the script's
//! watcher when this test binary ends (SESSION_OWNER_PID). As root the session runs as nobody and
//! the tests talk to its nobody-owned sockets; as anyone else it runs as that user.

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_desktop::{
    AudioAction, BrightnessAction, CaptureTarget, CompositorKind, Desktop, DesktopConfig,
    DesktopEnv, LaunchTarget, MediaAction, Program,
};
use archgate_exec::{CommandSpec, ExecConfig, Executor, Permit};
use tokio::sync::OnceCell;

use crate::common::{empty_permit, system_permit};

/// Where this run's session lives: made once per test binary under /tmp, traversable (the
/// session may run as nobody); the script's watcher removes it when this process ends.
fn session_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("archgate-desktop-test-")
            .tempdir_in("/tmp")
            .expect("session dir")
            .keep();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    })
}

static SESSION: OnceCell<DesktopEnv> = OnceCell::const_new();

/// Starts (or finds) the session and returns its environment.
async fn session() -> &'static DesktopEnv {
    SESSION
        .get_or_init(|| async {
            let scripts = crate::manifest_dir().join("../../scripts");
            let scripts = scripts.canonicalize().expect("scripts dir");
            let permit = Permit::for_tests(ExecConfig {
                search_dirs: vec![scripts, PathBuf::from("/usr/bin")],
                require_root_owned: false,
                default_timeout: Duration::from_secs(180),
                ..ExecConfig::default()
            });
            let dir = session_dir();
            let out = permit
                .run(
                    // The owner as an argument: a program's environment is the allowlist.
                    CommandSpec::new("desktop-session.sh").args([
                        "start".to_owned(),
                        dir.to_str().expect("utf-8").to_owned(),
                        std::process::id().to_string(),
                    ]),
                )
                .await
                .expect("harness runs");
            assert!(
                out.success(),
                "desktop-session.sh start failed: {}\n{}",
                out.stderr_lossy(),
                out.stdout_lossy()
            );
            parse_exports(&out.stdout_lossy())
        })
        .await
}

fn parse_exports(text: &str) -> DesktopEnv {
    let pairs: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('\'').to_owned()))
        .collect();
    let env = DesktopEnv::from_vars(pairs);
    assert!(
        env.swaysock.is_some() && env.wayland_display.is_some(),
        "exports: {text}"
    );
    env
}

async fn desktop() -> Desktop {
    let mut env = session().await.clone();
    env.home = Some(session_dir().join("home"));
    Desktop::new(env, DesktopConfig::default())
}

/// Polls `f` until it yields `Some`, up to `tries` times, 200 ms apart.
async fn poll<T, F, Fut>(tries: usize, mut f: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..tries {
        if let Some(v) = f().await {
            return Some(v);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    None
}

#[tokio::test]
async fn desktop_state_sees_the_output_and_a_window_it_opened() {
    let d = desktop().await;
    let permit = system_permit();
    let app_id = format!("archgate-state-{}", std::process::id());
    permit
        .spawn_detached(d.env().clone().apply_to(CommandSpec::new("foot").args([
            "--app-id",
            &app_id,
            "--title",
            "ARCHGATE STATE",
            "sleep",
            "300",
        ])))
        .expect("foot starts");
    let state = poll(50, || async {
        let s = d.desktop_state().await.ok()?;
        s.windows
            .iter()
            .any(|w| w.class.as_deref() == Some(app_id.as_str()))
            .then_some(s)
    })
    .await
    .expect("the window appears");
    assert_eq!(state.compositor, CompositorKind::Sway);
    let out = state.monitor("HEADLESS-1").expect("output");
    assert_eq!((out.width, out.height, out.scale), (1280, 720, 1.0));
    assert_eq!(out.active_workspace.as_deref(), Some("1"));
    let win = state
        .windows
        .iter()
        .find(|w| w.class.as_deref() == Some(app_id.as_str()))
        .unwrap();
    assert_eq!(win.title, "ARCHGATE STATE");
    assert_eq!(win.workspace.as_deref(), Some("1"));
    assert!(win.geometry.width > 100 && win.geometry.height > 100);
    assert!(!win.floating && !win.fullscreen);
    assert!(win.pid.is_some());
    assert!(state.workspaces.iter().any(|w| w.name == "1" && w.visible));
    assert_eq!(state.focus.monitor.as_deref(), Some("HEADLESS-1"));
    // The window can be captured on its own, at its own size.
    let shot = d
        .screenshot(&permit, &CaptureTarget::Window { id: win.id.clone() }, 4096)
        .await
        .expect("window shot");
    assert_eq!(
        (shot.width, shot.height),
        (win.geometry.width, win.geometry.height)
    );
    // RUN_COMMAND closes it again.
    d.compositor()
        .unwrap()
        .command(&format!("[app_id=\"{app_id}\"] kill"))
        .await
        .expect("kill command");
    let err = d
        .compositor()
        .unwrap()
        .command("no-such-command")
        .await
        .expect_err("refused");
    assert_eq!(err.kind(), "refused");
    let facts = d.desktop_facts().await;
    assert_eq!(facts.compositor, Some(CompositorKind::Sway));
    assert!(
        facts
            .compositor_version
            .as_deref()
            .is_some_and(|v| v.contains("1."))
    );
    assert_eq!(facts.outputs[0].name, "HEADLESS-1");
}

#[tokio::test]
async fn screenshot_returns_a_png_of_the_output_scaled_to_the_limit() {
    let d = desktop().await;
    let permit = system_permit();
    let full = d
        .screenshot(&permit, &CaptureTarget::Output, 4096)
        .await
        .expect("shot");
    assert_eq!((full.width, full.height), (1280, 720));
    assert_eq!(full.mime, "image/jpeg");
    assert!(full.data.starts_with(b"\xff\xd8\xff"), "a JPEG");
    assert_eq!((full.real_width, full.real_height), (Some(1280), Some(720)));
    let small = d
        .screenshot(
            &permit,
            &CaptureTarget::Monitor {
                name: "HEADLESS-1".into(),
            },
            640,
        )
        .await
        .expect("scaled shot");
    assert_eq!((small.width, small.height), (640, 360));
    let region = d
        .screenshot(
            &permit,
            &CaptureTarget::Region {
                x: 100,
                y: 100,
                width: 300,
                height: 200,
            },
            1000,
        )
        .await
        .expect("region");
    assert_eq!((region.width, region.height), (300, 200));
    // The image bytes never serialize.
    let json = serde_json::to_string(&full).unwrap();
    assert!(json.len() < 400, "{json}");
    let err = d
        .screenshot(
            &permit,
            &CaptureTarget::Monitor {
                name: "DP-9".into(),
            },
            640,
        )
        .await
        .expect_err("no such monitor");
    assert_eq!(err.kind(), "not_found");
    assert!(err.to_string().contains("HEADLESS-1"), "{err}");
}

#[tokio::test]
async fn screen_text_reads_light_on_dark_text() {
    let d = desktop().await;
    let permit = system_permit();
    // swaynag runs under its own permit; dropping that run (aborting the task) ends it.
    let nag = d.env().clone().apply_to(
        CommandSpec::new("swaynag")
            .args(["-m", "ARCHGATE OCR 42", "--font", "monospace 28"])
            .timeout(Duration::from_secs(120)),
    );
    let nag = tokio::spawn(async move { system_permit().run(nag).await });
    // swaynag's bar is drawn across the top of the output.
    let region = CaptureTarget::Region {
        x: 0,
        y: 0,
        width: 640,
        height: 60,
    };
    let text = poll(40, || async {
        let t = d.screen_text(&permit, &region).await.ok()?;
        t.text.contains("ARCHGATE OCR 42").then_some(t)
    })
    .await
    .expect("OCR reads the bar");
    nag.abort();
    assert!(text.target.starts_with("region"));
}

#[tokio::test]
async fn clipboard_round_trips() {
    let d = desktop().await;
    let permit = system_permit();
    let text = format!(
        "archgate clip {} — ünïcödé\nsecond line\n",
        std::process::id()
    );
    d.clipboard_write(&permit, &text).await.expect("write");
    let back = d.clipboard_read(&permit).await.expect("read");
    assert_eq!(back.text, text);
    assert!(!back.empty);
    // A second copy replaces the first server.
    d.clipboard_write(&permit, "replaced")
        .await
        .expect("write again");
    assert_eq!(d.clipboard_read(&permit).await.unwrap().text, "replaced");
}

#[tokio::test]
async fn audio_volume_and_mute_change_and_read_back() {
    let d = desktop().await;
    let permit = system_permit();
    let sinks = d.audio(&permit, &AudioAction::Sinks).await.expect("sinks");
    let sink = sinks
        .sinks
        .iter()
        .find(|s| s.name == "archgate-test-sink")
        .expect("null sink");
    assert!(sink.default);
    let r = d
        .audio(&permit, &AudioAction::Set { percent: 37 })
        .await
        .expect("set");
    assert_eq!(r.volume.unwrap().percent, 37);
    let r = d
        .audio(&permit, &AudioAction::Mute { muted: Some(true) })
        .await
        .expect("mute");
    assert!(r.volume.unwrap().muted);
    let r = d.audio(&permit, &AudioAction::Get).await.expect("get");
    assert_eq!(
        (r.volume.unwrap().percent, r.volume.unwrap().muted),
        (37, true)
    );
    let r = d
        .audio(&permit, &AudioAction::Mute { muted: None })
        .await
        .expect("toggle");
    assert!(!r.volume.unwrap().muted);
    let r = d
        .audio(&permit, &AudioAction::Set { percent: 80 })
        .await
        .expect("set");
    assert_eq!(r.volume.unwrap().percent, 80);
    let r = d
        .audio(
            &permit,
            &AudioAction::Switch {
                sink: "archgate-test-sink".into(),
            },
        )
        .await
        .expect("switch");
    assert!(
        r.sinks
            .iter()
            .any(|s| s.default && s.name == "archgate-test-sink")
    );
    let err = d
        .audio(
            &permit,
            &AudioAction::Switch {
                sink: "hdmi".into(),
            },
        )
        .await
        .expect_err("no sink");
    assert_eq!(err.kind(), "not_found");
    let err = d
        .audio(&permit, &AudioAction::Set { percent: 500 })
        .await
        .expect_err("too loud");
    assert_eq!(err.kind(), "invalid_argument");
}

#[tokio::test]
async fn notify_appears_in_makoctl_list() {
    let d = desktop().await;
    let permit = system_permit();
    let title = format!("archgate-notify-{}", std::process::id());
    let spec = d
        .notify_command(&title, "body text", "claude-code")
        .expect("a notification");
    d.notify(&permit, spec).await.expect("notify");
    // No Omarchy here: osd falls back to a notification.
    let cmd = d
        .osd_command(&permit, "Volume 40%", "claude-code")
        .await
        .expect("osd command");
    assert!(cmd.route.is_none());
    let shown = d.osd(&permit, cmd).await.expect("osd");
    assert_eq!(shown.via, "notification");
    let listed = poll(25, || async {
        let out = permit
            .run(
                d.env()
                    .clone()
                    .apply_to(CommandSpec::new(Program::Makoctl.name()).arg("list")),
            )
            .await
            .ok()?;
        let text = out.stdout_lossy();
        (text.contains(&title) && text.contains("Volume 40%")).then_some(text)
    })
    .await;
    let listed = listed.expect("notification not listed by mako");
    // The agent's words arrive under its client's name, never archgate's own (attack 5b F11).
    assert!(
        listed.contains(&format!("Message from claude-code: {title}"))
            && listed.contains("claude-code: Volume 40%"),
        "{listed}"
    );
    // `makoctl list` answers mako's D-Bus reply as JSON: `{"data": [[{"app-name": {"data": …}}]]}`.
    let v: serde_json::Value = serde_json::from_str(&listed).expect("makoctl list's JSON");
    let apps: Vec<&str> = v["data"][0]
        .as_array()
        .expect("notifications")
        .iter()
        .filter_map(|n| n["app-name"]["data"].as_str())
        .collect();
    assert_eq!(apps, ["claude-code via archgate"; 2], "{listed}");
}

#[tokio::test]
async fn launch_starts_an_application_detached() {
    let d = desktop().await;
    let permit = system_permit();
    let foot = LaunchTarget::App { app: "foot".into() };
    let launched = d
        .launch(&permit, &foot, d.plan_launch(&foot).expect("resolves"))
        .expect("launches");
    assert!(launched.pid > 0);
    let found = poll(50, || async {
        let s = d.desktop_state().await.ok()?;
        s.windows
            .iter()
            .find(|w| w.pid == Some(i64::from(launched.pid)))
            .cloned()
    })
    .await
    .expect("the launched window appears");
    d.compositor()
        .unwrap()
        .command(&format!("[con_id={}] kill", found.id))
        .await
        .expect("closed");
    let unknown = LaunchTarget::App {
        app: "no-such-app-here".into(),
    };
    let err = d
        .launch(
            &permit,
            &unknown,
            d.plan_launch(&unknown).expect("a program name"),
        )
        .expect_err("unknown app");
    assert_eq!(err.kind(), "not_found");
    let err = d
        .plan_launch(&LaunchTarget::Url {
            url: "file:///etc/shadow".into(),
        })
        .expect_err("bad url");
    assert_eq!(err.kind(), "invalid_argument");
}

#[tokio::test]
async fn missing_pieces_are_not_available_and_doctor_says_so() {
    let d = desktop().await;
    let dir = tempfile::tempdir().unwrap();
    let nothing = empty_permit(dir.path());
    // (what fails, the package named)
    let err = d
        .brightness(&nothing, &BrightnessAction::Get, None)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "not_available");
    assert!(err.to_string().contains("brightnessctl"), "{err}");
    let err = d.media(&nothing, MediaAction::Status).await.unwrap_err();
    assert!(err.to_string().contains("playerctl"), "{err}");
    let err = d
        .screenshot(&nothing, &CaptureTarget::Output, 800)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "not_available");
    assert!(err.to_string().contains("`grim`"), "{err}");
    let err = d
        .screen_text(
            &nothing,
            &CaptureTarget::Region {
                x: 0,
                y: 0,
                width: 10,
                height: 10,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "not_available");
    let err = d.clipboard_write(&nothing, "x").await.unwrap_err();
    assert!(err.to_string().contains("wl-clipboard"), "{err}");

    let empty = Executor::new(ExecConfig {
        search_dirs: vec![dir.path().to_path_buf()],
        require_root_owned: false,
        ..ExecConfig::default()
    });
    let checks = d.doctor(&empty).await;
    let compositor = checks.iter().find(|c| c.name == "compositor").unwrap();
    assert!(compositor.ok, "{}", compositor.detail);
    let grim = checks.iter().find(|c| c.name == "grim").unwrap();
    assert!(!grim.ok);
    assert_eq!(grim.package, "grim");
    assert!(grim.disables.contains("screenshot"));
    let real = d.doctor(&Executor::new(ExecConfig::default())).await;
    assert!(real.iter().find(|c| c.name == "grim").unwrap().ok);
    assert!(real.iter().find(|c| c.name == "tesseract").unwrap().ok);
    let none = Desktop::new(DesktopEnv::default(), DesktopConfig::default());
    let checks = none.doctor(&empty).await;
    assert!(!checks.iter().find(|c| c.name == "compositor").unwrap().ok);
}

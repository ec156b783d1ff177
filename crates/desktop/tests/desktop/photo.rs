//! A real 2560×1440 screen showing a photo-like wallpaper (gradients and noise, made here) on its
//! own headless Sway (`scripts/desktop-session.sh` with SESSION_RESOLUTION and
//! SESSION_BACKGROUND, stopped at the end): the screenshot the agent gets fits the output limit
//! once base64-encoded, decodes, and keeps its long side at 1024 px or more.

use std::io::Cursor;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_desktop::{CaptureTarget, Desktop, DesktopConfig, DesktopEnv};
use archgate_exec::{CommandSpec, ExecConfig, Permit};
use image::{ImageFormat, RgbImage};

use crate::common::system_permit;

const LIMIT: usize = 256 * 1024;

fn scripts() -> PathBuf {
    crate::manifest_dir()
        .join("../../scripts")
        .canonicalize()
        .expect("scripts dir")
}

fn harness() -> Permit {
    Permit::for_tests(ExecConfig {
        search_dirs: vec![scripts(), PathBuf::from("/usr/bin")],
        require_root_owned: false,
        default_timeout: Duration::from_secs(180),
        ..ExecConfig::default()
    })
}

/// Gradients under smooth blotches and fine noise, like a photograph; an xorshift keeps it
/// repeatable.
fn wallpaper(path: &Path) {
    let (w, h) = (2560u32, 1440u32);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let img = RgbImage::from_fn(w, h, |x, y| {
        let fx = f64::from(x) / f64::from(w);
        let fy = f64::from(y) / f64::from(h);
        let blotch = ((fx * 23.0).sin() * (fy * 17.0).cos() + (fx * fy * 41.0).sin()) * 40.0;
        let noise = (next() % 48) as f64 - 24.0;
        let px = |base: f64| (base + blotch + noise).clamp(0.0, 255.0) as u8;
        image::Rgb([
            px(60.0 + 150.0 * fx),
            px(90.0 + 100.0 * fy),
            px(200.0 - 120.0 * fx * fy),
        ])
    });
    img.save_with_format(path, ImageFormat::Png)
        .expect("wallpaper");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

struct Session {
    dir: PathBuf,
}

impl Drop for Session {
    fn drop(&mut self) {
        let permit = harness();
        let dir = self.dir.to_str().unwrap().to_owned();
        // Stop in a runtime of its own: drop may run while the test's runtime is shutting down.
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(permit.run(CommandSpec::new("desktop-session.sh").args(["stop", &dir])))
        })
        .join();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn a_photo_on_a_2560x1440_screen_fits_the_limit_and_stays_readable() {
    let dir = std::env::temp_dir().join(format!("archgate-photo-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let session = Session { dir: dir.clone() };
    let wall = dir.join("wall.png");
    wallpaper(&wall);
    let out = harness()
        .run(
            // The harness's own settings go through `env`: a spec may set only the session
            // variables of archgate_exec::env::TABLE.
            CommandSpec::new("/usr/bin/env").args([
                "SESSION_RESOLUTION=2560x1440",
                &format!("SESSION_BACKGROUND={}", wall.display()),
                scripts().join("desktop-session.sh").to_str().unwrap(),
                "start",
                dir.to_str().unwrap(),
            ]),
        )
        .await
        .expect("harness runs");
    assert!(
        out.success(),
        "{}\n{}",
        out.stderr_lossy(),
        out.stdout_lossy()
    );
    let pairs: Vec<(String, String)> = out
        .stdout_lossy()
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('\'').to_owned()))
        .collect();
    let d = Desktop::new(DesktopEnv::from_vars(pairs), DesktopConfig::default());
    let permit = system_permit();
    let target = CaptureTarget::Monitor {
        name: "HEADLESS-1".into(),
    };

    // swaybg draws a moment after Sway starts: wait until the screen is no longer flat.
    let mut shot = None;
    for _ in 0..50 {
        let s = d
            .screenshot_within(&permit, &target, 1568, LIMIT)
            .await
            .expect("screenshot");
        let img = image::load_from_memory_with_format(&s.data, ImageFormat::Jpeg)
            .expect("decodes")
            .into_rgb8();
        let first = img.get_pixel(0, 0);
        if img.pixels().filter(|p| *p != first).count() > img.len() / 6 {
            shot = Some((s, img));
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (shot, img) = shot.expect("the wallpaper never appeared");

    // Within the limit as the gate counts it: base64 of the image plus the structured part.
    let structured = serde_json::to_string(&shot).unwrap();
    let on_the_wire = shot.data.len() * 4 / 3 + 4 + structured.len();
    assert!(on_the_wire <= LIMIT, "{on_the_wire} bytes: {structured}");
    assert_eq!(shot.mime, "image/jpeg");
    assert_eq!(shot.bytes, shot.data.len());
    assert!(shot.width.max(shot.height) >= 1024, "{structured}");
    assert!(shot.width.max(shot.height) <= 1568, "{structured}");
    assert_eq!((img.width(), img.height()), (shot.width, shot.height));
    assert_eq!(
        (shot.real_width, shot.real_height),
        (Some(2560), Some(1440))
    );
    let of_real = shot.scale_of_real.expect("scale of real");
    assert!(
        (of_real - f64::from(shot.width) / 2560.0).abs() < 0.002,
        "{structured}"
    );
    // The same picture as PNG (what archgate sent before) would not have fitted.
    let mut png = Cursor::new(Vec::new());
    img.write_to(&mut png, ImageFormat::Png).unwrap();
    assert!(
        png.into_inner().len() * 4 / 3 > LIMIT,
        "the wallpaper is not photo-like enough"
    );
    eprintln!("photo screenshot: {structured}");
    drop(session);
}

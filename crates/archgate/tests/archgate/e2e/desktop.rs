//! The desktop tools through the real binary on a real headless Sway (scripts/desktop-session.sh):
//! a screenshot comes back as a JPEG of the output's size (within the output limit) and leaves one
//! audit record with no image bytes in it; clipboard text round-trips and never reaches the log;
//! `system_status` carries the desktop's facts.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Env;

/// This run's session directory: made once per test binary under /tmp, traversable (the session
/// may run as nobody); the script's watcher stops the session and removes it when this process
/// ends, so two runs at once never share one and none leaves a desktop behind.
fn session_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("archgate-e2e-desktop-")
            .tempdir_in("/tmp")
            .expect("session dir")
            .keep();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    })
}

/// Starts (or finds) this run's headless session and returns its variables.
fn session() -> Vec<(String, String)> {
    let script = crate::manifest_dir().join("../../scripts/desktop-session.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("start")
        .arg(session_dir())
        .env("SESSION_OWNER_PID", std::process::id().to_string())
        .output()
        .expect("run desktop-session.sh");
    assert!(
        out.status.success(),
        "desktop-session.sh start: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('\'').to_owned()))
        .collect()
}

fn call(env: &Env, vars: &[(String, String)], tool: &str, args: &str) -> Value {
    let mut c = env.command(&["call", tool, args]);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().expect("archgate call");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{tool}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn screenshot_and_clipboard_on_a_real_desktop_leave_no_contents_in_the_log() {
    let vars = session();
    let env = Env::new();
    // archgate's own runtime files stay in the test's directory; the session's XDG_RUNTIME_DIR
    // is the compositor's.
    env.write_config(&format!(
        "[paths]\nruntime_dir = \"{}\"\n[policy]\nallow = [\"screenshot\", \"clipboard_write\", \"clipboard_read\"]\n",
        env.path("runtime").join("archgate").display()
    ));

    let shot = call(&env, &vars, "screenshot", "{}");
    assert_ne!(shot["isError"], true, "{shot}");
    assert_eq!(
        shot["structuredContent"]["width"], 1280,
        "{}",
        shot["structuredContent"]
    );
    assert_eq!(shot["structuredContent"]["height"], 720);
    let image = shot["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "image")
        .expect("an image");
    assert_eq!(image["mimeType"], "image/jpeg");
    assert_eq!(shot["structuredContent"]["mime"], "image/jpeg");
    assert_eq!(shot["structuredContent"]["real_width"], 1280);
    let data = image["data"].as_str().unwrap();
    assert!(data.starts_with("/9j/"), "base64 of a JPEG signature");

    let secret = "archgate-e2e-clipboard-7f3a";
    let w = call(
        &env,
        &vars,
        "clipboard_write",
        &format!("{{\"text\":\"{secret}\"}}"),
    );
    assert_ne!(w["isError"], true, "{w}");
    let r = call(&env, &vars, "clipboard_read", "{}");
    assert_eq!(r["structuredContent"]["text"], secret, "{r}");

    let log = std::fs::read_to_string(env.state_dir().join("activity.jsonl")).unwrap();
    let records: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shots: Vec<_> = records
        .iter()
        // Call records (a `started` line is an event beside the act call's one record).
        .filter(|r| r["tool"] == "screenshot" && r.get("event").is_none())
        .collect();
    assert_eq!(shots.len(), 1, "one record per call");
    assert_eq!(shots[0]["outcome"], "ok");
    assert!(
        !log.contains("/9j/") && !log.contains(&data[..64]),
        "no image bytes in the log"
    );
    assert!(
        !log.contains(secret),
        "clipboard text never reaches the log"
    );
    assert!(
        log.len() < 8 * 1024,
        "records are small: {} bytes",
        log.len()
    );
}

#[test]
fn system_status_carries_the_desktop_facts() {
    let vars = session();
    let env = Env::new();
    env.write_config(&format!(
        "[paths]\nruntime_dir = \"{}\"\n",
        env.path("runtime").join("archgate").display()
    ));
    let status = call(&env, &vars, "system_status", "{}");
    assert_ne!(status["isError"], true, "{status}");
    let desktop = &status["structuredContent"]["desktop"];
    assert_eq!(desktop["compositor"], "sway", "{desktop}");
    assert!(desktop["compositor_version"].is_string(), "{desktop}");
    assert_eq!(desktop["outputs"][0]["name"], "HEADLESS-1", "{desktop}");
    assert_eq!(desktop["outputs"][0]["width"], 1280, "{desktop}");
    // The machine part is still there.
    assert!(status["structuredContent"]["cpus"].as_u64().unwrap() > 0);
}

/// Class: *a read answer that carries what may hold another program's secrets* (attack 3, F11):
/// a terminal's title is its running command line (`mysql -pSECRET`), the text `processes
/// cmdline` asks for, and `desktop_state` (read, no question) returned every title. On a real
/// Sway with a real foot window titled like a command line: the read withholds titles; asking for
/// them is `act` (the person is asked); once the person's policy allows it the title is there.
#[test]
fn window_titles_are_withheld_from_the_read_and_asked_for() {
    let vars = session();
    let env = Env::new();
    let runtime = env.path("runtime").join("archgate");
    let config = |policy: &str| {
        env.write_config(&format!(
            "[paths]\nruntime_dir = \"{}\"\n[policy]\n{policy}\n",
            runtime.display()
        ))
    };
    config("");
    let app_id = format!("archgate-titles-{}", std::process::id());
    let secret = "mysql -u root -pSECRET-TITLE-42";
    let mut foot = Command::new("foot")
        .args(["--app-id", &app_id, "--title", secret, "sleep", "120"])
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .spawn()
        .expect("foot starts");
    let mut state = Value::Null;
    for _ in 0..100 {
        state = call(&env, &vars, "desktop_state", "{}");
        if state.to_string().contains(&app_id) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(
        state.to_string().contains(&app_id),
        "the window appears: {state}"
    );
    assert!(!state.to_string().contains("SECRET-TITLE-42"), "{state}");

    let out = env.run(&["policy", "explain", "desktop_state", r#"{"titles":true}"#]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("tier:     act") && t.contains("decision: ask"),
        "{t}"
    );

    config("allow = [\"desktop_state titles\"]");
    let with = call(&env, &vars, "desktop_state", r#"{"titles":true}"#);
    assert!(with.to_string().contains("SECRET-TITLE-42"), "{with}");
    let _ = foot.kill();
    let _ = foot.wait();
}

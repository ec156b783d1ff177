//! The environment a program sees: the person's session passes, secrets do not; search
//! directories missing from PATH are appended.

use std::path::PathBuf;

use archgate_exec::{CommandSpec, ExecConfig, Permit};

use crate::support::*;

/// The child half of `the_persons_environment_passes_and_secrets_do_not`: run `env` through the
/// executor and print what it saw between markers. Does nothing unless the parent started it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stdout)] // the parent reads this process's stdout
async fn env_child_prints_what_a_program_sees() {
    if std::env::var_os("ARCHGATE_EXEC_ENV_CHILD").is_none() {
        return;
    }
    let p = Permit::for_tests(ExecConfig {
        search_dirs: vec![PathBuf::from("/usr/bin")],
        ..config()
    });
    let out = p
        .run(CommandSpec::new("env").env("SPEC_VAR", "v=1"))
        .await
        .unwrap();
    println!("<<ENV\n{}ENV>>", out.stdout_lossy());
}

#[test]
#[allow(clippy::disallowed_methods)] // re-runs this test binary with a chosen environment
fn the_persons_environment_passes_and_secrets_do_not() {
    let me = std::env::current_exe().unwrap();
    let session = [
        ("HOME", "/home/person"),
        ("EDITOR", "nvim"),
        ("TERMINAL", "alacritty"),
        ("BROWSER", "chromium"),
        (
            "XDG_DATA_DIRS",
            "/home/person/.local/share/flatpak/exports/share:/usr/share",
        ),
        ("XDG_CONFIG_DIRS", "/etc/xdg"),
        ("XDG_CURRENT_DESKTOP", "Hyprland"),
        ("WAYLAND_DISPLAY", "wayland-1"),
        ("HYPRLAND_INSTANCE_SIGNATURE", "abc_123"),
        ("SWAYSOCK", "/run/user/1000/sway-ipc.1000.1.sock"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("LANG", "de_DE.UTF-8"),
        ("LC_TIME", "C"),
        ("PATH", "/home/person/.local/bin:/usr/bin"),
    ];
    let secrets = [
        ("ARCHGATE_TOKEN", "s1"),
        ("ARCHGATE_CONFIG", "s2"),
        ("GITHUB_TOKEN", "s3"),
        ("ANTHROPIC_API_KEY", "s4"),
        ("DB_PASSWORD", "s5"),
        ("LD_PRELOAD", "/tmp/evil.so"),
    ];
    let out = std::process::Command::new(me)
        .args([
            "--exact",
            "environment::env_child_prints_what_a_program_sees",
            "--nocapture",
            "--test-threads=1",
        ])
        .env_clear()
        .envs(session)
        .envs(secrets)
        .env("ARCHGATE_EXEC_ENV_CHILD", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let start = text
        .find("<<ENV\n")
        .unwrap_or_else(|| panic!("no env printed: {text}"));
    let end = text.find("ENV>>").unwrap();
    let seen: Vec<(&str, &str)> = text[start + 6..end]
        .lines()
        .map(|l| l.split_once('=').expect("KEY=VALUE"))
        .collect();
    let get = |k: &str| seen.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
    for (k, v) in session {
        if k == "PATH" {
            continue;
        }
        assert_eq!(get(k), Some(v), "{k} did not pass through: {seen:?}");
    }
    // The person's PATH is kept for the program's own lookups; the search directory was in it.
    assert_eq!(get("PATH"), Some("/home/person/.local/bin:/usr/bin"));
    assert_eq!(get("SPEC_VAR"), Some("v=1"));
    for (k, _) in secrets {
        assert_eq!(get(k), None, "{k} reached the program");
    }
    assert!(
        !seen.iter().any(|(k, _)| k.starts_with("ARCHGATE_")),
        "{seen:?}"
    );
    for (_, secret) in secrets {
        assert!(
            !seen.iter().any(|(_, v)| *v == secret),
            "{secret} leaked: {seen:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_directories_missing_from_path_are_appended_and_bad_keys_refused() {
    let out = permit().run(CommandSpec::new("env")).await.unwrap();
    let text = out.stdout_lossy();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .expect("a PATH");
    let dirs: Vec<&str> = path.split(':').collect();
    assert!(
        dirs.contains(&"/usr/local/bin") && dirs.contains(&"/usr/bin"),
        "{path}"
    );
    if let Some(inherited) = std::env::var_os("PATH") {
        assert!(path.starts_with(inherited.to_str().unwrap()), "{path}");
    }

    let err = permit()
        .run(CommandSpec::new("env").env("BAD=KEY", "x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "spawn_failed");
}

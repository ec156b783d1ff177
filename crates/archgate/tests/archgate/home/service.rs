//! `archgate service`: the unit file (golden, and checked by systemd's own `systemd-analyze
//! verify`), install without and with a user manager to talk to, uninstall, status.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::FakeArchgate;
use crate::support::{BIN, Env};
use crate::support::{repo, stdout, text};

fn bin() -> PathBuf {
    Path::new(BIN).canonicalize().unwrap()
}

fn unit_path(env: &Env) -> PathBuf {
    env.path("config").join("systemd/user/archgate.service")
}

/// The committed unit (what the package installs) is exactly what the binary renders for
/// /usr/bin/archgate.
#[test]
fn the_packaged_unit_is_what_the_binary_renders() {
    let env = Env::new();
    let out = env.run(&["service", "print", "--exec", "/usr/bin/archgate"]);
    assert!(out.status.success(), "{}", text(&out));
    let want = std::fs::read_to_string(repo().join("packaging/systemd/archgate.service"))
        .expect("packaging/systemd/archgate.service");
    assert_eq!(
        stdout(&out),
        want,
        "packaging/systemd/archgate.service is stale: regenerate it with `archgate service print --exec /usr/bin/archgate`"
    );
}

#[test]
fn install_write_only_writes_the_golden_unit_for_this_binary_and_prints_the_commands() {
    let env = Env::new();
    let out = env
        .command(&["service", "install", "--write-only"])
        .env("WAYLAND_DISPLAY", "wayland-7")
        .env("XDG_CURRENT_DESKTOP", "Hyprland")
        .env_remove("SWAYSOCK")
        .env_remove("HYPRLAND_INSTANCE_SIGNATURE")
        .env_remove("DISPLAY")
        .env_remove("OMARCHY_PATH")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let written = std::fs::read_to_string(unit_path(&env)).expect("the unit is written");
    let golden =
        std::fs::read_to_string(repo().join("packaging/systemd/archgate.service")).unwrap();
    assert_eq!(
        written,
        golden.replace(
            "ExecStart=/usr/bin/archgate serve",
            &format!("ExecStart={} serve", bin().display())
        )
    );
    let said = stdout(&out);
    assert!(
        said.contains("systemctl --user import-environment WAYLAND_DISPLAY XDG_CURRENT_DESKTOP\n"),
        "{said}"
    );
    assert!(said.contains("systemctl --user daemon-reload"), "{said}");
    assert!(
        said.contains("systemctl --user enable --now archgate.service"),
        "{said}"
    );
    // The bridge socket beside it, as the package ships it, enabled before the service.
    let socket = unit_path(&env).with_file_name("archgate.socket");
    assert_eq!(
        std::fs::read_to_string(&socket).expect("the socket unit is written"),
        std::fs::read_to_string(repo().join("packaging/systemd/archgate.socket")).unwrap()
    );
    let (sock, serv) = (
        said.find("enable --now archgate.socket")
            .expect("the socket is enabled"),
        said.find("enable --now archgate.service").unwrap(),
    );
    assert!(sock < serv, "{said}");
}

/// systemd's own parser and checker accept the unit: every directive is known, the binary exists.
#[test]
fn systemd_analyze_verifies_the_unit() {
    let env = Env::new();
    let out = env.run(&["service", "install", "--write-only"]);
    assert!(out.status.success(), "{}", text(&out));
    let analyze = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(unit_path(&env))
        .env("XDG_RUNTIME_DIR", env.path("runtime"))
        .env("XDG_CONFIG_HOME", env.path("config"))
        .output()
        .expect("systemd-analyze (package systemd) is installed");
    let said = text(&analyze);
    assert!(analyze.status.success(), "systemd-analyze verify: {said}");
    // And the socket unit beside it.
    let socket = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(unit_path(&env).with_file_name("archgate.socket"))
        .env("XDG_RUNTIME_DIR", env.path("runtime"))
        .env("XDG_CONFIG_HOME", env.path("config"))
        .output()
        .unwrap();
    let socket_said = text(&socket);
    assert!(
        socket.status.success(),
        "systemd-analyze verify archgate.socket: {socket_said}"
    );
    for bad in [
        "Unknown key",
        "Unknown section",
        "Invalid",
        "ignoring",
        "Failed",
    ] {
        assert!(
            !socket_said.contains(bad),
            "systemd-analyze complained: {socket_said}"
        );
    }
    let complaints = [
        "Unknown key",
        "Unknown section",
        "Invalid",
        "ignoring",
        "Failed",
    ];
    for bad in complaints {
        assert!(!said.contains(bad), "systemd-analyze complained: {said}");
    }
    // The check has teeth: a directive systemd does not know is reported.
    let broken = env.root.path().join("broken.service");
    let text_ = std::fs::read_to_string(unit_path(&env)).unwrap();
    std::fs::write(
        &broken,
        text_.replace(
            "LockPersonality=yes",
            "LockPersonality=yes\nProtectEverything=yes",
        ),
    )
    .unwrap();
    let analyze = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&broken)
        .output()
        .unwrap();
    assert!(text(&analyze).contains("Unknown key"), "{}", text(&analyze));
}

/// Without a user manager (this machine has none for the test user) the unit stays written and
/// the person gets the exact commands; the exit status says it did not finish.
#[test]
fn install_without_a_user_manager_says_what_to_run() {
    let env = Env::new();
    let out = env
        .command(&["service", "install"])
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}/no-bus", env.path("runtime").display()),
        )
        .output()
        .unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(unit_path(&env).is_file());
    assert!(said.contains("failed"), "{said}");
    assert!(
        said.contains("run these yourself")
            && said.contains("systemctl --user enable --now archgate.service"),
        "{said}"
    );
}

/// On a developer's desktop an archgate (or anything) may serve on 127.0.0.1:8765: the test's
/// archgate, with its own runtime dir and a config naming another port, is still not serving.
/// A fake archgate answers on 8765 during this test (when 8765 is free) so the case is tried
/// here whatever the machine runs.
#[test]
fn uninstall_removes_the_unit_and_status_says_so() {
    let _someone_elses = FakeArchgate::on(8765);
    let env = Env::hermetic();
    assert!(
        env.run(&["service", "install", "--write-only"])
            .status
            .success()
    );
    let status = env.run(&["service", "status"]);
    assert!(
        stdout(&status).contains("(up to date)"),
        "{}",
        text(&status)
    );
    assert_eq!(
        status.status.code(),
        Some(3),
        "not serving: {}",
        text(&status)
    );
    let out = env.run(&["service", "uninstall"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(!unit_path(&env).exists(), "{said}");
    assert!(said.contains("removed"), "{said}");
    let status = env.run(&["service", "status"]);
    assert!(
        stdout(&status).contains("not installed"),
        "{}",
        text(&status)
    );
}

#[test]
fn a_stale_unit_is_reported() {
    let env = Env::hermetic();
    let path = unit_path(&env);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        &path,
        "[Service]\nExecStart=/opt/old/archgate serve --http\n",
    )
    .unwrap();
    let status = env.run(&["service", "status"]);
    assert!(stdout(&status).contains("differs"), "{}", text(&status));
}

/// Class: a file written at a path judged once, or at a predictable name, follows whatever is
/// there at write time. A link at the unit's name is replaced, never written through.
#[test]
fn install_never_writes_through_a_link_at_the_unit_name() {
    let env = Env::new();
    let victim = env.path("victim");
    std::fs::write(&victim, "mine\n").unwrap();
    std::fs::create_dir_all(unit_path(&env).parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&victim, unit_path(&env)).unwrap();
    std::os::unix::fs::symlink(&victim, unit_path(&env).with_file_name("archgate.socket")).unwrap();
    let out = env.run(&["service", "install", "--write-only"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    assert!(
        std::fs::symlink_metadata(unit_path(&env))
            .unwrap()
            .is_file()
    );
}

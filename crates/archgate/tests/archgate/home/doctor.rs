//! `archgate doctor` and `/health` on the session: which Omarchy was found, where, its version,
//! whether its directory is trusted and why not; which session variables were found in the
//! runtime directory rather than the environment.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;

use crate::support::{Env, HttpServer};
use crate::support::{stdout, text};

/// A git checkout of Omarchy as `omarchy` sits in `~/.local/share`: `bin/omarchy`, `.git/HEAD`.
fn fake_omarchy(dir: &Path) {
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::create_dir_all(dir.join(".git/refs/heads")).unwrap();
    std::fs::write(dir.join("bin/omarchy"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        dir.join("bin/omarchy"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/master\n").unwrap();
    std::fs::write(dir.join(".git/refs/heads/master"), "abcdef0123456789\n").unwrap();
    for d in [dir.to_path_buf(), dir.join("bin")] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

fn omarchy_line(env: &Env) -> String {
    let out = env.run(&["doctor"]);
    assert!(out.status.success(), "{}", text(&out));
    let all = stdout(&out);
    let mut lines = all.lines().skip_while(|l| !l.contains(" Omarchy "));
    let first = lines
        .next()
        .unwrap_or_else(|| panic!("no Omarchy line:\n{all}"));
    let mut block = first.to_owned();
    for l in lines.take_while(|l| l.starts_with("           ")) {
        block.push('\n');
        block.push_str(l);
    }
    block
}

#[test]
fn doctor_names_omarchy_its_version_and_whether_it_is_trusted() {
    // Under a directory anyone may write to: found, but refused, and the reason names it.
    let env = Env::new();
    let shared = env.path("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o777)).unwrap();
    let loose = shared.join("omarchy");
    fake_omarchy(&loose);
    env.write_config(&format!(
        "[desktop]\nomarchy_path = \"{}\"\n",
        loose.display()
    ));
    let line = omarchy_line(&env);
    assert!(line.contains("MISSING"), "{line}");
    assert!(line.contains("dev (abcdef0)"), "{line}");
    assert!(line.contains(&loose.display().to_string()), "{line}");
    assert!(line.contains("[desktop] omarchy_path"), "{line}");
    assert!(
        line.contains("not trusted")
            && line.contains(&format!(
                "{} is writable by group or others",
                shared.display()
            )),
        "{line}"
    );
    assert!(line.contains("fix:"), "{line}");

    // In a directory of the person's own under root's sticky /tmp: trusted, wherever the clone
    // and the target directory are.
    let good = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(good.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let omarchy = good.path().join("omarchy");
    fake_omarchy(&omarchy);
    env.write_config(&format!(
        "[desktop]\nomarchy_path = \"{}\"\n",
        omarchy.display()
    ));
    let line = omarchy_line(&env);
    assert!(line.starts_with("  ok"), "{line}");
    assert!(
        line.contains("is trusted") && line.contains("dev (abcdef0)"),
        "{line}"
    );

    // Made group-writable, the component is named.
    std::fs::set_permissions(&omarchy, std::fs::Permissions::from_mode(0o775)).unwrap();
    let line = omarchy_line(&env);
    assert!(line.contains("MISSING"), "{line}");
    assert!(
        line.contains(&format!(
            "{} is writable by group or others",
            omarchy.display()
        )),
        "{line}"
    );
}

#[test]
fn health_and_doctor_say_which_session_variables_were_discovered() {
    let env = Env::new();
    env.write_config("[approval]\npage_port = 0\nnotifications = false\n");
    let runtime = env.path("runtime");
    let _wayland = UnixListener::bind(runtime.join("wayland-5")).unwrap();
    let _bus = UnixListener::bind(runtime.join("bus")).unwrap();

    let mut c = env.command(&["doctor"]);
    c.env_remove("WAYLAND_DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("SWAYSOCK")
        .env_remove("HYPRLAND_INSTANCE_SIGNATURE");
    let out = c.output().unwrap();
    let all = stdout(&out);
    let session = all
        .lines()
        .find(|l| l.contains("desktop session"))
        .unwrap_or_else(|| panic!("{all}"));
    assert!(
        session.contains("WAYLAND_DISPLAY=wayland-5 (discovered)"),
        "{session}"
    );
    assert!(
        session.contains(&format!(
            "DBUS_SESSION_BUS_ADDRESS=unix:path={} (discovered)",
            runtime.join("bus").display()
        )),
        "{session}"
    );
    let rt = format!("XDG_RUNTIME_DIR={}", runtime.display());
    assert!(
        session.contains(&rt) && !session.contains(&format!("{rt} (discovered)")),
        "{session}"
    );

    let server = HttpServer::start(&env);
    let health = crate::support::Request::get("/health")
        .send(server.port)
        .json();
    let discovered: Vec<&str> = health["session"]["discovered"]
        .as_array()
        .unwrap_or_else(|| panic!("{health}"))
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    // The test's own environment may name a display; the bus socket is ours alone.
    assert!(
        discovered.contains(&"DBUS_SESSION_BUS_ADDRESS")
            || std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some(),
        "{health}"
    );
    assert!(
        !discovered.contains(&"XDG_RUNTIME_DIR"),
        "it was set: {health}"
    );
    assert_eq!(
        health["session"]["runtime_dir"],
        runtime.join("archgate").display().to_string()
    );
}

/// The tests' world (`support::world`) has no polkit and no system bus whatever the machine
/// runs: archgate there reads archgate's actions as not installed, and a program there finds
/// neither the actions directory nor the bus's directory, even where the machine has both (CI
/// installs polkitd; an Arch desktop with the package has the actions and a running polkitd).
#[test]
fn the_tests_world_has_no_polkit_and_no_system_bus_whatever_the_machine_runs() {
    let env = Env::hermetic();
    let out = env.run(&["doctor"]);
    let said = text(&out);
    assert!(
        said.contains(
            "archgate's polkit actions are not installed \
             (no /usr/share/polkit-1/actions/org.archgate.policy)"
        ),
        "{said}"
    );
    for place in ["/usr/share/polkit-1/actions", "/run/dbus"] {
        let mut c = std::process::Command::new("sh");
        env.sandbox(&mut c)
            .args(["-c", "test -e \"$1\"", "sh", place]);
        let seen = c.status().expect("sh");
        assert!(!seen.success(), "{place} is seen in the tests' world");
    }
    // What the machine itself has is seen outside that world.
    if Path::new("/usr/share/polkit-1/actions").is_dir() {
        let seen = std::process::Command::new("sh")
            .args(["-c", "test -d /usr/share/polkit-1/actions"])
            .status()
            .expect("sh");
        assert!(seen.success(), "the machine's own actions directory");
    }
}

/// An Omarchy route that needs root is handed off only with archgate's asking sudo linked to
/// this very archgate; the test's binary is no installed one (a package's link, on a desktop
/// that has one, leads to another binary), so doctor says the piece is missing, why and the fix.
#[test]
fn doctor_says_route_hand_offs_need_the_asking_sudo_of_this_archgate() {
    let env = Env::new();
    env.write_config("[approval]\npage_port = 0\nnotifications = false\n");
    let out = env.command(&["doctor"]).output().unwrap();
    let all = stdout(&out);
    let at = all
        .find("MISSING  route hand-offs")
        .unwrap_or_else(|| panic!("{all}"));
    let said = &all[at..];
    assert!(
        said.contains("asking sudo is not usable at /usr/lib/archgate/sudo-asks/sudo"),
        "{said}"
    );
    assert!(
        said.contains("you run the route in your own terminal"),
        "{said}"
    );
    assert!(
        said.contains("fix: install archgate's Arch package"),
        "{said}"
    );
}

//! `archgate setup` for scripts: the preset in a new config, never over an existing one; the
//! plugin copied where Omarchy looks; the exact client commands.

use crate::support::{BIN, Env};
use crate::support::{repo, stdout, text};

#[test]
fn setup_writes_a_config_with_the_preset_and_prints_the_client_command() {
    let env = Env::new();
    let out = env.run(&[
        "setup",
        "--yes",
        "--preset",
        "desktop",
        "--stdio",
        "--client",
        "claude-code",
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let config = std::fs::read_to_string(env.config_file()).expect("config.toml written");
    assert!(
        config.starts_with("# archgate configuration"),
        "from `config example`"
    );
    assert!(
        config.contains("[clients.local]\npreset = \"desktop\""),
        "{config}"
    );
    assert!(
        config.contains("[clients.default]\npreset = \"desktop\""),
        "{config}"
    );
    let check = env.run(&["config", "check"]);
    assert!(check.status.success(), "config check: {}", text(&check));
    let exe = std::path::Path::new(BIN).canonicalize().unwrap();
    assert!(
        said.contains(&format!(
            "claude mcp add archgate -- {} serve --client claude-code",
            exe.display()
        )) || said.contains(&format!(
            "claude mcp add archgate -- {BIN} serve --client claude-code"
        )),
        "{said}"
    );
}

#[test]
fn setup_never_overwrites_an_existing_config() {
    let env = Env::new();
    env.write_config("[server]\nport = 9999\n");
    let out = env.run(&["setup", "--yes", "--preset", "full"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(env.config_file()).unwrap(),
        "[server]\nport = 9999\n"
    );
    assert!(stdout(&out).contains("stays as it is"), "{}", text(&out));
}

#[test]
fn setup_plugin_copies_the_plugin_where_omarchy_looks() {
    let env = Env::new();
    let home = env.root.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let plugin = repo().join("plugin");
    let out = env
        .command(&["setup", "--yes", "--plugin", "--plugin-dir"])
        .arg(&plugin)
        .env("HOME", &home)
        .output()
        .unwrap();
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let target = home.join(".config/omarchy/plugins/archgate.mcp");
    for f in ["manifest.json", "Service.qml", "BarWidget.qml"] {
        assert_eq!(
            std::fs::read(target.join(f)).unwrap(),
            std::fs::read(plugin.join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(
        said.contains("omarchy plugin enable archgate.mcp"),
        "{said}"
    );
}

#[test]
fn setup_service_for_cursor_makes_a_named_client_and_prints_its_http_snippet() {
    let env = Env::new();
    let out = env.run(&[
        "setup",
        "--yes",
        "--service",
        "--write-only",
        "--client",
        "cursor",
    ]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        env.path("config")
            .join("systemd/user/archgate.service")
            .is_file()
    );
    // Issue 32: a client of its own, named after the agent, not the first-run `default`.
    assert!(said.contains("made the client \"cursor\""), "{said}");
    let token = env.token();
    assert!(!said.contains(&token), "not the first-run token: {said}");
    assert!(said.contains("Bearer "), "{said}");
    assert!(said.contains("http://127.0.0.1:8765/mcp"), "{said}");
    let listed = env.run(&["clients", "list"]);
    assert!(
        stdout(&listed).lines().any(|l| l.starts_with("cursor ")),
        "{}",
        text(&listed)
    );
    // Setup says what an approval will look like.
    assert!(said.contains("== what an approval looks like"), "{said}");
    assert!(said.contains("asks to run"), "{said}");
}

#[test]
fn setup_refuses_an_unknown_preset() {
    let env = Env::new();
    let out = env.run(&["setup", "--yes", "--preset", "root"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!env.config_file().exists());
}

/// Class: a file written at a path judged once, or at a predictable name, follows whatever is
/// there at write time. A dangling link at `config.toml`'s name (so "no config exists") used to
/// be written through: setup wrote the config into the file the link names. Now the link is
/// replaced by archgate's own file and the named file is never created.
#[test]
fn setup_never_writes_through_a_link_at_the_config_name() {
    let env = Env::new();
    let victim = env.path("victim");
    std::fs::create_dir_all(env.config_file().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&victim, env.config_file()).unwrap();
    let out = env.run(&["setup", "--yes", "--preset", "desktop"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!victim.exists(), "written through the link");
    let m = std::fs::symlink_metadata(env.config_file()).unwrap();
    assert!(m.is_file(), "the config is archgate's own file now");
}

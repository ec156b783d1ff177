//! A fixture Omarchy with one route, `toggle nightlight`, whose script the test writes: the
//! registry in Omarchy 4's shape (`omarchy commands --all --json`; our own summary), a
//! dispatcher answering `version` and `commands`, and the route's binary. `OMARCHY_PATH` is set
//! for the sandbox's commands.

use super::Env;
use std::path::PathBuf;

/// Writes the fixture under `scratch/omarchy`, with `script` as the route's program; returns
/// `scratch/marks`, a directory the script may write to.
pub fn omarchy_with_route(env: &mut Env, script: impl FnOnce(&str) -> String) -> PathBuf {
    let omarchy = env.path("scratch/omarchy");
    let marks = env.path("scratch/marks");
    std::fs::create_dir_all(omarchy.join("bin")).unwrap();
    std::fs::create_dir_all(&marks).unwrap();
    std::fs::write(omarchy.join("version"), "4.0.0\n").unwrap();
    std::fs::write(
        omarchy.join("commands.json"),
        r#"{"ok": true, "commands": [{"route": "omarchy toggle nightlight", "binary": "omarchy-toggle-nightlight", "group": "toggle", "name": "nightlight", "summary": "Warm colours on or off", "requires_sudo": false, "hidden": false, "args": "[--status]", "examples": [], "aliases": [], "filename_route": "omarchy toggle nightlight", "routes": ["omarchy toggle nightlight"]}]}"#,
    )
    .unwrap();
    let dispatcher = format!(
        "#!/bin/sh\ncase \"$1\" in\n  version) echo 4.0.0 ;;\n  commands) cat \"{dir}/commands.json\" ;;\nesac\n",
        dir = omarchy.display()
    );
    let script = script(&marks.display().to_string());
    use std::os::unix::fs::PermissionsExt;
    for (name, text) in [
        ("omarchy", dispatcher),
        ("omarchy-toggle-nightlight", script),
    ] {
        let bin = omarchy.join("bin").join(name);
        std::fs::write(&bin, text).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    env.vars
        .push(("OMARCHY_PATH".into(), omarchy.display().to_string()));
    marks
}

//! How each tool that asks the person says a call in one sentence (issue 32): the tool's own
//! phrase (`ToolSpec::says`) filled from real arguments and the target resolution settles. A
//! tool that can ask without saying what it wants in its own words fails here.

use archgate_core::tool::{Action, Plan};
use serde_json::{Value, json};

/// A call of each tool that asks, the target resolution gives it, and the sentence.
fn table() -> Vec<(&'static str, Value, Option<&'static str>, &'static str)> {
    vec![
        (
            "clipboard_write",
            json!({"text": "one\ntwo\n"}),
            Some("the clipboard (8 bytes of text)"),
            "claude-code wants to put 2 lines (8 bytes) on your clipboard",
        ),
        (
            "launch",
            json!({"url": "https://aur.archlinux.org/packages/paru-bin"}),
            Some("https://aur.archlinux.org/packages/paru-bin"),
            "claude-code wants to open aur.archlinux.org/packages/paru-bin in your browser",
        ),
        (
            "launch",
            json!({"app": "firefox"}),
            Some("application firefox"),
            "claude-code wants to start the application firefox",
        ),
        (
            "notify",
            json!({"title": "Build done", "body": "all green"}),
            None,
            "claude-code wants to show you a notification “Build done”",
        ),
        (
            "osd",
            json!({"message": "hi"}),
            None,
            "claude-code wants to flash a message on your screen: “hi”",
        ),
        (
            "screenshot",
            json!({"target": {"kind": "region", "x": 0, "y": 0, "width": 640, "height": 360}}),
            Some("region 0,0 640x360"),
            "claude-code wants to take a screenshot of region 0,0 640x360",
        ),
        (
            "screen_text",
            json!({}),
            Some("all outputs"),
            "claude-code wants to read the text on all outputs",
        ),
        (
            "clipboard_read",
            json!({}),
            None,
            "claude-code wants to read your clipboard",
        ),
        (
            "theme",
            json!({"action": "set", "name": "nord"}),
            Some("theme nord"),
            "claude-code wants to switch your Omarchy theme to nord",
        ),
        (
            "background",
            json!({"action": "set", "path": "/home/p/a.png"}),
            Some("/home/p/a.png"),
            "claude-code wants to set your desktop background to /home/p/a.png",
        ),
        (
            "background",
            json!({"action": "next"}),
            None,
            "claude-code wants to show the next background of your theme",
        ),
        (
            "audio",
            json!({"action": "set", "percent": 40}),
            None,
            "claude-code wants to set your volume to 40%",
        ),
        (
            "audio",
            json!({"action": "switch", "sink": "hdmi"}),
            Some("audio sink 52 (hdmi)"),
            "claude-code wants to send your sound to audio sink 52 (hdmi)",
        ),
        (
            "brightness",
            json!({"action": "set", "percent": 30}),
            None,
            "claude-code wants to set your screen brightness to 30%",
        ),
        (
            "media",
            json!({"action": "next"}),
            None,
            "claude-code wants to skip to the next track",
        ),
        (
            "toggle",
            json!({"name": "nightlight"}),
            None,
            "claude-code wants to toggle nightlight on your desktop",
        ),
        (
            "omarchy_run",
            json!({"command": "theme set", "args": ["nord"]}),
            None,
            "claude-code wants to run the Omarchy command omarchy theme set",
        ),
        (
            "shell_call",
            json!({"target": "bar", "function": "toggle"}),
            None,
            "claude-code wants to call the desktop shell: omarchy theme set",
        ),
        (
            "handoff",
            json!({"op": "system_update", "reason": "the monthly update"}),
            Some("sudo -k -- /usr/bin/pacman -Syu"),
            "claude-code wants to open a terminal where you run sudo -k -- /usr/bin/pacman -Syu \
             yourself, with your Enter and your password",
        ),
    ]
}

#[test]
fn every_tool_that_asks_says_what_a_call_wants_in_its_own_words() {
    let dir = tempfile::tempdir().unwrap();
    let env = archgate_core::paths::PathEnv {
        home: Some(dir.path().to_owned()),
        uid: nix::unistd::getuid().as_raw(),
        ..Default::default()
    };
    let paths = archgate_core::paths::Paths::resolve(&env, None, &Default::default()).unwrap();
    let config = archgate_core::config::load_str("").config;
    let c = super::catalogue(&paths, &config);
    let table = table();
    for t in c.all() {
        let spec = t.spec();
        assert!(
            spec.says.problems().is_empty(),
            "{}: {:?}",
            spec.name,
            spec.says.problems()
        );
        if spec.tier != archgate_core::policy::Tier::Read {
            assert!(
                table.iter().any(|(n, ..)| *n == spec.name),
                "{} may ask the person: add a sentence for it here",
                spec.name
            );
        }
    }
    for (name, args, target, want) in table {
        let spec = c.get(name).unwrap_or_else(|| panic!("{name}")).spec();
        let mut action = Action::from_plan(&Plan::simple(spec));
        // The route an Omarchy route call resolves to (one fixed for the test).
        action.route = "omarchy theme set".to_owned();
        action.target = target.map(str::to_owned);
        let got = archgate_core::sentence::sentence(spec, &action, &args, "claude-code");
        assert_eq!(got.text(), want, "{name}");
    }
}

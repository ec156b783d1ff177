//! What a question needs is settled before it is asked (issue 36): a desktop control whose
//! program is missing, whose target does not exist or whose value is out of range is refused in
//! resolution, with a typed kind and the near misses — never after the person said yes. Class:
//! "the question is asked before what it needs is known to exist".
//!
//! The calls go through `archgate call`, which has no channel to ask on: a call that reached the
//! question is recorded `unsupported`; one settled in resolution is `unresolved`, with the
//! tool's kind.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

use crate::support::Env;

/// A sandbox whose programs are only those in its `scratch/bin` (not trusted by ownership: the
/// per-run directory is the test's own), asking for every act call, no page, no notifications.
fn rig() -> (Env, PathBuf) {
    let env = Env::hermetic();
    let bin = env.path("scratch/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let mut config = std::fs::read_to_string(env.config_file()).unwrap();
    config.push_str(&format!(
        "[approval]\npage = false\nnotifications = false\n\
         [exec]\nsearch_dirs = [\"{}\"]\nrequire_root_owned = false\ntimeout_s = 10\n",
        bin.display()
    ));
    env.write_config(&config);
    (env, bin)
}

/// A fake program in `bin` that prints `stdout` and succeeds. A fake stands in only for what
/// cannot run here (no sound server, no backlight); the output is our own text in the shape of
/// `wpctl status` 0.5 and `brightnessctl -m` 0.5.
fn fake(bin: &Path, name: &str, stdout: &str) {
    let data = bin.join(format!("{name}.out"));
    std::fs::write(&data, stdout).unwrap();
    let p = bin.join(name);
    std::fs::write(&p, format!("#!/bin/sh\ncat '{}'\nexit 0\n", data.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn refusal(env: &Env, tool: &str, args: Value) -> (Value, Value) {
    let (v, _) = env.call(tool, &args);
    assert_eq!(v["isError"], true, "{tool} {args}: {v}");
    let e = v["structuredContent"]["error"].clone();
    let rec = env
        .calls()
        .into_iter()
        .rev()
        .find(|r| r["tool"] == tool)
        .unwrap_or_else(|| panic!("no record of {tool}"));
    (e, rec)
}

#[test]
fn a_missing_desktop_program_is_refused_before_anyone_is_asked() {
    let (env, bin) = rig();
    let cases = [
        ("media", json!({"action": "play"}), "playerctl"),
        (
            "brightness",
            json!({"action": "set", "percent": 40}),
            "brightnessctl",
        ),
        ("audio", json!({"action": "set", "percent": 30}), "wpctl"),
        (
            "audio",
            json!({"action": "switch", "sink": "HDMI"}),
            "wpctl",
        ),
        ("screenshot", json!({}), "grim"),
        ("screen_text", json!({}), "grim"),
        ("clipboard_read", json!({}), "wl-paste"),
        ("clipboard_write", json!({"text": "hello"}), "wl-copy"),
    ];
    for (tool, args, program) in cases {
        let (e, rec) = refusal(&env, tool, args.clone());
        assert_eq!(e["kind"], "not_available", "{tool} {args}: {e}");
        assert!(
            e["message"].as_str().unwrap().contains(program),
            "{tool} names {program}: {e}"
        );
        assert_eq!(rec["outcome"], "unresolved", "{tool} {args}: {rec}");
    }
    // screen_text needs tesseract as well: with grim there, tesseract is what is missing.
    fake(&bin, "grim", "");
    let (e, _) = refusal(&env, "screen_text", json!({}));
    assert_eq!(e["kind"], "not_available", "{e}");
    assert!(e["message"].as_str().unwrap().contains("tesseract"), "{e}");
    assert!(env.pending().is_empty());
}

#[test]
fn an_unknown_sink_or_an_out_of_range_value_is_refused_with_near_misses_before_anyone_is_asked() {
    let (env, bin) = rig();
    fake(
        &bin,
        "wpctl",
        "PipeWire 'pipewire-0' [1.2.7, person@desk, cookie:1]\n \
         └─ Clients:\n        33. WirePlumber [1.2.7, person@desk, pid:900]\n\n\
         Audio\n \
         ├─ Devices:\n \
         │      41. Built-in Audio                      [alsa]\n \
         │  \n \
         ├─ Sinks:\n \
         │  *   46. Built-in Audio Analog Stereo        [vol: 0.45]\n \
         │      52. Studio Headphones                   [vol: 0.80]\n \
         │  \n \
         ├─ Sources:\n \
         │  *   47. Built-in Audio Analog Stereo        [vol: 1.00]\n\n\
         Video\n",
    );
    fake(&bin, "brightnessctl", "kbd_backlight,leds,1,33%,3\n");

    let (e, rec) = refusal(&env, "audio", json!({"action": "switch", "sink": "HDMI"}));
    assert_eq!(e["kind"], "not_found", "{e}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("46 (Built-in Audio Analog Stereo)") && msg.contains("52 (Studio Headphones)"),
        "the near misses are the sinks: {e}"
    );
    assert_eq!(rec["outcome"], "unresolved", "{rec}");

    // A sink that exists reaches the question, which names it (here: no channel to ask on).
    let (_, rec) = refusal(
        &env,
        "audio",
        json!({"action": "switch", "sink": "studio headphones"}),
    );
    assert_eq!(rec["outcome"], "unsupported", "{rec}");
    assert_eq!(rec["target"], "audio sink 52 (Studio Headphones)", "{rec}");

    let (e, rec) = refusal(&env, "audio", json!({"action": "set", "percent": 400}));
    assert_eq!(e["kind"], "invalid_arguments", "{e}");
    assert_eq!(rec["outcome"], "unresolved", "{rec}");
    let (e, _) = refusal(&env, "brightness", json!({"action": "set", "percent": 0}));
    assert_eq!(e["kind"], "invalid_arguments", "{e}");

    // brightnessctl lists no backlight (only a keyboard LED): nothing to set.
    let (e, rec) = refusal(&env, "brightness", json!({"action": "set", "percent": 40}));
    assert_eq!(e["kind"], "not_found", "{e}");
    assert!(
        e["message"].as_str().unwrap().contains("kbd_backlight"),
        "{e}"
    );
    assert_eq!(rec["outcome"], "unresolved", "{rec}");
    assert!(env.pending().is_empty());
}

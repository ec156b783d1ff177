//! Class: *a value that steers a script's destructive step, judged by the route's name* — a
//! route whose script deletes or overwrites a path built from its argument was `act` whatever
//! the argument, so developer mode and standing rules approved `hyprland toggle
//! ../../../../../.config/hypr/hyprland off` (the person's Hyprland config deleted), `theme
//! install …/omarchy-.git` (an empty name: the whole themes directory removed) and `games retro
//! install CORE /usr/bin/chromium` (the person's `chromium.desktop` overwritten) (attack 5a F5, F7).
//!
//! What it tries, against the real binary and a fixture Omarchy whose scripts do with their
//! values what Omarchy 4's do (our own text in their shape: `omarchy-hyprland-toggle` builds
//! `$HOME/.local/state/omarchy/toggles/hypr/$FLAG_NAME.lua` and `rm -f`s it; `omarchy-games-
//! retro-install` writes `~/.local/share/applications/<game's name>.desktop`; `omarchy-theme-
//! install` `rm -rf`s `$THEMES_DIR/$THEME_NAME` then clones): a name that would climb (`/`,
//! `..`, empty) is refused before anyone is asked and nothing runs, even with the route allowed
//! by the person's policy; a path or address that reaches the step makes the call destructive
//! (the person, never developer mode or policy); a plain name keeps the route's own tier.

use serde_json::json;

use crate::support::omarchy::{Entry, OmarchyRig};
use crate::support::{StdioServer, outcome, result_text, text};

fn rig() -> OmarchyRig {
    let rig = OmarchyRig::new(
        &[
            Entry {
                words: "hyprland toggle",
                args: "<flag-name> [on|off|toggle]",
            },
            Entry {
                words: "games retro install",
                args: "[core path-to-game]",
            },
        ],
        "[policy]\nallow = [\"omarchy hyprland toggle\", \"omarchy games retro install\"]",
    );
    rig.set_script(
        "omarchy-hyprland-toggle",
        "FLAG_NAME=\"$1\"\nACTION=\"${2:-toggle}\"\n\
         FLAG_FILE=\"$HOME/.local/state/omarchy/toggles/hypr/$FLAG_NAME.lua\"\n\
         off() {\n  rm -f \"$FLAG_FILE\"\n}\ncase $ACTION in\n  off) off ;;\nesac",
    );
    rig.set_script(
        "omarchy-games-retro-install",
        "core=\"$1\"\ngame_path=\"$2\"\n\
         game_name=$(printf '%s' \"${game_path##*/}\" | perl -pe 's/(^| )(.)/$1\\U$2/g')\n\
         desktop_file=\"$HOME/.local/share/applications/$game_name.desktop\"\n\
         cat >\"$desktop_file\" <<EOF\n[Desktop Entry]\nExec=retroarch -L \"$core\" \"$game_path\"\nEOF",
    );
    rig
}

fn explain(rig: &OmarchyRig, route: &str, args: serde_json::Value) -> String {
    let req = json!({"route": route, "args": args}).to_string();
    let out = rig.env.run(&["policy", "explain", "omarchy_run", &req]);
    text(&out)
}

#[test]
fn a_name_that_would_climb_out_of_the_scripts_directory_is_refused() {
    let rig = rig();
    let hypr = rig.env.path("home/.config/hypr");
    std::fs::create_dir_all(&hypr).unwrap();
    std::fs::write(hypr.join("hyprland.lua"), "-- the person's own config\n").unwrap();
    // With the route allowed by the person's policy: the refusal is the value's, not policy's.
    for name in ["../../../../../.config/hypr/hyprland", "..", "", "a/b"] {
        let (r, _) = rig.env.call(
            "omarchy_run",
            &json!({"route": "hyprland toggle", "args": [name, "off"]}),
        );
        // Refused before anyone is asked: nothing is waiting, nothing ran.
        assert_eq!(outcome(&r), "unresolved", "{name:?}: {r}");
        assert!(r.to_string().contains("climb"), "{name:?}: {r}");
        assert!(rig.ran().is_empty(), "{name:?} ran");
    }
    assert!(
        hypr.join("hyprland.lua").exists(),
        "the person's config was deleted"
    );
    // The honest call: a flag's plain name keeps the route's tier.
    let t = explain(&rig, "hyprland toggle", json!(["no-gaps", "off"]));
    assert!(t.contains("tier:     act"), "{t}");
}

#[test]
fn a_path_that_reaches_an_overwrite_makes_the_call_destructive() {
    let rig = rig();
    // A file of the person's whose name is an existing launcher's (`chromium.desktop`).
    let game = rig.env.path("scratch/chromium");
    std::fs::write(&game, "not a game\n").unwrap();
    let game = game.display().to_string();
    // The core is a path too (Omarchy's own example gives one): destructive, not refused — it
    // reaches no deleted or overwritten path (a `$1` in single quotes is perl's, not the script's).
    for core in ["snes9x", "/usr/lib/libretro/x_libretro.so"] {
        let t = explain(&rig, "games retro install", json!([core, game]));
        assert!(t.contains("tier:     destructive"), "{core}: {t}");
    }
    // Under developer mode it parks for the person, and a no runs nothing.
    let env = &rig.env;
    let mut s = StdioServer::session(env);
    let on = env.run(&["dev-mode", "on", "--for", "30m"]);
    assert!(on.status.success(), "{}", text(&on));
    s.call(
        1,
        "omarchy_run",
        json!({"route": "games retro install", "args": ["snes9x", game]}),
    );
    let q = env.one_pending();
    assert_eq!(q["tier"], "destructive", "{q}");
    assert!(rig.ran().is_empty(), "ran before the person answered");
    let out = env.run(&["deny", q["id"].as_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let (ok, body) = result_text(&s.response(1));
    assert!(!ok, "{body}");
    assert!(rig.ran().is_empty(), "ran after a no");
}

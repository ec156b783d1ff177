//! What a root script does in a person's session when it switches to their account
//! (`su USER -c …`, `runuser -u USER -- …`, `sudo -u USER …`): most such work reaches into
//! that person's session and files, but reloading their user manager, asking whether a unit
//! runs, and stopping or disabling a unit start nothing there — the way a package puts its
//! own user service down before an upgrade or a removal.

use crate::audit::names;
use crate::audit::shell::{Cmd, Taint, Word};

/// `systemctl --user` verbs that start no code in the session: reload the manager's view of
/// unit files, ask, stop, disable.
const QUIET_VERBS: &[&str] = &[
    "daemon-reload",
    "is-active",
    "is-enabled",
    "is-failed",
    "status",
    "show",
    "stop",
    "disable",
    "reset-failed",
];

/// The `systemctl --user` verb when `cmd`, switched to another account, only runs
/// `systemctl --user VERB [UNIT…]` with a verb of [`QUIET_VERBS`]: written in the file (no
/// variable or substitution in the verb or the units), and alone (a `-c` string holding one
/// simple command, with at most `NAME=value` settings before it).
pub(super) fn quiet_user_systemctl(cmd: &Cmd) -> Option<&'static str> {
    let (verb, units, rest) = user_systemctl(cmd)?;
    let quiet = QUIET_VERBS.iter().find(|v| **v == verb)?;
    // Stopping is quiet for a unit of the package's own, not for what runs the session itself
    // (attack 31 F9's class, *an allowlist by shape instead of by effect*: `stop
    // graphical-session.target` or the compositor's unit ends the person's session, and the
    // terminal pacman runs in with it).
    if matches!(*quiet, "stop" | "disable") && units.iter().any(|u| runs_the_session(u)) {
        return None;
    }
    // `disable --now` stops the unit too; `--now` with any other verb here adds nothing.
    rest.iter().all(|w| !w.contains('$')).then_some(*quiet)
}

/// A user unit that runs the person's session itself: a target (it pulls in everything of a
/// kind), a glob, the compositor, the desktop shell, the session bus, sound, portals.
fn runs_the_session(unit: &str) -> bool {
    let u = unit.to_ascii_lowercase();
    u.ends_with(".target")
        || u.contains(['*', '?', '['])
        || [
            "session",
            "wayland-wm",
            "graphical",
            "plasma",
            "gnome-shell",
            "hyprland",
            "sway",
            "kwin",
            "uwsm",
            "dbus",
            "pipewire",
            "wireplumber",
            "xdg-desktop-portal",
            "niri",
            "labwc",
            "waybar",
        ]
        .iter()
        .any(|n| u.contains(n))
}

/// `systemctl --user VERB UNIT…` run alone as another account, written in the file: the
/// verb, the units, and every word after `systemctl` (options included).
pub(super) fn user_systemctl(cmd: &Cmd) -> Option<(String, Vec<String>, Vec<String>)> {
    let (name, args) = names::program(cmd);
    let words: Vec<String> = match name {
        // `sudo -u USER systemctl …`: sudo is a wrapper, the program is systemctl itself.
        "systemctl" => std::iter::once("systemctl".to_owned())
            .chain(literal(args)?)
            .collect(),
        "su" | "runuser" => {
            if let Some(i) = args
                .iter()
                .position(|a| a.text == "-c" || a.text == "--command")
            {
                let text = args.get(i + 1)?;
                if !text.subs.is_empty() || foreign(text) {
                    return None;
                }
                one_simple_command(&text.text)?
            } else {
                // `runuser -u USER -- PROGRAM ARGS…`
                let i = args.iter().position(|a| a.text == "--")?;
                literal(&args[i + 1..])?
            }
        }
        _ => return None,
    };
    let mut it = words
        .iter()
        .skip_while(|w| is_setting(w))
        .map(String::as_str);
    if names::basename(it.next()?) != "systemctl" {
        return None;
    }
    let rest: Vec<String> = it.map(str::to_owned).collect();
    if !rest.iter().any(|w| w == "--user") {
        return None;
    }
    let mut ops = rest.iter().filter(|w| !w.starts_with('-')).cloned();
    let verb = ops.next()?;
    Some((verb, ops.collect(), rest))
}

/// The words' texts, when none holds a variable or a substitution's output.
fn literal(args: &[Word]) -> Option<Vec<String>> {
    args.iter()
        .map(|a| (!a.dynamic && a.subs.is_empty() && !foreign(a)).then(|| a.text.clone()))
        .collect()
}

/// Text that came from a download, a decoder or hidden text: never the file's own words.
fn foreign(w: &Word) -> bool {
    w.taint
        .has(Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED))
}

/// The words of a `-c` string holding one simple command: no list, pipe, redirection,
/// substitution, grouping or second line. Variables may appear only in `NAME=value` settings
/// before the command (`XDG_RUNTIME_DIR=/run/user/$UID`).
fn one_simple_command(text: &str) -> Option<Vec<String>> {
    if text.chars().any(|c| {
        matches!(
            c,
            ';' | '&' | '|' | '<' | '>' | '`' | '(' | ')' | '{' | '}' | '\n' | '\'' | '"' | '\\'
        )
    }) {
        return None;
    }
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    words
        .iter()
        .skip_while(|w| is_setting(w))
        .all(|w| !w.contains('$'))
        .then_some(words)
}

/// `NAME=value`, a setting before a command.
fn is_setting(w: &str) -> bool {
    w.split_once('=').is_some_and(|(n, _)| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !n.starts_with(|c: char| c.is_ascii_digit())
    })
}

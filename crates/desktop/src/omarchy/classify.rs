//! The tier of each Omarchy route. Omarchy 4's registry carries no tiers (only `requires_sudo`),
//! so archgate classifies routes by their words, from one table, before and without reading the
//! registry: the same route has the same tier whether or not anything searched the registry.
//!
//! Read top to bottom, first match wins:
//! 0. a route whose values are run as code — a command, a program, a shell string, a script
//!    file ([`RUNS_VALUES`], and any route whose script is seen doing so, `script::scan`) — is
//!    destructive: what it does is whatever its value says, which no table of words can judge
//!    (attack 3: `launch tui systemctl reboot` was `act`, and developer mode ran it);
//! 1. a route under a destructive prefix (`system reboot`, `remove *`, `update *`, …) is
//!    destructive — unless its last word only asks (`update available`, `drive info`);
//! 2. a route whose last word only looks (`list`, `current`, `status`, …), or under
//!    `version`, reads;
//! 3. everything else acts.
//!
//! `requires_sudo` (from the registry) makes a route blocked whatever this table says; that is
//! applied where the registry entry is known (see `Route::tier`).

use serde::{Deserialize, Serialize};

/// How much a route can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteTier {
    /// Only looks.
    Read,
    /// Changes something that is easy to change back.
    Act,
    /// Removes, resets, reinstalls, updates or ends the session.
    Destructive,
}

/// Last words of routes that only look.
const READ_LEAVES: &[&str] = &[
    "list",
    "current",
    "status",
    "version",
    "show",
    "present",
    "missing",
    "available",
    "info",
    "state",
    "stats",
    "focused",
    "accessible",
    "availability",
];

/// Last words that only ask, even under a destructive prefix.
const ASKING_LEAVES: &[&str] = &["available", "info", "status", "current", "list"];

/// Routes whose values are run as code, from what each script of Omarchy 4's `bin/` does with
/// its arguments (read in the public repository, `basecamp/omarchy`):
/// `launch tui <command> [args...]` runs the program with its arguments in a terminal;
/// `launch or focus tui`, `launch or focus`, `launch or focus webapp` hand a command string to
/// `launch or focus`, which runs it through a shell; `launch terminal [command...]` runs the
/// program; `launch floating terminal with presentation <command>` puts the text into
/// `bash -c`; `restart app <application> [args...]` runs the program; `hook <name>` runs the file
/// `~/.config/omarchy/hooks/<name>` (`..` not confined); `shell <target> <method> [args...]`
/// forwards any IPC call (the menu's `runAction` runs any command line); `tui install` and
/// `webapp install` write a desktop entry whose command runs at the next launch; `mise install
/// <package> [command-name]` writes a wrapper in `~/.local/bin` that runs the named program. A route not
/// listed whose script does the same is found by reading it (`script::scan`).
pub const RUNS_VALUES: &[&str] = &[
    "launch tui",
    "launch or focus tui",
    "launch or focus",
    "launch or focus webapp",
    "launch terminal",
    "launch floating terminal with presentation",
    "restart app",
    "hook",
    "shell",
    "tui install",
    "webapp install",
    "mise install",
];

/// Whether the route (words after `omarchy`, lowercase) is one whose values run as code.
pub fn runs_values(words: &[String]) -> bool {
    let words: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let words = match words.first() {
        Some(&"omarchy") => &words[1..],
        _ => &words[..],
    };
    RUNS_VALUES.iter().any(|p| prefix_matches(p, words))
}

/// Routes that run another route or menu action their arguments name. Omarchy 4's `menu [verb]
/// [route]` (`bin/omarchy-menu`) opens its menu at a menu item, and when that item is an action
/// it runs the action's command line at once (`shell/plugins/menu/Menu.qml`, `openRoute`: "if the
/// resolved id is an action … run it directly"); the items come from Omarchy's menu file and the
/// person's extensions, so with an item named what runs is that item's command, which the words
/// `menu summon x` do not show. Without one (`menu`, `menu close`) it only opens or closes.
const RUNS_ROUTE: &[&str] = &["menu"];

/// Whether `words` with `args` runs a route or a menu action its arguments name (see
/// [`RUNS_ROUTE`]): the verb and then the item, so a second argument.
pub fn runs_route(words: &[String], args: &[String]) -> bool {
    let words: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let words = match words.first() {
        Some(&"omarchy") => &words[1..],
        _ => &words[..],
    };
    let values = args.iter().filter(|a| !a.starts_with('-')).count();
    RUNS_ROUTE.iter().any(|p| prefix_matches(p, words)) && values >= 2
}

/// Route prefixes that are destructive (`*` = any further words, or none).
const DESTRUCTIVE: &[&str] = &[
    "system reboot",
    "system shutdown",
    "system logout",
    "reinstall *",
    "remove *",
    "refresh *",
    "update *",
    "upgrade *",
    "drive *",
    "user *",
    "hibernation *",
    "channel set",
    "branch set",
    "migrate",
    "theme remove",
    "theme update",
    "tui remove *",
    "webapp remove *",
    "pkg drop",
    "pkg remove",
    "snapshot",
    "sudo *",
    "windows *",
    "dev link",
    "dev unlink",
    "hyprland window close all",
    "plymouth set *",
    "plymouth reset",
    "setup *",
    "finalize *",
    "first run",
];

fn prefix_matches(pattern: &str, words: &[&str]) -> bool {
    let (head, open) = match pattern.strip_suffix(" *") {
        Some(h) => (h, true),
        None => (pattern, false),
    };
    let want: Vec<&str> = head.split(' ').collect();
    if open {
        words.len() >= want.len() && words[..want.len()] == want[..]
    } else {
        words == want.as_slice()
    }
}

/// The tier of a route, from its words (a leading `omarchy` is ignored).
pub fn classify(words: &[String]) -> RouteTier {
    let words: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let words = match words.first() {
        Some(&"omarchy") => &words[1..],
        _ => &words[..],
    };
    let last = words.last().copied().unwrap_or("");
    if RUNS_VALUES.iter().any(|p| prefix_matches(p, words)) {
        return RouteTier::Destructive;
    }
    if DESTRUCTIVE.iter().any(|p| prefix_matches(p, words)) {
        return if words.len() > 1 && ASKING_LEAVES.contains(&last) {
            RouteTier::Read
        } else {
            RouteTier::Destructive
        };
    }
    if READ_LEAVES.contains(&last) || prefix_matches("version *", words) {
        return RouteTier::Read;
    }
    RouteTier::Act
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(route: &str) -> RouteTier {
        let words: Vec<String> = route.split(' ').map(str::to_owned).collect();
        classify(&words)
    }

    #[test]
    fn the_table_in_a_few_lines() {
        assert_eq!(t("theme list"), RouteTier::Read);
        assert_eq!(t("omarchy theme current"), RouteTier::Read);
        assert_eq!(t("version"), RouteTier::Read);
        assert_eq!(t("update available"), RouteTier::Read);
        // Values run as code: what runs is the value's, so never automatic (attack 3, F9).
        assert_eq!(t("launch tui"), RouteTier::Destructive);
        assert_eq!(
            t("launch floating terminal with presentation"),
            RouteTier::Destructive
        );
        assert_eq!(t("hook"), RouteTier::Destructive);
        assert_eq!(t("shell"), RouteTier::Destructive);
        assert_eq!(t("launch browser"), RouteTier::Act);
        // `menu summon <item>` runs the item's action when it is one (Omarchy 4's Menu.qml).
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(runs_route(&w(&["menu"]), &w(&["summon", "system.reboot"])));
        assert!(runs_route(
            &w(&["omarchy", "menu"]),
            &w(&["toggle", "update"])
        ));
        assert!(!runs_route(&w(&["menu"]), &w(&["close"])));
        assert!(!runs_route(&w(&["menu"]), &[]));
        assert!(!runs_route(&w(&["theme", "set"]), &w(&["a", "b"])));
        assert_eq!(t("theme set"), RouteTier::Act);
        assert_eq!(t("toggle nightlight"), RouteTier::Act);
        assert_eq!(t("system reboot"), RouteTier::Destructive);
        assert_eq!(t("remove gaming steam"), RouteTier::Destructive);
        assert_eq!(t("update"), RouteTier::Destructive);
        assert_eq!(t("refresh hyprland"), RouteTier::Destructive);
        assert_eq!(t("channel set"), RouteTier::Destructive);
        assert_eq!(t("channel current"), RouteTier::Read);
        assert_eq!(t("version pkgs"), RouteTier::Read);
        assert_eq!(t("reinstall pkgs"), RouteTier::Destructive);
        assert_eq!(t("update system pkgs"), RouteTier::Destructive);
        assert_eq!(
            t("Remove  Browser".replace("  ", " ").as_str()),
            RouteTier::Destructive
        );
    }
}

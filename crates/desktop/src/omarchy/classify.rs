//! The tier of each Omarchy route. Omarchy 4's registry carries no tiers (only `requires_sudo`),
//! so archgate classifies routes by their words, from one table, before and without reading the
//! registry: the same route has the same tier whether or not anything searched the registry.
//!
//! Read top to bottom, first match wins:
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

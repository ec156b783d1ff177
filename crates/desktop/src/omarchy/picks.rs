//! Route scripts that pick the program they run from files under the person's home.
//!
//! Class (attack 23 F5; attack 18 F5's class, *a dispatcher configured by files the agent
//! writes*, inside Omarchy's routes): a route is judged by its name, its arguments and its
//! script's text, but some scripts choose *which program* to start at run time from a file in
//! the person's home or XDG directories — files the agent's shell may write. `launch webapp`
//! with `Exec=omarchy-system-reboot` in `~/.local/share/applications/chromium.desktop` was an
//! `act` call that rebooted. So archgate knows the scripts that make such a pick ([`PICKERS`],
//! data), notes where a route's script or a script it calls runs one ([`sites_in`], by
//! `crate::omarchy::script::scan`), and resolves the pick at judge time as the script would
//! (`crate::omarchy::picked`).
//!
//! Where the list came from: every script of Omarchy 4's `bin/` (basecamp/omarchy at commit
//! 2c8639ffbdab557af084642065f8c2cd73d830ed, 2026-07-23), read whole, and every line of them that
//! runs a program named by something other than the script's own words: `xdg-settings`,
//! `share/applications`, `~/.local/state/omarchy/defaults/`, `~/.config/omarchy/hooks/`,
//! `xdg-terminal-exec`, `gtk-launch`, `xdg-open`, and `source` of a file under the home (a script
//! that runs the person's file as its own code picks what runs as much). Eight pickers remain; each entry's
//! `reached_by` lists the Omarchy 4 scripts that call it (directly or through another script),
//! for the reader — the scan finds the callers itself, breadth first, so a script Omarchy adds
//! later that calls a picker is judged the same way. Scripts that only *choose among fixed
//! programs* by such a file (`omarchy-launch-screensaver` runs one of four terminals it names by
//! the id `xdg-terminal-exec --print-id` prints) pick no program and are not listed; scripts
//! that *write* these files (`omarchy-default-browser`, `-editor`, `-terminal`,
//! `omarchy-hook-install`) change what a later pick finds and are `act` routes of their own.

use crate::omarchy::Seen;

/// How a picker chooses the program it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// `omarchy-launch-webapp`: the default web browser's id (`xdg-settings get
    /// default-web-browser`), kept only when it is one of Chrome, Brave, Edge, Opera, Vivaldi or
    /// Helium (else `chromium.desktop`); then the first word of the first `Exec=` line of
    /// `~/.local/share/applications/ID`, `~/.nix-profile/share/applications/ID`,
    /// `/usr/share/applications/ID`, in that order.
    WebAppBrowser,
    /// `omarchy-launch-browser`: the same, any id the default names (its program is also run
    /// with `--help` first, to learn its private-window flag).
    DefaultBrowser,
    /// `omarchy-launch-editor`: the first line of `~/.local/state/omarchy/defaults/editor`.
    DefaultEditor,
    /// `omarchy-hook NAME`: `bash ~/.config/omarchy/hooks/NAME`, then each file of
    /// `~/.config/omarchy/hooks/NAME.d/` (not `*.sample`).
    Hook,
    /// `xdg-terminal-exec`: the terminal named by `xdg-terminals.list` in the config home, or a
    /// desktop entry in the data home's `xdg-terminals/` or `applications/`.
    Terminal,
    /// `gtk-launch ID`: the desktop entry ID, the data home's `applications/` first.
    DesktopEntry,
    /// `xdg-open URL`: the default handler in `mimeapps.list` and its desktop entry.
    UrlHandler,
    /// The script runs a file of the person's as its own code: `source ~/FILE`, a shell that
    /// reads their start-up files, an interpreter given their file (`sourced.rs`).
    Sourced,
    /// The script runs a command whose name it computes when it runs (`"$h" ARGS`,
    /// `omarchy-$k`): any picker, or any program (`sourced.rs`).
    Computed,
}

/// A script or program that picks what it starts from the person's files.
#[derive(Debug)]
pub struct Picker {
    /// The script's (or program's) name.
    pub name: &'static str,
    pub kind: PickKind,
    /// The files it reads to choose, as its text names them.
    pub reads: &'static str,
    /// Omarchy 4's scripts that reach it (for the reader; the scan finds callers itself).
    pub reached_by: &'static [&'static str],
}

/// Every picker of Omarchy 4's `bin/` (and the programs its scripts run that pick), with the
/// files each reads — see the module's doc for where the list came from.
pub const PICKERS: &[Picker] = &[
    Picker {
        name: "omarchy-launch-webapp",
        kind: PickKind::WebAppBrowser,
        reads: "mimeapps.list (through xdg-settings), then {~/.local,~/.nix-profile,/usr}/share/applications/<browser>.desktop",
        reached_by: &[
            "omarchy-launch-or-focus-webapp",
            "omarchy-webapp-handler-hey",
            "omarchy-webapp-handler-zoom",
            "omarchy-webapp-install",
            "omarchy-webapp-remove",
            "omarchy-webapp-remove-all",
            "omarchy-install-gaming-xbox-cloud",
            "omarchy-remove-gaming-xbox-cloud",
            "omarchy-install-service-sunshine",
            "omarchy-remove-service-sunshine",
            "omarchy-install-service-tailscale",
            "omarchy-remove-service-tailscale",
            "omarchy-remove-launcher-entry",
            "omarchy-remove-preinstalls",
        ],
    },
    Picker {
        name: "omarchy-launch-browser",
        kind: PickKind::DefaultBrowser,
        reads: "mimeapps.list (through xdg-settings), then {~/.local,~/.nix-profile,/usr}/share/applications/<browser>.desktop",
        reached_by: &[
            "omarchy-clipboard-open",
            "omarchy-install-gaming-geforce-now",
        ],
    },
    Picker {
        name: "omarchy-launch-editor",
        kind: PickKind::DefaultEditor,
        reads: "~/.local/state/omarchy/defaults/editor",
        reached_by: &[
            "omarchy-launch-config-editor",
            "omarchy-clipboard-open",
            "omarchy-branding-about",
            "omarchy-branding-screensaver",
        ],
    },
    Picker {
        name: "omarchy-hook",
        kind: PickKind::Hook,
        reads: "~/.config/omarchy/hooks/<name> and ~/.config/omarchy/hooks/<name>.d/*",
        reached_by: &[
            "omarchy-font-set",
            "omarchy-theme-set",
            "omarchy-refresh-pacman",
            "omarchy-update",
            "omarchy-battery-low",
            "omarchy-channel-set",
            "omarchy-install-editor-helix",
            "omarchy-install-font",
            "omarchy-pkg-aur-accessible",
            "omarchy-reinstall",
            "omarchy-reinstall-pkgs",
            "omarchy-theme-install",
            "omarchy-theme-refresh",
            "omarchy-theme-set-pi",
            "omarchy-update-analyze-logs",
            "omarchy-update-aur-pkgs",
            "omarchy-update-perform",
            "omarchy-upgrade-to-quattro",
        ],
    },
    Picker {
        name: "xdg-terminal-exec",
        kind: PickKind::Terminal,
        reads: "~/.config/xdg-terminals.list, ~/.config/<desktop>-xdg-terminals.list, ~/.local/share/xdg-terminals/, ~/.local/share/applications/",
        reached_by: &[
            "omarchy-launch-terminal",
            "omarchy-launch-tui",
            "omarchy-launch-or-focus-tui",
            "omarchy-launch-floating-terminal-with-presentation",
            "omarchy-launch-terminal-tmux",
            "omarchy-launch-editor",
            "omarchy-launch-config-editor",
            "omarchy-launch-about",
            "omarchy-launch-1password",
            "omarchy-launch-signal",
            "omarchy-launch-spotify",
            "omarchy-launch-screensaver",
            "omarchy-clipboard-open",
            "omarchy-branding-about",
            "omarchy-branding-screensaver",
            "omarchy-default-terminal",
            "omarchy-first-run",
            "omarchy-install-and-launch",
            "omarchy-install-app",
            "omarchy-install-font",
            "omarchy-migrate-notify",
            "omarchy-remove-launcher-entry",
            "omarchy-tmux-alert",
            "omarchy-tui-remove",
            "omarchy-update-user-notify",
            "omarchy-voxtype-config",
            "omarchy-voxtype-model",
        ],
    },
    Picker {
        name: "gtk-launch",
        kind: PickKind::DesktopEntry,
        reads: "~/.local/share/applications/<id>.desktop, then the system applications directories",
        reached_by: &[
            "omarchy-install-and-launch",
            "omarchy-install-editor-vscode",
            "omarchy-install-editor-zed",
            "omarchy-install-gaming-heroic",
            "omarchy-install-gaming-steam",
        ],
    },
    Picker {
        name: "xdg-open",
        kind: PickKind::UrlHandler,
        reads: "mimeapps.list and the handler's desktop entry",
        reached_by: &["omarchy-windows-vm"],
    },
    // Not in Omarchy 4's scripts; the same picks by other programs (attack 26 F8), so a route
    // Omarchy adds with them is judged as with `gtk-launch` and `xdg-open`.
    Picker {
        name: "gtk4-launch",
        kind: PickKind::DesktopEntry,
        reads: "~/.local/share/applications/<id>.desktop, then the system applications directories",
        reached_by: &[],
    },
    Picker {
        name: "dex",
        kind: PickKind::DesktopEntry,
        reads: "the desktop entry it is given, ~/.local/share/applications first for an id",
        reached_by: &[],
    },
    Picker {
        name: "gio",
        kind: PickKind::UrlHandler,
        reads: "mimeapps.list and the handler's desktop entry (`gio open`, GIO's xdg-open)",
        reached_by: &[],
    },
    Picker {
        name: "source",
        kind: PickKind::Sourced,
        reads: "the file under the home it names: ~/.config/user-dirs.dirs, ~/.bashrc",
        reached_by: &[
            "omarchy-capture-screenshot",
            "omarchy-capture-screenrecording",
            "omarchy-install-dev-env",
        ],
    },
];

/// The picker called `name`, if any.
pub fn picker(name: &str) -> Option<&'static Picker> {
    PICKERS.iter().find(|p| p.name == name)
}

/// Where a script runs a picker: the picker, where it was seen, and the word that names what
/// it picks among when the script writes it out (`omarchy-hook font-set` → `font-set`;
/// `gtk-launch code` → `code`); `None` when a variable gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickSite {
    pub picker: &'static str,
    pub kind: PickKind,
    pub seen: Seen,
    pub word: Option<String>,
}

/// A word a script writes out, not a variable's value: letters, digits, `.`, `_`, `-`.
fn literal(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// The pickers `line` (line `n` of `script`) runs, each with the word after it when written out.
pub fn sites_in(script: &str, n: usize, line: &str) -> Vec<PickSite> {
    // Where it runs a file of the person's as code (`sourced.rs`).
    let mut out: Vec<PickSite> = crate::omarchy::sourced::sites(line)
        .into_iter()
        .map(|r| PickSite {
            picker: r.by,
            kind: PickKind::Sourced,
            seen: Seen {
                script: script.to_owned(),
                line: n,
                what: line.chars().take(120).collect(),
            },
            word: r.file,
        })
        .collect();
    let tokens: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || ";|&(){}`<>!".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        // Quotes taken out wherever they are: `"omarchy-"hook` is `omarchy-hook` to the shell
        // (attack 26 F8).
        let unquoted: String = t.chars().filter(|c| *c != '"' && *c != '\'').collect();
        let bare = unquoted.as_str();
        if bare == "source" || bare == "." {
            continue; // `sourced.rs` reads those
        }
        let name = bare.rsplit('/').next().unwrap_or(bare);
        // `uwsm-app -- ID.desktop` (and `uwsm app -- …`) launches a desktop entry by its id,
        // the person's applications directory first.
        if (name == "uwsm-app" || (name == "uwsm" && tokens.get(i + 1) == Some(&"app")))
            && tokens[i + 1..].iter().any(|w| {
                w.trim_matches(|c| c == '"' || c == '\'')
                    .ends_with(".desktop")
            })
        {
            let site = PickSite {
                picker: "gtk-launch",
                kind: PickKind::DesktopEntry,
                seen: Seen {
                    script: script.to_owned(),
                    line: n,
                    what: line.chars().take(120).collect(),
                },
                word: None,
            };
            if !out.contains(&site) {
                out.push(site);
            }
            continue;
        }
        let Some(p) = picker(name) else {
            continue;
        };
        let word = tokens
            .get(i + 1)
            .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
            .filter(|w| literal(w) && !w.starts_with('-'))
            .map(str::to_owned);
        let site = PickSite {
            picker: p.name,
            kind: p.kind,
            seen: Seen {
                script: script.to_owned(),
                line: n,
                what: line.chars().take(120).collect(),
            },
            word,
        };
        if !out.contains(&site) {
            out.push(site);
        }
    }
    out
}

/// The route's own script, when it is a picker: its pick, the word (a hook's name) its first
/// argument gives.
pub fn own_site(binary: &str) -> Option<PickSite> {
    let p = picker(binary)?;
    Some(PickSite {
        picker: p.name,
        kind: p.kind,
        seen: Seen {
            script: binary.to_owned(),
            line: 0,
            what: "the route's own script".to_owned(),
        },
        word: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pickers_are_found_with_the_word_they_pick_by() {
        // Shapes of Omarchy 4's lines (bin/omarchy-font-set, bin/omarchy-theme-set,
        // bin/omarchy-launch-tui, bin/omarchy-install-and-launch): our own text.
        let s = sites_in("s", 3, r#"omarchy-hook font-set "$font_name""#);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].kind, PickKind::Hook);
        assert_eq!(s[0].word.as_deref(), Some("font-set"));
        let s = sites_in("s", 1, r#"  omarchy-hook "$name" >/dev/null"#);
        assert_eq!(s[0].word, None);
        let s = sites_in(
            "s",
            1,
            r#"exec setsid uwsm-app -- xdg-terminal-exec --app-id=x -e "$1""#,
        );
        assert_eq!(s[0].kind, PickKind::Terminal);
        assert_eq!(s[0].word, None);
        let s = sites_in("s", 1, "setsid gtk-launch ${desktop_id}");
        assert_eq!(s[0].kind, PickKind::DesktopEntry);
        assert_eq!(s[0].word, None);
        assert!(sites_in("s", 1, r#"echo "launch a browser""#).is_empty());
        // bin/omarchy-capture-screenshot, bin/omarchy-install-dev-env,
        // bin/omarchy-launch-floating-terminal-with-presentation.
        let s = sites_in(
            "s",
            1,
            "[[ -f ~/.config/user-dirs.dirs ]] && source ~/.config/user-dirs.dirs",
        );
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].kind, PickKind::Sourced);
        assert_eq!(s[0].word.as_deref(), Some(".config/user-dirs.dirs"));
        let s = sites_in("s", 1, r#"    source "$HOME/.bashrc""#);
        assert_eq!(s[0].word.as_deref(), Some(".bashrc"));
        assert!(sites_in("s", 1, "source omarchy-restart-gum").is_empty());
        assert!(sites_in("s", 1, r#"source "$OMARCHY_INSTALL/helpers/logging.sh""#).is_empty());
        // Attack 26 F8: a picker's name in pieces, other programs that pick an entry or handler.
        let s = sites_in("s", 1, r#""omarchy-"hook post-update"#);
        assert_eq!(
            (s[0].kind, s[0].word.as_deref()),
            (PickKind::Hook, Some("post-update"))
        );
        for (line, kind) in [
            ("gtk4-launch chromium", PickKind::DesktopEntry),
            (
                "dex ~/.local/share/applications/chromium.desktop",
                PickKind::DesktopEntry,
            ),
            ("uwsm-app -- chromium.desktop", PickKind::DesktopEntry),
            ("uwsm app -- chromium.desktop", PickKind::DesktopEntry),
            ("gio open https://example.org", PickKind::UrlHandler),
        ] {
            assert_eq!(
                sites_in("s", 1, line).first().map(|s| s.kind),
                Some(kind),
                "{line}"
            );
        }
        assert!(sites_in("s", 1, "uwsm-app -- chromium --new-window").is_empty());
        assert!(own_site("omarchy-launch-webapp").is_some());
        assert!(own_site("omarchy-system-reboot").is_none());
    }
}

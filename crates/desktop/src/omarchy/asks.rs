//! Whether a script line asks the person something: reads the keyboard of the terminal it runs
//! in, or shows a picker on the desktop.
//!
//! Class (attack 7 F2): *a hand-off's one confirmation followed by further questions that anyone
//! who can type into the desktop answers*. A route's hand-off is confirmed by the person's Enter
//! and sudo's password; sudo then keeps the credential for that terminal, and a question the
//! script asks afterwards (`gum confirm "Reboot now?" && sudo reboot`) is answered by whoever
//! types next — a same-user process types through the compositor's virtual keyboard. A script
//! that asks anything is therefore not handed off (`tools/handoff/route.rs`); the person runs it
//! themselves. Read from the script's words, failing closed: a `read` that reads a file is
//! counted unless the line shows where it reads from.

/// `gum`'s subcommands that wait for the person's input (`spin`, `style`, `format`, `log` do not).
const GUM_ASKS: &[&str] = &[
    "confirm", "choose", "input", "filter", "write", "file", "pager", "table",
];

/// Programs that exist to ask: terminal pickers and dialogs, and the desktop's menus and
/// launchers used as pickers (a focused window the same virtual keyboard types into).
const ASKERS: &[&str] = &[
    "fzf", "whiptail", "dialog", "zenity", "kdialog", "walker", "rofi", "wofi", "fuzzel", "tofi",
    "bemenu", "dmenu",
];

/// Package managers that ask before a transaction unless told not to.
const CONFIRMERS: &[&str] = &["pacman", "yay", "paru", "pamac", "pikaur", "trizen", "aura"];

/// What on `line` asks the person (the program, or `read`), if anything. `words` are the line's
/// words, shell punctuation and quotes dropped.
pub fn asks_in(line: &str, words: &[&str]) -> Option<String> {
    for (i, w) in words.iter().enumerate() {
        let base = w.rsplit('/').next().unwrap_or(w);
        if base == "gum"
            && let Some(sub) = words.get(i + 1)
            && GUM_ASKS.contains(sub)
        {
            return Some(format!("gum {sub}"));
        }
        if ASKERS.contains(&base) {
            return Some(base.to_owned());
        }
        if CONFIRMERS.contains(&base)
            && (i + 1..words.len()).any(|j| transaction(words[j], &words[j + 1..]))
            && !words.contains(&"--noconfirm")
        {
            return Some(format!("{base} without --noconfirm"));
        }
        // fwupd asks before it flashes (`Perform operation? [Y|n]`) unless told yes (attack 12).
        if base == "fwupdmgr"
            && words[i + 1..]
                .iter()
                .any(|w| ["update", "upgrade", "install", "reinstall", "downgrade"].contains(w))
            && !words.iter().any(|w| *w == "-y" || *w == "--assume-yes")
        {
            return Some("fwupdmgr without --assume-yes".to_owned());
        }
    }
    let reads_keys = words.contains(&"read")
        // The input shown on the line: a file, a here-string, a pipe into the loop.
        && !line.contains('<')
        && !line.contains("| while")
        && !line.contains("|while");
    if reads_keys {
        return Some("read".to_owned());
    }
    if words.first() == Some(&"select") {
        return Some("select".to_owned());
    }
    None
}

/// A package manager's option that starts a transaction, given the words after it: `-S…` (not a
/// query's `-Ss`, `-Si`, `-Sl`, `-Sg`, `-Sp`, nor a refresh alone, `-Sy` with no package named),
/// `-R…`, `-U…`, and their long forms.
fn transaction(arg: &str, after: &[&str]) -> bool {
    // A package named: a word that is no option, path or assignment.
    let names_one = || {
        after
            .iter()
            .any(|w| !w.starts_with('-') && !w.starts_with('/') && !w.contains('='))
    };
    match arg {
        "--sync" | "--remove" | "--upgrade" | "--sysupgrade" => true,
        a if a.starts_with("--") => false,
        a if a.starts_with("-S") => {
            let flags = &a[2..];
            !flags.chars().any(|c| "silgpc".contains(c))
                && (flags.chars().any(|c| c != 'y') || names_one())
        }
        a => a.starts_with("-R") || a.starts_with("-U"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asks(line: &str) -> Option<String> {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || ";|&(){}`<>!'\"$".contains(c))
            .filter(|w| !w.is_empty())
            .collect();
        asks_in(line, &words)
    }

    #[test]
    fn questions_are_found_by_what_asks() {
        // The shapes of Omarchy 4's own lines (bin/omarchy-install-gaming-xbox-controllers,
        // bin/omarchy-pkg-install, bin/omarchy-setup-security-sshd): our own text.
        for (line, what) in [
            (
                r#"gum confirm "Reboot needed to finish setup. Reboot now?" && sudo reboot now"#,
                "gum confirm",
            ),
            (r#"choice=$(gum choose "yes" "no")"#, "gum choose"),
            (
                r#"key=$(gum input --placeholder "Public key> ")"#,
                "gum input",
            ),
            (r#"pkg_names=$(pacman -Slq | fzf "${fzf_args[@]}")"#, "fzf"),
            (r#"read -r -p "Continue? " answer"#, "read"),
            (r#"sudo pacman -S firefox"#, "pacman without --noconfirm"),
            (r#"sudo fwupdmgr update"#, "fwupdmgr without --assume-yes"),
            (r#"yay -Syu"#, "yay without --noconfirm"),
            (
                r#"sudo pacman -Sy archlinux-keyring"#,
                "pacman without --noconfirm",
            ),
            (r#"select opt in a b c; do"#, "select"),
        ] {
            assert_eq!(asks(line).as_deref(), Some(what), "{line}");
        }
    }

    #[test]
    fn lines_that_ask_nothing_are_not_questions() {
        for line in [
            r#"sudo pacman -S --noconfirm --needed "$@" || exit 1"#,
            r#"sudo fwupdmgr update -y"#,
            r#"fwupdmgr refresh --force"#,
            r#"sudo env OMARCHY_UPDATE_PACMAN=1 pacman -Syu --noconfirm"#,
            r#"pacman -Ss "$1""#,
            r#"pacman -Si "$pkg" >/dev/null"#,
            r#"sudo pacman -Sy"#,
            r#"sudo pacman -Sy >/dev/null"#,
            r#"gum spin --title "Installing..." -- sleep 1"#,
            r#"gum style --foreground 2 "Done""#,
            r#"while IFS= read -r line; do echo "$line"; done < "$file""#,
            r#"printf '%s\n' "$list" | while read -r p; do echo "$p"; done"#,
            r#"readlink -f "$0""#,
            r#"echo "ready""#,
        ] {
            assert_eq!(asks(line), None, "{line}");
        }
    }
}

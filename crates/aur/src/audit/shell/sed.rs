//! What `sed` prints of the text it is given, for the scripts made only of `s` and `y`
//! commands (attack 31 F14): `$(echo "cXrl …" | sed -e "s|X|u|")` is `curl …`, as
//! `$(echo "cQrl …" | tr Q u)` already was. Class: *a reader that evaluates some spellings of the
//! same operation* — `sed`'s `s`/`y` are `tr`'s siblings, so the text they make is worked out
//! the same way, and a script this cannot follow (addresses, other commands, a file operand,
//! `e`/`w` flags, back-references in the pattern, case conversions) is left unknown.

use regex::{Regex, RegexBuilder};

enum Op {
    Subst {
        re: Regex,
        repl: Vec<Piece>,
        global: bool,
        nth: usize,
        print: bool,
    },
    Translate(Vec<char>, Vec<char>),
}

enum Piece {
    Lit(String),
    Group(usize),
}

/// `sed ARGS` over `input`: `None` when the arguments are not a script of `s`/`y` commands
/// over standard input alone.
pub(crate) fn run(args: &[&str], input: &str) -> Option<String> {
    let mut scripts: Vec<String> = Vec::new();
    let mut extended = false;
    let mut quiet = false;
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if options_done || !a.starts_with('-') || a == "-" {
            operands.push(a);
            continue;
        }
        if a == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long {
                "regexp-extended" => extended = true,
                "quiet" | "silent" => quiet = true,
                "posix" | "unbuffered" | "sandbox" | "debug" => {}
                "expression" => {
                    scripts.push(args.get(i)?.to_string());
                    i += 1;
                }
                _ => match long.strip_prefix("expression=") {
                    Some(s) => scripts.push(s.to_owned()),
                    None => return None,
                },
            }
            continue;
        }
        let flags: Vec<char> = a[1..].chars().collect();
        for (k, f) in flags.iter().enumerate() {
            match f {
                'E' | 'r' => extended = true,
                'n' => quiet = true,
                'u' => {}
                'e' => {
                    let rest: String = flags[k + 1..].iter().collect();
                    if rest.is_empty() {
                        scripts.push(args.get(i)?.to_string());
                        i += 1;
                    } else {
                        scripts.push(rest);
                    }
                    break;
                }
                // -i edits files, -f reads the script from one, -z/-s change what a line is.
                _ => return None,
            }
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return None;
        }
        scripts.push(operands.remove(0).to_owned());
    }
    if !operands.is_empty() {
        // A file operand: sed reads that file, not the text it was given.
        return None;
    }
    let mut ops = Vec::new();
    for s in &scripts {
        parse(s, extended, &mut ops)?;
    }
    // Empty input is read as one empty line: the model keeps a here-string without the newline
    // bash adds (`sed "s/^/1'/" <<< ""` prints `1'`), and the judging errs towards more text.
    let input = if input.is_empty() { "\n" } else { input };
    let trailing = input.ends_with('\n');
    let body = input.strip_suffix('\n').unwrap_or(input);
    let mut out = String::new();
    for line in body.split('\n') {
        let mut space = line.to_owned();
        for op in &ops {
            match op {
                Op::Subst {
                    re,
                    repl,
                    global,
                    nth,
                    print,
                } => {
                    let (next, changed) = substitute(re, repl, *global, *nth, &space);
                    space = next;
                    if changed && *print {
                        out.push_str(&space);
                        out.push('\n');
                    }
                }
                Op::Translate(from, to) => {
                    space = space
                        .chars()
                        .map(|c| from.iter().position(|&f| f == c).map_or(c, |p| to[p]))
                        .collect();
                }
            }
        }
        if !quiet {
            out.push_str(&space);
            out.push('\n');
        }
    }
    if !trailing && out.ends_with('\n') {
        out.pop();
    }
    Some(out)
}

/// A script of `s`/`y` commands only, none of which runs or writes anything.
pub(crate) fn script_is_plain(script: &str) -> bool {
    let mut ops = Vec::new();
    parse(script, false, &mut ops).is_some() || parse(script, true, &mut Vec::new()).is_some()
}

fn substitute(re: &Regex, repl: &[Piece], global: bool, nth: usize, s: &str) -> (String, bool) {
    let mut out = String::new();
    let mut last = 0;
    let mut changed = false;
    for (k, caps) in re.captures_iter(s).enumerate() {
        let n = k + 1;
        if n < nth || (!global && n > nth) {
            continue;
        }
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&s[last..m.start()]);
        for p in repl {
            match p {
                Piece::Lit(t) => out.push_str(t),
                Piece::Group(g) => out.push_str(caps.get(*g).map_or("", |c| c.as_str())),
            }
        }
        last = m.end();
        changed = true;
    }
    out.push_str(&s[last..]);
    (out, changed)
}

/// One script: commands separated by `;` or newlines, each `s` or `y`.
fn parse(script: &str, extended: bool, ops: &mut Vec<Op>) -> Option<()> {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
            i += 1;
        }
        if i >= chars.len() {
            return Some(());
        }
        let cmd = chars[i];
        i += 1;
        if !matches!(cmd, 's' | 'y') {
            return None;
        }
        let d = *chars.get(i)?;
        if d == '\\' || d == '\n' || d.is_alphanumeric() {
            return None;
        }
        i += 1;
        let first = part(&chars, &mut i, d)?;
        let second = part(&chars, &mut i, d)?;
        if cmd == 'y' {
            let from = y_chars(&first, d)?;
            let to = y_chars(&second, d)?;
            if from.len() != to.len() {
                return None;
            }
            ops.push(Op::Translate(from, to));
            continue;
        }
        let mut global = false;
        let mut nth = 0usize;
        let mut print = false;
        let mut fold = false;
        while i < chars.len() && !matches!(chars[i], ';' | '\n' | '}') {
            let f = chars[i];
            i += 1;
            match f {
                'g' => global = true,
                'p' => print = true,
                'i' | 'I' => fold = true,
                '0'..='9' => nth = nth * 10 + f.to_digit(10)? as usize,
                ' ' | '\t' => {}
                // `e` runs the pattern space, `w` writes a file, `m` changes `^`/`$`.
                _ => return None,
            }
        }
        if first.is_empty() {
            // `s//…/` reuses the last regular expression.
            return None;
        }
        let re = RegexBuilder::new(&regex_of(&first, d, extended)?)
            .case_insensitive(fold)
            .size_limit(1 << 20)
            .build()
            .ok()?;
        ops.push(Op::Subst {
            re,
            repl: replacement(&second, d)?,
            global,
            nth: nth.max(1),
            print,
        });
    }
}

/// The text up to the next unescaped delimiter `d` (kept with its escapes), past it.
fn part(chars: &[char], i: &mut usize, d: char) -> Option<String> {
    let mut out = String::new();
    while *i < chars.len() {
        let c = chars[*i];
        *i += 1;
        if c == '\\' {
            let n = *chars.get(*i)?;
            *i += 1;
            out.push('\\');
            out.push(n);
        } else if c == d {
            return Some(out);
        } else {
            out.push(c);
        }
    }
    None
}

fn y_chars(s: &str, d: char) -> Option<Vec<char>> {
    let mut out = Vec::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            out.push(match it.next()? {
                'n' => '\n',
                't' => '\t',
                '\\' => '\\',
                x if x == d => d,
                _ => return None,
            });
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A POSIX basic (or, with `-E`, extended) regular expression as the `regex` crate writes it.
fn regex_of(p: &str, d: char, extended: bool) -> Option<String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '\\' => {
                let n = *chars.get(i)?;
                i += 1;
                match n {
                    // The delimiter, escaped, is itself.
                    x if x == d => out.push_str(&regex::escape(&x.to_string())),
                    '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended => out.push(n),
                    'n' => out.push_str("\\n"),
                    't' => out.push_str("\\t"),
                    'w' | 'W' | 's' | 'S' | 'b' | 'B' => {
                        out.push('\\');
                        out.push(n);
                    }
                    '<' | '>' => out.push_str("\\b"),
                    '`' => out.push_str("\\A"),
                    '\'' => out.push_str("\\z"),
                    // Back-references are beyond the `regex` crate.
                    '0'..='9' => return None,
                    x if x.is_alphanumeric() => return None,
                    x => out.push_str(&regex::escape(&x.to_string())),
                }
            }
            '(' | ')' | '{' | '}' | '+' | '?' | '|' if !extended => {
                out.push('\\');
                out.push(c);
            }
            '*' if !extended && (out.is_empty() || out.ends_with('(') || out == "^") => {
                out.push_str("\\*");
            }
            '[' => {
                // A bracket expression: `]` first is literal, `[:class:]` kept, a backslash
                // is itself in POSIX.
                out.push('[');
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                if chars.get(i) == Some(&']') {
                    out.push_str("\\]");
                    i += 1;
                }
                loop {
                    let b = *chars.get(i)?;
                    i += 1;
                    match b {
                        ']' => {
                            out.push(']');
                            break;
                        }
                        '[' if matches!(chars.get(i), Some(':' | '.' | '=')) => {
                            let kind = chars[i];
                            if kind != ':' {
                                return None;
                            }
                            out.push_str("[:");
                            i += 1;
                            loop {
                                let x = *chars.get(i)?;
                                i += 1;
                                out.push(x);
                                if x == ':' && chars.get(i) == Some(&']') {
                                    out.push(']');
                                    i += 1;
                                    break;
                                }
                            }
                        }
                        '\\' | '[' | '&' | '~' | '^' => {
                            out.push('\\');
                            out.push(b);
                        }
                        '-' if chars.get(i) == Some(&']') => out.push_str("\\-"),
                        _ => out.push(b),
                    }
                }
            }
            _ => out.push(c),
        }
    }
    Some(out)
}

fn replacement(r: &str, d: char) -> Option<Vec<Piece>> {
    let mut out = Vec::new();
    let mut lit = String::new();
    let mut it = r.chars();
    while let Some(c) = it.next() {
        match c {
            '&' => {
                out.push(Piece::Lit(std::mem::take(&mut lit)));
                out.push(Piece::Group(0));
            }
            '\\' => match it.next()? {
                g @ '0'..='9' => {
                    out.push(Piece::Lit(std::mem::take(&mut lit)));
                    out.push(Piece::Group(g.to_digit(10)? as usize));
                }
                'n' => lit.push('\n'),
                't' => lit.push('\t'),
                // GNU's case conversions (`\U`, `\l` …) are not followed.
                x if x.is_alphabetic() && x != d => return None,
                x => lit.push(x),
            },
            _ => lit.push(c),
        }
    }
    out.push(Piece::Lit(lit));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::run;

    #[test]
    fn substitutes_as_sed_does() {
        assert_eq!(
            run(&["-e", "s|X|u|"], "cXrl x\n").as_deref(),
            Some("curl x\n")
        );
        assert_eq!(
            run(&["s/_/;/g; s/Q/|/g"], "'1_aQb'").as_deref(),
            Some("'1;a|b'")
        );
        assert_eq!(
            run(&[r"s/\([^-]*-g\)/r\1/;s/-/./g"], "1.2-3-gabc\n").as_deref(),
            Some("1.2.r3.gabc\n")
        );
        assert_eq!(
            run(&["-E", "s/(a+)b/<\\1>/"], "aab").as_deref(),
            Some("<aa>")
        );
        assert_eq!(run(&["s/a/b/2"], "aaa").as_deref(), Some("aba"));
        assert_eq!(run(&["-n", "s/a/b/p"], "a\nc\n").as_deref(), Some("b\n"));
        assert_eq!(run(&["y/abc/xyz/"], "cab").as_deref(), Some("zxy"));
        assert_eq!(run(&["s/^v//", "file"], "v1"), None);
        assert_eq!(run(&["-i", "s/a/b/", "f"], "a"), None);
        assert_eq!(run(&["1e id"], "a"), None);
        assert_eq!(run(&["s/a/id/e"], "a"), None);
        assert_eq!(run(&["-f", "rules.sed"], "a"), None);
    }
}

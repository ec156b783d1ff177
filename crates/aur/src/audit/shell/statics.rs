//! Works out, without running anything, what small "string producing" pipelines print:
//! `echo`/`printf` (with escapes), `base64 -d`, `xxd -r -p`, `rev`, `tr`, `sed`'s `s`/`y`, `cat`. This is how
//! `$(echo Y3VybA== | base64 -d)` becomes `curl` before the rules look at it.

use super::text::{EscapeMode, decode_escapes};
use super::{Cmd, Taint, Word};
use crate::audit::names;

/// Output of a single command or one pipeline, if every stage is understood.
pub(crate) fn run_pipeline(cmds: &[&Cmd]) -> Option<(String, Taint)> {
    let first = cmds.first()?;
    if cmds.len() > 1 {
        let id = first.pipe?.0;
        if !cmds.iter().all(|c| c.pipe.map(|p| p.0) == Some(id)) {
            return None;
        }
    }
    let mut taint = Taint::default();
    let mut data: Option<Vec<u8>> = None;
    for (k, c) in cmds.iter().enumerate() {
        if c.argv.iter().any(|w| w.dynamic) {
            return None;
        }
        // Text the model could not resolve (`<<< "$desc"` of a `git describe`) is a
        // placeholder, not input: what a tool makes of it is unknown too.
        if c.stdin.as_ref().is_some_and(|s| s.dynamic) {
            return None;
        }
        let input = if k == 0 {
            c.stdin.as_ref().map(|s| {
                taint = taint.with(s.taint);
                s.text.clone().into_bytes()
            })
        } else {
            data.take()
        };
        data = Some(step(c, input, &mut taint)?);
    }
    let mut s = String::from_utf8(data?).ok()?;
    while s.ends_with('\n') {
        s.pop();
    }
    Some((s, taint))
}

fn step(cmd: &Cmd, input: Option<Vec<u8>>, taint: &mut Taint) -> Option<Vec<u8>> {
    let (name, args) = names::program(cmd);
    for a in args {
        *taint = taint.with(a.taint);
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match name {
        "echo" => {
            let mut newline = true;
            let mut escapes = false;
            let mut i = 0;
            while i < texts.len()
                && texts[i].len() > 1
                && texts[i].starts_with('-')
                && texts[i][1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            {
                if texts[i].contains('n') {
                    newline = false;
                }
                if texts[i].contains('e') {
                    escapes = true;
                }
                i += 1;
            }
            let mut out = texts[i..].join(" ");
            if escapes {
                let (t, printable) = decode_escapes(&out, EscapeMode::Echo);
                if printable >= 2 {
                    *taint = taint.with(Taint::OBFUSCATED);
                }
                out = t;
            }
            if newline {
                out.push('\n');
            }
            Some(out.into_bytes())
        }
        "printf" => {
            if texts.first() == Some(&"-v") {
                return None;
            }
            let words: Vec<&Word> = args.iter().collect();
            let (out, t) = printf(&words);
            *taint = taint.with(t);
            Some(out.into_bytes())
        }
        "cat" | "tee" if texts.iter().all(|t| *t == "-") => input,
        "tr" if !names::is_decoder(cmd) => {
            let s = String::from_utf8(input?).ok()?;
            // A lone `-` is a set (`tr '-' '.'`), not an option.
            let sets: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|t| !t.starts_with('-') || *t == "-")
                .collect();
            if texts
                .iter()
                .any(|t| t.starts_with('-') && *t != "-" && t.contains('d'))
            {
                let del = expand_set(sets.first()?);
                Some(
                    s.chars()
                        .filter(|c| !del.contains(c))
                        .collect::<String>()
                        .into_bytes(),
                )
            } else {
                Some(tr(&s, sets.first()?, sets.get(1)?).into_bytes())
            }
        }
        // Selections of lines and fields: `cut`, `head`, `tail` (attack 31: a name cut out of
        // the file's own text is worked out, not left unknown).
        "cut" | "head" | "tail" => {
            let s = String::from_utf8(input?).ok()?;
            Some(select(name, &texts, &s)?.into_bytes())
        }
        // `sed`'s `s` and `y` commands reshape text as `tr` does (attack 31 F14).
        "sed" => {
            let s = String::from_utf8(input?).ok()?;
            Some(super::sed::run(&texts, &s)?.into_bytes())
        }
        _ if names::is_decoder(cmd) => {
            *taint = taint.with(Taint::DECODED);
            let input = input?;
            match name {
                "base64" | "openssl" => base64_decode(&input),
                "base32" => None,
                "xxd" if texts.iter().any(|t| t.contains('p')) => hex_decode(&input),
                "rev" => {
                    let s = String::from_utf8(input).ok()?;
                    let mut out: Vec<String> =
                        s.lines().map(|l| l.chars().rev().collect()).collect();
                    if s.ends_with('\n') {
                        out.push(String::new());
                    }
                    Some(out.join("\n").into_bytes())
                }
                "tr" => {
                    let sets: Vec<&str> = texts
                        .iter()
                        .copied()
                        .filter(|t| !t.starts_with('-'))
                        .collect();
                    let s = String::from_utf8(input).ok()?;
                    Some(tr(&s, sets.first()?, sets.get(1)?).into_bytes())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// `cut -d D -f LIST` / `cut -c LIST`, `head -n N` / `head -N`, `tail -n N` / `tail -n +N` over
/// `s`; `None` for anything else (a file operand, other options).
fn select(name: &str, args: &[&str], s: &str) -> Option<String> {
    let trailing = s.ends_with('\n');
    let lines: Vec<&str> = s.strip_suffix('\n').unwrap_or(s).split('\n').collect();
    let join = |v: Vec<String>| {
        let mut out = v.join("\n");
        if trailing || !out.is_empty() {
            out.push('\n');
        }
        out
    };
    match name {
        "cut" => {
            let mut delim = '\t';
            let mut fields: Option<&str> = None;
            let mut chars: Option<&str> = None;
            let mut i = 0;
            while i < args.len() {
                let a = args[i];
                let (flag, rest) = if a.len() >= 2 && a.starts_with('-') {
                    (&a[..2], &a[2..])
                } else {
                    return None;
                };
                let val = if rest.is_empty() {
                    i += 1;
                    *args.get(i)?
                } else {
                    rest
                };
                match flag {
                    "-d" => delim = val.chars().next()?,
                    "-f" => fields = Some(val),
                    "-c" | "-b" => chars = Some(val),
                    _ => return None,
                }
                i += 1;
            }
            let picks = |list: &str, n: usize| -> Option<Vec<usize>> {
                let mut out = Vec::new();
                for part in list.split(',') {
                    let (a, b) = match part.split_once('-') {
                        Some((a, b)) => (
                            if a.is_empty() { 1 } else { a.parse().ok()? },
                            if b.is_empty() { n } else { b.parse().ok()? },
                        ),
                        None => {
                            let v: usize = part.parse().ok()?;
                            (v, v)
                        }
                    };
                    out.extend((a.max(1)..=b.min(n)).map(|k| k - 1));
                }
                out.sort_unstable();
                out.dedup();
                Some(out)
            };
            let mut out = Vec::new();
            for l in &lines {
                if let Some(list) = chars {
                    let cs: Vec<char> = l.chars().collect();
                    out.push(picks(list, cs.len())?.iter().map(|&k| cs[k]).collect());
                } else {
                    let list = fields?;
                    if !l.contains(delim) {
                        out.push((*l).to_owned());
                        continue;
                    }
                    let fs: Vec<&str> = l.split(delim).collect();
                    let picked: Vec<&str> = picks(list, fs.len())?.iter().map(|&k| fs[k]).collect();
                    out.push(picked.join(&delim.to_string()));
                }
            }
            Some(join(out))
        }
        _ => {
            let mut n: i64 = 10;
            let mut from_start = false;
            let mut i = 0;
            while i < args.len() {
                let a = args[i];
                let v = if a == "-n" {
                    i += 1;
                    *args.get(i)?
                } else if let Some(r) = a.strip_prefix("-n") {
                    r
                } else {
                    a.strip_prefix('-')
                        .filter(|r| r.chars().all(|c| c.is_ascii_digit()))?
                };
                if let Some(r) = v.strip_prefix('+') {
                    from_start = true;
                    n = r.parse().ok()?;
                } else {
                    n = v.parse().ok()?;
                }
                i += 1;
            }
            let len = lines.len() as i64;
            let (a, b) = match (name, from_start) {
                ("head", _) if n >= 0 => (0, n.min(len)),
                ("head", _) => (0, (len + n).max(0)),
                (_, true) => ((n - 1).clamp(0, len), len),
                _ => ((len - n).max(0), len),
            };
            let a = usize::try_from(a).ok()?;
            let b = usize::try_from(b).ok()?;
            Some(join(
                lines[a..b.max(a)].iter().map(|l| (*l).to_owned()).collect(),
            ))
        }
    }
}

/// `printf FORMAT ARGS…` for the common conversions; also reports escape obfuscation.
pub(crate) fn printf(args: &[&Word]) -> (String, Taint) {
    let mut taint = Taint::default();
    let Some(fmt) = args.first() else {
        return (String::new(), taint);
    };
    let (fmt, printable) = decode_escapes(&fmt.text, EscapeMode::Echo);
    if printable >= 2 {
        taint = taint.with(Taint::OBFUSCATED);
    }
    let rest: Vec<&str> = args[1..].iter().map(|w| w.text.as_str()).collect();
    let mut out = String::new();
    let mut ai = 0;
    let chars: Vec<char> = fmt.chars().collect();
    let mut rounds = 0;
    loop {
        let mut i = 0;
        let mut used = false;
        while i < chars.len() {
            if chars[i] != '%' || i + 1 >= chars.len() {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < chars.len() && (chars[j].is_ascii_digit() || "-+ #.".contains(chars[j])) {
                j += 1;
            }
            let conv = chars.get(j).copied().unwrap_or('%');
            let arg = rest.get(ai).copied();
            match conv {
                '%' => out.push('%'),
                's' => {
                    out.push_str(arg.unwrap_or(""));
                    ai += 1;
                    used = true;
                }
                'b' => {
                    let (t, p) = decode_escapes(arg.unwrap_or(""), EscapeMode::Echo);
                    if p >= 2 {
                        taint = taint.with(Taint::OBFUSCATED);
                    }
                    out.push_str(&t);
                    ai += 1;
                    used = true;
                }
                'c' => {
                    if let Some(c) = arg.and_then(|a| a.chars().next()) {
                        out.push(c);
                    }
                    ai += 1;
                    used = true;
                }
                'd' | 'i' | 'u' => {
                    out.push_str(&arg.and_then(parse_int).unwrap_or(0).to_string());
                    ai += 1;
                    used = true;
                }
                'x' | 'X' | 'o' => {
                    let v = arg.and_then(parse_int).unwrap_or(0);
                    out.push_str(&match conv {
                        'x' => format!("{v:x}"),
                        'X' => format!("{v:X}"),
                        _ => format!("{v:o}"),
                    });
                    ai += 1;
                    used = true;
                }
                _ => {}
            }
            i = j + 1;
        }
        rounds += 1;
        if !used || ai >= rest.len() || rounds > 64 {
            break;
        }
    }
    (out, taint)
}

fn parse_int(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(c) = s.strip_prefix('\'').or_else(|| s.strip_prefix('"')) {
        return c.chars().next().map(|c| c as i64);
    }
    if s.len() > 1 && s.starts_with('0') {
        return i64::from_str_radix(&s[1..], 8).ok();
    }
    s.parse().ok()
}

/// Standard and URL-safe base64; whitespace ignored, padding optional.
pub(crate) fn base64_decode(input: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let mut buf = 0u32;
    let mut bits = 0;
    for &c in input {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            b' ' | b'\n' | b'\r' | b'\t' => continue,
            _ => return None,
        };
        buf = (buf << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

pub(crate) fn hex_decode(input: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = input
        .iter()
        .copied()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    digits
        .chunks(2)
        .map(|p| {
            let s = std::str::from_utf8(p).ok()?;
            u8::from_str_radix(s, 16).ok()
        })
        .collect()
}

fn expand_set(set: &str) -> Vec<char> {
    let set = set
        .replace("[:upper:]", "A-Z")
        .replace("[:lower:]", "a-z")
        .replace("[:digit:]", "0-9")
        .replace("[:alpha:]", "a-zA-Z");
    let (set, _) = decode_escapes(&set, EscapeMode::Echo);
    let c: Vec<char> = set.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if i + 2 < c.len()
            && c[i + 1] == '-'
            && c[i] <= c[i + 2]
            && (c[i + 2] as u32 - c[i] as u32) < 512
        {
            let (a, b) = (c[i] as u32, c[i + 2] as u32);
            out.extend((a..=b).filter_map(char::from_u32));
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn tr(s: &str, set1: &str, set2: &str) -> String {
    let a = expand_set(set1);
    let b = expand_set(set2);
    if b.is_empty() {
        return s.to_owned();
    }
    s.chars()
        .map(|ch| match a.iter().position(|&x| x == ch) {
            Some(i) => *b.get(i).unwrap_or(&b[b.len() - 1]),
            None => ch,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoders_work() {
        assert_eq!(base64_decode(b"Y3VybA==").as_deref(), Some(&b"curl"[..]));
        assert_eq!(hex_decode(b"62756e").as_deref(), Some(&b"bun"[..]));
        assert_eq!(tr("phey", "a-zA-Z", "n-za-mN-ZA-M"), "curl");
        assert_eq!(
            select("cut", &["-d:", "-f2"], "a:b:c\n").as_deref(),
            Some("b\n")
        );
        assert_eq!(
            select("cut", &["-c", "1-4"], "curlx").as_deref(),
            Some("curl\n")
        );
        assert_eq!(
            select("head", &["-n", "1"], "a\nb\n").as_deref(),
            Some("a\n")
        );
        assert_eq!(
            select("tail", &["-n", "+2"], "a\nb\nc\n").as_deref(),
            Some("b\nc\n")
        );
        assert_eq!(select("cut", &["-f1", "file"], "a"), None);
        let w = |t: &str| Word {
            text: t.into(),
            ..Word::default()
        };
        let (out, taint) = printf(&[&w(r"\x62\x75%s"), &w("n")]);
        assert_eq!(out, "bun");
        assert!(taint.has(Taint::OBFUSCATED));
    }
}

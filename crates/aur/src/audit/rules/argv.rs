//! Command-line options as the programs themselves read them (getopt style): which words are
//! option values, which are operands. A write is judged by the operand it writes, never by a
//! sed expression, a mode or a suffix that happens to look like a path.

use crate::audit::shell::Word;

/// A parsed command line.
#[derive(Default)]
pub(super) struct Parsed<'a> {
    /// Options seen: short ones as `-x`, long ones without their `=value`.
    pub opts: Vec<String>,
    /// Options with their values.
    pub values: Vec<(String, &'a Word)>,
    /// Options whose value was glued to them (`-Dm644`, `--mode=644`, `-i.bak`).
    pub glued: Vec<(String, String)>,
    pub operands: Vec<&'a Word>,
}

impl<'a> Parsed<'a> {
    pub(super) fn has(&self, opt: &str) -> bool {
        self.opts.iter().any(|o| o == opt)
    }
    /// The value of the first of `opts`, separate or glued.
    pub(super) fn value(&self, opts: &[&str]) -> Option<String> {
        self.values
            .iter()
            .find(|(o, _)| opts.contains(&o.as_str()))
            .map(|(_, w)| w.text.clone())
            .or_else(|| {
                self.glued
                    .iter()
                    .find(|(o, _)| opts.contains(&o.as_str()))
                    .map(|(_, v)| v.clone())
            })
    }
    pub(super) fn value_word(&self, opts: &[&str]) -> Option<&'a Word> {
        self.values
            .iter()
            .find(|(o, _)| opts.contains(&o.as_str()))
            .map(|(_, w)| *w)
    }
}

/// Parses `args`: `short` lists the short options that take a value (`"mogtS"`), `long` the
/// long ones (`["--mode", …]`). `optional` short options take a value only when glued (`-i`
/// of sed). After `--` everything is an operand.
pub(super) fn parse<'a>(
    args: &'a [Word],
    short: &str,
    optional: &str,
    long: &[&str],
) -> Parsed<'a> {
    let mut p = Parsed::default();
    let mut i = 0;
    let mut ended = false;
    while i < args.len() {
        let a = &args[i];
        let t = a.text.as_str();
        i += 1;
        if ended || t == "-" || !t.starts_with('-') {
            p.operands.push(a);
            continue;
        }
        if t == "--" {
            ended = true;
            continue;
        }
        if let Some(l) = t.strip_prefix("--") {
            let (name, val) = match l.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_owned())),
                None => (format!("--{l}"), None),
            };
            p.opts.push(name.clone());
            match val {
                Some(v) => p.glued.push((name, v)),
                None if long.contains(&name.as_str()) => {
                    if let Some(v) = args.get(i) {
                        p.values.push((name, v));
                        i += 1;
                    }
                }
                None => {}
            }
            continue;
        }
        let chars: Vec<char> = t[1..].chars().collect();
        for (k, c) in chars.iter().enumerate() {
            let opt = format!("-{c}");
            p.opts.push(opt.clone());
            let rest: String = chars[k + 1..].iter().collect();
            if short.contains(*c) {
                if !rest.is_empty() {
                    p.glued.push((opt, rest));
                } else if let Some(v) = args.get(i) {
                    p.values.push((opt, v));
                    i += 1;
                }
                break;
            }
            if optional.contains(*c) {
                if !rest.is_empty() {
                    p.glued.push((opt, rest));
                }
                break;
            }
        }
    }
    p
}

/// The files `sed` edits in place (none without `-i`): the script is the first operand unless
/// `-e`/`-f` gave it, in either order (`sed -i -e EXPR FILE`, `sed -E -e EXPR -i FILE`).
pub(super) fn sed_in_place(args: &[Word]) -> Vec<&Word> {
    let p = parse(
        args,
        "efl",
        "i",
        &["--expression", "--file", "--line-length"],
    );
    let in_place = p.has("-i") || p.has("--in-place");
    if !in_place {
        return Vec::new();
    }
    let script_given = p.has("-e") || p.has("-f") || p.has("--expression") || p.has("--file");
    p.operands
        .into_iter()
        .skip(usize::from(!script_given))
        .collect()
}

/// The files `perl -i -pe CODE FILE…` edits in place.
pub(super) fn perl_in_place(args: &[Word]) -> Vec<&Word> {
    let p = parse(args, "eEIMmx", "i", &[]);
    if !p.has("-i") {
        return Vec::new();
    }
    let code_given = p.has("-e") || p.has("-E");
    p.operands
        .into_iter()
        .skip(usize::from(!code_given))
        .collect()
}

/// `install`'s options that take a value.
pub(super) fn install(args: &[Word]) -> Parsed<'_> {
    parse(
        args,
        "mogtS",
        "",
        &[
            "--mode",
            "--owner",
            "--group",
            "--target-directory",
            "--suffix",
        ],
    )
}

/// `cp`, `mv`, `ln`: `-t DIR` and `-S SUFFIX` take values.
pub(super) fn copy_like(args: &[Word]) -> Parsed<'_> {
    parse(args, "tS", "", &["--target-directory", "--suffix"])
}

/// Is `m` an octal mode (`755`, `0644`, `4755`)?
pub(super) fn octal(m: &str) -> Option<u32> {
    if m.is_empty() || m.len() > 5 || !m.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
        return None;
    }
    u32::from_str_radix(m, 8).ok()
}

/// What a `chmod` mode (octal or symbolic) sets: (world-writable, setuid, setgid, sticky).
pub(super) fn mode_bits(m: &str) -> (bool, bool, bool, bool) {
    if let Some(v) = octal(m) {
        return (
            v & 0o002 != 0,
            v & 0o4000 != 0,
            v & 0o2000 != 0,
            v & 0o1000 != 0,
        );
    }
    let (mut ww, mut su, mut sg, mut st) = (false, false, false, false);
    for clause in m.split(',') {
        let Some(op_at) = clause.find(['+', '=']) else {
            continue;
        };
        if clause[op_at..].starts_with('-') {
            continue;
        }
        let who = &clause[..op_at];
        let perms = &clause[op_at + 1..];
        let all = who.is_empty() || who.contains('a');
        let (u, g, o) = (
            all || who.contains('u'),
            all || who.contains('g'),
            all || who.contains('o'),
        );
        // `+w` without who follows the umask, which keeps others out: not world-writable.
        if perms.contains('w') && (who.contains('o') || who.contains('a')) {
            ww = true;
        }
        if perms.contains('s') {
            su |= u;
            sg |= g;
        }
        if perms.contains('t') {
            st |= o || all;
        }
    }
    (ww, su, sg, st)
}

//! Omarchy's usage strings (`args` in `omarchy commands --json`): what a route takes.
//!
//! The real dispatcher stores each script's `# omarchy:args=` header as written, e.g.
//! `<theme-name>`, `[--no-osd] <up|down|cycle|off|restore>`, `<packages...>`,
//! `[--webcam-device=<device>]`, `[-i|--icon <icon>]`. We read the common grammar:
//! `<x>` a required value, `[x]` an optional one, `a|b` choices (closed when every choice is a
//! plain word), `...` any number, `-f`/`--flag` flags (with `=<v>` or ` <v>` a value), a bare
//! word a required value. A usage with alternatives at the top (`use <id> | reset`), groups in
//! parentheses or anything else we cannot read is `Unreadable`: the route is still listed and
//! runs with its values passed as given, asked as `act` at least — but with no flags: an
//! argument that starts with `-` reaches a script only when a usage archgate read lists it
//! (every usage archgate cannot read passes no flags; `check`).

use serde::Serialize;

/// One value slot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// The name the usage gives (`theme-name`), or the choices joined by `|`.
    pub name: String,
    /// Whether it must be given.
    pub required: bool,
    /// Whether it takes the rest of the arguments.
    pub variadic: bool,
    /// The only values accepted, when the usage lists them all as plain words.
    pub choices: Option<Vec<String>>,
}

/// One flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// Every spelling (`-i`, `--icon`).
    pub names: Vec<String>,
    /// Whether it takes a value (`--icon <icon>`, `--resolution=<size>`).
    pub takes_value: bool,
}

/// What a route takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Usage {
    /// No arguments.
    Nothing,
    /// Positional slots and flags we understood.
    Read {
        /// Values, in order.
        slots: Vec<Slot>,
        /// Flags, anywhere.
        flags: Vec<Flag>,
    },
    /// A usage string we could not read: values pass as given, flags never.
    Unreadable {
        /// The usage as written.
        text: String,
    },
}

/// Why arguments do not fit a usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misfit {
    /// What is wrong, in words.
    pub message: String,
    /// The values that would fit, for near misses.
    pub expected: Vec<String>,
}

fn is_plain_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "-_.".contains(c))
        && !s.starts_with('-')
}

/// Splits at top-level spaces, keeping bracketed groups whole. `None` on unbalanced brackets.
fn items(text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth: i32 = 0;
    for c in text.chars() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        if c.is_whitespace() && depth == 0 {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if depth != 0 {
        return None;
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    Some(out)
}

fn strip(item: &str, open: char, close: char) -> Option<&str> {
    item.strip_prefix(open)?.strip_suffix(close)
}

/// A choice list or a name: `a|b|c` → choices when all are plain words.
fn slot(inner: &str, required: bool) -> Option<Slot> {
    if inner.contains(['<', '[', '(', ' ']) {
        return None;
    }
    let (inner, variadic) = match inner.strip_suffix("...") {
        Some(i) => (i, true),
        None => (inner, false),
    };
    if inner.is_empty() {
        return None;
    }
    let alternatives: Vec<&str> = inner.split('|').collect();
    let choices = (alternatives.len() > 1 && alternatives.iter().all(|a| is_plain_word(a)))
        .then(|| alternatives.iter().map(|a| (*a).to_owned()).collect());
    Some(Slot {
        name: inner.to_owned(),
        required,
        variadic,
        choices,
    })
}

/// `--flag`, `-a|--all`, `--name=<v>`, `--name <v>` (the value may be in the same brackets).
fn flag(inner: &str) -> Option<Flag> {
    let mut words = inner.split_whitespace();
    let head = words.next()?;
    let rest: Vec<&str> = words.collect();
    let (names_part, inline_value) = match head.split_once('=') {
        Some((n, _)) => (n, true),
        None => (head, false),
    };
    let names: Vec<String> = names_part.split('|').map(str::to_owned).collect();
    if !names.iter().all(|n| n.starts_with('-') && n.len() > 1) {
        return None;
    }
    let takes_value = inline_value || !rest.is_empty();
    if rest.len() > 1 || rest.iter().any(|r| strip(r, '<', '>').is_none()) {
        return None;
    }
    Some(Flag { names, takes_value })
}

impl Usage {
    /// Reads a usage string as the registry gives it.
    pub fn parse(text: &str) -> Usage {
        let text = text.trim();
        if text.is_empty() {
            return Usage::Nothing;
        }
        let unreadable = || Usage::Unreadable {
            text: text.to_owned(),
        };
        let Some(items) = items(text) else {
            return unreadable();
        };
        let mut slots = Vec::new();
        let mut flags = Vec::new();
        let mut iter = items.iter().peekable();
        while let Some(item) = iter.next() {
            if item == "|" || item.starts_with('(') {
                return unreadable();
            }
            if let Some(inner) = strip(item, '[', ']') {
                if inner == "..." || inner == "options" {
                    slots.push(Slot {
                        name: inner.to_owned(),
                        required: false,
                        variadic: true,
                        choices: None,
                    });
                } else if inner.starts_with('-') {
                    match flag(inner) {
                        Some(f) => flags.push(f),
                        None => return unreadable(),
                    }
                } else if let Some(s) = slot(inner, false) {
                    slots.push(s);
                } else if let Some(group) = items_of_group(inner) {
                    // `[core path-to-game]`: optional values given together.
                    slots.extend(group);
                } else {
                    return unreadable();
                }
            } else if let Some(inner) = strip(item, '<', '>') {
                match slot(inner, true) {
                    Some(s) => slots.push(s),
                    None => return unreadable(),
                }
            } else if item.starts_with('-') {
                // A flag written bare; its value may follow as `<v>`.
                let mut spelled = item.clone();
                if let Some(next) = iter.peek()
                    && next.starts_with('<')
                {
                    spelled.push(' ');
                    spelled.push_str(next);
                    iter.next();
                }
                match flag(&spelled) {
                    Some(f) => flags.push(f),
                    None => return unreadable(),
                }
            } else if let Some(s) = slot(item, true) {
                // A bare name (`label paths formats`) is a required value.
                slots.push(s);
            } else {
                return unreadable();
            }
        }
        // A value after a variadic one, or a required one after an optional one, cannot be told
        // apart from its neighbours: read it as unreadable rather than guess.
        let variadic_at = slots.iter().position(|s| s.variadic);
        if variadic_at.is_some_and(|i| i + 1 != slots.len()) {
            return unreadable();
        }
        if slots.windows(2).any(|w| !w[0].required && w[1].required) {
            return unreadable();
        }
        Usage::Read { slots, flags }
    }

    /// Whether the usage was read.
    pub fn is_readable(&self) -> bool {
        !matches!(self, Usage::Unreadable { .. })
    }

    /// Checks `args` against the usage: the number of values, closed choices, known flags.
    /// An argument that starts with `-` and is not one of the route's flags is refused (it
    /// would reach the script as an option nobody listed), except a negative number. A usage
    /// archgate could not read lists no flags it can trust, so every argument starting with
    /// `-` is refused there, a negative number too (the script may read it as an option).
    pub fn check(&self, args: &[String]) -> Result<(), Misfit> {
        let (slots, flags) = match self {
            Usage::Unreadable { text } => {
                return match args.iter().find(|a| a.starts_with('-')) {
                    Some(a) => Err(Misfit {
                        message: format!(
                            "{a:?} starts with '-': archgate cannot read this route's usage \
                             ({text:?}), so it passes no flags (give values only)"
                        ),
                        expected: Vec::new(),
                    }),
                    None => Ok(()),
                };
            }
            Usage::Nothing => (&[][..], &[][..]),
            Usage::Read { slots, flags } => (&slots[..], &flags[..]),
        };
        let mut values = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let numeric = a
                .strip_prefix('-')
                .map(|n| n.trim_end_matches('%'))
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if a.starts_with('-') && !numeric {
                let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
                let Some(f) = flags.iter().find(|f| f.names.iter().any(|n| n == name)) else {
                    let known: Vec<String> =
                        flags.iter().flat_map(|f| f.names.iter().cloned()).collect();
                    return Err(Misfit {
                        message: if known.is_empty() {
                            format!("{a:?} is not an argument this route takes (it has no flags)")
                        } else {
                            format!("{a:?} is not one of this route's flags")
                        },
                        expected: known,
                    });
                };
                // `--flag=VALUE` only for a flag the usage gives a value: glued to one that takes
                // none, it is no spelling of that flag, and a script parsing `case $1 in --force)
                // … *) name=$1` takes it for a value with a leading `-` (attack 33 F7).
                if !f.takes_value && a.contains('=') {
                    return Err(Misfit {
                        message: format!("{name} takes no value ({a:?})"),
                        expected: vec![name.to_owned()],
                    });
                }
                if f.takes_value && !a.contains('=') {
                    i += 1;
                    if i >= args.len() {
                        return Err(Misfit {
                            message: format!("{name} needs a value"),
                            expected: Vec::new(),
                        });
                    }
                }
            } else {
                values.push(a);
            }
            i += 1;
        }
        let required = slots.iter().filter(|s| s.required).count();
        let variadic = slots.last().is_some_and(|s| s.variadic);
        let names = || slots.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        if values.len() < required {
            return Err(Misfit {
                message: format!(
                    "needs {required} value(s) ({}), got {}",
                    names().join(", "),
                    values.len()
                ),
                expected: names(),
            });
        }
        if !variadic && values.len() > slots.len() {
            return Err(Misfit {
                message: format!(
                    "takes at most {} value(s), got {}",
                    slots.len(),
                    values.len()
                ),
                expected: names(),
            });
        }
        for (v, s) in values.iter().zip(slots) {
            if let Some(choices) = &s.choices
                && !choices.iter().any(|c| c == *v)
            {
                return Err(Misfit {
                    message: format!("{v:?} is not one of {}", choices.join(", ")),
                    expected: choices.clone(),
                });
            }
        }
        Ok(())
    }

    /// Which slot each value argument fills, as `(slot, index in args)`, for resolving names
    /// (themes, files) before the question. Flags and their values are skipped; an unreadable
    /// usage fills nothing.
    pub fn values(&self, args: &[String]) -> Vec<(&Slot, usize)> {
        let Usage::Read { slots, flags } = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut slot = 0;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let name = a.split_once('=').map_or(a.as_str(), |(n, _)| n);
            if let Some(f) = flags.iter().find(|f| f.names.iter().any(|n| n == name)) {
                if f.takes_value && !a.contains('=') {
                    i += 1;
                }
            } else if let Some(s) = slots.get(slot) {
                out.push((s, i));
                if !s.variadic {
                    slot += 1;
                }
            }
            i += 1;
        }
        out
    }

    /// The value slots, for resolution of names (themes, files).
    pub fn slots(&self) -> &[Slot] {
        match self {
            Usage::Read { slots, .. } => slots,
            _ => &[],
        }
    }
}

/// `core path-to-game` inside one pair of brackets: optional plain values.
fn items_of_group(inner: &str) -> Option<Vec<Slot>> {
    let parts = items(inner)?;
    if parts.len() < 2 {
        return None;
    }
    parts
        .iter()
        .map(|p| {
            if p.contains(['<', '[', '(', '|']) || p.starts_with('-') {
                None
            } else {
                slot(p, false)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    // Usage strings in the shape Omarchy 4's script headers write them (`# omarchy:args=`).
    #[test]
    fn reads_the_common_grammar() {
        assert_eq!(Usage::parse(""), Usage::Nothing);
        let u = Usage::parse("<theme-name>");
        assert!(u.check(&args(&["tokyo-night"])).is_ok());
        assert!(u.check(&args(&[])).is_err());
        assert!(u.check(&args(&["a", "b"])).is_err());

        let u = Usage::parse("[--no-osd] <up|down|cycle|off|restore>");
        assert!(u.check(&args(&["--no-osd", "up"])).is_ok());
        assert!(
            u.check(&args(&["sideways"]))
                .unwrap_err()
                .expected
                .contains(&"cycle".into())
        );
        assert!(u.check(&args(&["--yes", "up"])).is_err());

        let u = Usage::parse("<packages...>");
        assert!(u.check(&args(&["a", "b", "c"])).is_ok());
        assert!(u.check(&args(&[])).is_err());

        let u = Usage::parse("<raise|lower|mute-toggle|+N|-N>");
        assert!(
            u.check(&args(&["-5"])).is_ok(),
            "open choices take a negative number"
        );
        assert!(u.check(&args(&["+5"])).is_ok());

        let u = Usage::parse("[-i|--icon <icon>] [-m|--message <text>] [-p|--progress <0-100>]");
        assert!(u.check(&args(&["-m", "hello", "--progress", "40"])).is_ok());
        assert!(u.check(&args(&["-m"])).is_err());

        let u = Usage::parse("[--webcam-device=<device>] [--with-webcam]");
        assert!(
            u.check(&args(&["--webcam-device=/dev/video0", "--with-webcam"]))
                .is_ok()
        );
        // A value glued to a flag that takes none is no spelling of it (attack 33 F7).
        let misfit = u
            .check(&args(&["--with-webcam=1"]))
            .expect_err("a value for a flag that takes none");
        assert!(
            misfit.message.contains("takes no value"),
            "{}",
            misfit.message
        );
        let u = Usage::parse("[--force] <name>");
        assert!(u.check(&args(&["--force", "n"])).is_ok());
        assert!(u.check(&args(&["--force=1", "n"])).is_err());

        let u = Usage::parse("--history-index <index>");
        assert!(u.check(&args(&["--history-index", "3"])).is_ok());

        let u = Usage::parse("[core path-to-game]");
        assert!(u.check(&args(&["snes", "/x/y.sfc"])).is_ok());
        assert!(u.check(&args(&[])).is_ok());
    }

    #[test]
    fn what_it_cannot_read_passes_values_but_no_flags() {
        // The last is in the shape of a real Omarchy 4 usage (alternatives at the top, a flag
        // in one of them); our own words.
        for text in [
            "use <id> | reset | defaults",
            "[--file <colors.toml>] (--all | --raw | <key> [fallback])",
            "<show [--json]|focus>",
            "[-x|--example] | <minutes> [note] | list [-j|--json] | clear",
        ] {
            let u = Usage::parse(text);
            assert!(!u.is_readable(), "{text}");
            assert!(u.check(&args(&["values", "pass"])).is_ok(), "{text}");
            assert!(u.check(&args(&[])).is_ok(), "{text}");
            for bad in [
                &["--anything", "goes"][..],
                &["list", "--json"],
                &["-x"],
                &["5", "-j"],
                &["--"],
                &["-"],
                &["-5"],
                &["--file=/x"],
            ] {
                let e = u.check(&args(bad)).unwrap_err();
                assert!(
                    e.message.contains("passes no flags"),
                    "{text} {bad:?}: {}",
                    e.message
                );
            }
        }
    }

    #[test]
    fn arguments_of_any_text_are_judged_without_panicking() {
        let u = Usage::parse("<raise|lower|+N|-N>");
        for a in ["\u{202e}txt.exe", "-\u{202e}", "-", "--", "-é", "%", "-%"] {
            let _ = u.check(&args(&[a]));
        }
        assert!(u.check(&args(&["-"])).is_err(), "a lone dash is no number");
    }

    #[test]
    fn a_dash_argument_to_a_route_without_flags_is_refused() {
        let u = Usage::parse("<theme-name>");
        let e = u.check(&args(&["--help"])).unwrap_err();
        assert!(e.message.contains("no flags"), "{}", e.message);
        assert!(Usage::Nothing.check(&args(&["-x"])).is_err());
        assert!(Usage::Nothing.check(&args(&["x"])).is_err());
    }
}

//! Text an agent wrote, made safe to show a person: every renderer (`archgate approvals`, `show`,
//! `log`, desktop notifications, the approval page) passes agent-controlled strings through
//! [`for_terminal`] before they reach a screen.
//!
//! A route, a tool name or an argument is written by an agent. Raw, an ESC sequence in it moves
//! the cursor and draws a fake row over a real one (`\x1b[1A\x1b[2K`), a carriage return
//! overwrites the start of the line, a bidi override (U+202E) shows `su` commands as something
//! else, and zero-width characters hide words. So every character that a terminal or a text
//! layout *interprets* instead of *drawing* is written as a visible escape in Rust's own
//! notation: `\x1b`, `\r`, `\n`, `\u{202e}`. A backslash is doubled, so an agent cannot write
//! the text `\x1b` and have it read as an escaped character that is not there.
//!
//! [`check_route_words`] is the stricter rule for route words at admission: printable, no
//! whitespace, bounded.

use std::borrow::Cow;
use std::fmt::Write as _;

/// At most this many words in a route.
pub const MAX_ROUTE_WORDS: usize = 16;
/// At most this many characters in one route word.
pub const MAX_ROUTE_WORD_CHARS: usize = 64;

/// Characters a text layout applies rather than draws: bidi embeddings, overrides, isolates and
/// marks; zero-width and invisible formatting; line and paragraph separators; blank fillers; tag
/// characters; noncharacters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}'                  // soft hyphen
        | '\u{034F}'                // combining grapheme joiner
        | '\u{061C}'                // Arabic letter mark
        | '\u{070F}'                // Syriac abbreviation mark
        | '\u{115F}' | '\u{1160}'   // Hangul fillers
        | '\u{17B4}' | '\u{17B5}'   // Khmer inherent vowels (invisible)
        | '\u{180B}'..='\u{180F}'   // Mongolian variation selectors and vowel separator
        | '\u{200B}'..='\u{200F}'   // zero width space/joiners, LRM, RLM
        | '\u{2028}' | '\u{2029}'   // line and paragraph separators
        | '\u{202A}'..='\u{202E}'   // LRE, RLE, PDF, LRO, RLO
        | '\u{2060}'..='\u{206F}'   // word joiner, invisible operators, LRI, RLI, FSI, PDI, deprecated
        | '\u{3164}'                // Hangul filler
        | '\u{FE00}'..='\u{FE0F}'   // variation selectors
        | '\u{FEFF}'                // zero width no-break space / BOM
        | '\u{FFA0}'                // halfwidth Hangul filler
        | '\u{FFF9}'..='\u{FFFB}'   // interlinear annotation
        | '\u{FFFE}' | '\u{FFFF}'   // noncharacters
        | '\u{1D173}'..='\u{1D17A}' // musical formatting
        | '\u{E0000}'..='\u{E0FFF}' // tags and variation selectors supplement
    )
}

/// Whether `c` is shown escaped: C0 and C1 controls (ESC, CR, LF, TAB, BS, BEL, DEL, CSI …),
/// bidi and invisible formatting characters, and the backslash (doubled).
pub fn needs_escape(c: char) -> bool {
    c == '\\' || c.is_control() || is_invisible_format(c)
}

fn escape_into(out: &mut String, c: char) {
    match c {
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

/// `s` with every character that a terminal or a text layout would interpret written as a
/// visible escape (`\x1b`, `\r`, `\u{202e}`, `\\`); borrowed when nothing needed escaping.
///
/// The result never contains a control character, a bidi or invisible formatting character, so
/// it cannot move a cursor, break a line, reorder text or hide a word — on a terminal, in a
/// notification or on a web page.
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(needs_escape) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 16);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if needs_escape(c) {
            escape_into(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`for_terminal`], then cut to at most `max` characters (on a character boundary, never inside
/// an escape) with `…` when something was left out.
pub fn for_terminal_cut(s: &str, max: usize) -> String {
    let shown = for_terminal(s);
    if shown.chars().count() <= max {
        return shown.into_owned();
    }
    let mut out = String::new();
    let mut n = 0;
    for c in s.chars() {
        let mut piece = String::new();
        if needs_escape(c) {
            escape_into(&mut piece, c);
        } else {
            piece.push(c);
        }
        let len = piece.chars().count();
        if n + len > max.saturating_sub(1) {
            break;
        }
        n += len;
        out.push_str(&piece);
    }
    out.push('…');
    out
}

/// Text already made safe (by [`for_terminal`] or [`display_value`]) cut to at most `max`
/// characters, with `…` when something was left out.
pub fn cut(shown: &str, max: usize) -> String {
    if shown.chars().count() <= max {
        return shown.to_owned();
    }
    let mut out: String = shown.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A JSON value for display: every string in it (object keys too) through [`for_terminal`].
pub fn json_for_display(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::String(s) => Value::String(for_terminal(s).into_owned()),
        Value::Array(a) => Value::Array(a.iter().map(json_for_display).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (for_terminal(k).into_owned(), json_for_display(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A JSON value as a person reads it on one line: strings always quoted (`"…"`, an inner `"` as
/// `\"`) and escaped by [`for_terminal`], so `["a", "b"]` and `["a\", \"b"]` never look alike and
/// leading or trailing spaces stay visible; numbers, booleans and null as JSON; arrays and
/// objects with their items so rendered.
pub fn display_value(v: &serde_json::Value) -> String {
    use serde_json::Value;
    fn quoted(s: &str) -> String {
        format!("\"{}\"", for_terminal(s).replace('"', "\\\""))
    }
    match v {
        Value::String(s) => quoted(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(display_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", quoted(k), display_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

/// The arguments of a call as `(name, value)` lines for a person: an object's keys (escaped) with
/// [`display_value`]; anything else as one line named `arguments`.
pub fn display_args(args: &serde_json::Value) -> Vec<(String, String)> {
    match args {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| (for_terminal(k).into_owned(), display_value(v)))
            .collect(),
        serde_json::Value::Null => Vec::new(),
        other => vec![("arguments".to_owned(), display_value(other))],
    }
}

/// JSON text (as serde_json writes it) made safe for a terminal while staying valid JSON: every
/// character [`for_terminal`] would escape becomes a `\uXXXX` escape (serde_json leaves DEL, C1
/// controls, bidi and invisible characters raw), CR and TAB between tokens become spaces.
pub fn json_for_terminal(json: &str) -> Cow<'_, str> {
    let unsafe_char = |c: char| c != '\\' && c != '\n' && needs_escape(c);
    if !json.contains(unsafe_char) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '\r' | '\t' => out.push(' '),
            c if unsafe_char(c) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{:04x}", u);
                }
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `text` cut into lines of at most `width` characters (never inside an escape that
/// [`for_terminal`] wrote, since it is cut by characters of already-escaped text; a person
/// reads a cut escape across the line break).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(width).map(|c| c.iter().collect()).collect()
}

/// Why a route was refused at admission.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteWordError {
    #[error("a route has at most {MAX_ROUTE_WORDS} words; this one has {0}")]
    TooManyWords(usize),
    #[error("route word {index} is empty")]
    Empty { index: usize },
    #[error(
        "route word {index} is longer than {MAX_ROUTE_WORD_CHARS} characters ({chars} characters)"
    )]
    TooLong { index: usize, chars: usize },
    #[error(
        "route word {index} ({shown}) contains {what} {code}; route words are printable, without spaces"
    )]
    Unprintable {
        index: usize,
        /// The word as it may be shown (escaped, cut).
        shown: String,
        what: &'static str,
        /// The character as `U+XXXX`.
        code: String,
    },
}

impl RouteWordError {
    pub fn kind(&self) -> &'static str {
        "invalid_route"
    }
}

/// Checks route words at admission: at most [`MAX_ROUTE_WORDS`] words, each non-empty, at most
/// [`MAX_ROUTE_WORD_CHARS`] characters, and made of printable characters only — no control
/// character, no bidi or invisible formatting character, no whitespace of any script. Pure.
pub fn check_route_words<S: AsRef<str>>(words: &[S]) -> Result<(), RouteWordError> {
    if words.len() > MAX_ROUTE_WORDS {
        return Err(RouteWordError::TooManyWords(words.len()));
    }
    for (index, w) in words.iter().enumerate() {
        let w = w.as_ref();
        if w.is_empty() {
            return Err(RouteWordError::Empty { index });
        }
        let chars = w.chars().count();
        if chars > MAX_ROUTE_WORD_CHARS {
            return Err(RouteWordError::TooLong { index, chars });
        }
        let bad = w.chars().find_map(|c| {
            let what = if c.is_control() {
                "the control character"
            } else if is_invisible_format(c) {
                "the invisible or bidi character"
            } else if c.is_whitespace() {
                "the space"
            } else {
                return None;
            };
            Some((what, c))
        });
        if let Some((what, c)) = bad {
            return Err(RouteWordError::Unprintable {
                index,
                shown: for_terminal_cut(w, 80),
                what,
                code: format!("U+{:04X}", c as u32),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One line per case: what goes in, what a person sees.
    #[test]
    fn every_interpreted_character_is_shown_as_an_escape() {
        let cases: &[(&str, &str)] = &[
            ("xdg-open https://x", "xdg-open https://x"),
            ("a\u{1b}[2K\rb", "a\\x1b[2K\\rb"),
            ("\u{1b}[1A\u{1b}[2Kfake row", "\\x1b[1A\\x1b[2Kfake row"),
            ("ring\u{7}", "ring\\x07"),
            ("back\u{8}\u{8}", "back\\x08\\x08"),
            ("del\u{7f}", "del\\x7f"),
            ("nul\u{0}", "nul\\x00"),
            ("two\nlines", "two\\nlines"),
            ("tab\there", "tab\\there"),
            ("csi\u{9b}31m", "csi\\u{9b}31m"),
            ("next line\u{85}", "next line\\u{85}"),
            ("osc\u{1b}]0;title\u{7}", "osc\\x1b]0;title\\x07"),
            ("su\u{202e}nepo-gdx", "su\\u{202e}nepo-gdx"),
            (
                "\u{202a}\u{202b}\u{202c}\u{202d}",
                "\\u{202a}\\u{202b}\\u{202c}\\u{202d}",
            ),
            (
                "\u{2066}\u{2067}\u{2068}\u{2069}",
                "\\u{2066}\\u{2067}\\u{2068}\\u{2069}",
            ),
            ("\u{200e}\u{200f}\u{61c}", "\\u{200e}\\u{200f}\\u{61c}"),
            ("zero\u{200b}width", "zero\\u{200b}width"),
            ("bom\u{feff}", "bom\\u{feff}"),
            ("para\u{2029}sep", "para\\u{2029}sep"),
            ("tag\u{e0041}", "tag\\u{e0041}"),
            ("a\\x1b", "a\\\\x1b"),
            ("é ü 日本 🦀", "é ü 日本 🦀"),
            ("", ""),
        ];
        for (given, shown) in cases {
            assert_eq!(for_terminal(given), *shown, "{given:?}");
            assert!(
                !for_terminal(given)
                    .chars()
                    .any(|c| c.is_control() || is_invisible_format(c)),
                "{given:?}"
            );
        }
        assert!(matches!(for_terminal("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn cutting_never_splits_an_escape_and_says_so() {
        let s = format!("{}\u{1b}[2K", "a".repeat(10));
        let cut = for_terminal_cut(&s, 12);
        assert_eq!(cut, "aaaaaaaaaa…");
        assert_eq!(for_terminal_cut("short", 12), "short");
        let long = "x".repeat(100);
        let cut = for_terminal_cut(&long, 20);
        assert_eq!(cut.chars().count(), 20);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn json_strings_and_keys_are_escaped() {
        let v = serde_json::json!({"k\u{1b}": ["\u{202e}x", 1, null], "n": 2});
        let d = json_for_display(&v);
        assert_eq!(
            d,
            serde_json::json!({"k\\x1b": ["\\u{202e}x", 1, null], "n": 2})
        );
    }

    #[test]
    fn values_are_shown_quoted_so_pieces_never_pass_for_others() {
        use serde_json::json;
        let cases = [
            (json!("--help; rm -rf ~"), r#""--help; rm -rf ~""#),
            (json!(["a", "b"]), r#"["a", "b"]"#),
            (json!(["a\", \"b"]), r#"["a\", \"b"]"#),
            (json!(" padded "), r#"" padded ""#),
            (json!("\u{1b}[1A\u{202e}x"), r#""\x1b[1A\u{202e}x""#),
            (json!({"k": [1, true, null]}), r#"{"k": [1, true, null]}"#),
            (json!(5), "5"),
        ];
        for (v, shown) in cases {
            assert_eq!(display_value(&v), shown, "{v}");
        }
        let args = display_args(&json!({"text": "x\ny", "n": 2}));
        assert_eq!(
            args,
            vec![
                ("n".into(), "2".into()),
                ("text".into(), r#""x\ny""#.into())
            ]
        );
    }

    #[test]
    fn json_stays_json_and_shows_no_bidi_or_control() {
        let v = serde_json::json!({"route": "su\u{202e}x\u{7f}\u{85}\u{1b}", "n": "\\"});
        let text = serde_json::to_string(&v).unwrap();
        assert!(text.contains('\u{202e}'), "serde_json leaves bidi raw");
        let safe = json_for_terminal(&text);
        assert!(
            !safe.chars().any(|c| c != '\\' && needs_escape(c)),
            "{safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, v);
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let back: serde_json::Value = serde_json::from_str(&json_for_terminal(&pretty)).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn wrapping_keeps_every_character() {
        let s = "x".repeat(250);
        let lines = wrap(&s, 100);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines.concat(), s);
        assert_eq!(wrap("", 10), vec![String::new()]);
    }

    /// One line per case: the route words, and whether admission takes them.
    #[test]
    fn route_words_are_printable_and_bounded() {
        let long = "a".repeat(MAX_ROUTE_WORD_CHARS + 1);
        let longest = "a".repeat(MAX_ROUTE_WORD_CHARS);
        let many: Vec<String> = (0..=MAX_ROUTE_WORDS).map(|i| format!("w{i}")).collect();
        let most: Vec<String> = (0..MAX_ROUTE_WORDS).map(|i| format!("w{i}")).collect();
        let cases: Vec<(Vec<&str>, Result<(), &str>)> = vec![
            (vec!["theme", "set"], Ok(())),
            (vec!["toggle", "nightlight"], Ok(())),
            (vec!["font", "set", "--help;"], Ok(())),
            (vec!["thème", "日本"], Ok(())),
            (vec![longest.as_str()], Ok(())),
            (most.iter().map(String::as_str).collect(), Ok(())),
            (vec![], Ok(())),
            (vec![long.as_str()], Err("longer than")),
            (
                many.iter().map(String::as_str).collect(),
                Err("at most 16 words"),
            ),
            (vec!["theme", ""], Err("is empty")),
            (vec!["theme\u{1b}[2K\r"], Err("control character")),
            (vec!["x\u{1b}[1A"], Err("control character")),
            (vec!["a\nb"], Err("control character")),
            (vec!["a\tb"], Err("control character")),
            (vec!["bell\u{7}"], Err("control character")),
            (vec!["c1\u{9b}"], Err("control character")),
            (vec!["su\u{202e}"], Err("bidi")),
            (vec!["\u{2066}x"], Err("bidi")),
            (vec!["\u{200f}x"], Err("bidi")),
            (vec!["\u{61c}x"], Err("bidi")),
            (vec!["zero\u{200b}width"], Err("bidi")),
            (vec!["two words"], Err("the space")),
            (vec!["nbsp\u{a0}x"], Err("the space")),
            (vec!["ideographic\u{3000}space"], Err("the space")),
        ];
        for (words, want) in cases {
            let got = check_route_words(&words);
            match (want, &got) {
                (Ok(()), Ok(())) => {}
                (Err(needle), Err(e)) => {
                    let msg = e.to_string();
                    assert!(msg.contains(needle), "{words:?}: {msg}");
                    assert!(
                        !msg.chars()
                            .any(|c| c.is_control() || is_invisible_format(c))
                    );
                }
                _ => panic!("{words:?}: wanted {want:?}, got {got:?}"),
            }
        }
    }
}

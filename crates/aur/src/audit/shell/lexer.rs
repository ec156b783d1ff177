//! The text given to tree-sitter-bash, respelt where its grammar reads bash's text otherwise —
//! same length, so every byte offset stays the text's. This file has no dependency: the route
//! reader (`archgate-desktop`'s `omarchy/computed.rs`) includes it too, one reader for both.
//!
//! **`((`** (attack 29 F7): bash reads `((…))` as arithmetic only when the first `)` at depth
//! zero is followed by another `)`; else it is a subshell in a subshell (`((echo hi); (cmd))`),
//! and `$((…` likewise falls back to a command substitution. tree-sitter reads arithmetic
//! always, so the commands were invisible to both readers. Such an inner `(` and its `)` are
//! given to the parser as blanks: `( echo hi ; (cmd))` — the same commands, one grouping less.
//!
//! **Here-document delimiters** (attack 28 F6, attack 29 F3).
//!
//! Bash ends a here-document at a line reading the operator's word *after quote removal*
//! (`<<E"O"F`, `<<"E'OF"`, `<<$'EOF'`, `<<'E'"O F"` end at `EOF`, `E'OF`, `EOF`, `EO F`), and any
//! quoting at all makes the body literal. tree-sitter-bash's scanner takes a word that starts
//! with a quote up to the next quote and any other word up to whitespace (`<<EOF;` waits for a
//! line `EOF;`). Where the two differ, everything after the here-document — any number of
//! commands — was body text to the audit.
//!
//! Class: *a parser that re-implements another program's*. This is a lexer of bash's quoting
//! (single and double quotes, `$'…'` with its escapes, `$"…"`, backslashes, comments, `$(…)`,
//! `${…}`, backquotes, arithmetic): it finds here-document operators only where bash does —
//! never inside a string or a comment (`echo 'a<<"x"y'` is no here-document) — reads each word
//! as bash does, finds the line bash ends the body at, and rewrites the operator's word (and,
//! where the parser cannot spell the delimiter, that end line) to a spelling tree-sitter reads
//! the same way: same length, so every byte offset stays the text's.

struct Pending {
    start: usize,
    end: usize,
    bare: Vec<u8>,
    quoted: bool,
    strip_tabs: bool,
    /// A metacharacter follows the word directly (`<<EOF;`): tree-sitter would take it in.
    glued: bool,
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    pending: Vec<Pending>,
    edits: Vec<(usize, Vec<u8>)>,
}

fn is_meta(c: u8) -> bool {
    c.is_ascii_whitespace() || b";|&<>()".contains(&c)
}

/// Rewrites, in place, every here-document whose delimiter tree-sitter would read otherwise, and
/// every `((` that bash reads as subshells.
pub fn as_bash_reads_it(bytes: &mut [u8]) {
    let src = bytes.to_vec();
    let mut lx = Lexer {
        b: &src,
        i: 0,
        pending: Vec::new(),
        edits: Vec::new(),
    };
    lx.code(None);
    lx.bodies();
    for (at, new) in lx.edits {
        if let Some(dst) = bytes.get_mut(at..at + new.len()) {
            dst.copy_from_slice(&new);
        }
    }
}

impl Lexer<'_> {
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.i + k).copied().unwrap_or(0)
    }

    fn word_start(&self) -> bool {
        self.i == 0 || is_meta(self.b[self.i - 1])
    }

    /// Code until the end, or until the `)` that closes a `$(` (`close`).
    fn code(&mut self, close: Option<u8>) {
        let mut depth = 0usize;
        while self.i < self.b.len() {
            let c = self.at(0);
            match c {
                b'\n' => {
                    self.i += 1;
                    self.bodies();
                }
                b'\\' => self.i += 2,
                b'\'' => self.single(),
                b'"' => {
                    self.i += 1;
                    self.double();
                }
                b'`' => self.backquote(),
                b'$' => self.dollar(),
                b'#' if self.word_start() => {
                    while self.i < self.b.len() && self.at(0) != b'\n' {
                        self.i += 1;
                    }
                }
                b'(' if self.at(1) == b'(' && self.word_start() => {
                    self.i += 2;
                    if !self.arith() {
                        // Subshells: the outer `(` is an ordinary one.
                        depth += 1;
                    }
                }
                b'(' if self.at(1) == b')' => {
                    self.function_body();
                    self.i += 2;
                }
                b'(' => {
                    depth += 1;
                    self.i += 1;
                }
                b')' => {
                    self.i += 1;
                    if depth == 0 && close.is_some() {
                        return;
                    }
                    depth = depth.saturating_sub(1);
                }
                // A `;` on a here-document operator's line: tree-sitter-bash's grammar takes only
                // `|`, `&&`, `||` and redirections there, and read the rest of the line as the
                // command's arguments (`cat <<EOF; cmd`: `cmd` never seen, attack 28 F6 h2). It
                // is given as `&&` (or `|` when no blank follows): the same commands, read.
                b';' if !self.pending.is_empty()
                    && !matches!(self.at(1), b';' | b'&')
                    && !self.closer_follows() =>
                {
                    if matches!(self.at(1), b' ' | b'\t') {
                        self.edits.push((self.i, b"&&".to_vec()));
                        self.i += 2;
                    } else {
                        self.edits.push((self.i, b"|".to_vec()));
                        self.i += 1;
                    }
                }
                b'<' if self.at(1) == b'<' && self.at(2) == b'<' => self.i += 3,
                b'<' if self.at(1) == b'<' => self.operator(),
                _ => self.i += 1,
            }
        }
    }

    /// After a `;`: a reserved word that closes or continues a compound command (`; done`,
    /// `; fi`): `&& done` would be no better a parse.
    fn closer_follows(&self) -> bool {
        let mut k = self.i + 1;
        while matches!(self.b.get(k), Some(b' ' | b'\t')) {
            k += 1;
        }
        let rest = &self.b[k.min(self.b.len())..];
        ["done", "fi", "esac", "then", "do", "else", "elif", "}"]
            .iter()
            .any(|w| {
                rest.starts_with(w.as_bytes()) && rest.get(w.len()).is_none_or(|c| is_meta(*c))
            })
    }

    /// At `()` after a name: a body tree-sitter-bash cannot hold (it takes `{…}`, `(…)`, `[[…]]`
    /// and `if`; bash any compound command — `f() for x in 1; do cmd; done` was a parse error
    /// whose commands the audit never saw, attack 29 F7) is given as `f; ` then the body: its
    /// commands read at the level the function is defined at.
    fn function_body(&mut self) {
        let name_start = self.b[..self.i]
            .iter()
            .rposition(|&c| is_meta(c))
            .map_or(0, |n| n + 1);
        let name = &self.b[name_start..self.i];
        if name.is_empty() || name.iter().any(|c| b"=$`'\"\\".contains(c)) {
            return;
        }
        let mut k = self.i + 2;
        while self.b.get(k).is_some_and(|c| c.is_ascii_whitespace()) {
            k += 1;
        }
        let rest = &self.b[k.min(self.b.len())..];
        let keyword = ["for", "while", "until", "case", "select"].iter().any(|w| {
            rest.starts_with(w.as_bytes())
                && rest.get(w.len()).is_some_and(|c| c.is_ascii_whitespace())
        }) || rest.starts_with(b"((");
        if keyword {
            self.edits.push((self.i, b"; ".to_vec()));
        }
    }

    fn single(&mut self) {
        self.i += 1;
        while self.i < self.b.len() && self.at(0) != b'\'' {
            self.i += 1;
        }
        self.i += 1;
    }

    /// After an opening `"`: to its closing quote.
    fn double(&mut self) {
        while self.i < self.b.len() {
            match self.at(0) {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return;
                }
                b'`' => self.backquote(),
                b'$' => self.dollar(),
                _ => self.i += 1,
            }
        }
    }

    fn backquote(&mut self) {
        self.i += 1;
        while self.i < self.b.len() && self.at(0) != b'`' {
            if self.at(0) == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        self.i += 1;
    }

    /// At a `$`: `$'…'`, `$((…))`, `$(…)`, `${…}` or a plain `$`.
    fn dollar(&mut self) {
        match (self.at(1), self.at(2)) {
            (b'\'', _) => {
                self.i += 2;
                while self.i < self.b.len() && self.at(0) != b'\'' {
                    if self.at(0) == b'\\' {
                        self.i += 1;
                    }
                    self.i += 1;
                }
                self.i += 1;
            }
            (b'(', b'(') => {
                self.i += 3;
                if !self.arith() {
                    // A command substitution whose first command is a subshell.
                    self.code(Some(b')'));
                }
            }
            (b'(', _) => {
                self.i += 2;
                self.code(Some(b')'));
            }
            (b'{', _) => {
                self.i += 2;
                let mut depth = 0usize;
                while self.i < self.b.len() {
                    match self.at(0) {
                        b'\\' => self.i += 2,
                        b'\'' => self.single(),
                        b'"' => {
                            self.i += 1;
                            self.double();
                        }
                        b'$' => self.dollar(),
                        b'{' => {
                            depth += 1;
                            self.i += 1;
                        }
                        b'}' => {
                            self.i += 1;
                            if depth == 0 {
                                return;
                            }
                            depth -= 1;
                        }
                        _ => self.i += 1,
                    }
                }
            }
            _ => self.i += 1,
        }
    }

    /// After `((` or `$((`: to the matching `))` (`<<` there is a shift, not a here-document)
    /// and true; or, when bash would not read arithmetic there (the first `)` at depth zero is
    /// not followed by `)`), the inner `(` and that `)` blanked, the position back after the
    /// outer `(`, and false.
    fn arith(&mut self) -> bool {
        let inner = self.i - 1;
        let mut depth = 0usize;
        while self.i < self.b.len() {
            match self.at(0) {
                b'\\' => self.i += 1,
                b'\'' => {
                    self.single();
                    continue;
                }
                b'"' => {
                    self.i += 1;
                    self.double();
                    continue;
                }
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    if self.at(1) == b')' {
                        self.i += 2;
                        return true;
                    }
                    self.edits.push((inner, vec![b' ']));
                    self.edits.push((self.i, vec![b' ']));
                    // Lexed again as code from the inner `(` (it still counts as a paren).
                    self.i = inner;
                    return false;
                }
                b')' => depth -= 1,
                _ => {}
            }
            self.i += 1;
        }
        true
    }

    /// At `<<`: the operator's word as bash reads it.
    fn operator(&mut self) {
        self.i += 2;
        let strip_tabs = self.at(0) == b'-';
        if strip_tabs {
            self.i += 1;
        }
        while matches!(self.at(0), b' ' | b'\t') {
            self.i += 1;
        }
        let start = self.i;
        let mut bare = Vec::new();
        let mut quoted = false;
        while self.i < self.b.len() && !is_meta(self.at(0)) {
            match (self.at(0), self.at(1)) {
                (b'\\', n) => {
                    quoted = true;
                    if n != b'\n' && n != 0 {
                        bare.push(n);
                    }
                    self.i += 2;
                }
                (b'\'', _) => {
                    quoted = true;
                    self.i += 1;
                    while self.i < self.b.len() && self.at(0) != b'\'' {
                        bare.push(self.at(0));
                        self.i += 1;
                    }
                    self.i += 1;
                }
                (b'$', b'\'') => {
                    quoted = true;
                    self.i += 2;
                    self.ansi_c(&mut bare);
                }
                (b'"', _) | (b'$', b'"') => {
                    quoted = true;
                    self.i += if self.at(0) == b'$' { 2 } else { 1 };
                    while self.i < self.b.len() && self.at(0) != b'"' {
                        if self.at(0) == b'\\' && matches!(self.at(1), b'$' | b'`' | b'"' | b'\\') {
                            self.i += 1;
                        }
                        bare.push(self.at(0));
                        self.i += 1;
                    }
                    self.i += 1;
                }
                (c, _) => {
                    bare.push(c);
                    self.i += 1;
                }
            }
        }
        let end = self.i.min(self.b.len());
        if end > start {
            let glued = self.i < self.b.len() && !self.at(0).is_ascii_whitespace();
            self.pending.push(Pending {
                start,
                end,
                bare,
                quoted,
                strip_tabs,
                glued,
            });
        }
    }

    /// After `$'`: the text to the closing quote with bash's escapes decoded.
    fn ansi_c(&mut self, out: &mut Vec<u8>) {
        while self.i < self.b.len() && self.at(0) != b'\'' {
            if self.at(0) != b'\\' {
                out.push(self.at(0));
                self.i += 1;
                continue;
            }
            self.i += 1;
            let e = self.at(0);
            self.i += 1;
            let simple = match e {
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                b'r' => Some(b'\r'),
                b'a' => Some(7),
                b'b' => Some(8),
                b'e' | b'E' => Some(27),
                b'f' => Some(12),
                b'v' => Some(11),
                b'c' => {
                    let x = self.at(0) & 0x1f;
                    self.i += 1;
                    Some(x)
                }
                b'x' | b'0'..=b'7' => {
                    let (radix, max) = if e == b'x' { (16, 2) } else { (8, 3) };
                    if e != b'x' {
                        self.i -= 1;
                    }
                    let mut v: u32 = 0;
                    let mut n = 0;
                    while n < max && (self.at(0) as char).is_digit(radix) {
                        v = v * radix + (self.at(0) as char).to_digit(radix).unwrap_or(0);
                        self.i += 1;
                        n += 1;
                    }
                    Some(if n == 0 { b'x' } else { v as u8 })
                }
                b'u' | b'U' => {
                    let max = if e == b'u' { 4 } else { 8 };
                    let mut v: u32 = 0;
                    let mut n = 0;
                    while n < max && self.at(0).is_ascii_hexdigit() {
                        v = v * 16 + (self.at(0) as char).to_digit(16).unwrap_or(0);
                        self.i += 1;
                        n += 1;
                    }
                    let ch = char::from_u32(v).unwrap_or('x');
                    let mut buf = [0; 4];
                    out.extend(
                        ch.encode_utf8(&mut buf)
                            .bytes()
                            .map(|b| if b.is_ascii() { b } else { b'x' }),
                    );
                    None
                }
                other => {
                    if !matches!(other, b'\\' | b'\'' | b'"' | b'?') {
                        out.push(b'\\');
                    }
                    Some(other)
                }
            };
            out.extend(simple);
        }
        self.i += 1;
    }

    /// At the start of a line after an unquoted newline: the pending here-documents' bodies.
    fn bodies(&mut self) {
        for p in std::mem::take(&mut self.pending) {
            let mut end_line = None;
            while self.i < self.b.len() {
                let nl = self.b[self.i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(self.b.len(), |n| self.i + n);
                let mut from = self.i;
                if p.strip_tabs {
                    while from < nl && self.b[from] == b'\t' {
                        from += 1;
                    }
                }
                self.i = (nl + 1).min(self.b.len());
                if self.b[from..nl] == p.bare[..] {
                    end_line = Some(from);
                    break;
                }
            }
            self.respell(&p, end_line);
        }
    }

    /// The operator's word (and where needed the end line) spelt so tree-sitter reads `p`'s
    /// delimiter and quoting, in the same number of bytes.
    fn respell(&mut self, p: &Pending, end_line: Option<usize>) {
        let width = p.end - p.start;
        // What tree-sitter's scanner can hold in a delimiter: no blank, quote or backslash.
        let mut d: Vec<u8> = p
            .bare
            .iter()
            .map(|&c| {
                if c.is_ascii_graphic() && !matches!(c, b'\'' | b'"' | b'\\') {
                    c
                } else {
                    b'_'
                }
            })
            .collect();
        let word: Vec<u8> = if p.quoted {
            if width >= d.len() + 2 {
                let mut w = vec![b'\''];
                w.extend(&d);
                w.push(b'\'');
                w
            } else {
                // Only a backslash quotes it (`\EOF`, `E\OF`): `\` then the delimiter, one
                // shorter when a metacharacter follows (the scanner reads to a blank).
                d.truncate(width.saturating_sub(1 + usize::from(p.glued)));
                let mut w = vec![b'\\'];
                w.extend(&d);
                w
            }
        } else if p.glued {
            d.truncate(width.saturating_sub(1));
            d.clone()
        } else {
            return;
        };
        if d.is_empty() {
            return;
        }
        let mut word = word;
        word.resize(width, b' ');
        let original = &self.b[p.start..p.end];
        if word == original {
            return;
        }
        if d != p.bare {
            let Some(at) = end_line else { return };
            let mut line = d.clone();
            line.resize(p.bare.len(), b' ');
            self.edits.push((at, line));
        }
        self.edits.push((p.start, word));
    }
}

#[cfg(test)]
mod tests {
    use super::as_bash_reads_it;

    fn respelt(text: &str) -> String {
        let mut b = text.as_bytes().to_vec();
        as_bash_reads_it(&mut b);
        assert_eq!(b.len(), text.len());
        String::from_utf8(b).unwrap_or_default()
    }

    #[test]
    fn delimiters_are_respelt_in_the_same_bytes_and_strings_are_left_alone() {
        assert_eq!(
            respelt("cat <<\"E'OF\"\nx\nE'OF\n"),
            "cat <<'E_OF'\nx\nE_OF\n"
        );
        assert_eq!(respelt("cat <<$'EOF'\nx\nEOF\n"), "cat <<'EOF' \nx\nEOF\n");
        assert_eq!(
            respelt("cat <<'E'\"O F\"\nx\nEO F\n"),
            "cat <<'EO_F'  \nx\nEO_F\n"
        );
        assert_eq!(respelt("cat <<E\"O\"F\nx\nEOF\n"), "cat <<'EOF'\nx\nEOF\n");
        assert_eq!(
            respelt("cat <<EOF; id\nx\nEOF\n"),
            "cat <<EO &&id\nx\nEO \n"
        );
        assert_eq!(respelt("cat <<'EOF'\nx\nEOF\n"), "cat <<'EOF'\nx\nEOF\n");
        assert_eq!(
            respelt("for f in a; do cat <<'EOF'; done\nx\nEOF\n"),
            "for f in a; do cat <<'EOF'; done\nx\nEOF\n"
        );
        assert_eq!(respelt("cat <<EOF\nx\nEOF\n"), "cat <<EOF\nx\nEOF\n");
        for text in [
            "echo 'a<<\"x\"y'\nid\n",
            "echo \"<<'x'y\"\nid\n",
            "# cat <<\"E'OF\"\nid\n",
            "x=$(( 1 << 2 ))\n",
            "(( x = (1 + 2) * 3 ))\n",
            "a=()\nfor x in 1; do :; done\n",
        ] {
            assert_eq!(respelt(text), text);
        }
    }

    #[test]
    fn subshells_spelt_like_arithmetic_and_loop_bodies_are_given_as_bash_reads_them() {
        assert_eq!(respelt("((echo hi); (id))\n"), "( echo hi ; (id))\n");
        assert_eq!(respelt("x=$((echo hi); (id))\n"), "x=$( echo hi ; (id))\n");
        assert_eq!(
            respelt("f() for x in 1; do id; done\n"),
            "f;  for x in 1; do id; done\n"
        );
    }
}

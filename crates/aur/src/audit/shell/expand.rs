//! Word expansion without running anything: quoting, `$'…'` escapes, variables and arrays,
//! `${…}` operators (`expand/params.rs`), `~`, `${IFS}` and field splitting, as bash would do
//! them.

mod params;

use std::rc::Rc;

use tree_sitter::Node;

use super::source::{ParsedSrc, shorten};
use super::text::{
    BRACE_CLOSE, BRACE_COMMA, BRACE_OPEN, EscapeMode, brace_expand, decode_escapes,
    drop_slashes_before_absolute_dir, unescape_dq, unescape_unquoted, unmark,
};
use super::walk::Walker;
use super::{ObfKind, ObfNote, Taint, Word};

enum Piece {
    /// Text; `true` if it came from an unquoted expansion and undergoes field splitting.
    Text(String, bool),
    /// A field boundary (between elements of `"${a[@]}"`).
    Break,
}

/// Accumulates the expansion of one word.
#[derive(Default)]
pub(super) struct Acc {
    pieces: Vec<Piece>,
    pub taint: Taint,
    pub dynamic: bool,
    pub subs: Vec<usize>,
    lit_frags: u32,
    small_frags: u32,
    /// Literal pieces with text in them: `"""message"""` is one piece of text between empty
    /// quotes, nothing glued.
    full_frags: u32,
    /// Literal pieces written inside quotes (`'b'`, `"u"`, `$'n'`): quote splitting needs them;
    /// unquoted pieces are brace expansion or globs (`{a,b}`, `*.[ch]`), not obfuscation.
    quoted_frags: u32,
    exps: u32,
    printable_escapes: u32,
    ifs: bool,
    /// Taint from everything but the separate fields of `"$@"`/`"${a[@]}"`: it reaches every
    /// field of the word.
    base: Taint,
    /// Each separate field's own taint, by the index of the piece holding its text: `"$@"`
    /// forwarded by a wrapper function keeps the command name apart from a downloaded argument.
    item_taints: Vec<(usize, Taint)>,
}

impl Acc {
    fn text(&mut self, t: impl Into<String>, split: bool) {
        self.pieces.push(Piece::Text(t.into(), split));
    }
    fn quoted_frag(&mut self, t: &str) {
        self.quoted_frags += 1;
        self.frag(t);
    }
    fn frag(&mut self, t: &str) {
        self.lit_frags += 1;
        if !t.is_empty() {
            self.full_frags += 1;
        }
        if t.chars().count() <= 2 {
            self.small_frags += 1;
        }
    }
    /// The fields with the taint each carries: the word's own (`base`) and that of the
    /// separate array items whose text is in it.
    fn tainted_fields(&self) -> Vec<(String, Taint)> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut cur_t = self.base;
        let mut has = false;
        let mut items = self.item_taints.iter().peekable();
        for (i, p) in self.pieces.iter().enumerate() {
            let mut piece_t = Taint::default();
            while let Some((_, t)) = items.next_if(|(at, _)| *at == i) {
                piece_t = piece_t.with(*t);
            }
            match p {
                Piece::Text(t, false) => {
                    cur.push_str(t);
                    cur_t = cur_t.with(piece_t);
                    has = true;
                }
                Piece::Text(t, true) => {
                    for ch in t.chars() {
                        if matches!(ch, ' ' | '\t' | '\n') {
                            if has && !cur.is_empty() {
                                out.push((std::mem::take(&mut cur), cur_t));
                                cur_t = self.base;
                            }
                            has = false;
                        } else {
                            cur.push(ch);
                            cur_t = cur_t.with(piece_t);
                            has = true;
                        }
                    }
                }
                Piece::Break => {
                    if has {
                        out.push((std::mem::take(&mut cur), cur_t));
                        cur_t = self.base;
                    }
                    has = false;
                }
            }
        }
        if has {
            out.push((cur, cur_t));
        }
        out.into_iter()
            .flat_map(|(f, t)| brace_expand(&f).into_iter().map(move |f| (f, t)))
            .map(|(f, t)| (drop_slashes_before_absolute_dir(f), t))
            .collect()
    }
    /// Taint that reaches every field of the word.
    fn taint_all(&mut self, t: Taint) {
        self.taint = self.taint.with(t);
        self.base = self.base.with(t);
    }
    fn joined(&self) -> String {
        let mut s = String::new();
        let mut first = true;
        for p in &self.pieces {
            match p {
                Piece::Text(t, _) => s.push_str(t),
                Piece::Break => {
                    if !first {
                        s.push(' ');
                    }
                }
            }
            first = false;
        }
        drop_slashes_before_absolute_dir(unmark(&s))
    }
}

/// A word glued from short pieces, at least two of them quoted and two with text, with no
/// expansion in it: `'c''u''r''l'`, `"b"u"n"`, `c""u""r""l`. Brace expansion and globs have no
/// quotes and do not count; `"""text"""` (Python's triple quote written in shell) glues nothing.
fn quote_split(acc: &Acc) -> bool {
    acc.lit_frags >= 3
        && acc.small_frags >= 2
        && acc.quoted_frags >= 2
        && acc.full_frags >= 2
        && acc.exps == 0
}

/// Does a text search for every word the text says find it in the word as written (`raw`, the
/// whole of it)? Quote splitting hides a word (`c''u''rl`, `"b""u""n"`); empty quotes
/// (`''GPL''`), a quoted associative-array key (`['git-changebar']='gitchangebar'`) or a
/// single-quoted function body that closes its quotes around `'{}'` hide none.
fn every_word_visible(resolved: &str, raw: &str) -> bool {
    resolved
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .all(|w| raw.contains(w))
}

/// Quote splitting that hides a word from a text search of the file.
fn quote_split_hides(acc: &Acc, raw: &str) -> bool {
    quote_split(acc) && !every_word_visible(&acc.joined(), raw)
}

/// The result of expanding one word node.
pub(super) struct Expanded {
    pub fields: Vec<String>,
    /// Each field's own taint (a field of `"$@"` only its own item's, with the word's).
    pub field_taints: Vec<Taint>,
    pub dynamic: bool,
    pub subs: Vec<usize>,
}

impl Walker {
    /// Expands a word node into fields, recording obfuscation it used.
    pub(super) fn expand(&mut self, src: &Rc<ParsedSrc>, node: Node) -> Expanded {
        let mut acc = Acc::default();
        self.expand_node(src, node, false, &mut acc);
        self.note_obfuscation(src, node, &acc);
        let obf = if self.obfuscated(&acc, src.raw(node)) {
            Taint::OBFUSCATED
        } else {
            Taint::default()
        };
        let (fields, field_taints) = acc
            .tainted_fields()
            .into_iter()
            .map(|(f, t)| (f, t.with(obf)))
            .unzip();
        Expanded {
            fields,
            field_taints,
            dynamic: acc.dynamic,
            subs: acc.subs,
        }
    }

    /// Expands a node to one string (assignment values, redirect targets).
    pub(super) fn expand_one(&mut self, src: &Rc<ParsedSrc>, node: Node) -> Word {
        let mut acc = Acc::default();
        self.expand_node(src, node, true, &mut acc);
        self.note_obfuscation(src, node, &acc);
        let mut taint = acc.taint;
        if self.obfuscated(&acc, src.raw(node)) {
            taint = taint.with(Taint::OBFUSCATED);
        }
        Word {
            text: acc.joined(),
            pos: src.pos(node),
            taint,
            dynamic: acc.dynamic,
            subs: acc.subs,
        }
    }

    /// Expands a list of argument nodes into words.
    pub(super) fn expand_words(&mut self, src: &Rc<ParsedSrc>, nodes: &[Node]) -> Vec<Word> {
        let mut out = Vec::new();
        for n in nodes {
            let pos = src.pos(*n);
            let e = self.expand(src, *n);
            for (f, taint) in e.fields.into_iter().zip(e.field_taints) {
                out.push(Word {
                    text: f,
                    pos,
                    taint,
                    dynamic: e.dynamic,
                    subs: e.subs.clone(),
                });
            }
        }
        out
    }

    /// An unquoted here-document body: expansions happen, quotes are literal.
    pub(super) fn expand_heredoc(&mut self, src: &Rc<ParsedSrc>, node: Node) -> Word {
        let mut acc = Acc::default();
        self.expand_between(
            src,
            node,
            node.start_byte(),
            node.end_byte(),
            &mut acc,
            true,
        );
        Word {
            text: acc.joined(),
            pos: src.pos(node),
            taint: acc.taint,
            dynamic: acc.dynamic,
            subs: acc.subs,
        }
    }

    fn obfuscated(&self, acc: &Acc, raw: &str) -> bool {
        (acc.ifs && acc.lit_frags > 0) || acc.printable_escapes >= 2 || quote_split_hides(acc, raw)
    }

    fn note_obfuscation(&mut self, src: &Rc<ParsedSrc>, node: Node, acc: &Acc) {
        let kind = if acc.ifs && acc.lit_frags > 0 {
            ObfKind::Ifs
        } else if acc.printable_escapes >= 2 {
            ObfKind::PrintableEscapes
        } else if quote_split_hides(acc, src.raw(node)) {
            ObfKind::QuoteSplit
        } else {
            return;
        };
        let (snippet, _) = (shorten(src.raw(node)), ());
        self.an.notes.push(ObfNote {
            kind,
            file: src.file,
            pos: src.pos(node),
            phase: self.phase,
            resolved: acc.joined(),
            snippet,
        });
    }

    fn expand_node(&mut self, src: &Rc<ParsedSrc>, node: Node, quoted: bool, acc: &mut Acc) {
        match node.kind() {
            "word" | "number" => {
                let raw = src.raw(node);
                if super::walk::hides_subst(raw) {
                    // A default's backquotes are one leaf to tree-sitter (`${v:-`…`}`).
                    self.scan_leaf_text(src, node);
                    acc.dynamic = true;
                }
                let raw = src.raw(node);
                let mut t = if quoted {
                    raw.to_owned()
                } else {
                    unescape_unquoted(raw)
                };
                if acc.pieces.is_empty() && (t == "~" || t.starts_with("~/")) {
                    t = format!("$HOME{}", &t[1..]);
                }
                acc.frag(&t);
                if !quoted && t.contains(['{', '}', ',']) && !raw.contains('\\') {
                    t = t
                        .replace('{', BRACE_OPEN)
                        .replace('}', BRACE_CLOSE)
                        .replace(',', BRACE_COMMA);
                }
                acc.text(t, false);
            }
            "raw_string" => {
                let raw = src.raw(node);
                let inner = raw
                    .strip_prefix('\'')
                    .map(|r| r.strip_suffix('\'').unwrap_or(r))
                    .unwrap_or(raw);
                acc.quoted_frag(inner);
                acc.text(inner, false);
            }
            "ansi_c_string" => {
                let raw = src.raw(node);
                let inner = raw.strip_prefix("$'").unwrap_or(raw);
                let inner = inner.strip_suffix('\'').unwrap_or(inner);
                let (t, printable) = decode_escapes(inner, EscapeMode::AnsiC);
                acc.printable_escapes += printable;
                acc.quoted_frag(&t);
                acc.text(t, false);
            }
            "string" | "translated_string" => {
                let raw = src.raw(node);
                let open = if raw.starts_with("$\"") { 2 } else { 1 };
                let close = usize::from(raw.len() > open && raw.ends_with('"'));
                let start = node.start_byte() + open.min(raw.len());
                let end = node.end_byte().saturating_sub(close).max(start);
                let before = acc.exps;
                let n_before = acc.pieces.len();
                self.expand_between(src, node, start, end, acc, false);
                if acc.exps == before {
                    let text: String = acc.pieces[n_before..]
                        .iter()
                        .map(|p| match p {
                            Piece::Text(t, _) => t.as_str(),
                            Piece::Break => "",
                        })
                        .collect();
                    acc.quoted_frag(&text);
                }
                // An empty "" still makes a field.
                if acc.pieces.len() == n_before {
                    acc.text("", false);
                }
            }
            "concatenation" => {
                let mut c = node.walk();
                let kids: Vec<Node> = node.children(&mut c).collect();
                for ch in kids {
                    self.expand_node(src, ch, quoted, acc);
                }
            }
            "simple_expansion" => {
                acc.exps += 1;
                let mut c = node.walk();
                let name = node
                    .named_children(&mut c)
                    .last()
                    .map(|n| src.raw(n).to_owned())
                    .unwrap_or_default();
                let val = self.lookup(&name, None, acc);
                self.push_val(val, &name, quoted, false, acc);
            }
            "expansion" => {
                acc.exps += 1;
                self.expansion(src, node, quoted, acc);
            }
            "command_substitution" => {
                acc.exps += 1;
                let (out, taint, id) = self.subst(src, node, false);
                acc.subs.push(id);
                acc.taint_all(taint);
                match out {
                    Some(t) => acc.text(t, !quoted),
                    None => {
                        acc.dynamic = true;
                        acc.text("$(…)", false);
                    }
                }
            }
            "process_substitution" => {
                acc.exps += 1;
                let (_, taint, id) = self.subst(src, node, true);
                acc.subs.push(id);
                acc.taint_all(taint);
                acc.text("/dev/fd/63", false);
            }
            "arithmetic_expansion" => {
                acc.exps += 1;
                self.scan_substs(src, node);
                acc.dynamic = true;
                acc.text("$((…))", false);
            }
            _ => {
                self.scan_substs(src, node);
                let raw = src.raw(node).to_owned();
                acc.frag(&raw);
                acc.text(raw, false);
            }
        }
    }

    /// Expands the text between `start` and `end` of a double-quoted string or heredoc body.
    fn expand_between(
        &mut self,
        src: &Rc<ParsedSrc>,
        node: Node,
        start: usize,
        end: usize,
        acc: &mut Acc,
        heredoc: bool,
    ) {
        let mut cursor = start;
        let mut c = node.walk();
        let kids: Vec<Node> = node.named_children(&mut c).collect();
        for ch in kids {
            if !matches!(
                ch.kind(),
                "simple_expansion"
                    | "expansion"
                    | "command_substitution"
                    | "arithmetic_expansion"
                    | "process_substitution"
            ) {
                continue;
            }
            if ch.start_byte() > cursor {
                let gap = src
                    .text
                    .get(cursor..ch.start_byte())
                    .unwrap_or("")
                    .to_owned();
                self.scan_gap(src, node, &gap, acc);
                acc.text(unescape_dq(&gap, heredoc), false);
            }
            self.expand_node(src, ch, true, acc);
            cursor = ch.end_byte().max(cursor);
        }
        if end > cursor {
            let gap = src.text.get(cursor..end).unwrap_or("").to_owned();
            self.scan_gap(src, node, &gap, acc);
            acc.text(unescape_dq(&gap, heredoc), false);
        }
    }

    /// Text between a string's or here-document's parsed expansions that still holds a
    /// substitution bash runs — a backquote in a here-document body is only text to
    /// tree-sitter-bash (attack 32 F17) — walked, the word then known only at run time. Each line
    /// is scanned on its own: a here-document's text is no one command.
    fn scan_gap(&mut self, src: &Rc<ParsedSrc>, node: Node, gap: &str, acc: &mut Acc) {
        if !super::walk::hides_subst(gap) {
            return;
        }
        // Quotes quote nothing in a here-document's text or between a string's expansions
        // (`don't `cmd``): dropped, so a lone one does not swallow the substitution.
        for line in gap.lines().filter(|l| super::walk::hides_subst(l)) {
            if self.scan_text(src, node, &line.replace(['\'', '"'], " ")) {
                acc.dynamic = true;
            }
        }
    }
}

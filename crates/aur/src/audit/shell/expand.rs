//! Word expansion without running anything: quoting, `$'…'` escapes, variables and arrays,
//! `${…}` operators, `~`, `${IFS}` and field splitting, as bash would do them.

use std::rc::Rc;

use tree_sitter::Node;

use super::walk::{ParsedSrc, Walker, shorten};
use super::{ObfKind, ObfNote, Str, Taint, Val, Word};

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
    exps: u32,
    printable_escapes: u32,
    ifs: bool,
}

impl Acc {
    fn text(&mut self, t: impl Into<String>, split: bool) {
        self.pieces.push(Piece::Text(t.into(), split));
    }
    fn frag(&mut self, t: &str) {
        self.lit_frags += 1;
        if t.chars().count() <= 2 {
            self.small_frags += 1;
        }
    }
    fn fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut has = false;
        for p in &self.pieces {
            match p {
                Piece::Text(t, false) => {
                    cur.push_str(t);
                    has = true;
                }
                Piece::Text(t, true) => {
                    for ch in t.chars() {
                        if matches!(ch, ' ' | '\t' | '\n') {
                            if has && !cur.is_empty() {
                                out.push(std::mem::take(&mut cur));
                            }
                            has = false;
                        } else {
                            cur.push(ch);
                            has = true;
                        }
                    }
                }
                Piece::Break => {
                    if has {
                        out.push(std::mem::take(&mut cur));
                    }
                    has = false;
                }
            }
        }
        if has {
            out.push(cur);
        }
        out.into_iter().flat_map(|f| brace_expand(&f)).collect()
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
        unmark(&s)
    }
}

const BRACE_OPEN: &str = "\u{E000}";
const BRACE_CLOSE: &str = "\u{E001}";
const BRACE_COMMA: &str = "\u{E002}";

fn unmark(s: &str) -> String {
    s.replace(BRACE_OPEN, "{")
        .replace(BRACE_CLOSE, "}")
        .replace(BRACE_COMMA, ",")
}

/// Bash brace expansion (`a{,.sig}` → `a`, `a.sig`) on unquoted braces only.
fn brace_expand(s: &str) -> Vec<String> {
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

/// The result of expanding one word node.
pub(super) struct Expanded {
    pub fields: Vec<String>,
    pub taint: Taint,
    pub dynamic: bool,
    pub subs: Vec<usize>,
}

impl Walker {
    /// Expands a word node into fields, recording obfuscation it used.
    pub(super) fn expand(&mut self, src: &Rc<ParsedSrc>, node: Node) -> Expanded {
        let mut acc = Acc::default();
        self.expand_node(src, node, false, &mut acc);
        self.note_obfuscation(src, node, &acc);
        let mut taint = acc.taint;
        if self.obfuscated(&acc) {
            taint = taint.with(Taint::OBFUSCATED);
        }
        Expanded {
            fields: acc.fields(),
            taint,
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
        if self.obfuscated(&acc) {
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
            for f in e.fields {
                out.push(Word {
                    text: f,
                    pos,
                    taint: e.taint,
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

    fn obfuscated(&self, acc: &Acc) -> bool {
        (acc.ifs && acc.lit_frags > 0)
            || acc.printable_escapes >= 2
            || (acc.lit_frags >= 3 && acc.small_frags >= 2 && acc.exps == 0)
    }

    fn note_obfuscation(&mut self, src: &Rc<ParsedSrc>, node: Node, acc: &Acc) {
        let kind = if acc.ifs && acc.lit_frags > 0 {
            ObfKind::Ifs
        } else if acc.printable_escapes >= 2 {
            ObfKind::PrintableEscapes
        } else if acc.lit_frags >= 3 && acc.small_frags >= 2 && acc.exps == 0 {
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
                acc.frag(inner);
                acc.text(inner, false);
            }
            "ansi_c_string" => {
                let raw = src.raw(node);
                let inner = raw.strip_prefix("$'").unwrap_or(raw);
                let inner = inner.strip_suffix('\'').unwrap_or(inner);
                let (t, printable) = decode_escapes(inner, EscapeMode::AnsiC);
                acc.printable_escapes += printable;
                acc.frag(&t);
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
                    acc.frag(&text);
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
                acc.taint = acc.taint.with(taint);
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
                acc.taint = acc.taint.with(taint);
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
                let gap = src.text.get(cursor..ch.start_byte()).unwrap_or("");
                acc.text(unescape_dq(gap, heredoc), false);
            }
            self.expand_node(src, ch, true, acc);
            cursor = ch.end_byte().max(cursor);
        }
        if end > cursor {
            let gap = src.text.get(cursor..end).unwrap_or("");
            acc.text(unescape_dq(gap, heredoc), false);
        }
    }

    /// The value of a variable (or positional/special parameter); `None` if unset.
    fn lookup(&mut self, name: &str, index: Option<&str>, acc: &mut Acc) -> Option<Val> {
        if name == "IFS" {
            acc.ifs = true;
        }
        match name {
            "@" | "*" => return Some(Val::Array(self.positional.clone())),
            "#" => return Some(Val::Scalar(Str::lit(self.positional.len().to_string()))),
            "?" | "$" | "!" | "-" | "_" | "RANDOM" | "BASHPID" | "PPID" => {
                acc.dynamic = true;
                return Some(Val::Scalar(Str {
                    text: format!("${name}"),
                    dynamic: true,
                    ..Str::default()
                }));
            }
            "0" => return Some(Val::Scalar(Str::lit("bash"))),
            _ => {}
        }
        if let Ok(n) = name.parse::<usize>() {
            return self
                .positional
                .get(n.wrapping_sub(1))
                .cloned()
                .map(Val::Scalar);
        }
        let v = self.env.get(name)?.clone();
        match index {
            None => Some(Val::Scalar(v.first())),
            Some("@") | Some("*") => Some(Val::Array(v.items())),
            Some(i) => match i.trim().parse::<i64>() {
                Ok(i) => {
                    let items = v.items();
                    let idx = if i < 0 { items.len() as i64 + i } else { i };
                    usize::try_from(idx)
                        .ok()
                        .and_then(|i| items.get(i).cloned())
                        .map(Val::Scalar)
                }
                Err(_) => {
                    acc.dynamic = true;
                    Some(Val::Scalar(Str {
                        text: format!("${{{name}[{i}]}}"),
                        dynamic: true,
                        ..Str::default()
                    }))
                }
            },
        }
    }

    /// Pushes a value: arrays in "…[@]" become separate fields.
    fn push_val(&mut self, val: Option<Val>, name: &str, quoted: bool, all: bool, acc: &mut Acc) {
        match val {
            None => {
                acc.dynamic = true;
                acc.text(format!("${{{name}}}"), false);
            }
            Some(Val::Scalar(s)) => {
                acc.taint = acc.taint.with(s.taint);
                acc.dynamic |= s.dynamic;
                acc.text(s.text, !quoted);
            }
            Some(Val::Array(items)) => {
                if !all && name != "@" && name != "*" {
                    let s = items.into_iter().next().unwrap_or_default();
                    acc.taint = acc.taint.with(s.taint);
                    acc.text(s.text, !quoted);
                    return;
                }
                if quoted && name == "*" {
                    let joined: Vec<&str> = items.iter().map(|s| s.text.as_str()).collect();
                    acc.text(joined.join(" "), false);
                    return;
                }
                for (i, s) in items.into_iter().enumerate() {
                    if i > 0 {
                        acc.pieces.push(Piece::Break);
                    }
                    acc.taint = acc.taint.with(s.taint);
                    acc.dynamic |= s.dynamic;
                    acc.text(s.text, !quoted);
                }
            }
        }
    }

    fn operand(&mut self, src: &Rc<ParsedSrc>, nodes: &[Node], acc: &mut Acc) -> String {
        let mut sub = Acc::default();
        for n in nodes {
            if n.kind() == "regex" {
                sub.text(src.raw(*n), false);
            } else {
                self.expand_node(src, *n, true, &mut sub);
            }
        }
        acc.taint = acc.taint.with(sub.taint);
        acc.dynamic |= sub.dynamic;
        acc.subs.extend(sub.subs.iter().copied());
        acc.ifs |= sub.ifs;
        acc.printable_escapes += sub.printable_escapes;
        sub.joined()
    }

    /// `${…}` with its operators.
    fn expansion(&mut self, src: &Rc<ParsedSrc>, node: Node, quoted: bool, acc: &mut Acc) {
        let mut prefix: Option<String> = None;
        let mut name: Option<String> = None;
        let mut index: Option<String> = None;
        let mut ops: Vec<(String, Vec<Node>)> = Vec::new();
        let mut c = node.walk();
        let kids: Vec<Node> = node.children(&mut c).collect();
        for (i, ch) in kids.iter().enumerate() {
            let k = ch.kind();
            if k == "${" || k == "}" {
                continue;
            }
            let is_op = node.field_name_for_child(i as u32) == Some("operator") || !ch.is_named();
            if name.is_none() {
                if is_op {
                    prefix = Some(src.raw(*ch).to_owned());
                    continue;
                }
                if k == "subscript" {
                    name = ch
                        .child_by_field_name("name")
                        .map(|n| src.raw(n).to_owned());
                    if let Some(ix) = ch.child_by_field_name("index") {
                        let w = self.expand_one(src, ix);
                        index = Some(w.text);
                    }
                } else {
                    name = Some(src.raw(*ch).to_owned());
                }
                continue;
            }
            if is_op {
                ops.push((src.raw(*ch).to_owned(), Vec::new()));
            } else if let Some(last) = ops.last_mut() {
                last.1.push(*ch);
            }
        }
        let name = match (name, &prefix) {
            (Some(n), _) => n,
            (None, Some(p)) => {
                let p = p.clone();
                prefix = None;
                p
            }
            (None, None) => return,
        };
        let all = matches!(index.as_deref(), Some("@") | Some("*"));
        let val = self.lookup(&name, index.as_deref(), acc);
        match prefix.as_deref() {
            Some("#") => {
                let n = match &val {
                    Some(Val::Array(a)) if all => a.len(),
                    Some(v) => v.first().text.chars().count(),
                    None => 0,
                };
                acc.text(n.to_string(), false);
                return;
            }
            Some("!") => {
                let target = val.map(|v| v.first().text).unwrap_or_default();
                let v = self.lookup(&target, None, acc);
                self.push_val(v, &target, quoted, false, acc);
                return;
            }
            _ => {}
        }
        let Some((op, operands)) = ops.first().cloned() else {
            self.push_val(val, &name, quoted, all, acc);
            return;
        };
        let is_set = val.is_some();
        let is_nonempty = val.as_ref().is_some_and(|v| match v {
            Val::Scalar(s) => !s.text.is_empty(),
            Val::Array(a) => !a.is_empty(),
        });
        match op.as_str() {
            ":-" | "-" | ":=" | "=" => {
                let use_default = if op.starts_with(':') {
                    !is_nonempty
                } else {
                    !is_set
                };
                if use_default {
                    let d = self.operand(src, &operands, acc);
                    if op.ends_with('=') {
                        self.env
                            .insert(name.clone(), Val::Scalar(Str::lit(d.clone())));
                    }
                    acc.text(d, !quoted);
                } else {
                    self.push_val(val, &name, quoted, all, acc);
                }
            }
            ":+" | "+" => {
                let cond = if op.starts_with(':') {
                    is_nonempty
                } else {
                    is_set
                };
                if cond {
                    let d = self.operand(src, &operands, acc);
                    acc.text(d, !quoted);
                }
            }
            _ => {
                let Some(v) = val else {
                    self.push_val(None, &name, quoted, all, acc);
                    return;
                };
                let a = self.operand(src, &operands, acc);
                let b = ops
                    .get(1)
                    .map(|(_, n)| n.clone())
                    .map(|n| self.operand(src, &n, acc));
                let items: Vec<Str> = v
                    .items()
                    .into_iter()
                    .map(|mut s| {
                        if s.dynamic {
                            return s;
                        }
                        s.text = apply_op(&op, &s.text, &a, b.as_deref());
                        s
                    })
                    .collect();
                let v = if all {
                    Val::Array(items)
                } else {
                    Val::Scalar(items.into_iter().next().unwrap_or_default())
                };
                self.push_val(Some(v), &name, quoted, all, acc);
            }
        }
    }
}

/// Applies a `${name OP a [OP b]}` operator to one value.
fn apply_op(op: &str, v: &str, a: &str, b: Option<&str>) -> String {
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
fn unescape_unquoted(raw: &str) -> String {
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
fn unescape_dq(raw: &str, heredoc: bool) -> String {
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

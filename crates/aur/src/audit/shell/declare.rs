//! Declarations (`export`, `local`, `declare`, `typeset`, `readonly`): the assignments they
//! make, read as bash reads their words.

use std::rc::Rc;

use tree_sitter::Node;

use super::command::src_snippet;
use super::source::ParsedSrc;
use super::walk::Walker;
use super::{Assignment, Str, Val, Word};

impl Walker {
    pub(super) fn declaration(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut c = node.walk();
        let kids: Vec<Node> = node.children(&mut c).collect();
        let keyword = kids.first().map(|k| k.kind()).unwrap_or("");
        // `export NAME…`, `declare -x NAME…`: the programs run after it see these variables.
        let exports = keyword == "export"
            || (matches!(keyword, "declare" | "typeset")
                && kids.iter().skip(1).any(|k| {
                    let t = src.raw(*k);
                    k.kind() == "word" && t.starts_with('-') && t.contains('x')
                }));
        // Pieces with nothing between them are one word to bash (`GETOPT_COMPATIBL"E"=1` is a
        // variable_name then a concatenation to tree-sitter).
        let mut groups: Vec<Vec<Node>> = Vec::new();
        for ch in kids.iter().skip(1) {
            match groups.last_mut() {
                Some(g) if g.last().is_some_and(|l| l.end_byte() == ch.start_byte()) => g.push(*ch),
                _ => groups.push(vec![*ch]),
            }
        }
        for g in groups {
            if let [ch] = g.as_slice() {
                let ch = *ch;
                match ch.kind() {
                    "variable_assignment" => {
                        self.assign(src, ch, keyword == "local");
                        if exports && let Some(n) = ch.child_by_field_name("name") {
                            self.exported.insert(src.raw(n).to_owned());
                        }
                        continue;
                    }
                    "variable_name" if exports => {
                        self.exported.insert(src.raw(ch).to_owned());
                        continue;
                    }
                    "variable_name" if matches!(keyword, "local" | "declare" | "typeset") => {
                        let n = src.raw(ch).to_owned();
                        self.env.entry(n).or_insert(Val::Scalar(Str::default()));
                        continue;
                    }
                    "command_substitution" | "process_substitution" => {
                        let _ = self.subst(src, ch, ch.kind() == "process_substitution");
                        continue;
                    }
                    _ => {}
                }
            }
            self.declared_word(src, node, &g);
        }
    }

    /// A word of a declaration that bash reads as an assignment only after quote removal and
    /// expansion (`export GETOPT_COMPATIBL"E"=1`, `export "${v}IBLE=1"`; attack 29 F2): the name
    /// as bash would read it, or, where part of it is only known at run time, a name no rule can
    /// mistake for a readable one (`$?…`).
    fn declared_word(&mut self, src: &Rc<ParsedSrc>, decl: Node, pieces: &[Node]) {
        const WORDS: &[&str] = &[
            "word",
            "string",
            "raw_string",
            "concatenation",
            "simple_expansion",
            "expansion",
            "variable_name",
            "ansi_c_string",
            "number",
        ];
        if pieces.iter().any(|p| !WORDS.contains(&p.kind())) {
            return;
        }
        let mut w = Word::default();
        for p in pieces {
            if p.kind() == "variable_name" {
                w.text.push_str(src.raw(*p));
            } else {
                let e = self.expand_one(src, *p);
                w.text.push_str(&e.text);
                w.dynamic |= e.dynamic;
                w.taint = w.taint.with(e.taint);
            }
        }
        if w.text.starts_with('-') || !(w.text.contains('=') || w.dynamic) {
            return;
        }
        let (name, value) = w.text.split_once('=').unwrap_or((&w.text, ""));
        let readable = !w.dynamic
            && !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let name = if readable {
            name.to_owned()
        } else {
            format!("$?{name}")
        };
        let value = Val::Scalar(Str {
            text: value.to_owned(),
            taint: w.taint,
            dynamic: w.dynamic,
        });
        if readable {
            self.env.insert(name.clone(), value.clone());
        }
        let (snippet, _) = src_snippet(src, decl);
        self.an.assigns.push(Assignment {
            file: src.file,
            pos: src.pos(pieces[0]),
            name,
            value,
            phase: self.phase,
            snippet,
            conditional: self.conditional > 0,
        });
    }
}

//! The sources the walker parses: a file, or text parsed again — produced by the script
//! (eval'd, decoded, piped to a shell) or found inside a file (here-documents, `Exec=` lines) —
//! with every position mapped back to the original file.

use std::rc::Rc;

use tree_sitter::{Node, Parser, Tree};

use super::Pos;

/// The most text parsed again from one command (limits keep hostile input from making the
/// analysis slow).
pub(super) const MAX_EMBED_BYTES: usize = 256 * 1024;

/// Where the positions of a parsed text point to in the original file.
pub(super) enum Base {
    /// The text is the file itself.
    File,
    /// The text was produced (eval'd, decoded): every position is the outer command's.
    Fixed(Pos, String),
    /// The text is a verbatim part of the file starting at this line and column.
    Offset(Pos),
}

pub(super) struct ParsedSrc {
    pub text: String,
    pub tree: Tree,
    pub(super) file: usize,
    pub base: Base,
    line_starts: Vec<usize>,
}

/// The bytes tree-sitter parses: every byte of a non-ASCII character becomes `x`, so byte offsets
/// stay those of the text (findings quote the text itself) while the grammar's scanner never sees
/// a code point past ASCII. It hands them to C's `isdigit`, whose table is indexed out of bounds
/// by one (`{` then U+10FFF0 crashed the process with SIGSEGV: a PKGBUILD could kill the
/// daemon). To bash, as to tree-sitter, a non-ASCII byte is a word character, as `x` is.
fn ascii_masked(text: &str) -> Vec<u8> {
    let mut bytes: Vec<u8> = text
        .bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect();
    super::lexer::as_bash_reads_it(&mut bytes);
    bytes
}

impl ParsedSrc {
    pub(super) fn new(
        parser: &mut Parser,
        text: String,
        file: usize,
        base: Base,
    ) -> Option<Rc<ParsedSrc>> {
        let tree = parser.parse(ascii_masked(&text), None)?;
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Some(Rc::new(ParsedSrc {
            text,
            tree,
            file,
            base,
            line_starts,
        }))
    }

    pub(super) fn raw<'a>(&'a self, node: Node) -> &'a str {
        self.text.get(node.byte_range()).unwrap_or("")
    }

    fn local_pos(&self, byte: usize) -> Pos {
        let line = self.line_starts.partition_point(|&s| s <= byte).max(1) - 1;
        let start = self.line_starts[line];
        let col = self
            .text
            .get(start..byte.min(self.text.len()))
            .map_or(0, |s| s.chars().count());
        Pos {
            line: line as u32 + 1,
            col: col as u32 + 1,
        }
    }

    pub(super) fn pos(&self, node: Node) -> Pos {
        match &self.base {
            Base::Fixed(p, _) => *p,
            Base::File => self.local_pos(node.start_byte()),
            Base::Offset(o) => {
                let p = self.local_pos(node.start_byte());
                if p.line == 1 {
                    Pos {
                        line: o.line,
                        col: o.col + p.col - 1,
                    }
                } else {
                    Pos {
                        line: o.line + p.line - 1,
                        col: p.col,
                    }
                }
            }
        }
    }

    /// (snippet, decoded text) for a node.
    pub(super) fn snippet(&self, node: Node) -> (String, Option<String>) {
        let own = shorten(self.raw(node));
        match &self.base {
            Base::Fixed(_, outer) => (outer.clone(), Some(own)),
            _ => (own, None),
        }
    }
}

/// The first line of `s`, trimmed and cut to 160 characters.
pub(crate) fn shorten(s: &str) -> String {
    let mut lines = s.trim().lines();
    let first = lines.next().unwrap_or("").trim_end();
    let mut out: String = first.chars().take(160).collect();
    if out.len() < first.len() || lines.next().is_some() {
        out.push_str(" …");
    }
    out
}

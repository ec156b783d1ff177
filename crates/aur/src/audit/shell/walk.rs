//! Walks tree-sitter-bash trees statement by statement, keeping a variable environment, and
//! records every command that would run (functions inlined, small loops unrolled, eval'd and
//! decoded text parsed again: `source.rs`; which files, in which phase: `files.rs`).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tree_sitter::{Node, Parser};

use super::roles::endless_loop;
use super::source::{Base, ParsedSrc};
use super::statics;
use super::{Analysis, Cmd, Embed, EmbedKind, Env, Phase, Pos, Redir, Str, Taint, Val, Word};
use crate::audit::names;

/// Limits that keep hostile input from making the analysis slow.
pub(super) const MAX_STEPS: u64 = 400_000;
const MAX_DEPTH: u32 = 8;
const MAX_LOOP_UNROLL: usize = 16;

#[derive(Clone)]
pub(super) struct FuncRef {
    pub(super) src: Rc<ParsedSrc>,
    pub(super) start: usize,
    pub(super) end: usize,
}

pub(super) struct Walker {
    pub(super) an: Analysis,
    pub(super) env: Env,
    /// Variables `export` or `declare -x` handed to the programs run after them.
    pub(super) exported: HashSet<String>,
    pub(super) parser: Parser,
    pub(super) funcs: HashMap<String, FuncRef>,
    pub(super) aliases: HashMap<String, String>,
    pub(super) positional: Vec<Str>,
    pub(super) phase: Phase,
    pub(super) func: Option<Rc<str>>,
    pub(super) file: usize,
    pub(super) embed: Option<Embed>,
    pub(super) cwd: Option<String>,
    /// Directories saved by `pushd`.
    pub(super) dir_stack: Vec<Option<String>>,
    /// Depth of loops that never end by themselves.
    pub(super) forever: u32,
    /// Depth of branches (if/elif/else, case, && / ||) around the code being walked.
    pub(super) conditional: u32,
    pub(super) pipe: Option<(u32, u16, u16)>,
    pub(super) background: bool,
    pub(super) in_subst: Option<usize>,
    pub(super) extra_redirs: Vec<Redir>,
    pub(super) extra_stdin: Option<Word>,
    /// Raw text and position of the last here-document, for files it writes.
    pub(super) pending_heredoc: Option<(String, Pos)>,
    pub(super) next_pipe: u32,
    pub(super) depth: u32,
    pub(super) steps: u64,
    pub(super) called: HashSet<String>,
    pub(super) stack: Vec<String>,
}

impl Walker {
    pub(super) fn new(parser: Parser) -> Walker {
        Walker {
            an: Analysis::default(),
            env: Env::new(),
            exported: HashSet::new(),
            parser,
            funcs: HashMap::new(),
            aliases: HashMap::new(),
            positional: Vec::new(),
            phase: Phase::Global,
            func: None,
            file: 0,
            embed: None,
            cwd: None,
            dir_stack: Vec::new(),
            forever: 0,
            conditional: 0,
            pipe: None,
            background: false,
            in_subst: None,
            extra_redirs: Vec::new(),
            extra_stdin: None,
            pending_heredoc: None,
            next_pipe: 0,
            depth: 0,
            steps: 0,
            called: HashSet::new(),
            stack: Vec::new(),
        }
    }

    pub(super) fn walk_func_body(&mut self, f: &FuncRef) {
        let src = f.src.clone();
        let Some(node) = src
            .tree
            .root_node()
            .descendant_for_byte_range(f.start, f.end)
        else {
            return;
        };
        let mut node = node;
        while node.kind() != "function_definition" {
            match node.parent() {
                Some(p) => node = p,
                None => return,
            }
        }
        if let Some(body) = node.child_by_field_name("body") {
            let saved = self.file;
            self.file = src.file;
            // `f() { …; } >> FILE`: bash applies the definition's redirections each time the
            // function runs, to every command of its body, as for `{ …; } >> FILE`.
            let saved_r = self.extra_redirs.len();
            let saved_s = self.extra_stdin.clone();
            let saved_h = self.pending_heredoc.take();
            let mut c = node.walk();
            for (i, ch) in node.children(&mut c).enumerate() {
                if node.field_name_for_child(i as u32) == Some("redirect")
                    || (ch.id() != body.id() && ch.kind().ends_with("redirect"))
                {
                    self.redirect(&src, ch);
                }
            }
            self.walk_stmt(&src, body, false);
            self.extra_redirs.truncate(saved_r);
            self.extra_stdin = saved_s;
            self.pending_heredoc = saved_h;
            self.file = saved;
        }
    }

    fn tick(&mut self) -> bool {
        self.steps += 1;
        self.steps <= MAX_STEPS
    }

    pub(super) fn walk_block(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        for (i, ch) in children.iter().enumerate() {
            if !ch.is_named() {
                continue;
            }
            let bg = children.get(i + 1).is_some_and(|n| n.kind() == "&");
            self.walk_stmt(src, *ch, bg);
        }
    }

    fn walk_stmt(&mut self, src: &Rc<ParsedSrc>, node: Node, bg: bool) {
        if !self.tick() {
            return;
        }
        let saved_bg = self.background;
        self.background |= bg;
        match node.kind() {
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
            "command" => self.command(src, node),
            "variable_assignment" => self.assign(src, node, false),
            "variable_assignments" => {
                let mut c = node.walk();
                for ch in node.named_children(&mut c) {
                    if ch.kind() == "variable_assignment" {
                        self.assign(src, ch, false);
                    }
                }
            }
            "declaration_command" => self.declaration(src, node),
            "unset_command" => {
                let mut c = node.walk();
                for ch in node.named_children(&mut c) {
                    let name = src.raw(ch).to_owned();
                    self.env.remove(&name);
                }
            }
            "pipeline" => self.pipeline(src, node),
            "redirected_statement" => self.redirected(src, node),
            "subshell" => {
                let cwd = self.cwd.clone();
                self.walk_block(src, node);
                self.cwd = cwd;
            }
            "for_statement" => self.for_loop(src, node),
            "case_statement" => {
                if let Some(v) = node.child_by_field_name("value") {
                    self.scan_substs(src, v);
                }
                self.conditional += 1;
                let mut c = node.walk();
                for item in node.named_children(&mut c) {
                    if item.kind() == "case_item" {
                        self.case_item(src, item);
                    }
                }
                self.conditional -= 1;
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.an.defined.push((self.file, src.raw(name).to_owned()));
                    let f = FuncRef {
                        src: src.clone(),
                        start: node.start_byte(),
                        end: node.end_byte(),
                    };
                    let fname = src.raw(name).to_owned();
                    self.funcs.insert(fname.clone(), f.clone());
                    // A function defined inside another runs without its name in the text when
                    // bash or makepkg calls it: `command_not_found_handle`, or a name makepkg
                    // itself runs after package() in the same shell (`bsdtar`, `find`, `strip`
                    // …; a function goes before any program or builtin of its name) — so its
                    // body is walked where it is defined, as code that may run (attack 32 F2).
                    // A top-level one is walked with every function of the file.
                    // Walked as a call would be (its name on the stack: a body that calls
                    // itself is recursion, a fork bomb's `:(){ :|:& };:`).
                    if self.func.is_some() && self.depth < MAX_DEPTH && !self.stack.contains(&fname)
                    {
                        self.stack.push(fname);
                        self.depth += 1;
                        self.conditional += 1;
                        self.walk_func_body(&f);
                        self.conditional -= 1;
                        self.depth -= 1;
                        self.stack.pop();
                    }
                }
            }
            "while_statement" => {
                let endless = endless_loop(src, node);
                self.forever += u32::from(endless);
                self.walk_block(src, node);
                self.forever -= u32::from(endless);
            }
            "test_command" | "arithmetic_expansion" | "c_style_for_statement" => {
                if node.kind() == "c_style_for_statement" {
                    let endless = node.child_by_field_name("condition").is_none();
                    self.forever += u32::from(endless);
                    // The initializer, condition and update run too, each a substitution's
                    // command included (attack 30 F2: `for ((; $(U); ))`).
                    let body = node.child_by_field_name("body");
                    let mut c = node.walk();
                    let clauses: Vec<Node> = node
                        .named_children(&mut c)
                        .filter(|n| Some(n.id()) != body.map(|b| b.id()))
                        .collect();
                    for clause in clauses {
                        self.scan_substs(src, clause);
                    }
                    if let Some(b) = body {
                        self.walk_stmt(src, b, false);
                    }
                    self.forever -= u32::from(endless);
                } else {
                    self.scan_substs(src, node);
                }
            }
            // Code that may or may not run (a branch, the right side of && / ||).
            "if_statement" | "elif_clause" | "else_clause" | "list" => {
                self.conditional += 1;
                self.walk_block(src, node);
                self.conditional -= 1;
            }
            "program" | "compound_statement" | "do_group" | "negated_command" | "ERROR" => {
                self.walk_block(src, node)
            }
            _ => self.scan_substs(src, node),
        }
        self.background = saved_bg;
    }

    fn case_item(&mut self, src: &Rc<ParsedSrc>, item: Node) {
        let mut c = item.walk();
        for (i, ch) in item.children(&mut c).enumerate() {
            if !ch.is_named() {
                continue;
            }
            if item.field_name_for_child(i as u32) == Some("value") {
                // A pattern is expanded when bash tries it, a substitution in it run (attack 30
                // F2: `case y in x) ;; $(U)) ;; esac`).
                self.scan_substs(src, ch);
                continue;
            }
            self.walk_stmt(src, ch, false);
        }
    }

    /// Runs every substitution found below `node` (for conditions and other non-commands),
    /// those tree-sitter leaves as text inside a leaf included ([`Walker::scan_leaf_text`]).
    pub(super) fn scan_substs(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut c = node.walk();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "command_substitution" | "process_substitution" => {
                    let _ = self.subst(src, n, n.kind() == "process_substitution");
                }
                _ if n.named_child_count() == 0 => self.scan_leaf_text(src, n),
                _ => stack.extend(n.named_children(&mut c)),
            }
        }
    }

    /// Substitutions inside a leaf's text, which tree-sitter-bash does not parse: a `${v#…}`,
    /// `${v%%…}` or `${v,,…}` pattern is one `regex` leaf, a default's backquotes one `word`
    /// (`${v:-`…`}`), an extended glob's body text — and bash expands every `$(…)`, backquote
    /// and `<(…)` in them all the same (attack 30 F2). Class: *a reader that lists where code can
    /// hide instead of visiting all of it*: so any such leaf is parsed again as the words of a
    /// command and every substitution in it walked, wherever the leaf sits. Quoting is kept
    /// (`'$(…)'` and `\$(…)` stay text).
    pub(super) fn scan_leaf_text(&mut self, src: &Rc<ParsedSrc>, leaf: Node) {
        if !matches!(leaf.kind(), "regex" | "word" | "extglob_pattern") {
            return;
        }
        let raw = src.raw(leaf).to_owned();
        self.scan_text(src, leaf, &raw);
    }

    /// Parses `raw` — text bash expands that tree-sitter left unparsed — as the words of a
    /// command and walks every substitution in it, placed at `at` (see [`Walker::scan_leaf_text`];
    /// also a here-document's text between its parsed expansions, where a backquote is only
    /// text to the grammar: attack 32 F17).
    pub(super) fn scan_text(&mut self, src: &Rc<ParsedSrc>, at: Node, raw: &str) -> bool {
        if !hides_subst(raw) || self.depth >= MAX_DEPTH {
            return false;
        }
        let before = self.an.substs.len();
        let (snippet, _) = src.snippet(at);
        let base = Base::Fixed(src.pos(at), snippet);
        let Some(inner) = ParsedSrc::new(&mut self.parser, format!(": {raw}"), src.file, base)
        else {
            return false;
        };
        self.depth += 1;
        self.scan_substs(&inner, inner.tree.root_node());
        self.depth -= 1;
        self.an.substs.len() > before
    }

    fn for_loop(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let var = node
            .child_by_field_name("variable")
            .map(|v| src.raw(v).to_owned())
            .unwrap_or_default();
        let mut values: Vec<Str> = Vec::new();
        let mut has_in = false;
        let mut c = node.walk();
        for (i, ch) in node.children(&mut c).enumerate() {
            if node.field_name_for_child(i as u32) == Some("value") {
                has_in = true;
                let e = self.expand(src, ch);
                values.extend(
                    e.fields
                        .into_iter()
                        .zip(e.field_taints)
                        .map(|(t, taint)| Str {
                            text: t,
                            taint,
                            dynamic: e.dynamic,
                        }),
                );
            }
        }
        if !has_in {
            values = self.positional.clone();
        }
        let Some(body) = node.child_by_field_name("body") else {
            return;
        };
        if values.is_empty() || values.len() > MAX_LOOP_UNROLL || self.depth >= MAX_DEPTH {
            self.env.insert(
                var.clone(),
                Val::Scalar(Str {
                    text: format!("${{{var}}}"),
                    taint: values.iter().fold(Taint::default(), |t, v| t.with(v.taint)),
                    dynamic: true,
                }),
            );
            self.walk_stmt(src, body, false);
            return;
        }
        self.depth += 1;
        for v in values {
            self.env.insert(var.clone(), Val::Scalar(v));
            self.walk_stmt(src, body, false);
        }
        self.depth -= 1;
    }

    fn pipeline(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut c = node.walk();
        let stages: Vec<Node> = node.named_children(&mut c).collect();
        let id = self.next_pipe;
        self.next_pipe += 1;
        let saved = self.pipe;
        let n = stages.len().min(u16::MAX as usize) as u16;
        let mut ranges = Vec::new();
        for (i, st) in stages.iter().enumerate() {
            self.pipe = Some((id, i as u16, n));
            let start = self.an.cmds.len();
            self.walk_stmt(src, *st, false);
            ranges.push(start..self.an.cmds.len());
        }
        self.pipe = saved;
        // A shell reading its script from the pipe: work out what it reads, if we can.
        for j in 1..ranges.len() {
            let Some(k) = self.single_direct(ranges[j].clone()) else {
                continue;
            };
            if !names::reads_script_from_stdin(&self.an.cmds[k]) {
                continue;
            }
            let mut producers = Vec::new();
            for r in &ranges[..j] {
                match self.single_direct(r.clone()) {
                    Some(p) => producers.push(p),
                    None => producers.clear(),
                }
            }
            if producers.len() != j {
                continue;
            }
            let cmds: Vec<&Cmd> = producers.iter().map(|&p| &self.an.cmds[p]).collect();
            if let Some((text, taint)) = statics::run_pipeline(&cmds) {
                let outer = &self.an.cmds[producers[0]];
                let base = Base::Fixed(outer.pos, outer.snippet.clone());
                self.embed_text(
                    text,
                    base,
                    Embed {
                        kind: EmbedKind::Stdin,
                        taint,
                    },
                );
            }
        }
    }

    /// The one command in `range` that is not inside a nested substitution, if exactly one.
    fn single_direct(&self, range: std::ops::Range<usize>) -> Option<usize> {
        let mut found = None;
        for i in range {
            if self.an.cmds[i].in_subst == self.in_subst {
                if found.is_some() {
                    return None;
                }
                found = Some(i);
            }
        }
        found
    }

    fn redirected(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let saved_r = self.extra_redirs.len();
        let saved_s = self.extra_stdin.clone();
        let saved_h = self.pending_heredoc.take();
        let mut body = None;
        let mut c = node.walk();
        for (i, ch) in node.children(&mut c).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("body") => body = Some(ch),
                Some("redirect") => self.redirect(src, ch),
                _ => {
                    if ch.kind().ends_with("redirect") {
                        self.redirect(src, ch);
                    }
                }
            }
        }
        if let Some(b) = body {
            self.walk_stmt(src, b, false);
        }
        self.extra_redirs.truncate(saved_r);
        self.extra_stdin = saved_s;
        self.pending_heredoc = saved_h;
        self.after_heredocs(src, node);
    }

    /// The commands tree-sitter-bash puts inside a here-document's redirect node, from the
    /// operator's line (`cat <<EOF && cmd`, `cat <<EOF | cmd`, `cat <<EOF; cmd` once its word is
    /// respelt): they run after the command, and were never walked (attack 29 F7).
    pub(super) fn after_heredocs(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut c = node.walk();
        let redirects: Vec<Node> = node
            .children(&mut c)
            .filter(|n| n.kind() == "heredoc_redirect")
            .collect();
        for r in redirects {
            let mut c = r.walk();
            let mut follow = Vec::new();
            for (i, ch) in r.children(&mut c).enumerate() {
                if r.field_name_for_child(i as u32) == Some("right") {
                    follow.push(ch);
                } else if ch.kind() == "pipeline" {
                    let mut pc = ch.walk();
                    follow.extend(ch.named_children(&mut pc));
                }
            }
            for stmt in follow {
                self.walk_stmt(src, stmt, false);
            }
        }
    }

    /// Adds one redirect node to the pending redirects / stdin.
    pub(super) fn redirect(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        match node.kind() {
            "file_redirect" => {
                let mut op = String::from(">");
                let mut target = None;
                let mut c = node.walk();
                for (i, ch) in node.children(&mut c).enumerate() {
                    match node.field_name_for_child(i as u32) {
                        Some("destination") => target = Some(ch),
                        Some("descriptor") => {}
                        _ if !ch.is_named() => op = ch.kind().to_owned(),
                        _ => {}
                    }
                }
                if let Some(t) = target {
                    let w = self.expand_one(src, t);
                    self.extra_redirs.push(Redir { op, target: w });
                }
            }
            "heredoc_redirect" => {
                let mut c = node.walk();
                let mut quoted = false;
                let mut body_node = None;
                for ch in node.children(&mut c) {
                    match ch.kind() {
                        "heredoc_start" => {
                            let t = src.raw(ch);
                            quoted = t.contains(['\'', '"', '\\']);
                        }
                        "heredoc_body" => body_node = Some(ch),
                        k if k.ends_with("redirect") => self.redirect(src, ch),
                        _ => {}
                    }
                }
                let Some(b) = body_node else { return };
                let mut w = if quoted {
                    Word {
                        text: src.raw(b).to_owned(),
                        pos: src.pos(b),
                        ..Word::default()
                    }
                } else {
                    self.expand_heredoc(src, b)
                };
                w.pos = src.pos(b);
                self.extra_stdin = Some(w);
                self.pending_heredoc = Some((src.raw(b).to_owned(), src.pos(b)));
            }
            "herestring_redirect" => {
                let mut c = node.walk();
                let parts: Vec<Node> = node.named_children(&mut c).collect();
                if let Some(last) = parts.last() {
                    let w = self.expand_one(src, *last);
                    self.extra_stdin = Some(w);
                }
            }
            _ => {}
        }
    }
}

/// Whether a leaf's text may hold a substitution bash runs (see [`Walker::scan_leaf_text`]).
pub(super) fn hides_subst(raw: &str) -> bool {
    raw.contains("$(") || raw.contains('`') || raw.contains("<(") || raw.contains(">(")
}

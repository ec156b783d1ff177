//! Walks tree-sitter-bash trees statement by statement, keeping a variable environment, and
//! records every command that would run (functions inlined, small loops unrolled, eval'd and
//! decoded text parsed again).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tree_sitter::{Node, Parser, Tree};

use super::roles::{LocalRole, endless_loop, local_role};
use super::statics;
use super::{
    Analysis, Cmd, Embed, EmbedKind, Env, FileKind, FileSrc, Phase, Pos, Redir, Str, Taint, Val,
    Word,
};
use crate::audit::names;

/// Limits that keep hostile input from making the analysis slow.
const MAX_STEPS: u64 = 400_000;
const MAX_DEPTH: u32 = 8;
pub(super) const MAX_EMBED_BYTES: usize = 256 * 1024;
const MAX_LOOP_UNROLL: usize = 16;

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
    text.bytes()
        .map(|b| if b.is_ascii() { b } else { b'x' })
        .collect()
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

#[derive(Clone)]
pub(super) struct FuncRef {
    src: Rc<ParsedSrc>,
    start: usize,
    end: usize,
}

pub(super) struct Walker {
    pub(super) an: Analysis,
    pub(super) env: Env,
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

/// Parses and walks a PKGBUILD and its install scripts and hooks.
pub(crate) fn analyze(pkgbuild: &str, extra: &[(String, String)]) -> Analysis {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return Analysis::default();
    }
    let mut w = Walker::new(parser);
    w.an.files.push(FileSrc {
        name: "PKGBUILD".into(),
        kind: FileKind::Pkgbuild,
    });
    w.walk_file(0, pkgbuild, Phase::Global);
    let pkgbuild_cmds = w.an.cmds.len();
    let install_names: Vec<String> =
        w.an.all_values("install")
            .into_iter()
            .map(|v| names::basename(&v.text).to_owned())
            .filter(|v| !v.is_empty())
            .collect();
    for (name, text) in extra {
        let base = names::basename(name);
        let declared_install = install_names.iter().any(|n| n == base);
        let kind = if declared_install || name.ends_with(".install") {
            FileKind::Install
        } else if name.ends_with(".hook") || text.contains("[Trigger]") {
            FileKind::Hook
        } else {
            FileKind::Local
        };
        let idx = w.an.files.len();
        w.an.files.push(FileSrc {
            name: name.clone(),
            kind,
        });
        match kind {
            FileKind::Hook => w.walk_hook(idx, text),
            FileKind::Install => w.walk_file(idx, text, Phase::Install),
            _ => match local_role(&w.an.cmds[..pkgbuild_cmds], base, text) {
                Some(LocalRole::Script(phase)) => w.walk_file(idx, text, phase),
                Some(LocalRole::Unit) => w.walk_exec_lines(idx, text, Phase::Runtime),
                None => {}
            },
        }
    }
    w.an.truncated = w.steps > MAX_STEPS;
    w.an
}

impl Walker {
    pub(super) fn new(parser: Parser) -> Walker {
        Walker {
            an: Analysis::default(),
            env: Env::new(),
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

    fn base_env() -> Env {
        let mut env = Env::new();
        for v in ["srcdir", "pkgdir", "startdir", "HOME", "USER"] {
            env.insert(v.into(), Val::Scalar(Str::lit(format!("${v}"))));
        }
        env.insert("CARCH".into(), Val::Scalar(Str::lit("x86_64")));
        env.insert("IFS".into(), Val::Scalar(Str::lit(" \t\n")));
        env
    }

    /// Walks one file: the top level in order, then every function (PKGBUILD functions in
    /// makepkg's order), each from a copy of the top-level environment.
    /// `phase` is `Global` for the PKGBUILD; other scripts run wholly in the phase given.
    fn walk_file(&mut self, file: usize, text: &str, phase: Phase) {
        let is_pkgbuild = file == 0;
        let Some(src) = ParsedSrc::new(&mut self.parser, text.to_owned(), file, Base::File) else {
            return;
        };
        self.file = file;
        self.funcs.clear();
        self.called.clear();
        self.env = Self::base_env();
        self.phase = phase;
        self.func = None;
        // makepkg reads the PKGBUILD from the directory that holds it.
        self.cwd = if is_pkgbuild {
            Some("$startdir".to_owned())
        } else if phase.is_build() || phase == Phase::Package {
            Some("$srcdir".to_owned())
        } else {
            None
        };
        self.collect_errors(&src, src.tree.root_node());
        self.walk_block(&src, src.tree.root_node());
        let global = self.env.clone();
        if is_pkgbuild {
            self.an.global = global.clone();
        }
        let mut order: Vec<(String, FuncRef)> = self
            .funcs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        order.sort_by_key(|(name, f)| (phase_rank(name), f.start));
        if is_pkgbuild {
            self.an.functions = order.iter().map(|(n, _)| n.clone()).collect();
        }
        // Standard functions first, so helpers they call are walked in the caller's phase.
        for (name, f) in &order {
            if self.called.contains(name) {
                continue;
            }
            self.env = global.clone();
            self.phase = if is_pkgbuild {
                Phase::of_function(name)
            } else {
                phase
            };
            self.func = Some(Rc::from(name.as_str()));
            // makepkg runs every PKGBUILD function from $srcdir.
            self.cwd = (is_pkgbuild || phase.is_build() || phase == Phase::Package)
                .then(|| "$srcdir".to_owned());
            self.dir_stack.clear();
            self.called.insert(name.clone());
            self.stack.push(name.clone());
            self.walk_func_body(f);
            self.stack.pop();
        }
        self.func = None;
    }

    fn walk_hook(&mut self, file: usize, text: &str) {
        self.walk_exec_lines(file, text, Phase::Hook);
    }

    /// The `Exec…=` lines of an ALPM hook or a systemd unit, each walked as a command line.
    fn walk_exec_lines(&mut self, file: usize, text: &str, phase: Phase) {
        self.file = file;
        self.env = Self::base_env();
        self.phase = phase;
        self.func = None;
        for (i, line) in text.lines().enumerate() {
            let t = line.trim_start();
            let Some(rest) = t.strip_prefix("Exec") else {
                continue;
            };
            let rest = rest
                .trim_start_matches(|c: char| c.is_ascii_alphanumeric())
                .trim_start();
            let Some(cmdline) = rest.strip_prefix('=') else {
                continue;
            };
            let cmdline = cmdline.trim_start_matches(['-', '@', '+', '!', ':']);
            let lead = line.len() - cmdline.len();
            let pos = Pos {
                line: i as u32 + 1,
                col: line[..lead].chars().count() as u32 + 1,
            };
            self.embed_text(
                cmdline.to_owned(),
                Base::Offset(pos),
                Embed {
                    kind: if phase == Phase::Hook {
                        EmbedKind::HookExec
                    } else {
                        EmbedKind::Generated
                    },
                    taint: Taint::default(),
                },
            );
        }
    }

    fn collect_errors(&mut self, src: &ParsedSrc, root: Node) {
        if !root.has_error() {
            return;
        }
        let mut cursor = root.walk();
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            if self.an.parse_errors.len() >= 20 {
                return;
            }
            if n.is_error() || n.is_missing() {
                self.an.parse_errors.push((src.file, src.pos(n)));
                continue;
            }
            if n.has_error() {
                stack.extend(n.children(&mut cursor));
            }
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
            self.walk_stmt(&src, body, false);
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
                let mut c = node.walk();
                for item in node.named_children(&mut c) {
                    if item.kind() == "case_item" {
                        self.case_item(src, item);
                    }
                }
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.funcs.insert(
                        src.raw(name).to_owned(),
                        FuncRef {
                            src: src.clone(),
                            start: node.start_byte(),
                            end: node.end_byte(),
                        },
                    );
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
                    if let Some(b) = node.child_by_field_name("body") {
                        self.walk_stmt(src, b, false);
                    }
                    self.forever -= u32::from(endless);
                } else {
                    self.scan_substs(src, node);
                }
            }
            "program" | "compound_statement" | "do_group" | "list" | "if_statement"
            | "elif_clause" | "else_clause" | "negated_command" | "ERROR" => {
                self.walk_block(src, node)
            }
            _ => self.scan_substs(src, node),
        }
        self.background = saved_bg;
    }

    fn case_item(&mut self, src: &Rc<ParsedSrc>, item: Node) {
        let mut c = item.walk();
        for (i, ch) in item.children(&mut c).enumerate() {
            if !ch.is_named() || item.field_name_for_child(i as u32) == Some("value") {
                continue;
            }
            self.walk_stmt(src, ch, false);
        }
    }

    /// Runs every substitution found below `node` (for conditions and other non-commands).
    pub(super) fn scan_substs(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut c = node.walk();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "command_substitution" | "process_substitution" => {
                    let _ = self.subst(src, n, n.kind() == "process_substitution");
                }
                _ => stack.extend(n.named_children(&mut c)),
            }
        }
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
                values.extend(e.fields.into_iter().map(|t| Str {
                    text: t,
                    taint: e.taint,
                    dynamic: e.dynamic,
                }));
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

fn phase_rank(name: &str) -> u8 {
    match name {
        "prepare" => 0,
        "pkgver" => 1,
        "build" => 2,
        "check" => 3,
        "package" => 4,
        n if n.starts_with("package_") => 5,
        _ => 6,
    }
}

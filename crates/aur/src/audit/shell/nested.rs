//! Code run from inside a command, walked where it runs: a `$(…)`, backquote or `<(…)`/`>(…)`
//! substitution in a subshell of its own (its output worked out when the audit can), and text
//! that becomes code — `eval`'d, given to `sh -c`, fed to a shell's standard input, written to a
//! file that runs — parsed again and walked as code run from here.

use std::rc::Rc;

use tree_sitter::Node;

use super::source::{Base, ParsedSrc};
use super::walk::Walker;
use super::{Cmd, Embed, EmbedKind, Subst, Taint, statics};
use crate::audit::names;

const MAX_DEPTH: u32 = 8;

impl Walker {
    /// Walks a substitution in a subshell; returns its output if it can be worked out.
    pub(super) fn subst(
        &mut self,
        src: &Rc<ParsedSrc>,
        node: Node,
        process: bool,
    ) -> (Option<String>, Taint, usize) {
        let id = self.an.substs.len();
        self.an.substs.push(Subst::default());
        let saved_pipe = self.pipe.take();
        let saved_bg = std::mem::replace(&mut self.background, false);
        let saved_in = self.in_subst.replace(id);
        let saved_r = std::mem::take(&mut self.extra_redirs);
        let saved_s = self.extra_stdin.take();
        let saved_h = self.pending_heredoc.take();
        let saved_env = self.env.clone();
        let saved_cwd = self.cwd.clone();
        let start = self.an.cmds.len();
        if self.depth < MAX_DEPTH {
            self.depth += 1;
            self.walk_block(src, node);
            self.depth -= 1;
        }
        let end = self.an.cmds.len();
        self.pipe = saved_pipe;
        self.background = saved_bg;
        self.in_subst = saved_in;
        self.extra_redirs = saved_r;
        self.extra_stdin = saved_s;
        self.pending_heredoc = saved_h;
        self.env = saved_env;
        self.cwd = saved_cwd;
        let all: Vec<usize> = (start..end).collect();
        let net = all.iter().any(|&i| names::is_downloader(&self.an.cmds[i]));
        let decoded = all.iter().any(|&i| names::is_decoder(&self.an.cmds[i]));
        let mut taint = Taint::SUBST;
        if net {
            taint = taint.with(Taint::NET);
        }
        if decoded {
            taint = taint.with(Taint::DECODED);
        }
        let direct: Vec<&Cmd> = all
            .iter()
            .map(|&i| &self.an.cmds[i])
            .filter(|c| c.in_subst == Some(id))
            .collect();
        for c in &direct {
            for w in c.argv.iter().chain(c.stdin.iter()) {
                taint = taint.with(Taint(w.taint.0 & (Taint::NET.0 | Taint::DECODED.0)));
            }
        }
        let out = if process {
            None
        } else {
            statics::run_pipeline(&direct)
        };
        let copies_functions = end == start && {
            let mut c = node.walk();
            let kids: Vec<Node> = node.named_children(&mut c).collect();
            kids.len() == 1 && kids[0].kind() == "declaration_command" && {
                let mut w = src.raw(kids[0]).split_whitespace();
                matches!(w.next(), Some("declare" | "typeset"))
                    && w.next() == Some("-f")
                    && w.next().is_some()
            }
        };
        self.an.substs[id] = Subst {
            net,
            decoded,
            copies_functions,
            fed: process && src.raw(node).starts_with(">("),
        };
        match out {
            Some((text, t)) => (Some(text), taint.with(t), id),
            None => (None, taint, id),
        }
    }

    /// Parses `text` and walks it as code run from here.
    pub(super) fn embed_text(&mut self, text: String, base: Base, embed: Embed) {
        if self.depth >= MAX_DEPTH
            || text.len() > super::source::MAX_EMBED_BYTES
            || text.trim().is_empty()
        {
            return;
        }
        let Some(src) = ParsedSrc::new(&mut self.parser, text, self.file, base) else {
            return;
        };
        let saved_embed = self.embed;
        self.embed = Some(match saved_embed {
            Some(outer) => Embed {
                kind: embed.kind,
                taint: embed.taint.with(outer.taint),
            },
            None => embed,
        });
        let saved_pipe = self.pipe.take();
        let saved_bg = std::mem::replace(&mut self.background, false);
        let saved_r = std::mem::take(&mut self.extra_redirs);
        let saved_s = self.extra_stdin.take();
        let saved_h = self.pending_heredoc.take();
        // Only eval runs in this shell; `sh -c`, a script fed to a shell, a generated file and
        // a hook's Exec line are other processes, whose `cd` leaves this shell where it was.
        let own_shell = embed.kind == EmbedKind::Eval;
        let saved_dir = (!own_shell).then(|| (self.cwd.clone(), self.dir_stack.clone()));
        self.depth += 1;
        self.walk_block(&src, src.tree.root_node());
        self.depth -= 1;
        if let Some((cwd, stack)) = saved_dir {
            self.cwd = cwd;
            self.dir_stack = stack;
        }
        self.embed = saved_embed;
        self.pipe = saved_pipe;
        self.background = saved_bg;
        self.extra_redirs = saved_r;
        self.extra_stdin = saved_s;
        self.pending_heredoc = saved_h;
    }
}

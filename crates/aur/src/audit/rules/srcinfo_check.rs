//! PKGBUILD versus .SRCINFO: the AUR web page and AUR helpers show .SRCINFO, so anything the
//! PKGBUILD adds that .SRCINFO does not mention (an install script, a source, a dependency) is
//! hidden from the person reading the page. How much a mismatch matters follows what the
//! hidden thing can do: an install script that runs anything, a package manager, a download
//! the page does not list are high or medium; an install script that only prints fixed text,
//! a local file the audit reads, an ordinary dependency from the repositories are low.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, FileKind, Pos, Redir, Taint, Word};

const ARRAYS: &[&str] = &[
    "source",
    "source_x86_64",
    "depends",
    "depends_x86_64",
    "makedepends",
    "install",
];

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let Some(si) = &ctx.srcinfo else { return };
    let add = |sink: &mut Sink, id, sev, line: u32, why: String| {
        sink.add(
            id,
            sev,
            ".SRCINFO",
            Pos {
                line: line.max(1),
                col: 1,
            },
            "",
            why,
        );
    };
    // A .SRCINFO of another package (a renamed package whose old .SRCINFO was copied along):
    // its version, sources and ordinary dependencies say nothing of this PKGBUILD and are not
    // compared; an install script or a package manager it hides is still hidden from the page
    // and the helpers, whatever the names say (a name changed to switch the comparison off).
    let si_names: Vec<&str> = si.packages.iter().map(|(n, _)| n.as_str()).collect();
    let other_name = !si_names.is_empty()
        && !ctx.pkgnames.is_empty()
        && !ctx
            .pkgnames
            .iter()
            .any(|n| n.contains('$') || si_names.contains(&n.as_str()));
    if other_name {
        add(
            sink,
            "AUR-SRCINFO-MISMATCH",
            Severity::Low,
            1,
            format!(
                "the .SRCINFO is for {}, not for this PKGBUILD's {}: it was not regenerated, so the AUR page and helpers show another package's metadata",
                si_names.join(" "),
                ctx.pkgnames.join(" ")
            ),
        );
    }
    // Version.
    let pkgver = ctx.an.global_str("pkgver");
    let pkgrel = ctx.an.global_str("pkgrel");
    if let (Some(v), Some(r)) = (&pkgver, &pkgrel)
        && !other_name
        && !v.dynamic
        && !r.dynamic
    {
        let line = si
            .base
            .get("pkgver")
            .and_then(|x| x.first())
            .map_or(1, |(l, _)| *l);
        if si.first("pkgver") != Some(v.text.as_str())
            || si.first("pkgrel").is_some_and(|x| x != r.text)
        {
            add(
                sink,
                "AUR-SRCINFO-MISMATCH",
                Severity::Low,
                line,
                format!(
                    "the version in .SRCINFO ({}) is not the PKGBUILD's ({}-{})",
                    si.version().unwrap_or_default(),
                    v.text,
                    r.text
                ),
            );
        }
    }
    // A .SRCINFO written for another version (a bot bumped pkgver and did not regenerate it)
    // differs in every versioned source; compare those as of its version.
    let stale = match (&pkgver, si.first("pkgver")) {
        (Some(v), Some(sv)) if !v.dynamic && v.text != sv && v.text.len() >= 2 => {
            Some((v.text.clone(), sv.to_owned()))
        }
        _ => None,
    };
    for arr in ARRAYS {
        // What makepkg --printsrcinfo sees: the top level and the package functions' metadata.
        // Values computed while building (`makedepends+=(clang)` in prepare()) never reach
        // .SRCINFO by design, so they are no mismatch.
        // Values added only in a branch (`if _is_lto_kernel; then makedepends+=(clang)`)
        // depend on the builder's settings; .SRCINFO records one of them.
        let mut pk: Vec<crate::audit::shell::Str> = ctx.an.global_list(arr);
        let mut optional: Vec<String> = Vec::new();
        // `$pkgname` inside `package_NAME()` is NAME: the same value spelled with each split
        // package's name is what makepkg --printsrcinfo writes for that package.
        let mut per_package: Vec<String> = Vec::new();
        for a in ctx
            .an
            .assigns
            .iter()
            .filter(|a| a.name == *arr && a.file == 0)
        {
            if a.conditional {
                optional.extend(a.value.items().into_iter().map(|s| s.text));
            } else if a.phase == crate::audit::shell::Phase::Package {
                let items = a.value.items();
                if a.snippet.contains("$pkgname") || a.snippet.contains("${pkgname}") {
                    per_package.extend(items.iter().map(|s| s.text.clone()));
                }
                pk.extend(items);
            }
        }
        if pk.iter().any(|s| s.dynamic) {
            continue;
        }
        let pk: Vec<String> = pk
            .into_iter()
            .map(|s| s.text)
            // A value the audit could not work out wholly (a `$` left in it) is not compared.
            .filter(|s| !s.is_empty() && !s.contains('$') && !optional.contains(s))
            .map(|s| match &stale {
                Some((v, sv)) if arr.starts_with("source") => s.replace(v.as_str(), sv),
                _ => s,
            })
            .collect();
        let sv: Vec<&(u32, String)> = si.values(arr);
        if pk.is_empty() && sv.is_empty() {
            continue;
        }
        let svals: Vec<&str> = sv.iter().map(|(_, v)| v.as_str()).collect();
        // A source's `name::` prefix names only its file in the build folder: the same address
        // under another (or no) name is the same download the page shows. A git repository is
        // the same with or without `.git` (before any `#fragment`).
        let location = |v: &str| -> String {
            let u = v.rsplit_once("::").map_or(v, |(_, u)| u);
            let (addr, frag) = u.split_once('#').map_or((u, ""), |(a, f)| (a, f));
            let addr = if addr.starts_with("git+") {
                addr.strip_suffix(".git").unwrap_or(addr)
            } else {
                addr
            };
            format!("{addr}#{frag}")
        };
        // A variable set in branches (`if [ "$CARCH" == x86_64 ]; then _arch=amd64; elif …`)
        // has one value per builder; .SRCINFO records the one of the machine it was made on. A
        // value that .SRCINFO lists once that variable takes another of its branch values is
        // the same source for another architecture, not a hidden one.
        let branch_vars: Vec<(String, Vec<String>)> = branch_values(ctx);
        let same_but_branch = |p: &str| {
            branch_vars.iter().any(|(cur, cands)| {
                !cur.is_empty()
                    && p.contains(cur.as_str())
                    && cands.iter().any(|c| {
                        let q = p.replace(cur.as_str(), c);
                        svals.contains(&q.as_str())
                            || svals.iter().any(|v| location(v) == location(&q))
                    })
            })
        };
        let listed = |p: &str| {
            same_but_branch(p)
                || svals.contains(&p)
                || (arr.starts_with("source")
                    && p.contains("://")
                    && svals.iter().any(|v| location(v) == location(p)))
                || (per_package.iter().any(|x| x == p)
                    && ctx.pkgnames.iter().any(|from| {
                        p.contains(from.as_str())
                            && ctx
                                .pkgnames
                                .iter()
                                .any(|to| svals.contains(&p.replace(from.as_str(), to).as_str()))
                    }))
        };
        for p in pk.iter().filter(|p| !listed(p)) {
            // Of another name's .SRCINFO, an install script is hidden only when it shows none
            // (the renamed package's own script under its old name is shown).
            let hides_code =
                (*arr == "install" && svals.is_empty()) || names::is_pkg_manager_package(p);
            if other_name && !hides_code {
                continue;
            }
            let (sev, why) = match *arr {
                // What a hidden install script can do is what it holds: one that only prints
                // fixed text hides no action (a stale .SRCINFO from before a notice was added).
                "install" if only_prints(ctx, p) => (
                    Severity::Low,
                    format!(
                        "the PKGBUILD runs the install script {p}, which .SRCINFO does not show (it was not regenerated); the script only prints fixed text, read here: check the .SRCINFO is just stale"
                    ),
                ),
                "install" => (
                    Severity::High,
                    format!(
                        "the PKGBUILD runs the install script {p}, which .SRCINFO does not show"
                    ),
                ),
                a if a.starts_with("depends") && names::is_pkg_manager_package(p) => (
                    Severity::High,
                    format!(
                        "the PKGBUILD depends on the package manager {p}, which .SRCINFO does not show"
                    ),
                ),
                // A file of the package's own tree (a patch beside the PKGBUILD) hides no
                // download: the page lists the tree's files, and the audit reads them.
                a if a.starts_with("source") && !p.contains("://") => (
                    Severity::Low,
                    format!(
                        "the PKGBUILD has the local file {p} as a source, which .SRCINFO does not list; it is in the package's own files"
                    ),
                ),
                a if a.starts_with("source") => (
                    Severity::Medium,
                    format!("the PKGBUILD has the source {p}, which .SRCINFO does not list"),
                ),
                _ if names::is_pkg_manager_package(p) => (
                    Severity::Medium,
                    format!(
                        "the PKGBUILD's {arr} has the package manager {p}, which .SRCINFO does not list"
                    ),
                ),
                // makepkg installs a missing dependency with pacman, from the configured
                // repositories only; a helper builds only what .SRCINFO names from the AUR.
                // What a hidden ordinary dependency adds is a repository package.
                _ => (
                    Severity::Low,
                    format!(
                        "the PKGBUILD's {arr} has {p}, which .SRCINFO does not list; makepkg would install it from the configured repositories only"
                    ),
                ),
            };
            let (pos, snip) = ctx.value_pos(&[arr], p).unwrap_or_default();
            sink.at("AUR-SRCINFO-MISMATCH", sev, 0, pos, &snip, why);
        }
        for (line, v) in sv.iter().filter(|(_, v)| !other_name && !pk.contains(v)) {
            add(
                sink,
                "AUR-SRCINFO-MISMATCH",
                Severity::Low,
                *line,
                format!(".SRCINFO lists {arr} = {v}, which the PKGBUILD does not have"),
            );
        }
    }
}

/// Top-level variables of the PKGBUILD assigned only inside branches: (the value the audit
/// ends with, every value a branch gives it), fixed text only.
fn branch_values(ctx: &Ctx) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for a in
        ctx.an.assigns.iter().filter(|a| {
            a.file == 0 && a.conditional && a.phase == crate::audit::shell::Phase::Global
        })
    {
        if seen.contains(&a.name.as_str()) || ARRAYS.contains(&a.name.as_str()) {
            continue;
        }
        seen.push(&a.name);
        let Some(cur) = ctx.an.global_str(&a.name).filter(|v| !v.dynamic) else {
            continue;
        };
        let cands: Vec<String> = ctx
            .an
            .assigns
            .iter()
            .filter(|b| b.file == 0 && b.name == a.name && b.phase == a.phase)
            .map(|b| b.value.first())
            .filter(|v| !v.dynamic && !v.text.is_empty())
            .map(|v| v.text)
            .collect();
        if cands.len() >= 2 && cur.text.len() >= 2 {
            out.push((cur.text, cands));
        }
    }
    out
}

/// The install file `name` is among the package's files, read whole (no parse error, the walk
/// not cut short), and every command in it is `echo` or `printf` of fixed text: no variable, no
/// substitution, nothing downloaded, decoded or hidden, no `printf -v`, no terminal escape
/// but colours ([`plain_text`]), and output only to the terminal (`>&2`, /dev/null, /dev/stdout, /dev/stderr). Any other command — a function's
/// call, a test, `eval`, `source`, a pipe into anything — and it is not.
fn only_prints(ctx: &Ctx, name: &str) -> bool {
    let base = names::basename(name);
    let Some(file) = ctx
        .an
        .files
        .iter()
        .position(|f| f.kind == FileKind::Install && names::basename(&f.name) == base)
    else {
        return false;
    };
    if ctx.an.truncated || ctx.an.parse_errors.iter().any(|(f, _)| *f == file) {
        return false;
    }
    let mut cmds = ctx.an.cmds.iter().filter(|c| c.file == file).peekable();
    cmds.peek().is_some() && cmds.all(prints_fixed_text)
}

fn prints_fixed_text(cmd: &Cmd) -> bool {
    let fixed = |w: &Word| {
        !w.dynamic
            && w.subs.is_empty()
            && !w
                .taint
                .has(Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED))
            && plain_text(&w.text)
    };
    let Some((prog, args)) = cmd.argv.split_first() else {
        return false;
    };
    matches!(prog.text.as_str(), "echo" | "printf")
        && fixed(prog)
        && cmd.env.is_empty()
        && cmd.stdin.is_none()
        && cmd.embed.is_none()
        && cmd.decoded.is_none()
        && cmd.pipe.is_none()
        && !cmd.background
        // Printing for ever (or recursing) holds the transaction: not a notice.
        && !cmd.forever
        && !cmd.recursive
        && args.iter().all(|a| fixed(a) && !a.text.starts_with("-v"))
        && cmd.redirs.iter().all(to_terminal)
}

/// A redirection that writes no file: to another descriptor or the terminal's own devices.
fn to_terminal(r: &Redir) -> bool {
    let t = r.target.text.as_str();
    !r.target.dynamic
        && ((r.op.contains('&') && !r.op.starts_with('&') && t.bytes().all(|b| b.is_ascii_digit()))
            || matches!(t, "/dev/null" | "/dev/stdout" | "/dev/stderr"))
}

/// Text whose only terminal escapes are colours (`\e[1;33m`, `\033[0m`), however spelt for
/// `echo -e` or `printf`: other escapes are not text to read — OSC 52 writes the clipboard
/// the person pastes from next, others retitle the window or answer back as typed input.
/// Hex and Unicode escapes other than the colour's ESC, and raw control characters other
/// than tab, newline and carriage return, are refused for the same reason.
fn plain_text(t: &str) -> bool {
    let mut rest = t;
    while let Some(c) = rest.chars().next() {
        let mut after = &rest[c.len_utf8()..];
        let esc = if c == '\\' {
            let spelt = ["e", "E", "0033", "033", "x1b", "x1B"]
                .iter()
                .find(|e| after.starts_with(**e));
            match spelt {
                Some(e) => {
                    after = &after[e.len()..];
                    true
                }
                None => {
                    let next = after.chars().next();
                    if next.is_some_and(|n| matches!(n, 'x' | 'u' | 'U') || n.is_ascii_digit()) {
                        return false;
                    }
                    after = next.map_or(after, |n| &after[n.len_utf8()..]);
                    false
                }
            }
        } else if c == '\u{1b}' {
            true
        } else if c.is_control() && !matches!(c, '\t' | '\n' | '\r') {
            return false;
        } else {
            false
        };
        if esc {
            // ESC [ digits and ';' m: a colour (SGR), nothing else.
            let Some(csi) = after.strip_prefix('[') else {
                return false;
            };
            let n = csi
                .find(|c: char| !(c.is_ascii_digit() || c == ';'))
                .unwrap_or(csi.len());
            if !csi[n..].starts_with('m') {
                return false;
            }
            after = &csi[n + 1..];
        }
        rest = after;
    }
    true
}

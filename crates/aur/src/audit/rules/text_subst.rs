//! A `$(…)` that only reshapes text already in the file: `$(echo "${_urls[i]}" | sed -e
//! "s|^${_url}/tree/main/||g")` cuts a path out of an address written in the PKGBUILD. Its
//! output is a piece of that text, not code from anywhere else.

use super::Ctx;
use crate::audit::names;
use crate::audit::shell::{Cmd, Word};

/// The eval'd text holds a command's output through a variable (`${_dirname}`, shown as
/// `$(…)`): every variable of this file set from a substitution before it, on the lines
/// before the eval, is set by text tools only ([`edits_text`]). A variable set from
/// `$(cat FILE)` or `$(curl …)` puts text from elsewhere into the code.
pub(super) fn variables_edit_text(ctx: &Ctx, cmd: &Cmd, args: &[Word]) -> bool {
    if !args.iter().any(|a| a.text.contains("$(")) {
        return true;
    }
    ctx.an
        .assigns
        .iter()
        .filter(|a| a.file == cmd.file && a.pos.line < cmd.pos.line)
        .filter(|a| a.value.items().iter().any(|v| v.text.contains("$(")))
        .all(|a| {
            let ids: Vec<usize> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| c.file == a.file && c.pos.line == a.pos.line)
                .filter_map(|c| c.in_subst)
                .collect();
            // No substitution on its own line: it copies another variable's output
            // (`_aliases=${_map[$_fontname]}`), judged where that one is set.
            ids.iter().all(|&id| edits_text(ctx, id))
        })
}

/// Every command of substitution `id` is a text tool over fixed words (`echo`, `printf`, `cut`,
/// `tr`, `basename`, `dirname`, and `sed` with only `s` commands and no `e`/`w` flag, no
/// `-i`), reading nothing but what it is given.
pub(super) fn edits_text(ctx: &Ctx, id: usize) -> bool {
    let cmds: Vec<_> = ctx
        .an
        .cmds
        .iter()
        .filter(|c| c.in_subst == Some(id))
        .collect();
    !cmds.is_empty()
        && cmds.iter().all(|c| {
            // Text given on standard input (`<<<"$x"`, a here-document) is given words too;
            // reading a file (`< FILE`) or writing one is not.
            let given_only = c
                .redirs
                .iter()
                .all(|r| r.op == "<<<" || r.op.starts_with("<<"));
            if c.embed.is_some() || !given_only {
                return false;
            }
            let (name, args) = names::program(c);
            match name {
                "echo" | "printf" => true,
                "cut" | "tr" | "basename" | "dirname" => {
                    // No file operand: reads only the pipe.
                    name != "cut" || args.iter().all(|a| a.text.starts_with('-'))
                }
                "sed" => args.iter().all(|a| {
                    let t = a.text.as_str();
                    matches!(t, "-e" | "-E" | "-r" | "-n" | "--regexp-extended")
                        || safe_substitution(t)
                }),
                _ => false,
            }
        })
}

/// `s|A|B|g`: a substitution whose flags neither run (`e`) nor write (`w`) anything.
fn safe_substitution(t: &str) -> bool {
    let Some(rest) = t.strip_prefix('s') else {
        return false;
    };
    let Some(d) = rest.chars().next() else {
        return false;
    };
    if d.is_alphanumeric() || d == '\\' || d.is_whitespace() {
        return false;
    }
    let parts: Vec<&str> = rest[d.len_utf8()..].split(d).collect();
    parts.len() == 3
        && parts[2]
            .chars()
            .all(|f| matches!(f, 'g' | 'i' | 'I' | 'p' | '0'..='9'))
}

/// Does this command read a file (`< FILE`), rather than only text it is given?
fn reads_a_file(cmd: &Cmd) -> bool {
    cmd.redirs
        .iter()
        .any(|r| r.op == "<" || r.op == "<>" || r.op == "0<")
}

/// A program that makes its output from nothing but its own inline text: `awk 'BEGIN{…}'` with
/// no file and no main rule reading input, `python3 -c CODE` / `perl -e CODE` … whose code
/// opens, imports and reads nothing.
pub(super) fn makes_from_inline_text(cmd: &Cmd) -> bool {
    let (name, args) = names::program(cmd);
    if matches!(name, "awk" | "gawk" | "mawk" | "nawk" | "busybox") {
        let operands: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
        return operands.len() == 1 && {
            let p = operands[0].text.trim();
            p.starts_with("BEGIN") && !p.contains("getline") && p.trim_end().ends_with('}')
        };
    }
    let Some(code) = names::inline_code(name, args) else {
        return false;
    };
    let c = code.text.as_str();
    ![
        "import",
        "open",
        "read",
        "require",
        "use ",
        "exec",
        "system",
        "glob",
        "environ",
        "ENV",
        "<",
        "`",
        "__",
        "file",
        "File",
        "fs.",
        "input",
        "STDIN",
        "stdin",
        "argv",
        "ARGV",
        "subprocess",
        "popen",
    ]
    .iter()
    .any(|k| c.contains(k))
}

/// Is every stage's input only text written in the PKGBUILD: the first stage prints fixed
/// words, is fed a fixed here-string or here-document, or makes text from its inline program;
/// no stage reads a file or holds a word the audit could not resolve.
pub(super) fn only_written_text(stages: &[&Cmd]) -> bool {
    let Some(first) = stages.first() else {
        return false;
    };
    let fixed = |c: &Cmd| {
        !c.argv.iter().any(|w| w.dynamic)
            && !c.stdin.as_ref().is_some_and(|s| s.dynamic)
            && !reads_a_file(c)
            && c.embed.is_none()
    };
    if !stages.iter().all(|c| fixed(c)) {
        return false;
    }
    let (name, _) = names::program(first);
    matches!(name, "echo" | "printf") || first.stdin.is_some() || makes_from_inline_text(first)
}

/// Substitution `id` makes its text from nothing but text written in the file, through a
/// program the audit cannot evaluate (`$(awk 'BEGIN{printf …}')`, `$(perl -e '…')`, a `sed`
/// script beyond `s`/`y`): its output is unknown, yet no one outside chose it — the shape of
/// hidden code (attack 31 F14's class: an uncomputed transformation of literal text).
/// Does a stage make characters that are not in the text it is given: an interpreter's inline
/// program, or any program but the selectors (`cut`, `head`, `sort`, `grep` … pick lines and
/// fields: what they print is made of what they read, so it holds no character the file's text
/// does not)?
pub(super) fn makes_characters(stages: &[&Cmd]) -> bool {
    const SELECTORS: &[&str] = &[
        "cut", "head", "tail", "sort", "uniq", "grep", "egrep", "fgrep", "fold", "tac", "cat",
        "tee",
    ];
    stages.iter().enumerate().any(|(k, c)| {
        let name = names::program(c).0;
        if k == 0 {
            // The first stage prints fixed words (`echo`, `printf`) or is fed them.
            makes_from_inline_text(c)
                || !(matches!(name, "echo" | "printf") || SELECTORS.contains(&name))
        } else {
            !SELECTORS.contains(&name)
        }
    })
}

pub(super) fn unseen_from_written_text(ctx: &Ctx, id: usize) -> bool {
    let by_subst = ctx.cmds_by_subst.get_or_init(|| {
        let mut m: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
        for (i, c) in ctx.an.cmds.iter().enumerate() {
            if let Some(s) = c.in_subst {
                m.entry(s).or_default().push(i);
            }
        }
        m
    });
    let stages: Vec<&Cmd> = by_subst
        .get(&id)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|&i| &ctx.an.cmds[i])
        .collect();
    !stages.is_empty()
        && stages
            .iter()
            .all(|c| c.pipe.map(|p| p.0) == stages[0].pipe.map(|p| p.0))
        && crate::audit::shell::statics::run_pipeline(&stages).is_none()
        && only_written_text(&stages)
        && makes_characters(&stages)
}

/// The variables a command's text names (`$name`, `${name…}`).
fn named_variables(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let start = if b.get(i + 1) == Some(&b'{') {
                i + 2
            } else {
                i + 1
            };
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start && !b[start].is_ascii_digit() {
                out.push(&text[start..j]);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// A variable named in `text` set (here or through other variables it copies) from a
/// substitution [`unseen_from_written_text`]: `_c=$(awk 'BEGIN{print …}')` then `$_c | sh`,
/// `eval "$_c"`, `echo "$_c"` in pkgver(). Its name, if any.
pub(super) fn unseen_variable(ctx: &Ctx, file: usize, text: &str) -> Option<String> {
    let mut todo: Vec<(String, u8)> = named_variables(text)
        .into_iter()
        .map(|n| (n.to_owned(), 0))
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some((name, depth)) = todo.pop() {
        if depth > 4 || !seen.insert(name.clone()) {
            continue;
        }
        for a in ctx
            .an
            .assigns
            .iter()
            .filter(|a| a.file == file && a.name == name)
        {
            let by_line = ctx.substs_by_line.get_or_init(|| {
                let mut m: std::collections::HashMap<(usize, u32), Vec<usize>> =
                    std::collections::HashMap::new();
                for c in &ctx.an.cmds {
                    if let Some(id) = c.in_subst {
                        m.entry((c.file, c.pos.line)).or_default().push(id);
                    }
                }
                for ids in m.values_mut() {
                    ids.sort_unstable();
                    ids.dedup();
                }
                m
            });
            let ids = by_line
                .get(&(a.file, a.pos.line))
                .map_or(&[][..], Vec::as_slice);
            if ids.iter().any(|&id| unseen_from_written_text(ctx, id)) {
                return Some(name);
            }
            let rhs = a.snippet.split_once('=').map_or("", |(_, r)| r);
            todo.extend(
                named_variables(rhs)
                    .into_iter()
                    .map(|n| (n.to_owned(), depth + 1)),
            );
        }
    }
    None
}

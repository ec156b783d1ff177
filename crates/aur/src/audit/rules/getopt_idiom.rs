//! The getopt idiom `eval set -- "$(getopt …)"` (and through a variable): the one `eval` of
//! run-time text the audit lets pass at `low`, because what it runs is `set --` and getopt's
//! shell-quoted arguments. Each condition is that property, read from what runs (attacks 27 F9,
//! 28 F4, 29 F2).

use super::Ctx;
use crate::audit::names;
use crate::audit::shell::{Cmd, Taint, Word};

/// `eval set -- "$opts"` where every assignment of `opts` in this file is `opts=$(getopt …)`:
/// the text eval runs is `set --` and getopt's shell-quoted arguments, nothing else.
///
/// Judged by what runs, not by the text (attack 29 F2, third round of *an idiom accepted by its
/// shape*): the substitution's *parsed* commands are exactly one system getopt, nothing else in
/// it (`; echo "$2"`, `| sed`, `| tr`); the word eval gets is quoted (unquoted, word splitting
/// on an `IFS` of `'` takes getopt's quotes away); no assignment of `IFS` in the file comes
/// before the eval; and `GETOPT_COMPATIBLE` is set nowhere in the file in any spelling —
/// read after quote removal, and no `export`/`declare` of a name the audit cannot read.
pub(super) fn sets_getopt_output(ctx: &Ctx, cmd: &Cmd, args: &[Word]) -> bool {
    let bad = Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED);
    if args.len() != 3
        || args[0].text != "set"
        || args[1].text != "--"
        || args.iter().any(|a| a.taint.has(bad))
        || !getopt_is_the_systems(ctx, cmd.file)
        || ifs_set_before(ctx, cmd)
    {
        return false;
    }
    let Some(rest) = cmd
        .snippet
        .trim()
        .strip_prefix("eval")
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix("set"))
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix("--"))
    else {
        return false;
    };
    // The word eval gets, as written: one double-quoted word, nothing after it on the line but
    // a list operator.
    let word = rest
        .trim()
        .split([';', '&', '|'])
        .next()
        .unwrap_or("")
        .trim();
    if word.len() < 3 || !word.starts_with('"') || !word.ends_with('"') {
        return false;
    }
    let inner = &word[1..word.len() - 1];
    // `eval set -- "$(getopt …)"`: getopt is the only command of the substitution.
    if inner.starts_with("$(") && inner.ends_with(')') {
        return args[2].subs.len() == 1 && only_getopt(ctx, &args[2].subs);
    }
    let Some(name) = inner
        .strip_prefix("${")
        .and_then(|v| v.strip_suffix('}'))
        .or_else(|| inner.strip_prefix('$'))
    else {
        return false;
    };
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return false;
    }
    // A declaration without a value (`local opts`) assigns nothing.
    let sets: Vec<_> = ctx
        .an
        .assigns
        .iter()
        .filter(|a| a.name == name && a.file == cmd.file && a.snippet.contains('='))
        .collect();
    // An empty value (`local opts=""` before the getopt line) makes `eval set --` run nothing.
    let sets: Vec<_> = sets
        .into_iter()
        .filter(|a| {
            let v = a.value.first();
            !(v.text.is_empty() && !v.dynamic && a.snippet.trim_end().ends_with(['=', '"', '\'']))
        })
        .collect();
    !sets.is_empty()
        && sets.iter().all(|a| {
            let (lhs, v) = a.snippet.split_once('=').unwrap_or(("", ""));
            let v = v.trim();
            let v = v.strip_prefix('"').unwrap_or(v);
            // The commands of substitutions that start on the assignment's line after it.
            let mut ids: Vec<usize> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| {
                    c.file == a.file
                        && c.pos.line == a.pos.line
                        && c.pos.col > a.pos.col
                        && c.in_subst.is_some()
                })
                .filter_map(|c| c.in_subst)
                .collect();
            ids.sort_unstable();
            ids.dedup();
            // The walker reads a function's body again at each call: one substitution per
            // walk, all at the same place.
            let places: Vec<_> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| c.in_subst.is_some_and(|id| ids.contains(&id)))
                .map(|c| c.pos)
                .collect();
            !lhs.trim_end().ends_with('+')
                && v.starts_with("$(")
                && places.windows(2).all(|w| w[0] == w[1])
                && only_getopt(ctx, &ids)
                && !a.value.first().taint.has(bad)
        })
}

/// Each substitution of `ids` runs exactly one command, a quoting system getopt, in no pipeline.
fn only_getopt(ctx: &Ctx, ids: &[usize]) -> bool {
    !ids.is_empty()
        && ids.iter().all(|&id| {
            let inner: Vec<&Cmd> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| c.in_subst == Some(id))
                .collect();
            let [only] = inner.as_slice() else {
                return false;
            };
            let at = names::effective(&only.argv);
            only.pipe.is_none_or(|(_, _, n)| n <= 1)
                && !only.background
                && only.argv.get(at).is_some_and(|w| system_getopt(&w.text))
                && quotes_its_output(only.argv[at + 1..].iter().map(|w| w.text.as_str()))
        })
}

/// An assignment of `IFS` in the file before `cmd` (`IFS="'"`, `local IFS=\'`).
fn ifs_set_before(ctx: &Ctx, cmd: &Cmd) -> bool {
    ctx.an
        .assigns
        .iter()
        .any(|a| a.file == cmd.file && a.name == "IFS" && a.pos < cmd.pos)
        || ctx.an.cmds.iter().any(|c| {
            c.file == cmd.file
                && c.pos < cmd.pos
                && matches!(
                    names::program(c).0,
                    "local" | "declare" | "typeset" | "export" | "readonly"
                )
                && c.argv.iter().any(|w| w.text.starts_with("IFS="))
        })
}

/// Whether getopt, given `args`, quotes what it prints — the idiom's safety. Only getopt's
/// enhanced form quotes: its first parameter an option and its option string given by `-o` /
/// `--options`; the traditional form (`getopt ha "$@"`, attack 28 F4) and `-u`/`--unquoted` (any
/// prefix, any cluster with `u`; attack 27 F9) print the words bare, and `eval set --` then runs
/// one as code. Read up to `--`.
fn quotes_its_output<'a>(args: impl Iterator<Item = &'a str>) -> bool {
    let args: Vec<&str> = args.take_while(|a| *a != "--").collect();
    // Read as getopt(1) reads its own options: `-o`, `-l`, `-n`, `-s` take a value (the rest of
    // a cluster, or the next word), which is never an option (`-o=hu` is an option string
    // holding `u`, not `-u`); long options by any unambiguous prefix.
    let mut options_given = false;
    let mut unquoted = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        i += 1;
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            let is = |full: &str| !name.is_empty() && full.starts_with(name);
            if is("options") && name.len() >= 2 {
                options_given = true;
            }
            if is("unquoted") {
                unquoted = true;
            }
            let takes = ["options", "longoptions", "name", "shell"]
                .iter()
                .any(|f| f.starts_with(name) && name.len() >= 2);
            if takes && !long.contains('=') {
                i += 1;
            }
        } else if let Some(cluster) = a.strip_prefix('-') {
            for (k, c) in cluster.char_indices() {
                match c {
                    'u' => unquoted = true,
                    'o' | 'l' | 'n' | 's' => {
                        options_given |= c == 'o';
                        if k + 1 == cluster.len() {
                            i += 1;
                        }
                        break;
                    }
                    _ => {}
                }
            }
        } else {
            break;
        }
    }
    args.first().is_some_and(|a| a.starts_with('-')) && options_given && !unquoted
}

/// Whether the system's getopt is the one a command of `file` runs, quoting: no function of that
/// file is named getopt, and nothing there sets `GETOPT_COMPATIBLE`, which turns quoting off
/// (attack 28 F4) — in any spelling (attack 29 F2: `export GETOPT_COMPATIBL"E"=1`, `export
/// "${v}IBLE=1"`): no word of the file's after quote removal names `GETOPT_COMPAT…`, and no
/// declaration sets a name the audit cannot read. Nor does the file put a directory of its own
/// on `PATH`, or name getopt in `alias`/`hash -p`/`enable`: each makes `getopt` another program.
fn getopt_is_the_systems(ctx: &Ctx, file: usize) -> bool {
    let declares = |c: &Cmd| {
        matches!(
            names::program(c).0,
            "export" | "declare" | "typeset" | "local" | "readonly" | "env"
        )
    };
    !ctx.an
        .defined
        .iter()
        .any(|(f, n)| *f == file && n == "getopt")
        && !ctx.an.assigns.iter().any(|a| {
            a.file == file
                && (a.name.contains("GETOPT_COMPAT")
                    || a.name.starts_with("$?")
                    || a.value
                        .items()
                        .iter()
                        .any(|v| v.text.contains("GETOPT_COMPAT")))
        })
        && !ctx.an.assigns.iter().any(|a| {
            // A search path with a directory of the file's own choosing finds another getopt.
            a.file == file
                && a.name == "PATH"
                && a.value.items().iter().any(|v| {
                    v.dynamic
                        || v.text.split(':').any(|d| {
                            !matches!(
                                d.trim_end_matches('/'),
                                "/usr/bin"
                                    | "/bin"
                                    | "/usr/sbin"
                                    | "/sbin"
                                    | "/usr/local/bin"
                                    | "$PATH"
                                    | "${PATH}"
                            )
                        })
                })
        })
        && !ctx.an.cmds.iter().any(|c| {
            c.file == file
                && ((matches!(names::program(c).0, "alias" | "hash" | "enable")
                    && c.argv.iter().any(|w| w.text.contains("getopt")))
                    || c.snippet.contains("GETOPT_COMPAT")
                    || c.argv.iter().any(|w| w.text.contains("GETOPT_COMPAT"))
                    || c.env.iter().any(|(n, _)| n.contains("GETOPT_COMPAT"))
                    // A name the audit cannot read may be GETOPT_COMPATIBLE (`export
                    // "${v}IBLE=1"`), as may `set -a` exporting every later assignment.
                    || (declares(c) && names::program(c).0 != "set"
                        && c.argv.iter().skip(1).any(|w| w.dynamic && !w.text.starts_with('-')))
                    || (names::program(c).0 == "set" && sets_allexport(names::program(c).1)))
        })
}

/// getopt as the system has it: found on the search path, or at its system directory
/// (`/usr/bin/getopt`); a `getopt` anywhere else (`/tmp/getopt`, `./getopt`) is some other
/// program.
fn system_getopt(word: &str) -> bool {
    matches!(word, "getopt" | "/usr/bin/getopt" | "/bin/getopt")
}

/// `set -a` / `set -o allexport` (every later assignment exported): options before the first
/// operand or `--` only — `set -- -a x` sets positional parameters.
fn sets_allexport(args: &[Word]) -> bool {
    let opts: Vec<&str> = args
        .iter()
        .map(|w| w.text.as_str())
        .take_while(|t| {
            *t != "--" && (t.starts_with('-') || t.starts_with('+') || *t == "allexport")
        })
        .collect();
    opts.iter()
        .any(|t| t.starts_with('-') && t.contains('a') || *t == "allexport")
}

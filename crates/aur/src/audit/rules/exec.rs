//! Code fetched or decoded and then executed; `eval`; downloads that are later run; network
//! access and background programs by phase (privilege changes: `elevation.rs`).

use std::collections::{BTreeMap, HashMap};

use super::{Ctx, Sink, elevation};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Taint, Word};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    pipelines(ctx, sink);
    for cmd in &ctx.an.cmds {
        code_words(ctx, cmd, sink);
        elevation::elevation(ctx, cmd, sink);
        network(cmd, sink);
        background(cmd, sink);
        dev_tcp(cmd, sink);
    }
    downloaded_then_run(ctx, sink);
}

/// Where a word's text came from, for the why.
fn origin(ctx: &Ctx, w: &Word) -> Option<(&'static str, Severity, &'static str)> {
    let net = w.taint.has(Taint::NET)
        || w.subs
            .iter()
            .any(|&s| ctx.an.substs.get(s).is_some_and(|s| s.net));
    let dec = w.taint.has(Taint::DECODED)
        || w.subs
            .iter()
            .any(|&s| ctx.an.substs.get(s).is_some_and(|s| s.decoded));
    if net {
        Some((
            "AUR-EXEC-REMOTE",
            Severity::Critical,
            "code downloaded at run time",
        ))
    } else if dec {
        Some((
            "AUR-EXEC-DECODED",
            Severity::Critical,
            "code that is decoded first (base64, hex, rot13 …)",
        ))
    } else if w.taint.has(Taint::OBFUSCATED) {
        Some((
            "AUR-EXEC-OBFUSCATED",
            Severity::Critical,
            "code hidden behind escapes, split quotes or ${IFS}",
        ))
    } else if unseen_text(ctx, w) {
        Some((
            "AUR-EXEC-DECODED",
            Severity::Critical,
            "code made from text written in this file by a program the audit cannot follow (awk, perl, a sed script beyond `s`), so what runs is not what you read",
        ))
    } else {
        None
    }
}

/// A word holding the output of a substitution that makes text only from text written in the
/// file, through a program the audit cannot evaluate (attack 31 F14's class).
fn unseen_text(ctx: &Ctx, w: &Word) -> bool {
    w.dynamic
        && w.subs
            .iter()
            .any(|&id| super::text_subst::unseen_from_written_text(ctx, id))
}

/// Words that end up executed as code by this command.
fn code_words(ctx: &Ctx, cmd: &Cmd, sink: &mut Sink) {
    if cmd.argv.is_empty() {
        return;
    }
    let i = names::effective(&cmd.argv);
    let name = basename(&cmd.argv[i].text);
    let args = &cmd.argv[i + 1..];
    let mut code: Vec<(&Word, &'static str)> = vec![(&cmd.argv[i], "runs a command whose name is")];
    match name {
        "eval" => code.extend(args.iter().map(|a| (a, "evaluates"))),
        "source" | "." => code.extend(args.first().map(|a| (a, "sources"))),
        "su" | "runuser" => {
            if let Some(p) = args.iter().position(|a| a.text == "-c") {
                code.extend(args.get(p + 1).map(|a| (a, "runs")));
            }
        }
        _ => {}
    }
    if let Some(k) = names::shell_c_arg(name, args) {
        code.push((&args[k], "runs"));
    }
    if let Some(w) = names::inline_code(name, args) {
        code.push((w, "runs"));
        let t = &w.text;
        let runs = [
            "exec(",
            "eval(",
            "os.system",
            "subprocess",
            "popen",
            "system(",
            "child_process",
            "`",
        ]
        .iter()
        .any(|m| t.contains(m));
        if runs && names::is_downloader(cmd) {
            sink.cmd(
                "AUR-EXEC-REMOTE",
                Severity::Critical,
                cmd,
                format!("inline {name} code downloads and runs a program; nobody can review what will run"),
            );
        }
    }
    if names::is_interpreter(name)
        && let Some(script) = args.iter().find(|a| !a.text.starts_with('-'))
        && !script.subs.is_empty()
    {
        code.push((script, "runs a script from"));
    }
    if names::reads_script_from_stdin(cmd)
        && let Some(s) = &cmd.stdin
    {
        code.push((s, "feeds a shell"));
    }
    for (w, verb) in code {
        if let Some((id, sev, what)) = origin(ctx, w) {
            sink.cmd(
                id,
                sev,
                cmd,
                format!("{verb} {what}; nobody can review what will run"),
            );
        } else if w.dynamic
            && let Some(var) = super::text_subst::unseen_variable(ctx, cmd.file, &cmd.snippet)
        {
            sink.cmd(
                "AUR-EXEC-DECODED",
                Severity::Critical,
                cmd,
                format!("{verb} `${var}`, made from text written in this file by a program the audit cannot follow (awk, perl, a sed script beyond `s`), so what runs is not what you read; nobody can review what will run"),
            );
            break;
        }
    }
    if name == "eval" && args.iter().any(|a| a.dynamic) {
        if defines_function_from_text(ctx, args)
            && super::text_subst::variables_edit_text(ctx, cmd, args)
        {
            sink.cmd(
                "AUR-EVAL",
                Severity::Low,
                cmd,
                "eval defines a function from text written in this file, with only variables put into it and no command's output (split packages named in a loop: `eval \"package_${name}() { … }\"`); the code it defines is the text you read here, and the audit reads it as such. Check the variables it puts in are this file's".into(),
            );
        } else if super::getopt_idiom::sets_getopt_output(ctx, cmd, args) {
            sink.cmd(
                "AUR-EVAL",
                Severity::Low,
                cmd,
                "eval set -- of getopt's output, the documented way to read options: getopt prints the arguments quoted for the shell, so the text only resets the positional parameters. Check the variable is only ever getopt's output".into(),
            );
        } else if copies_own_functions(ctx, args) {
            sink.cmd(
                "AUR-EVAL",
                Severity::Low,
                cmd,
                "eval defines functions from this PKGBUILD's own functions (`declare -f`), as split packages such as kernels name their package_* functions; the code it runs is the code you read here. Check the names it copies are this file's functions".into(),
            );
        } else {
            sink.cmd(
                "AUR-EVAL",
                Severity::Medium,
                cmd,
                "eval runs text that is only known at run time, so the code that runs is not the code you read; check where every part of its text comes from".into(),
            );
        }
    }
    if let Some(e) = cmd.embed
        && (e.taint.has(Taint::DECODED) || e.taint.has(Taint::OBFUSCATED))
    {
        sink.cmd(
            "AUR-EXEC-DECODED",
            Severity::Critical,
            cmd,
            "this command only appears after decoding text the package hides".into(),
        );
    }
}

/// `curl … | sh`, `base64 -d | bash`, `echo "$x" | python -`.
fn pipelines(ctx: &Ctx, sink: &mut Sink) {
    let mut pipes: BTreeMap<(u32, Option<usize>), Vec<&Cmd>> = BTreeMap::new();
    for c in &ctx.an.cmds {
        if let Some((id, _, _)) = c.pipe {
            pipes.entry((id, c.in_subst)).or_default().push(c);
        }
    }
    for cmds in pipes.values() {
        for (k, c) in cmds.iter().enumerate() {
            let stage = c.pipe.map_or(0, |p| p.1);
            if stage == 0 || !names::reads_script_from_stdin(c) {
                continue;
            }
            let before: Vec<&&Cmd> = cmds[..k]
                .iter()
                .filter(|p| p.pipe.map_or(0, |x| x.1) < stage)
                .collect();
            let first = before.first().copied().copied().unwrap_or(c);
            let net = before.iter().any(|p| {
                names::is_downloader(p)
                    || p.argv
                        .iter()
                        .chain(p.stdin.iter())
                        .any(|w| w.taint.has(Taint::NET))
            });
            let dec = before.iter().any(|p| {
                names::is_decoder(p)
                    || p.argv.iter().chain(p.stdin.iter()).any(|w| {
                        w.taint.has(Taint::DECODED)
                            || w.taint.has(Taint::OBFUSCATED)
                            || unseen_text(ctx, w)
                    })
                    || (p.argv.iter().chain(p.stdin.iter()).any(|w| w.dynamic)
                        && super::text_subst::unseen_variable(ctx, p.file, &p.snippet).is_some())
            }) || {
                // Made from the file's own text by a program the audit cannot follow.
                let stages: Vec<&Cmd> = before.iter().map(|p| **p).collect();
                c.in_subst.is_none()
                    && super::text_subst::only_written_text(&stages)
                    && super::text_subst::makes_characters(&stages)
                    && crate::audit::shell::statics::run_pipeline(&stages).is_none()
            };
            let prog = names::program(c).0;
            if net {
                sink.cmd(
                    "AUR-EXEC-REMOTE",
                    Severity::Critical,
                    first,
                    format!("pipes a download straight into {prog}: whatever the server sends runs, unchecked"),
                );
            } else if dec {
                sink.cmd(
                    "AUR-EXEC-DECODED",
                    Severity::Critical,
                    first,
                    format!("decodes hidden text and pipes it into {prog}: a classic way to hide malware"),
                );
            } else if before.iter().any(|p| {
                p.argv
                    .iter()
                    .any(|w| w.dynamic && w.taint.has(Taint::SUBST))
            }) {
                sink.cmd(
                    "AUR-EXEC-STDIN",
                    Severity::Medium,
                    first,
                    format!("pipes text produced at run time into {prog}"),
                );
            }
        }
    }
}

/// `eval "package_$_p() { $(declare -f "_package${_p#$pkgbase}"); … }"`: the only code
/// substituted into the text is `declare -f`/`typeset -f` of functions (text already in the
/// file), and nothing in it comes from a download, a decoder or hidden text.
/// `eval "package_$name() { … }"`: the evaluated text is a function definition written in the
/// file, with variables but no substitution's output and nothing downloaded or decoded in it.
fn defines_function_from_text(ctx: &Ctx, args: &[Word]) -> bool {
    let bad = Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED);
    if args.is_empty()
        || args.iter().any(|a| {
            a.taint.has(bad)
                || !a
                    .subs
                    .iter()
                    .all(|&id| super::text_subst::edits_text(ctx, id))
        })
    {
        return false;
    }
    let text = args
        .iter()
        .map(|a| a.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let t = text.trim_start();
    let t = t.strip_prefix("function ").unwrap_or(t).trim_start();
    let name_len = t
        // `[i]` of an array element put into the name (`package_python-${pkgname[i]}`).
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_-.${}[]".contains(c)))
        .unwrap_or(t.len());
    if name_len == 0 {
        return false;
    }
    let Some(body) = t[name_len..].trim_start().strip_prefix("()") else {
        return false;
    };
    // Exactly one definition: its body's braces balanced, and nothing after the closing one
    // (`eval "f() { :; }; $x"` defines a function and then runs `$x`).
    let body = body.trim();
    if !body.starts_with('{') {
        return false;
    }
    // Braces counted as bash reads them: not inside quotes, not escaped (attack 31 F14's x04:
    // `echo "{"` in the body made the count end after the command that follows).
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut it = body.char_indices();
    while let Some((i, c)) = it.next() {
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (Some('"'), '"') => quote = None,
            (_, '\\') => {
                it.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{') => depth += 1,
            (None, '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return body[i + 1..].trim().is_empty();
                }
            }
            _ => {}
        }
    }
    false
}

fn copies_own_functions(ctx: &Ctx, args: &[Word]) -> bool {
    let bad = Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED);
    let subs: Vec<usize> = args.iter().flat_map(|a| a.subs.iter().copied()).collect();
    !args.iter().any(|a| a.taint.has(bad))
        && !subs.is_empty()
        && subs
            .iter()
            .all(|&s| ctx.an.substs.get(s).is_some_and(|x| x.copies_functions))
}

/// The kind of network access a command makes, if any.
pub(super) fn network_kind(cmd: &Cmd) -> Option<&'static str> {
    if names::is_downloader(cmd) {
        return Some("downloads");
    }
    let (name, args) = names::program(cmd);
    let first = if name == "git" {
        names::git_subcommand(args)
    } else {
        args.iter()
            .find(|a| !a.text.starts_with('-'))
            .map(|a| a.text.as_str())
    };
    match (name, first) {
        ("git", Some("clone" | "fetch" | "pull" | "ls-remote" | "push" | "submodule")) => {
            Some("uses git over the network")
        }
        ("svn", Some("checkout" | "co" | "export" | "update")) | ("hg", Some("clone" | "pull")) => {
            Some("checks out code")
        }
        ("scp" | "sftp" | "ssh", _) => Some("opens an SSH connection"),
        ("rsync", _)
            if args.iter().any(|a| {
                a.text.contains("::") || a.text.contains("rsync://") || a.text.contains("@")
            }) =>
        {
            Some("syncs from a remote host")
        }
        ("docker" | "podman", Some("pull" | "run")) => Some("pulls a container image"),
        ("ping" | "dig" | "nslookup" | "host", _) => Some("contacts the network"),
        _ => None,
    }
}

fn network(cmd: &Cmd, sink: &mut Sink) {
    let Some(kind) = network_kind(cmd) else {
        return;
    };
    if names::pkg_manager(cmd).is_some() {
        return;
    }
    match cmd.phase {
        Phase::Install | Phase::Hook => sink.cmd(
            "AUR-INSTALL-NETWORK",
            Severity::High,
            cmd,
            format!(
                "{kind} {}: install scripts never need the network, and this runs as root",
                cmd.phase.label()
            ),
        ),
        Phase::Global => sink.cmd(
            "AUR-NETWORK-GLOBAL",
            Severity::High,
            cmd,
            format!("{kind} {}", Phase::Global.label()),
        ),
        Phase::Package => sink.cmd(
            "AUR-NETWORK-PACKAGE",
            Severity::Low,
            cmd,
            format!("{kind} in package(); files should come from source=() with checksums"),
        ),
        Phase::Runtime => {}
        _ => sink.cmd(
            "AUR-NETWORK-BUILD",
            Severity::Info,
            cmd,
            format!(
                "{kind} {}; this is not covered by the checksums in the PKGBUILD",
                cmd.phase.label()
            ),
        ),
    }
}

fn background(cmd: &Cmd, sink: &mut Sink) {
    let (name, args) = names::program(cmd);
    let wrappers = names::wrappers(cmd);
    let detached = cmd.background
        || wrappers
            .iter()
            .any(|w| matches!(*w, "nohup" | "setsid" | "daemonize" | "systemd-run"))
        || matches!(
            name,
            "disown" | "daemonize" | "start-stop-daemon" | "at" | "batch"
        )
        || (name == "screen" && args.iter().any(|a| a.text.starts_with("-d")))
        || (name == "tmux" && args.iter().any(|a| a.text == "-d"));
    if !detached || name.is_empty() || cmd.recursive || cmd.forever {
        // Self-replicating calls and endless loops are named as fork bombs instead.
        return;
    }
    let sev = match cmd.phase {
        Phase::Install | Phase::Hook | Phase::Global => Severity::High,
        Phase::Package | Phase::Pkgver | Phase::Prepare => Severity::Medium,
        _ => Severity::Info,
    };
    if cmd.phase == Phase::Runtime {
        return;
    }
    sink.cmd(
        "AUR-BACKGROUND",
        sev,
        cmd,
        format!("starts `{name}` in the background {}: it keeps running after the build or install is over", cmd.phase.label()),
    );
}

fn dev_tcp(cmd: &Cmd, sink: &mut Sink) {
    let hit = cmd
        .argv
        .iter()
        .map(|w| w.text.as_str())
        .chain(cmd.redirs.iter().map(|r| r.target.text.as_str()))
        .any(|t| t.contains("/dev/tcp/") || t.contains("/dev/udp/"));
    if hit {
        let (name, _) = names::program(cmd);
        let sev = if names::is_shell(name) || name == "exec" || cmd.phase.runs_on_system() {
            Severity::Critical
        } else {
            Severity::High
        };
        sink.cmd(
            "AUR-NET-DEVTCP",
            sev,
            cmd,
            "opens a raw network socket through bash's /dev/tcp, the way reverse shells do".into(),
        );
    }
}

/// The file a download command writes, if any.
fn download_target(cmd: &Cmd) -> Option<String> {
    let (name, args) = names::program(cmd);
    // `curl URL > FILE`: the download's output redirected into a file (attack 32 F3).
    if names::is_downloader(cmd)
        && let Some(r) =
            cmd.redirs.iter().rev().find(|r| {
                (r.op == ">" || r.op == ">>" || r.op == ">|") && !r.target.text.is_empty()
            })
        && r.target.text != "/dev/null"
    {
        return Some(basename(&r.target.text).to_owned());
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let url = texts.iter().find(|t| t.contains("://")).copied();
    let opt = |names: &[&str]| {
        texts.iter().enumerate().find_map(|(i, t)| {
            if names.contains(t) {
                texts.get(i + 1).copied()
            } else {
                names.iter().find_map(|n| t.strip_prefix(&format!("{n}=")))
            }
        })
    };
    let from_url = || url.map(|u| basename(u.split(['?', '#']).next().unwrap_or(u)));
    let out = match name {
        "curl" => opt(&["-o", "--output"]).or_else(|| {
            texts
                .iter()
                .any(|t| {
                    *t == "-O"
                        || *t == "--remote-name"
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('O'))
                })
                .then(from_url)
                .flatten()
        }),
        "wget" | "wget2" => opt(&["-O", "--output-document"]).or_else(from_url),
        "aria2c" => opt(&["-o", "--out"]).or_else(from_url),
        _ => None,
    }?;
    if out == "-" || out.is_empty() || out == "/dev/stdout" {
        return None;
    }
    Some(basename(out).to_owned())
}

/// Is `w` (a program or script path) the downloaded file `f`?
fn names_file(w: &str, f: &str) -> bool {
    basename(w) == f
}

fn downloaded_then_run(ctx: &Ctx, sink: &mut Sink) {
    // Per file and function: downloads seen so far, in order.
    let mut seen: HashMap<(usize, Option<&str>), Vec<String>> = HashMap::new();
    for cmd in &ctx.an.cmds {
        let scope = (cmd.file, cmd.func.as_deref());
        let files = seen.entry(scope).or_default();
        if let Some(f) = download_target(cmd) {
            files.push(f);
            continue;
        }
        if files.is_empty() || cmd.argv.is_empty() {
            continue;
        }
        let i = names::effective(&cmd.argv);
        let name = basename(&cmd.argv[i].text);
        let args = &cmd.argv[i + 1..];
        let runs = |f: &String| {
            (cmd.argv[i].text.contains('/') || name == f.as_str())
                && names_file(&cmd.argv[i].text, f)
                || ((names::is_interpreter(name) || name == "source" || name == ".")
                    && args
                        .iter()
                        .find(|a| !a.text.starts_with('-'))
                        .is_some_and(|a| names_file(&a.text, f)))
                // `sh < FILE` reads FILE as its program; `BASH_ENV=FILE bash …` (`ENV` for sh)
                // sources FILE first (attack 32 F3).
                || (names::reads_script_from_stdin(cmd)
                    && cmd
                        .redirs
                        .iter()
                        .any(|r| r.op == "<" && names_file(&r.target.text, f)))
                || cmd
                    .env
                    .iter()
                    .any(|(k, w)| (k == "BASH_ENV" || k == "ENV") && names_file(&w.text, f))
        };
        if let Some(f) = files.iter().find(|f| runs(f)) {
            let sev = if cmd.phase.is_build() || cmd.phase == Phase::Package {
                Severity::High
            } else {
                Severity::Critical
            };
            sink.cmd(
                "AUR-EXEC-DOWNLOADED",
                sev,
                cmd,
                format!("runs `{f}`, which was downloaded earlier without a checksum: the server decides what runs"),
            );
        } else if name == "chmod"
            && args
                .iter()
                .any(|a| a.text.contains('x') || a.text.starts_with('7') || a.text.starts_with('5'))
            && let Some(f) = files
                .iter()
                .find(|f| args.iter().any(|a| names_file(&a.text, f)))
        {
            sink.cmd(
                "AUR-EXEC-DOWNLOADED",
                Severity::Medium,
                cmd,
                format!("makes the downloaded file `{f}` executable"),
            );
        }
    }
}

//! A shell whose program is whatever the script writes to it, through a channel that is not a
//! pipe: an output process substitution (`echo CODE > >(sh)`, `exec > >(sh)`, `f() { … } >
//! >(sh)`, `tee >(bash)`), a co-process (`coproc sh`, `coproc NAME { bash; }`, then
//! `echo CODE >&"${COPROC[1]}"`), a descriptor's path (`exec 3< <(curl …); source /dev/fd/3`),
//! or `xargs … sh -c` given its code on standard input. Each is `… | sh` spelt another way
//! (attack 30 F2, 32 F3), and
//! `pipelines` in `exec.rs` sees only `|`; what is written may be assembled anywhere in the
//! script, so the text that runs is not the text a reader checks. Packages never need this: a
//! log through `>(tee …)` or `>(logger)` is no shell and stays silent.

use super::{Ctx, Sink};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::Cmd;

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
        if cmd.stdin.is_some() {
            // A here-document or here-string is its program: read like any other (`exec.rs`).
            continue;
        }
        let fed = cmd
            .in_subst
            .and_then(|id| ctx.an.substs.get(id))
            .is_some_and(|s| s.fed);
        if fed && names::reads_script_from_stdin(cmd) {
            let prog = names::program(cmd).0;
            sink.cmd(
                "AUR-EXEC-STDIN",
                Severity::High,
                cmd,
                format!("{prog} reads its program from an output process substitution `>(…)`: whatever the script writes there runs, and that text is put together at run time, not written where you read it"),
            );
        } else if let Some((prog, path)) = from_descriptor(cmd) {
            sink.cmd(
                "AUR-EXEC-STDIN",
                Severity::High,
                cmd,
                format!("{prog} runs its program from the open descriptor `{path}`: whatever was opened there runs (`exec 3< <(curl …)`), and that text is never written where you read it"),
            );
        } else if let Some(prog) = xargs_shell_code(cmd) {
            sink.cmd(
                "AUR-EXEC-STDIN",
                Severity::High,
                cmd,
                format!("xargs hands what it reads to {prog} -c as the code to run: whatever comes down the pipe runs"),
            );
        } else if let Some(prog) = coprocess_shell(cmd) {
            sink.cmd(
                "AUR-EXEC-STDIN",
                Severity::High,
                cmd,
                format!("coproc starts {prog} reading its program from a pipe the script writes to later (`>&${{COPROC[1]}}`): whatever is written there runs, and that text is put together at run time"),
            );
        }
    }
}

/// The interpreter `coproc` starts reading its program from standard input, if any:
/// `coproc sh`, `coproc bash -s`, `coproc NAME { sh; }` (tree-sitter-bash reads `coproc` as a
/// command's name and the rest as its words).
fn coprocess_shell(cmd: &Cmd) -> Option<&str> {
    let (name, args) = names::program(cmd);
    if name != "coproc" {
        return None;
    }
    let k = args
        .iter()
        .position(|a| names::is_interpreter(basename(&a.text)))?;
    let inner = Cmd {
        argv: args[k..].to_vec(),
        ..cmd.clone()
    };
    names::reads_script_from_stdin(&inner).then(|| basename(&args[k].text))
}

/// A shell, an interpreter or `source` whose program is a descriptor's path other than
/// standard input (`source /dev/fd/3`, `bash /proc/self/fd/$fd`; attack 32 F3) — standard input
/// itself is `… | sh /dev/stdin`, a pipe `exec.rs` reads.
fn from_descriptor(cmd: &Cmd) -> Option<(&str, &str)> {
    let (name, args) = names::program(cmd);
    if !(names::is_interpreter(name) || name == "source" || name == ".") {
        return None;
    }
    let script = args.iter().find(|a| !a.text.starts_with('-'))?;
    // `source <(cmd)` is the process substitution's own `/dev/fd/63`: what runs is `cmd`'s
    // output, which the walk has judged (`exec.rs`) — only a descriptor named in the text is
    // opened elsewhere.
    (script.subs.is_empty()
        && names::is_descriptor_path(&script.text)
        && !names::STDIN_PATHS.contains(&script.text.as_str()))
    .then_some((name, script.text.as_str()))
}

/// `xargs … sh -c` with no code after `-c`: the words xargs reads become the code
/// (`curl … | xargs -0 bash -c`; attack 32 F3).
fn xargs_shell_code(cmd: &Cmd) -> Option<&str> {
    // xargs is one of the wrappers `names::program` looks through: read the words as written.
    let x = cmd.argv.iter().position(|a| basename(&a.text) == "xargs")?;
    let args = &cmd.argv[x + 1..];
    let k = args
        .iter()
        .position(|a| names::is_shell(basename(&a.text)))?;
    let shell = basename(&args[k].text);
    let rest = &args[k + 1..];
    let c = rest.iter().position(|a| {
        a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('c')
    })?;
    (c + 1 == rest.len()).then_some(shell)
}

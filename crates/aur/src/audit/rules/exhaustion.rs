//! Fork bombs and resource exhaustion, named as such: a function that runs itself in the
//! background or twice through a pipe (`:(){ :|:& };:`), endless loops that start processes or
//! fill files, and writes of endless data (`dd if=/dev/zero` without `count=`, `yes > FILE`).

use std::collections::HashMap;

use super::{Ctx, Sink, argv};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase};

/// Is this command a fork bomb's self-replicating call? `pipes` counts the recursive calls
/// of each (file, pipeline).
fn fork_bomb(pipes: &HashMap<(usize, u32), usize>, cmd: &Cmd) -> bool {
    if !cmd.recursive {
        return false;
    }
    if cmd.background {
        return true;
    }
    cmd.pipe
        .is_some_and(|(p, _, _)| pipes.get(&(cmd.file, p)).copied().unwrap_or(0) >= 2)
}

fn endless_source(t: &str) -> bool {
    matches!(t, "/dev/zero" | "/dev/urandom" | "/dev/random")
}

fn writes_a_file(cmd: &Cmd) -> bool {
    cmd.redirs.iter().any(|r| {
        (r.op.starts_with('>') || r.op.starts_with("&>"))
            && !r.target.text.starts_with("/dev/")
            && !r.target.text.chars().all(|c| c.is_ascii_digit())
    })
}

/// A later stage of `cmd`'s pipeline stops reading after a bound (`head -n 2000`,
/// `head -c 5M`, `dd count=N`): the producer ends when it closes the pipe, so the file behind
/// gets that much and no more.
fn bounded_downstream(ctx: &Ctx, cmd: &Cmd) -> bool {
    let Some((id, stage, _)) = cmd.pipe else {
        return false;
    };
    ctx.an.cmds.iter().any(|c| {
        c.file == cmd.file
            && c.in_subst == cmd.in_subst
            && c.pipe.is_some_and(|(i, s, _)| i == id && s > stage)
            && {
                let (name, args) = names::program(c);
                match name {
                    "head" => args.iter().any(|a| {
                        let t = a.text.as_str();
                        t.starts_with("-n")
                            || t.starts_with("-c")
                            || t.starts_with("--lines")
                            || t.starts_with("--bytes")
                            || (t.len() > 1
                                && t.starts_with('-')
                                && t[1..].chars().all(|c| c.is_ascii_digit()))
                    }),
                    "dd" => args.iter().any(|a| a.text.starts_with("count=")),
                    _ => false,
                }
            }
    })
}

/// A size like `100G`, `20GiB`, `50000M` of at least 10 GiB.
fn huge(size: &str) -> bool {
    let s = size.trim().to_ascii_uppercase();
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let Ok(n) = digits.parse::<u64>() else {
        return false;
    };
    let unit = s[digits.len()..]
        .trim_end_matches("IB")
        .trim_end_matches('B');
    let gib = match unit {
        "T" => n.saturating_mul(1024),
        "G" => n,
        "M" => n / 1024,
        "P" | "E" => u64::MAX,
        _ => 0,
    };
    gib >= 10
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    let mut pipes: HashMap<(usize, u32), usize> = HashMap::new();
    for c in ctx.an.cmds.iter().filter(|c| c.recursive) {
        if let Some((p, _, _)) = c.pipe {
            *pipes.entry((c.file, p)).or_default() += 1;
        }
    }
    for cmd in &ctx.an.cmds {
        if cmd.phase == Phase::Runtime {
            continue;
        }
        let (name, args) = names::program(cmd);
        if fork_bomb(&pipes, cmd) {
            sink.cmd(
                "AUR-FORK-BOMB",
                Severity::Critical,
                cmd,
                format!(
                    "a fork bomb: the function `{name}` starts copies of itself {} until the machine runs out of processes and freezes",
                    cmd.phase.label()
                ),
            );
            continue;
        }
        if cmd.forever && cmd.background && !name.is_empty() {
            sink.cmd(
                "AUR-FORK-BOMB",
                Severity::Critical,
                cmd,
                format!(
                    "starts `{name}` in the background inside a loop that never ends {}: processes pile up until the machine freezes",
                    cmd.phase.label()
                ),
            );
            continue;
        }
        let endless_dd = name == "dd"
            && args
                .iter()
                .any(|a| a.text.strip_prefix("if=").is_some_and(endless_source))
            && !args.iter().any(|a| a.text.starts_with("count="))
            && args.iter().any(|a| {
                a.text
                    .strip_prefix("of=")
                    .is_some_and(|o| !o.starts_with("/dev/null"))
            });
        let endless_cat = matches!(name, "cat" | "head" | "tail" | "pv")
            && args.iter().any(|a| endless_source(&a.text))
            && !args
                .iter()
                .any(|a| a.text.starts_with("-c") || a.text == "-n")
            && writes_a_file(cmd);
        let endless_yes = name == "yes" && writes_a_file(cmd);
        let fill = name == "fallocate"
            && argv::parse(args, "lo", "", &["--length", "--offset"])
                .value(&["-l", "--length"])
                .is_some_and(|l| huge(&l));
        let endless = (endless_dd || endless_cat || endless_yes) && !bounded_downstream(ctx, cmd);
        if endless || fill {
            sink.cmd(
                "AUR-RESOURCE-EXHAUSTION",
                Severity::High,
                cmd,
                format!(
                    "writes endless or huge data to a file {}: it fills the disk until the system fails",
                    cmd.phase.label()
                ),
            );
        } else if cmd.forever && writes_a_file(cmd) {
            sink.cmd(
                "AUR-RESOURCE-EXHAUSTION",
                Severity::High,
                cmd,
                format!(
                    "writes to a file in a loop that never ends {}: it fills the disk",
                    cmd.phase.label()
                ),
            );
        } else if cmd.forever
            && matches!(cmd.phase, Phase::Install | Phase::Hook)
            && !names::is_message(name)
        {
            sink.cmd(
                "AUR-RESOURCE-EXHAUSTION",
                Severity::Medium,
                cmd,
                format!(
                    "runs `{name}` in a loop that never ends {}: pacman hangs and the transaction never completes",
                    cmd.phase.label()
                ),
            );
        }
    }
}

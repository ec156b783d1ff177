//! Spreading: SSH use, `git push`, and anything that talks to the AUR's SSH endpoint — how the
//! 2026 worm used its victims' keys to push itself into their own AUR packages.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in ctx.acting() {
        let (name, args) = names::program(cmd);
        let aur_ssh = cmd.argv.iter().chain(cmd.stdin.iter()).any(|w| {
            let t = w.text.to_ascii_lowercase();
            t.contains("aur@aur.archlinux.org")
                || t.contains("ssh://aur@")
                || t.contains("aur.archlinux.org:")
        });
        if aur_ssh {
            sink.cmd(
                "AUR-AUR-PUSH",
                Severity::Critical,
                cmd,
                "talks to the AUR over SSH with the person's key: the way AUR worms publish themselves into other packages".into(),
            );
        }
        let sub = if name == "git" {
            names::git_subcommand(args)
        } else {
            args.iter()
                .find(|a| !a.text.starts_with('-'))
                .map(|a| a.text.as_str())
        };
        match (name, sub) {
            ("git", Some("push")) => sink.cmd(
                "AUR-GIT-PUSH",
                Severity::High,
                cmd,
                format!("pushes to a git remote {}: building or installing never publishes anything", cmd.phase.label()),
            ),
            ("git", Some("commit")) if cmd.phase.runs_on_system() => sink.cmd(
                "AUR-GIT-PUSH",
                Severity::High,
                cmd,
                "commits to a git repository from an install script".into(),
            ),
            // A shipped program that hands only its caller's arguments to ssh (`exec ssh "$@"`,
            // a wrapper so openssh can stay optional) connects where its caller asks, when the
            // caller runs it: no host or key of the package's choosing.
            ("ssh" | "scp" | "sftp", _) if cmd.phase == Phase::Runtime && args.iter().all(|a| a.text.is_empty()) => sink.cmd(
                "AUR-SSH",
                Severity::Low,
                cmd,
                format!("a program the package installs runs {name} with only its caller's arguments: it connects where whoever runs it asks. Check the wrapper adds no host, key or option of its own"),
            ),
            // An SSH agent started by a program or unit the package ships (openssh's own
            // `ssh-agent.service`): it waits for the keys its person adds and connects nowhere.
            ("ssh-agent", _) if cmd.phase == Phase::Runtime => sink.cmd(
                "AUR-SSH",
                Severity::Low,
                cmd,
                "a file the package installs starts an SSH agent: it holds only the keys its person adds to it and connects nowhere. Check the agent's socket is in the person's runtime directory".into(),
            ),
            ("ssh" | "scp" | "sftp" | "ssh-add" | "ssh-agent" | "ssh-keyscan" | "ssh-copy-id", _) => sink.cmd(
                "AUR-SSH",
                Severity::High,
                cmd,
                format!("uses SSH ({name}) {}: that means the person's keys and remote hosts", cmd.phase.label()),
            ),
            // A shipped program (`makepkg-aarch64`: `makepkg --config /etc/makepkg-aarch64.conf
            // "$@"`) that hands makepkg only its caller's arguments, in the caller's directory,
            // with at most a configuration file the package installs: it builds what whoever
            // runs it asks, as them — a tool, not a script reaching other packages.
            ("makepkg", _) if cmd.phase == Phase::Runtime && callers_makepkg(ctx, cmd, args) => sink.cmd(
                "AUR-GIT-PUSH",
                Severity::Low,
                cmd,
                "a program the package installs runs makepkg with only its caller's arguments (and a configuration file the package installs), in the directory it is run from: it builds what whoever runs it asks, as them. Check the wrapper adds no option of its own and read the configuration file it names".into(),
            ),
            ("makepkg", _) if cmd.phase.runs_on_system() || cmd.phase == Phase::Global => sink.cmd(
                "AUR-GIT-PUSH",
                Severity::High,
                cmd,
                "runs makepkg from inside a package's scripts, as tools that rewrite other packages do".into(),
            ),
            _ => {}
        }
        if cmd
            .env
            .iter()
            .any(|(k, _)| k == "GIT_SSH_COMMAND" || k == "GIT_SSH")
        {
            sink.cmd(
                "AUR-SSH",
                Severity::High,
                cmd,
                "sets GIT_SSH_COMMAND to drive git over SSH with chosen keys".into(),
            );
        }
    }
    for a in &ctx.an.assigns {
        if a.name == "GIT_SSH_COMMAND" || a.name == "GIT_SSH" {
            sink.at(
                "AUR-SSH",
                Severity::High,
                a.file,
                a.pos,
                &a.snippet,
                "sets GIT_SSH_COMMAND to drive git over SSH with chosen keys".into(),
            );
        }
    }
}

/// `makepkg` in a shipped program run with no word of the program's own but `--config FILE`
/// of a file package() installs, and without a `cd` before it (the caller's directory): the
/// caller's `"$@"` expands to nothing in the file, so any other word is the program's own.
fn callers_makepkg(ctx: &Ctx, cmd: &Cmd, args: &[Word]) -> bool {
    if cmd.cwd.is_some()
        || names::wrappers(cmd)
            .iter()
            .any(|w| !matches!(*w, "exec" | "command"))
    {
        return false;
    }
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.text.is_empty() {
            i += 1;
            continue;
        }
        let file = if a.text == "--config" {
            i += 1;
            args.get(i).map(|w| w.text.as_str())
        } else {
            a.text.strip_prefix("--config=")
        };
        match file {
            Some(f) if !a.dynamic && installed(ctx, f) => i += 1,
            _ => return false,
        }
    }
    true
}

/// package() installs a file at exactly this absolute path.
fn installed(ctx: &Ctx, path: &str) -> bool {
    path.starts_with('/')
        && ctx.an.cmds.iter().any(|c| {
            c.phase == Phase::Package
                && super::files::write_targets(c)
                    .iter()
                    .any(|w| !w.dynamic && w.text.strip_prefix("$pkgdir") == Some(path))
        })
}

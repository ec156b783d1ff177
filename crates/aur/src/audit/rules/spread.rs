//! Spreading: SSH use, `git push`, and anything that talks to the AUR's SSH endpoint — how the
//! 2026 worm used its victims' keys to push itself into their own AUR packages.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::Phase;

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

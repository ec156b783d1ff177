//! Accounts and trust changed from root's code by the tools made for it (attack 32 F21; class:
//! *effects recognised by the file written, not by the tool that writes it* — `sed` of
//! `/etc/shadow` was critical, `passwd -d root` nothing): a password removed or set from the
//! package's text, a second account with uid 0, an account put into an administrators' group, and
//! a key made trusted for every later package. An install script or hook runs these as root; a
//! package's own system account (`useradd -r … -s /usr/bin/nologin foo`) is none of them.

use super::{Ctx, Sink};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase};

/// Groups whose members may become root (sudo's and polkit's administrators). `adm`, the log
/// readers, is not one: a daemon's account put there to read the journal is ordinary.
const ADMIN_GROUPS: &[&str] = &["wheel", "sudo", "admin", "root"];

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
        if !matches!(cmd.phase, Phase::Install | Phase::Hook) {
            continue;
        }
        if let Some((sev, why)) = judge(cmd) {
            sink.cmd("AUR-ACCOUNT", sev, cmd, why);
        }
    }
}

fn judge(cmd: &Cmd) -> Option<(Severity, String)> {
    let (name, args) = names::program(cmd);
    let t: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let has = |opts: &[&str]| t.iter().any(|a| opts.contains(a));
    let value_of = |opts: &[&str]| {
        t.iter().enumerate().find_map(|(i, a)| {
            opts.iter().find_map(|o| {
                if a == o {
                    t.get(i + 1).copied()
                } else {
                    a.strip_prefix(&format!("{o}="))
                }
            })
        })
    };
    let user = t.last().copied().unwrap_or("");
    match name {
        "passwd" if has(&["-d", "--delete"]) => Some((
            Severity::Critical,
            format!("removes the password of `{user}`: anyone may become that account (`su`, a console login) without one"),
        )),
        "chpasswd" | "chgpasswd" => Some((
            Severity::Critical,
            "sets passwords from text the package chose: someone knows them".into(),
        )),
        "usermod" | "useradd" | "adduser" => {
            let uid0 = value_of(&["-u", "--uid"]) == Some("0");
            if uid0 || (has(&["-o", "--non-unique"]) && value_of(&["-u", "--uid"]).is_some()) {
                return Some((
                    Severity::Critical,
                    format!("gives `{user}` user id 0: a second root"),
                ));
            }
            if value_of(&["-p", "--password"]).is_some() {
                return Some((
                    Severity::Critical,
                    format!("sets `{user}`'s password from text the package chose: someone knows it"),
                ));
            }
            let groups = value_of(&["-G", "--groups", "-aG", "-g", "--gid"]).unwrap_or("");
            groups
                .split(',')
                .find(|g| ADMIN_GROUPS.contains(g))
                .map(|g| {
                    (
                        Severity::High,
                        format!("puts `{user}` into the administrators' group `{g}`: that account may become root"),
                    )
                })
        }
        "gpasswd" if has(&["-a", "--add", "-M", "--members"]) => ADMIN_GROUPS
            .iter()
            .find(|g| t.last() == Some(*g))
            .map(|g| {
                (
                    Severity::High,
                    format!("adds an account to the administrators' group `{g}`: it may become root"),
                )
            }),
        "pacman-key" if has(&["--lsign-key", "--lsign"]) => Some((
            Severity::Medium,
            "signs a key locally: pacman then trusts every package that key signs, from any repository; check it is the key of the repository this package is for".into(),
        )),
        _ => None,
    }
}

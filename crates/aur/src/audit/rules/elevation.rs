//! Privilege changes: asking for root while building, and switching to another account in code
//! that runs on the system (install scripts, hooks, shipped programs), judged by what runs there.

use super::{Ctx, Sink, own_units, session, session_bus, units};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word};

/// `sudo`, `su`, `runuser` …: asking for root while building is high; in code that runs on
/// the system (an install script, a hook, a shipped program) switching to another account is
/// judged by what runs there. Root dropping to a fixed service account, a shipped program
/// handing work back to the person who ran it, `systemctl --user` verbs that start nothing
/// ([`session::quiet_user_systemctl`]) and one fixed message without text to the person's
/// session bus ([`session_bus::fixed_session_message`]: the system's `dbus-send`, nothing of
/// the package run, none of their files touched) are low. Anything else as a person chosen at
/// run time — a shell or `-c` text (`su` always runs one), a program of the package, a
/// message with text or a computed method, address or destination — is high: it reaches into
/// that person's session and files.
pub(super) fn elevation(ctx: &Ctx, cmd: &Cmd, sink: &mut Sink) {
    let wrappers = names::wrappers(cmd);
    let (name, args) = names::program(cmd);
    let elevated = wrappers
        .iter()
        .any(|w| matches!(*w, "sudo" | "doas" | "pkexec" | "run0"))
        || matches!(name, "sudo" | "doas" | "pkexec" | "run0")
        || (name == "su" && args.iter().any(|a| a.text == "-c"));
    if cmd.phase.runs_on_system() {
        let as_user = (wrappers.contains(&"sudo") && cmd.argv.iter().any(|a| a.text == "-u"))
            || matches!(name, "su" | "runuser")
            || (name == "machinectl" && args.first().is_some_and(|a| a.text == "shell"));
        if as_user {
            if cmd.phase == Phase::Runtime && runs_as_invoker(ctx, cmd) {
                sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    "a program the package installs, when run through sudo or pkexec, hands this work back to the person who ran it (SUDO_USER, SUDO_UID, PKEXEC_UID, logname): less power than root, in the session of whoever started it. Check it does only what its message says".into(),
                );
                return;
            }
            if let Some(verb) = session::quiet_user_systemctl(cmd) {
                sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    format!(
                        "switches to a person's account {} only for `systemctl --user {verb}`: it starts nothing in their session (reloading, asking, stopping or disabling a user unit); check the unit is the package's own",
                        cmd.phase.label()
                    ),
                );
                return;
            }
            if let Some(why) = own_user_units(ctx, cmd) {
                sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    format!("{why} {}", cmd.phase.label()),
                );
                return;
            }
            if let Some(method) = session_bus::fixed_session_message(ctx, cmd) {
                sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    format!(
                        "switches to a person's account {} only to send their session bus the fixed message `{method}` with no text in it: the system's dbus-send runs, nothing of the package, and none of their files is read or written; check the destination is their desktop's own service, not one the package ships (a D-Bus service file of the package would start its program in the session)",
                        cmd.phase.label()
                    ),
                );
                return;
            }
            if let Some((acct, conf)) = configured_account(ctx, cmd) {
                sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    format!(
                        "drops root to the account its own configuration file {conf} names (`{acct}`, which the package ships and the administrator edits) {}: a service account set by root, not a person chosen at run time; check `{acct}` is a service account, not a person's login",
                        cmd.phase.label()
                    ),
                );
                return;
            }
            match named_account(cmd) {
                // A fixed account name is a service account (a person's login name is not
                // known to a package): root dropping its rights, not reaching a session.
                Some(acct) => sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::Low,
                    cmd,
                    format!(
                        "drops root to the fixed account `{acct}` {}: less power, not a person's session; check `{acct}` is a service account the package or the system creates",
                        cmd.phase.label()
                    ),
                ),
                None => sink.cmd(
                    "AUR-INSTALL-AS-USER",
                    Severity::High,
                    cmd,
                    format!(
                        "runs code as a desktop user chosen at run time {}: it reaches into that person's session and files; check what it runs there",
                        cmd.phase.label()
                    ),
                ),
            }
        }
        return;
    }
    if elevated {
        sink.cmd(
            "AUR-SUDO",
            Severity::High,
            cmd,
            format!(
                "asks for root {}: building a package never needs it",
                cmd.phase.label()
            ),
        );
    }
}

/// `systemctl --user enable|start|reenable|restart UNIT…` as another account, every unit a
/// declared dependency's (PipeWire's `pipewire`, `wireplumber` for a desktop that depends on
/// them), none the package's own and none written by the package's own scripts: it turns on in
/// that person's session the services a package installed with this one ships for every
/// session, and no code of this package runs. The why, for a low finding; `None` for anything
/// else (the package's own unit, a unit of no declared package, a variable word).
fn own_user_units(ctx: &Ctx, cmd: &Cmd) -> Option<String> {
    let (verb, units, rest) = session::user_systemctl(cmd)?;
    if !matches!(verb.as_str(), "enable" | "start" | "reenable" | "restart")
        || units.is_empty()
        || rest.iter().any(|w| w.contains('$'))
    {
        return None;
    }
    let mut named = Vec::new();
    for u in &units {
        // The package's own user unit runs this package's code in the person's session: that
        // stays high (landing 5), as does a unit the package's scripts write themselves.
        if units::shipped_unit(ctx, u)
            || own_units::written_on_system(ctx, u)
            || own_units::foreign_daemon(u)
        {
            return None;
        }
        named.push(format!("{u} (from {})", units::dependency_unit(ctx, u)?));
    }
    Some(format!(
        "switches to a person's account only for `systemctl --user {verb}` of {}: user services of a package this one depends on, started in that person's session as that package ships them (pacman installs it with this one); no code of this package runs there. Check each unit is the dependency's own and that no file of this package replaces it",
        named.join(", ")
    ))
}

/// The account `su`/`runuser`/`sudo -u` switches to, when it is a fixed name (not a variable,
/// not a substitution, not root): `runuser jdownloader -c …`, `sudo -u nobody …`.
/// The account a program is handed to is the person who ran this one through sudo, pkexec
/// or doas (`sudo -u "$SUDO_USER"`, `sudo -u "#$SUDO_UID"`, `runuser -u "$(logname)"`).
fn runs_as_invoker(ctx: &Ctx, cmd: &Cmd) -> bool {
    let Some(w) = account_word(cmd) else {
        return false;
    };
    const VARS: &[&str] = &[
        "${SUDO_USER}",
        "${SUDO_UID}",
        "${PKEXEC_UID}",
        "${DOAS_USER}",
    ];
    let t = w.text.trim_start_matches('#');
    if VARS.contains(&t) {
        return true;
    }
    !w.subs.is_empty()
        && w.text == "$(…)"
        && w.subs.iter().all(|&id| {
            let inner: Vec<&Cmd> = ctx
                .an
                .cmds
                .iter()
                .filter(|c| c.in_subst == Some(id))
                .collect();
            inner.len() == 1 && names::program(inner[0]).0 == "logname"
        })
}

fn named_account(cmd: &Cmd) -> Option<String> {
    let w = account_word(cmd)?;
    let name = w.text.as_str();
    let fixed = !w.dynamic
        && !name.is_empty()
        && name != "root"
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    fixed.then(|| name.to_owned())
}

/// The word naming the account `sudo -u`, `runuser -u` or `su` switch to.
fn account_word(cmd: &Cmd) -> Option<&Word> {
    let words: Vec<&Word> = cmd.argv.iter().collect();
    let mut acct = None;
    let mut i = 0;
    while i < words.len() {
        let t = words[i].text.as_str();
        let prog = basename(t);
        if matches!(prog, "sudo" | "runuser" | "su") {
            // Options with a value: -u USER (sudo, runuser), -c CMD, -s SHELL, -g GROUP, -w.
            let mut j = i + 1;
            while j < words.len() {
                let a = words[j].text.as_str();
                match a {
                    "-u" | "--user" => {
                        acct = words.get(j + 1).copied();
                        j += 2;
                    }
                    "-c"
                    | "--command"
                    | "-s"
                    | "--shell"
                    | "-g"
                    | "--group"
                    | "-G"
                    | "--supp-group"
                    | "-w"
                    | "--whitelist-environment"
                    | "-C"
                    | "-h"
                    | "-D"
                    | "-R" => j += 2,
                    "-" | "-l" | "--login" | "-m" | "-p" | "-f" | "-E" | "-H" | "-n" => j += 1,
                    a if a.starts_with('-') => j += 1,
                    _ => {
                        if prog != "sudo" && acct.is_none() {
                            acct = Some(words[j]);
                        }
                        break;
                    }
                }
            }
            if acct.is_some() {
                break;
            }
        }
        i += 1;
    }
    acct
}

/// The account `su`/`runuser` switches to is a variable (`- $XMMS2_USER`) the script reads
/// from a configuration file it sources (`. /etc/conf.d/xmms2d.conf`) that the package itself
/// installs there from one of its own files, where it is set to a fixed account name
/// (`XMMS2_USER="xmms2user"`), and the script never sets it itself: root's configuration
/// chooses the account, as a fixed name in the script would. Returns (account, path).
fn configured_account(ctx: &Ctx, cmd: &Cmd) -> Option<(String, String)> {
    let w = account_word(cmd)?;
    let t = w.text.as_str();
    let var = t
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| t.strip_prefix('$'))?;
    if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    if ctx
        .an
        .assigns
        .iter()
        .any(|a| a.file == cmd.file && a.name == var)
    {
        return None;
    }
    let sourced = ctx
        .an
        .cmds
        .iter()
        .filter(|c| c.file == cmd.file)
        .filter_map(|c| {
            let (n, a) = names::program(c);
            (matches!(n, "." | "source") && a.len() == 1 && a[0].text.starts_with("/etc/"))
                .then(|| a[0].text.clone())
        });
    for conf in sourced {
        // package() installs one of the package's own files at that path.
        let shipped = ctx
            .an
            .cmds
            .iter()
            .filter(|c| c.phase == Phase::Package)
            .find_map(|c| {
                let (n, a) = names::program(c);
                let into = a
                    .last()
                    .is_some_and(|l| l.text.starts_with("$pkgdir") && l.text.ends_with(&conf));
                (matches!(n, "install" | "cp") && into).then_some(a)
            });
        let Some(args) = shipped else { continue };
        let text = ctx.local_texts.iter().find_map(|(name, text)| {
            args[..args.len() - 1]
                .iter()
                .any(|a| basename(&a.text) == basename(name))
                .then_some(text)
        });
        let Some(text) = text else { continue };
        let mut value = None;
        for line in text.lines() {
            if let Some(v) = line
                .trim()
                .strip_prefix(var)
                .and_then(|r| r.strip_prefix('='))
            {
                value = Some(v.trim().trim_matches(['"', '\'']).to_owned());
            }
        }
        let fixed = value.filter(|v| {
            !v.is_empty()
                && v != "root"
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        });
        if let Some(acct) = fixed {
            return Some((acct, conf));
        }
    }
    None
}

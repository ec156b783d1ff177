//! What a unit link or drop-in enables (attack 31 F17; class: *a place judged, not what it
//! enables*): a link in a `.wants/`/`.requires/` directory is judged by the unit it starts,
//! however it is spelt (`ln -s ../X DIR/`, `-t DIR`, a link name from its target), and a
//! drop-in (`X.service.d/*.conf`) for a unit the package does not ship by what it changes in
//! that unit.

use super::super::units::{dependency_unit, shipped_unit};
use super::super::{Ctx, Sink};
use super::written::{Written, mentions_own};
use crate::audit::names::basename;
use crate::audit::report::Severity;
use crate::audit::shell::Phase;

/// systemd's own units that give a root shell or a console login.
fn console_unit(u: &str) -> bool {
    let u = u.to_ascii_lowercase();
    u.contains("getty") || u.starts_with("autovt@") || u.starts_with("debug-shell")
}

fn autologin_anywhere(ctx: &Ctx) -> bool {
    ctx.local_texts
        .iter()
        .any(|(_, t)| t.contains("--autologin"))
        || ctx.an.cmds.iter().any(|c| {
            c.phase == Phase::Package
                && (c.argv.iter().any(|a| a.text.contains("--autologin"))
                    || c.stdin
                        .as_ref()
                        .is_some_and(|s| s.text.contains("--autologin")))
        })
}

pub(super) fn judge(ctx: &Ctx, w: &Written, sink: &mut Sink) {
    let p = w.path.as_str();
    // systemd's unit directories (a staging tree such as a live image's
    // `/usr/lib/os/live/run/systemd/` is copied elsewhere later, and judged there).
    let unit_dir = [
        "/etc/systemd/",
        "/usr/lib/systemd/",
        "/lib/systemd/",
        "/run/systemd/",
        "/usr/local/lib/systemd/",
    ]
    .iter()
    .any(|d| p.starts_with(d));
    if !unit_dir {
        return;
    }
    let parent = p.rsplit_once('/').map_or("", |(d, _)| d);
    let dir = basename(parent);
    if dir.ends_with(".wants") || dir.ends_with(".requires") {
        link(ctx, w, sink);
    } else if console_unit(basename(p)) && w.link.is_none() {
        // A whole unit file named like systemd's console units: in /etc/systemd/system it
        // replaces systemd's own; anywhere it is what `getty@ttyN` starts.
        let Some(t) = &w.text else { return };
        let autologin = t.contains("--autologin") || t.contains(" -a root");
        let shell = t.lines().any(|l| {
            l.trim().strip_prefix("ExecStart").is_some_and(|r| {
                let cmd = r.trim_start_matches(['=', ' ', '-', '@', ':', '+', '!']);
                SHELLS.contains(&basename(cmd.split_whitespace().next().unwrap_or("")))
            })
        });
        if autologin || shell {
            sink.cmd(
                "AUR-PERSISTENCE",
                Severity::Critical,
                w.cmd,
                format!(
                    "{} {}: a unit named like systemd's console login {} that {}",
                    w.raw,
                    w.cmd.phase.label(),
                    basename(p),
                    if autologin {
                        "logs the console in without a password"
                    } else {
                        "starts a shell on the console"
                    }
                ),
            );
        }
    } else if let Some(unit) = dir.strip_suffix(".d")
        && super::super::unit_owners::UNIT_SUFFIXES
            .iter()
            .any(|s| unit.ends_with(s))
        && p.ends_with(".conf")
    {
        drop_in(ctx, w, unit, sink);
    }
}

fn link(ctx: &Ctx, w: &Written, sink: &mut Sink) {
    let mut units = vec![basename(&w.path).to_owned()];
    if let Some(t) = &w.link {
        units.push(basename(t).to_owned());
    }
    units.retain(|u| !u.is_empty() && !u.starts_with('$'));
    let Some(unit) = units.iter().find(|u| console_unit(u)).or(units.first()) else {
        return;
    };
    let (sev, why) = if unit.starts_with("debug-shell") {
        (
            Severity::Critical,
            "enables systemd's debug-shell.service: a root shell on tty9 with no password, from the next boot".to_owned(),
        )
    } else if console_unit(unit) && autologin_anywhere(ctx) {
        (
            Severity::Critical,
            format!(
                "enables the console login {unit}, and the package sets `--autologin`: a console logged in without a password"
            ),
        )
    } else if units
        .iter()
        .any(|u| shipped_unit(ctx, u) || dependency_unit(ctx, u).is_some())
        || unit.ends_with(".target")
    {
        return;
    } else {
        (
            Severity::High,
            format!(
                "enables {unit}, a unit the package does not ship (nor a declared dependency), without asking: check which program that unit runs"
            ),
        )
    };
    sink.cmd(
        "AUR-PERSISTENCE",
        sev,
        w.cmd,
        format!("links {} {}: {why}", w.raw, w.cmd.phase.label()),
    );
}

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "python", "python3", "perl",
    "ruby", "node", "lua", "php",
];

fn drop_in(ctx: &Ctx, w: &Written, unit: &str, sink: &mut Sink) {
    if shipped_unit(ctx, unit) {
        return;
    }
    let stem = unit
        .split(['.', '@'])
        .next()
        .unwrap_or(unit)
        .to_ascii_lowercase();
    let found: Option<(Severity, String)> = match &w.text {
        None => Some((
            Severity::Medium,
            format!(
                "a drop-in that changes {unit}, a unit the package does not ship; the audit cannot see its text, so read it yourself"
            ),
        )),
        Some(t) => {
            let mut worst: Option<(Severity, String)> = None;
            let mut put = |s: (Severity, String)| {
                if worst.as_ref().is_none_or(|(v, _)| *v < s.0) {
                    worst = Some(s);
                }
            };
            for line in t.lines().map(str::trim) {
                let Some((k, v)) = line.split_once('=') else {
                    continue;
                };
                let k = k.trim();
                let v = v.trim();
                let lv = v.to_ascii_lowercase();
                // `agetty --autologin USER`, `-a USER`, or `login -f USER` (no password).
                if lv.contains("--autologin")
                    || lv.contains(" -a root")
                    || (lv.contains("login") && lv.contains(" -f "))
                {
                    put((
                        Severity::Critical,
                        format!(
                            "a drop-in for {unit} that logs a console in without a password (`{line}`)"
                        ),
                    ));
                    continue;
                }
                if k == "Environment"
                    && (lv.contains("ld_preload") || lv.contains("ld_library_path"))
                {
                    put((
                        Severity::Critical,
                        format!("a drop-in for {unit} that loads a library into it (`{line}`)"),
                    ));
                    continue;
                }
                if !k.starts_with("Exec") || v.is_empty() {
                    continue;
                }
                let cmd = v.trim_start_matches(['-', '@', ':', '+', '!', '|']);
                let prog = basename(cmd.split_whitespace().next().unwrap_or(""));
                let writable = [
                    "/tmp/",
                    "/var/tmp/",
                    "/dev/shm/",
                    "/home/",
                    "curl ",
                    "wget ",
                ]
                .iter()
                .any(|d| lv.contains(d));
                // The unit's own program with other options (`ModemManager --test-…`,
                // `mkinitcpio -A zfs-shutdown` for mkinitcpio-generate-shutdown-ramfs).
                let related = mentions_own(ctx, v)
                    || lv.contains(&stem)
                    || (prog.len() >= 4 && stem.contains(&prog.to_ascii_lowercase()));
                if writable || (SHELLS.contains(&prog) && !related) {
                    put((
                        Severity::Critical,
                        format!(
                            "a drop-in that makes {unit}, a unit the package does not ship, run `{v}` as root (`{k}`)"
                        ),
                    ));
                } else if dependency_unit(ctx, unit).is_some() || related {
                    put((
                        Severity::Low,
                        format!("a drop-in that makes {unit} run `{v}` ({k}); check it"),
                    ));
                } else {
                    put((
                        Severity::Medium,
                        format!(
                            "a drop-in that makes {unit}, a unit the package does not ship, run `{v}` ({k}); check which program that is"
                        ),
                    ));
                }
            }
            worst
        }
    };
    if let Some((sev, why)) = found {
        sink.cmd(
            "AUR-PERSISTENCE",
            sev,
            w.cmd,
            format!("{} {}: {why}", w.raw, w.cmd.phase.label()),
        );
    }
}

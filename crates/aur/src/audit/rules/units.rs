//! systemd units and other boot-time hooks a package turns on: `systemctl enable` of a unit
//! the package ships (low), a unit rename migration and a driver's vendor suspend services
//! (low, with the reason), anything reaching outside the package (high); cron, linger, `at`.

use super::{Ctx, Sink};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase};

use super::own_units;
pub(super) use super::unit_owners::dependency_unit;
use super::unit_owners::{UNIT_SUFFIXES, unit_stem};

/// Units the package itself ships: unit files its package() installs or its sources hold, and
/// units named after the package (`make install` ships those without naming them).
pub(super) fn shipped_unit(ctx: &Ctx, unit: &str) -> bool {
    let want = unit_stem(unit).trim_end_matches('@');
    if want.is_empty() || want.starts_with('$') {
        return false;
    }
    // An instance (`name@wlp1s0.service`) is made from its template (`name@.service`): the
    // package's own when the package ships that template, whatever the instance's name.
    let template = want
        .split_once('@')
        .filter(|(t, i)| !t.is_empty() && !i.is_empty())
        .map(|(t, _)| t);
    let named = |w: &str| {
        let b = basename(w);
        UNIT_SUFFIXES.iter().any(|s| b.ends_with(s))
            && (unit_stem(b) == want
                || template.is_some_and(|t| {
                    unit_stem(b) == t && UNIT_SUFFIXES.iter().any(|s| b.ends_with(&format!("@{s}")))
                }))
    };
    if ships(ctx, named) {
        return true;
    }
    let w = want.to_ascii_lowercase();
    const GENERIC: &[&str] = &[
        "git", "bin", "utils", "tools", "dkms", "daemon", "service", "linux", "server", "client",
    ];
    // A project's library package (`libpamac`) ships the project's units (`pamac-…`); a
    // name the package provides and conflicts with is its own too (`linglong` for
    // `linyaps-git`): pacman never installs that package beside it.
    let replaced = own_units::replaced_names(ctx);
    ctx.pkgnames.iter().chain(replaced.iter()).any(|p| {
        p.to_ascii_lowercase()
            .split(['-', '_', '.'])
            .map(|t| t.strip_prefix("lib").filter(|r| r.len() >= 4).unwrap_or(t))
            .filter(|t| t.len() >= 4 && !GENERIC.contains(t))
            .any(|t| w.contains(t))
    })
}

/// A driver enabling its vendor's suspend services (`nvidia-suspend`, `nvidia-resume` …), as
/// the official driver package does.
fn vendor_suspend_unit(ctx: &Ctx, unit: &str) -> bool {
    let u = unit_stem(unit).to_ascii_lowercase();
    [
        "-suspend-then-hibernate",
        "-suspend",
        "-resume",
        "-hibernate",
    ]
    .iter()
    .find_map(|s| u.strip_suffix(s))
    .is_some_and(|vendor| {
        vendor.len() >= 3
            && ctx.pkgnames.iter().any(|p| {
                p.to_ascii_lowercase()
                    .split(['-', '_'])
                    .any(|t| t == vendor)
            })
    })
}

/// A rename migration: in the same script function, the old unit is asked `is-enabled` and
/// disabled, and the new one enabled (only if the old one was).
fn rename_migration(ctx: &Ctx, cmd: &Cmd, unit: &str) -> bool {
    let same = |c: &&Cmd| c.file == cmd.file && c.func == cmd.func;
    let units_of = |c: &Cmd, verb: &str| -> Vec<String> {
        let (n, a) = names::program(c);
        if n != "systemctl" {
            return Vec::new();
        }
        let ops: Vec<&str> = a
            .iter()
            .map(|w| w.text.as_str())
            .filter(|t| !t.starts_with('-'))
            .collect();
        if ops.first() != Some(&verb) {
            return Vec::new();
        }
        ops[1..].iter().map(|u| unit_stem(u).to_owned()).collect()
    };
    let asked: Vec<String> = ctx
        .an
        .cmds
        .iter()
        .filter(same)
        .flat_map(|c| units_of(c, "is-enabled"))
        .collect();
    let disabled: Vec<String> = ctx
        .an
        .cmds
        .iter()
        .filter(same)
        .flat_map(|c| units_of(c, "disable"))
        .collect();
    let new = unit_stem(unit);
    asked.iter().any(|old| old != new && disabled.contains(old))
}

pub(super) fn services(ctx: &Ctx, cmd: &Cmd, sink: &mut Sink) {
    let (name, args) = names::program(cmd);
    let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let ops: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let sub = ops.first().copied().unwrap_or("");
    let units: Vec<&str> = ops.iter().skip(1).copied().collect();
    if name == "systemctl" && cmd.phase != Phase::Runtime {
        let enabling = matches!(
            sub,
            "enable" | "reenable" | "link" | "preset" | "add-wants" | "add-requires"
        );
        let starting = sub == "start" && cmd.phase.runs_on_system();
        if (enabling || starting) && !units.is_empty() {
            let verb = if enabling { "enables" } else { "starts" };
            let own: Vec<&str> = units
                .iter()
                .copied()
                .filter(|u| shipped_unit(ctx, u))
                .collect();
            let vendor: Vec<&str> = units
                .iter()
                .copied()
                .filter(|u| vendor_suspend_unit(ctx, u))
                .collect();
            let moved: Vec<&str> = units
                .iter()
                .copied()
                .filter(|u| rename_migration(ctx, cmd, u))
                .collect();
            let from_deps: Vec<String> = units
                .iter()
                .filter(|u| !own.contains(u))
                .filter_map(|u| dependency_unit(ctx, u).map(|d| format!("{u} (from {d})")))
                .collect();
            let outside: Vec<&str> = units
                .iter()
                .copied()
                .filter(|u| {
                    !own.contains(u)
                        && !vendor.contains(u)
                        && !moved.contains(u)
                        && dependency_unit(ctx, u).is_none()
                })
                .collect();
            if outside.is_empty() {
                let why = if !from_deps.is_empty() {
                    format!(
                        "{verb} {}, a unit of a package this one depends on (installed with it), the same as enabling its own; check the dependency is the one you expect",
                        from_deps.join(" ")
                    )
                } else if !moved.is_empty() {
                    format!(
                        "{verb} {} only as part of a unit rename (the old unit is checked with is-enabled and disabled); nothing outside the package is reached",
                        moved.join(" ")
                    )
                } else if !vendor.is_empty() && own.len() < units.len() {
                    format!(
                        "{verb} the vendor's suspend/resume services ({}), as the official driver package does",
                        units.join(" ")
                    )
                } else {
                    format!(
                        "{verb} {}, a unit the package ships itself; the choice is usually left to the person",
                        units.join(" ")
                    )
                };
                sink.cmd(
                    "AUR-PERSISTENCE",
                    Severity::Low,
                    cmd,
                    format!("{why} ({})", cmd.phase.label()),
                );
            } else if enabling
                && (copies_unnamed_units(ctx)
                    || (own_units::project_installs(ctx)
                        && outside
                            .iter()
                            .all(|u| own_units::disabled_by_same_script(ctx, cmd.file, u))))
                && !outside
                    .iter()
                    .any(|u| own_units::foreign_daemon(u) || own_units::written_on_system(ctx, u))
            {
                let how = if copies_unnamed_units(ctx) {
                    "package() copies unit files in from its sources without naming them"
                } else {
                    "package() runs the project's own installer into $pkgdir (`make install` and the like), which installs files the PKGBUILD does not name, and the same script disables the unit again when the package goes"
                };
                sink.cmd(
                    "AUR-PERSISTENCE",
                    Severity::Medium,
                    cmd,
                    format!(
                        "enables {}, a unit the audit cannot tie to the package by name — but {how}, so it may be the package's own ({}). Check the built package's usr/lib/systemd directory holds it; a unit of another package, or one the install script writes itself, would reach outside the package",
                        outside.join(" "),
                        cmd.phase.label()
                    ),
                );
            } else {
                let (sev, what) = if enabling {
                    (
                        Severity::High,
                        "enables a systemd unit the package does not ship",
                    )
                } else {
                    (
                        Severity::Medium,
                        "starts a service the package does not ship on its own",
                    )
                };
                sink.cmd(
                    "AUR-PERSISTENCE",
                    sev,
                    cmd,
                    format!(
                        "{what} ({}): it reaches outside the package ({})",
                        outside.join(" "),
                        cmd.phase.label()
                    ),
                );
            }
            return;
        }
        // systemd's own boot targets, on every system: choosing between them starts only what
        // is already enabled (a desktop meta package booting into its display manager). A
        // rescue or emergency shell, or a target of no package, stays high below.
        if sub == "set-default"
            && units.len() == 1
            && matches!(unit_stem(units[0]), "graphical" | "multi-user")
        {
            sink.cmd(
                "AUR-PERSISTENCE",
                Severity::Low,
                cmd,
                format!(
                    "boots into {}, one of systemd's own standard targets: it starts what is already enabled, nothing new ({})",
                    units[0],
                    cmd.phase.label()
                ),
            );
            return;
        }
        if enabling || sub == "set-default" {
            sink.cmd(
                "AUR-PERSISTENCE",
                Severity::High,
                cmd,
                format!(
                    "changes what systemd starts at boot ({})",
                    cmd.phase.label()
                ),
            );
            return;
        }
    }
    let finding = match name {
        "systemctl" => match sub {
            "edit" | "mask" | "unmask" | "import-environment" | "set-environment" => Some((
                "AUR-PERSISTENCE",
                Severity::Medium,
                "changes systemd's configuration",
            )),
            _ => None,
        },
        "loginctl" if sub == "enable-linger" => Some((
            "AUR-PERSISTENCE",
            Severity::High,
            "enables lingering, so a user's services keep running without a login",
        )),
        "crontab" if !words.iter().all(|w| *w == "-l") => {
            Some(("AUR-PERSISTENCE", Severity::High, "installs a cron job"))
        }
        "update-rc.d" | "chkconfig" | "rc-update" | "dinitctl" => {
            init_service(ctx, cmd, name, &ops, sink);
            return;
        }
        "at" | "batch" => Some((
            "AUR-PERSISTENCE",
            Severity::High,
            "schedules a command for later",
        )),
        _ => None,
    };
    if let Some((id, sev, why)) = finding {
        if cmd.phase == Phase::Runtime {
            return;
        }
        sink.cmd(id, sev, cmd, format!("{why} ({})", cmd.phase.label()));
    }
}

/// package() copies unit files it does not name into the package's systemd directories: a glob
/// or a recursive copy (`cp -r "$srcdir/x/systemd/system/"* "$pkgdir/usr/lib/systemd/system/"`)
/// whose target is `usr/lib/systemd/{system,user}`.
fn copies_unnamed_units(ctx: &Ctx) -> bool {
    ctx.an.cmds.iter().any(|c| {
        if c.phase != Phase::Package {
            return false;
        }
        let (name, args) = names::program(c);
        if !matches!(name, "cp" | "install" | "rsync" | "mv") {
            return false;
        }
        let into_units = args.last().is_some_and(|a| {
            let t = a.text.trim_end_matches('/');
            t.ends_with("usr/lib/systemd/system") || t.ends_with("usr/lib/systemd/user")
        });
        let unnamed = args.iter().any(|a| {
            a.text.ends_with("/*")
                || matches!(
                    a.text.as_str(),
                    "-r" | "-R" | "-a" | "--recursive" | "--archive"
                )
                || (a.text.starts_with('-')
                    && !a.text.starts_with("--")
                    && a.text.contains(['r', 'R', 'a']))
        });
        into_units && unnamed
    })
}

/// Another init system's service registration, judged as `systemctl enable` is: OpenRC's
/// `rc-update add NAME [RUNLEVEL]`, `update-rc.d NAME defaults`, `chkconfig NAME on`,
/// `dinitctl enable NAME` (Artix and other non-systemd distributions' install scripts). Adding
/// the package's own service (or a dependency's) is low; another's is high; removing one
/// starts nothing.
fn init_service(ctx: &Ctx, cmd: &Cmd, prog: &str, ops: &[&str], sink: &mut Sink) {
    if cmd.phase == Phase::Runtime {
        return;
    }
    let (adding, names): (bool, Vec<&str>) = match prog {
        "rc-update" => match ops.first().copied() {
            Some("add") => (true, ops.get(1).copied().into_iter().collect()),
            Some("del" | "delete") => (false, ops.get(1).copied().into_iter().collect()),
            _ => (true, Vec::new()),
        },
        "update-rc.d" => (
            !ops.iter().any(|o| matches!(*o, "remove" | "disable")),
            ops.first().copied().into_iter().collect(),
        ),
        "chkconfig" => (
            !ops.iter().any(|o| matches!(*o, "off" | "--del")),
            ops.iter()
                .copied()
                .find(|o| !matches!(*o, "on" | "off" | "--add" | "--del" | "--level"))
                .into_iter()
                .collect(),
        ),
        _ => match ops.first().copied() {
            Some("enable") => (true, ops.get(1).copied().into_iter().collect()),
            Some("disable") => (false, ops.get(1).copied().into_iter().collect()),
            _ => return,
        },
    };
    if !adding {
        sink.cmd(
            "AUR-PERSISTENCE",
            Severity::Low,
            cmd,
            format!(
                "removes the boot service {} from the init system ({}): a removal starts nothing; check it is the package's own",
                names.join(" "),
                cmd.phase.label()
            ),
        );
        return;
    }
    let known = !names.is_empty()
        && names
            .iter()
            .all(|n| own_service(ctx, n) || dependency_unit(ctx, n).is_some());
    let (sev, why) = if known {
        (
            Severity::Low,
            format!(
                "registers {} with the init system, a service the package or its dependency ships; the choice is usually left to the person",
                names.join(" ")
            ),
        )
    } else {
        (
            Severity::High,
            format!(
                "registers a boot service the package does not ship ({})",
                if names.is_empty() {
                    "its name is not written here".to_owned()
                } else {
                    names.join(" ")
                }
            ),
        )
    };
    sink.cmd(
        "AUR-PERSISTENCE",
        sev,
        cmd,
        format!("{why} ({})", cmd.phase.label()),
    );
}

/// A service of another init system the package ships: named after the package, or a file
/// of its sources or package() named `NAME`, `NAME.initd`, `NAME.openrc`, `NAME.dinit`,
/// `NAME.run`, or installed as `init.d/NAME`, `dinit.d/NAME`, `sv/NAME/…`.
fn own_service(ctx: &Ctx, name: &str) -> bool {
    if name.is_empty() || name.starts_with('$') {
        return false;
    }
    if shipped_unit(ctx, name) {
        return true;
    }
    let matches = |w: &str| {
        let w = w.rsplit("::").next().unwrap_or(w);
        let b = basename(w);
        [".initd", ".openrc", ".dinit", ".run", ".rc", ".sv"]
            .iter()
            .any(|s| b.strip_suffix(s) == Some(name))
            || w.ends_with(&format!("init.d/{name}"))
            || w.ends_with(&format!("dinit.d/{name}"))
            || w.contains(&format!("/sv/{name}/"))
            || w.ends_with(&format!("/sv/{name}"))
    };
    ships(ctx, matches)
}

/// Whether the package itself ships a file `named` accepts: a word of `package()` (an argument
/// or a redirection's target), a source (its file name, after any `name::`), or one of its files.
fn ships(ctx: &Ctx, named: impl Fn(&str) -> bool) -> bool {
    let in_package = ctx.an.cmds.iter().any(|c| {
        c.phase == Phase::Package
            && c.argv
                .iter()
                .chain(c.redirs.iter().map(|r| &r.target))
                .any(|w| named(&w.text))
    });
    let in_sources = ctx
        .an
        .global
        .iter()
        .filter(|(k, _)| *k == "source" || k.starts_with("source_"))
        .flat_map(|(_, v)| v.items())
        .any(|s| named(s.text.rsplit("::").next().unwrap_or(&s.text)));
    in_package || in_sources || ctx.an.files.iter().any(|f| named(&f.name))
}

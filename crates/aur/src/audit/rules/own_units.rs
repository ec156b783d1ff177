//! Units a package may ship without naming them in its PKGBUILD: those its project's own
//! installer puts into `$pkgdir` (`make install`, `ninja -C build install`, `meson install`, a
//! program of the project run with `install --destdir "$pkgdir"`), and those named for a
//! package it stands in for (`provides` and `conflicts` both name it, so that package cannot
//! be installed beside it: a unit of that name can only be this package's own).

use super::Ctx;
use super::unit_owners::{UNIT_SUFFIXES, unit_stem};
use crate::audit::names::{self, basename};
use crate::audit::shell::Phase;

/// Daemons of other packages that hand out a login, a shell or the machine's network to
/// others: a package's own installer does not ship them, and enabling one is never the same
/// as enabling the package's own service (unless the package depends on it, judged before).
const FOREIGN_DAEMONS: &[&str] = &[
    "sshd",
    "ssh",
    "sshd-keygen",
    "telnet",
    "telnetd",
    "vsftpd",
    "debug-shell",
    "cronie",
    "cron",
    "atd",
    "docker",
    "containerd",
    "tor",
    "xinetd",
    "rsyncd",
    "smb",
    "nmb",
    "NetworkManager",
    "systemd-networkd",
    "systemd-resolved",
    "getty",
    "serial-getty",
    "autovt",
];

/// package() hands installation to the project's own installer, writing into `$pkgdir`:
/// a command that is not coreutils' `install`, has `install` among its words (`make install`,
/// `ninja -C build install`, `meson install`, `cmake --install`, `waf install`,
/// `./helper install`) and is told `$pkgdir` (`DESTDIR="$pkgdir"`, `--destdir "$pkgdir"`,
/// `--root="$pkgdir"`). What it installs is the project's files, not named here.
pub(super) fn project_installs(ctx: &Ctx) -> bool {
    ctx.an.cmds.iter().any(|c| {
        if c.phase != Phase::Package {
            return false;
        }
        let (name, args) = names::program(c);
        if name.is_empty() || name == "install" {
            return false;
        }
        let verb = args
            .iter()
            .any(|a| matches!(a.text.as_str(), "install" | "--install"));
        let told = c.env.iter().any(|(_, w)| w.text.contains("$pkgdir"))
            || args.iter().any(|a| a.text.contains("$pkgdir"));
        verb && told
    })
}

/// The unit is one of the daemons of another package listed above.
pub(super) fn foreign_daemon(unit: &str) -> bool {
    let stem = unit_stem(unit);
    let template = stem.split('@').next().unwrap_or(stem);
    FOREIGN_DAEMONS.contains(&template)
}

/// An install script, a hook or a shipped program writes a unit file of this name itself: a
/// new unit made on the live system, not one the package ships.
pub(super) fn written_on_system(ctx: &Ctx, unit: &str) -> bool {
    let want = unit_stem(unit);
    ctx.an.cmds.iter().any(|c| {
        c.phase != Phase::Package
            && !c.phase.is_build()
            && super::files::write_targets(c).iter().any(|w| {
                let b = basename(&w.text);
                UNIT_SUFFIXES.iter().any(|s| b.ends_with(s)) && unit_stem(b) == want
            })
    })
}

/// Names the package stands in for: in both `provides` and `conflicts` (version constraints
/// cut off), so pacman never installs that package beside this one.
pub(super) fn replaced_names(ctx: &Ctx) -> Vec<String> {
    let cut = |s: &str| {
        s.split(['<', '>', '=', ':'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase()
    };
    let conflicts: Vec<String> = ctx
        .an
        .all_values("conflicts")
        .iter()
        .map(|v| cut(&v.text))
        .collect();
    ctx.an
        .all_values("provides")
        .iter()
        .map(|v| cut(&v.text))
        .filter(|p| !p.is_empty() && conflicts.contains(p))
        .collect()
}

/// The same install file also disables the unit (`systemctl disable X` in pre_remove or a
/// helper it calls): the script treats the unit as going away with the package, as a package
/// does with its own service. Together with [`project_installs`] this is the package's own
/// daemon as far as a PKGBUILD can show; without the disable, a unit the audit cannot place
/// stays high (landings 4 and 5: `make install` alone says nothing about which units come).
pub(super) fn disabled_by_same_script(ctx: &Ctx, file: usize, unit: &str) -> bool {
    let want = unit_stem(unit);
    ctx.an.cmds.iter().any(|c| {
        if c.file != file {
            return false;
        }
        let (n, a) = names::program(c);
        let ops: Vec<&str> = a
            .iter()
            .map(|w| w.text.as_str())
            .filter(|t| !t.starts_with('-'))
            .collect();
        n == "systemctl"
            && ops.first() == Some(&"disable")
            && ops[1..].iter().any(|u| unit_stem(u) == want)
    })
}

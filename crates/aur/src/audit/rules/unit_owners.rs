//! Which declared dependency ships a systemd unit (or another init system's service), when the
//! unit is not named exactly after the package: the daemon a package ships is often the
//! package's name plus `d` (`sane` → `saned`, `libvirt` → `libvirtd`), a family of units shares
//! the package's leading name (`btrfsmaintenance` → `btrfs-scrub.timer`, `libvirt` →
//! `virtlogd`), and a few services of Arch's own packages carry no part of the package's name
//! (`samba` → `smb`, `bluez` → `bluetooth`). pacman installs a dependency with the package, so
//! enabling its unit is the same choice as enabling the package's own.

use super::Ctx;
use crate::audit::names::basename;

pub(super) const UNIT_SUFFIXES: &[&str] = &[
    ".service",
    ".socket",
    ".timer",
    ".path",
    ".target",
    ".mount",
    ".automount",
];

pub(super) fn unit_stem(u: &str) -> &str {
    let b = basename(u);
    UNIT_SUFFIXES
        .iter()
        .find_map(|s| b.strip_suffix(s))
        .unwrap_or(b)
        .trim_end_matches('@')
}

/// Leading names too common to tie a unit to a package (`python-…`, `linux-…`).
const GENERIC_LEADS: &[&str] = &[
    "python", "perl", "ruby", "node", "nodejs", "linux", "xorg", "gnome", "plasma", "kde", "qt5",
    "qt6", "gtk", "git", "rust", "java", "lua", "php", "user", "system", "dbus",
];

/// Services of Arch Linux's own packages whose unit names carry no part of the package's name
/// (from those packages' file lists): the unit's stem (a trailing `*` matches a prefix) and the
/// package that ships it.
const UNNAMED_UNITS: &[(&str, &str)] = &[
    ("bluetooth", "bluez"),
    ("smb", "samba"),
    ("nmb", "samba"),
    ("winbind", "samba"),
    ("ead", "iwd"),
    ("smartd", "smartmontools"),
    ("pcscd", "pcsclite"),
    ("linux-modules-cleanup", "kernel-modules-hook"),
    ("fstrim", "util-linux"),
    ("uuidd", "util-linux"),
    ("btrfs-scrub", "btrfs-progs"),
    ("named", "bind"),
    ("httpd", "apache"),
    ("nfs-server", "nfs-utils"),
    ("systemd-*", "systemd"),
    // systemd's own units named without `systemd-` (its file list): the console and serial
    // logins and the targets for remote file systems and volumes, which Arch's systemd.install
    // enables by default. Not `debug-shell` (a root shell on a console, never a default).
    ("getty", "systemd"),
    ("serial-getty", "systemd"),
    ("console-getty", "systemd"),
    ("container-getty", "systemd"),
    ("autovt", "systemd"),
    ("remote-fs", "systemd"),
    ("remote-cryptsetup", "systemd"),
    ("remote-veritysetup", "systemd"),
];

/// systemd's units that send the journal off the machine or serve it over the network: turning
/// one on is never "the same as the package's own choice", whoever ships it.
const NO_DISCOUNT: &[&str] = &[
    "systemd-journal-upload",
    "systemd-journal-remote",
    "systemd-journal-gatewayd",
];

/// Packages of Arch's `base` (systemd, util-linux): installed on every system, so their units
/// are there whether or not a package declares them.
const BASE: &[&str] = &["systemd", "util-linux"];

/// The declared dependencies' names (`depends`, in any architecture or split package, with
/// version constraints cut off), lower case.
fn declared(ctx: &Ctx) -> Vec<String> {
    let mut deps = ctx.an.all_values("depends");
    for (k, v) in &ctx.an.global {
        if k.starts_with("depends_") {
            deps.extend(v.items());
        }
    }
    deps.iter()
        .map(|d| {
            d.text
                .split(['<', '>', '=', ':'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase()
        })
        .filter(|d| d.len() >= 3)
        .collect()
}

fn lead(s: &str) -> &str {
    s.split(['-', '_', '.', '@']).next().unwrap_or(s)
}

/// Whether unit stem `want` (lower case) is named for dependency `d`: exactly, `d` and a part
/// after a separator (`avahi-daemon`, `snapd.apparmor`), `d` ending in the unit
/// (`docker-ce` … `ce`), the daemon `d` + `d` (`saned`, `auditd`, `libvirtd`), or a leading name
/// of at least four letters shared with `d` or with `d` without its `lib` (`btrfs-scrub` for
/// `btrfsmaintenance`, `virtlogd` for `libvirt`, `ratbagd` for `libratbag`).
fn named_for(want: &str, d: &str) -> bool {
    let after = |name: &str| {
        want.strip_prefix(name)
            .is_some_and(|r| r.is_empty() || r.starts_with(['-', '_', '@', '.']))
    };
    if after(d)
        || d.strip_suffix(want)
            .is_some_and(|r| r.ends_with(['-', '_']))
        || after(&format!("{d}d"))
    {
        return true;
    }
    let bare = d.strip_prefix("lib").filter(|r| r.len() >= 4).unwrap_or(d);
    if bare != d && (after(bare) || after(&format!("{bare}d"))) {
        return true;
    }
    let w = lead(want);
    [lead(d), lead(bare)].iter().any(|dl| {
        let (short, long) = if w.len() <= dl.len() {
            (w, *dl)
        } else {
            (*dl, w)
        };
        short.len() >= 4 && long.starts_with(short) && !GENERIC_LEADS.contains(&short)
    })
}

/// `pkg` is declared: itself, or a split package of it (`bluez-utils` for `bluez`), or it is
/// part of `base`.
fn has(deps: &[String], pkg: &str) -> bool {
    BASE.contains(&pkg)
        || deps
            .iter()
            .any(|d| d == pkg || d.strip_prefix(pkg).is_some_and(|r| r.starts_with('-')))
}

/// The declared dependency a unit belongs to, for the why (`iio-sensor-proxy`, `sane`,
/// `samba`); `None` when no declared dependency (nor `base`) ships it by these names.
pub(super) fn dependency_unit(ctx: &Ctx, unit: &str) -> Option<String> {
    let want = unit_stem(unit).to_ascii_lowercase();
    if want.len() < 3 || want.starts_with('$') || NO_DISCOUNT.contains(&want.as_str()) {
        return None;
    }
    let deps = declared(ctx);
    if let Some(d) = deps.iter().find(|d| named_for(&want, d)) {
        return Some(d.clone());
    }
    // An instance (`getty@tty1`) is its template's unit (`getty@`).
    let template = want.split('@').next().unwrap_or(&want);
    UNNAMED_UNITS
        .iter()
        .find(|(u, pkg)| {
            let named = match u.strip_suffix('*') {
                Some(prefix) => want.starts_with(prefix),
                None => template == *u,
            };
            named && has(&deps, pkg)
        })
        .map(|(_, pkg)| (*pkg).to_owned())
}

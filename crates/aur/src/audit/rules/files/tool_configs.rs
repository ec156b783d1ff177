//! Files root's own tools act on after install and at every boot (attack 31 F16; class:
//! *persistence places listed, not the tools that act on files*): `tmpfiles.d` lines
//! (systemd-tmpfiles, run by Arch's hook right after the transaction), `sysusers.d` accounts,
//! udev rules' programs, `binfmt.d` interpreters and `modprobe.d` `install` commands — read
//! line by line as the tool reads them, the way an install file is read.

use super::super::{Ctx, Sink};
use super::written::{Written, mentions_own};
use crate::audit::names::basename;
use crate::audit::report::Severity;

const ID: &str = "AUR-ROOT-CONFIG";

fn in_dirs(p: &str, leaf: &str) -> bool {
    ["/usr/lib/", "/lib/", "/etc/", "/run/", "/usr/local/lib/"]
        .iter()
        .any(|b| {
            p.strip_prefix(b)
                .and_then(|r| r.strip_prefix(leaf))
                .is_some_and(|r| !r.is_empty() && !r.contains('/'))
        })
}

pub(super) fn judge(ctx: &Ctx, w: &Written, sink: &mut Sink) {
    let p = w.path.as_str();
    let found = if in_dirs(p, "tmpfiles.d/") {
        w.text.as_ref().and_then(|t| tmpfiles(ctx, t))
    } else if in_dirs(p, "sysusers.d/") {
        w.text.as_ref().and_then(|t| sysusers(t))
    } else if in_dirs(p, "udev/rules.d/") {
        w.text.as_ref().and_then(|t| udev(t))
    } else if in_dirs(p, "binfmt.d/") {
        w.text.as_ref().and_then(|t| binfmt(t))
    } else if in_dirs(p, "modprobe.d/") {
        w.text.as_ref().and_then(|t| modprobe(ctx, t))
    } else {
        None
    };
    if let Some((sev, why)) = found {
        let place = if w.in_pkg { "ships" } else { "writes" };
        sink.cmd(
            ID,
            sev,
            w.cmd,
            format!(
                "{place} {} ({}) {}: {why}",
                w.path,
                w.raw,
                w.cmd.phase.label()
            ),
        );
    }
}

fn worse(a: Option<(Severity, String)>, b: (Severity, String)) -> Option<(Severity, String)> {
    match a {
        Some(x) if x.0 >= b.0 => Some(x),
        _ => Some(b),
    }
}

/// Files whose mode, owner, content or existence is what keeps accounts and root apart.
fn guarded(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    const FILES: &[&str] = &[
        "/etc/shadow",
        "/etc/gshadow",
        "/etc/passwd",
        "/etc/group",
        "/etc/sudoers",
        "/etc/doas.conf",
        "/etc/ld.so.preload",
        "/etc/ld.so.conf",
        "/etc/environment",
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/pacman.conf",
        "/etc/crontab",
        "/etc/fstab",
        "/root",
        "/home",
        "/etc",
        "/usr",
        "/boot",
        "/",
    ];
    const TREES: &[&str] = &[
        "/etc/sudoers.d/",
        "/etc/polkit-1/",
        "/usr/share/polkit-1/",
        "/etc/pam.d/",
        "/usr/lib/pam.d/",
        "/etc/security/",
        "/etc/ld.so.conf.d/",
        "/etc/profile.d/",
        "/etc/systemd/",
        "/usr/lib/systemd/",
        "/etc/cron",
        "/var/spool/cron",
        "/etc/pacman.d/",
        "/usr/share/libalpm/",
        "/etc/udev/",
        "/usr/lib/udev/",
        "/etc/ssh/",
        "/root/",
        "/home/",
        "/usr/bin/",
        "/usr/sbin/",
        "/usr/local/bin/",
        "/usr/local/sbin/",
        "/bin/",
        "/sbin/",
        "/usr/lib/tmpfiles.d/",
        "/etc/tmpfiles.d/",
        "/etc/xdg/autostart/",
        "/boot/",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/dev/sd",
        "/dev/nvme",
    ];
    FILES.contains(&p)
        || TREES
            .iter()
            .any(|t| p.starts_with(t) || format!("{p}/") == *t)
}

fn tmpfiles(ctx: &Ctx, t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(ty), Some(path)) = (f.first(), f.get(1)) else {
            continue;
        };
        let kind = ty.trim_end_matches(['!', '-', '=', '~', '^', '+', '$', '?']);
        let plus = ty.contains('+');
        let mode = f.get(2).copied().unwrap_or("-");
        let arg = f.get(6..).map(|a| a.join(" ")).unwrap_or_default();
        let acts = matches!(
            kind,
            "z" | "Z"
                | "m"
                | "a"
                | "A"
                | "L"
                | "C"
                | "w"
                | "r"
                | "R"
                | "e"
                | "x"
                | "X"
                | "h"
                | "H"
                | "t"
                | "T"
        ) || (kind == "f" && plus);
        let setid = super::super::argv::octal(mode.trim_start_matches(['~', ':']))
            .is_some_and(|m| m & 0o6000 != 0);
        let opens = super::super::argv::octal(mode.trim_start_matches(['~', ':']))
            .is_some_and(|m| m & 0o002 != 0);
        let own = mentions_own(ctx, path);
        if acts && guarded(path) {
            worst = worse(
                worst,
                (
                    Severity::Critical,
                    format!(
                        "a tmpfiles.d line `{line}` that makes systemd-tmpfiles (root, right after install and at every boot) act on {path}, a file that keeps accounts and root apart"
                    ),
                ),
            );
        } else if matches!(kind, "L" | "C")
            && (arg.starts_with("/tmp")
                || arg.starts_with("/home")
                || arg.starts_with("/var/tmp")
                || arg.starts_with("/dev/shm"))
        {
            worst = worse(
                worst,
                (
                    Severity::High,
                    format!(
                        "a tmpfiles.d line `{line}` that links or copies a file from a place any user can write"
                    ),
                ),
            );
        } else if setid && !matches!(kind, "d" | "D" | "v" | "q" | "Q") {
            worst = worse(
                worst,
                (
                    Severity::High,
                    format!(
                        "a tmpfiles.d line `{line}` that sets a set-id mode ({mode}) on a file: a program that runs as its owner for anyone"
                    ),
                ),
            );
        } else if opens && guarded(path) {
            worst = worse(
                worst,
                (
                    Severity::Critical,
                    format!("a tmpfiles.d line `{line}` that lets anyone write {path}"),
                ),
            );
        } else if acts
            && !own
            && !path.starts_with("/sys/")
            && !path.starts_with("/proc/")
            && !path.starts_with("/dev/")
            && !path.starts_with("/run/")
            && !path.starts_with("/var/")
            && !path.starts_with("/tmp")
        {
            worst = worse(
                worst,
                (
                    Severity::Medium,
                    format!(
                        "a tmpfiles.d line `{line}` that acts on {path}, which is not the package's own; check it"
                    ),
                ),
            );
        }
    }
    worst
}

const LOGIN_SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "fish", "ksh", "csh", "tcsh"];

fn sysusers(t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        let f = shell_words(line);
        let (Some(ty), Some(name)) = (f.first(), f.get(1)) else {
            continue;
        };
        let id = f.get(2).map_or("-", String::as_str);
        match ty.trim_end_matches('!') {
            "u" | "g" => {
                let ids: Vec<&str> = id.split(':').collect();
                if ids.iter().any(|i| *i == "0" || *i == "root") && name != "root" {
                    worst = worse(
                        worst,
                        (
                            Severity::Critical,
                            format!(
                                "a sysusers.d line `{line}` that makes {name} an account with id 0: root under another name"
                            ),
                        ),
                    );
                }
                if let Some(sh) = f.get(5)
                    && LOGIN_SHELLS.contains(&basename(sh))
                {
                    worst = worse(
                        worst,
                        (
                            Severity::Medium,
                            format!(
                                "a sysusers.d line `{line}` that gives the system account {name} a login shell ({sh})"
                            ),
                        ),
                    );
                }
            }
            "m" if f.get(2).is_some_and(|g| {
                matches!(
                    g.as_str(),
                    "root" | "wheel" | "sudo" | "adm" | "disk" | "shadow"
                )
            }) =>
            {
                worst = worse(
                    worst,
                    (
                        Severity::High,
                        format!(
                            "a sysusers.d line `{line}` that puts {name} into an administrators' or root's group"
                        ),
                    ),
                );
            }
            _ => {}
        }
    }
    worst
}

/// A line split as sysusers.d reads it: words, with "quoted" words kept whole.
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut q = false;
    for c in line.chars() {
        match c {
            '"' => q = !q,
            c if c.is_whitespace() && !q => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Keys that pick a device (or a kind of device): a rule without any matches every event.
const DEVICE_KEYS: &[&str] = &[
    "KERNEL",
    "KERNELS",
    "SUBSYSTEM",
    "SUBSYSTEMS",
    "DRIVER",
    "DRIVERS",
    "ATTR{",
    "ATTRS{",
    "ENV{",
    "DEVPATH",
    "NAME",
    "SYMLINK",
    "TAG",
    "TAGS",
    "TEST",
    "PROGRAM",
    "RESULT",
    "SYSCTL{",
];

fn udev(t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    let joined = t.replace("\\\n", " ");
    for line in joined.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let runs: Vec<&str> = [
            "RUN+=\"",
            "RUN=\"",
            "RUN{program}+=\"",
            "RUN{program}=\"",
            "PROGRAM=\"",
            "IMPORT{program}=\"",
        ]
        .iter()
        .flat_map(|k| line.split(k).skip(1).filter_map(|r| r.split('"').next()))
        .collect();
        let matches_device = line.split(',').any(|kv| {
            let k = kv.trim();
            DEVICE_KEYS.iter().any(|d| k.starts_with(d)) && (k.contains("==") || k.contains("!="))
        });
        for prog in runs {
            let lp = prog.to_ascii_lowercase();
            let writable = ["/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "/root/"]
                .iter()
                .any(|d| lp.contains(d));
            let fetches = lp
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .any(|w| matches!(w, "curl" | "wget" | "nc" | "ncat" | "socat"));
            if writable || fetches {
                worst = worse(
                    worst,
                    (
                        Severity::Critical,
                        format!(
                            "a udev rule that runs `{prog}` as root on device events: it runs a file anyone can write or downloads"
                        ),
                    ),
                );
            } else if !matches_device {
                worst = worse(
                    worst,
                    (
                        Severity::High,
                        format!(
                            "a udev rule that matches no device and runs `{prog}` as root on every device event (`{line}`)"
                        ),
                    ),
                );
            }
        }
        // World-writable raw disks or memory: anyone reads and writes every file.
        let raw = [
            "KERNEL==\"sd",
            "KERNEL==\"nvme",
            "KERNEL==\"mem\"",
            "KERNEL==\"kmem\"",
            "KERNEL==\"port\"",
            "KERNEL==\"dm-",
            "KERNEL==\"mmcblk",
            "KERNEL==\"vd",
            "SUBSYSTEM==\"block\"",
        ]
        .iter()
        .any(|k| line.contains(k));
        if raw
            && (line.contains("MODE=\"0666\"")
                || line.contains("MODE=\"666\"")
                || line.contains("MODE=\"0777\""))
        {
            worst = worse(
                worst,
                (
                    Severity::Critical,
                    format!(
                        "a udev rule that makes a disk or memory device writable by everyone (`{line}`): any user reads and writes every file"
                    ),
                ),
            );
        }
    }
    worst
}

fn binfmt(t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let sep = line.chars().next().unwrap_or(':');
        let f: Vec<&str> = line.split(sep).collect();
        // :name:type:offset:magic:mask:interpreter:flags
        let interp = f.get(6).copied().unwrap_or("");
        let magic = f.get(4).copied().unwrap_or("");
        let native = magic.starts_with("\\x7fELF\\x02\\x01\\x01") && magic.contains("\\x3e\\x00");
        let writable = ["/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "/root/"]
            .iter()
            .any(|d| interp.starts_with(d));
        if native || writable {
            worst = worse(
                worst,
                (
                    Severity::Critical,
                    format!(
                        "a binfmt.d entry `{line}` that {}",
                        if native {
                            "hands every native program to another interpreter"
                        } else {
                            "runs programs through an interpreter anyone can replace"
                        }
                    ),
                ),
            );
        } else if !interp.starts_with("/usr/") && !interp.is_empty() {
            worst = worse(
                worst,
                (
                    Severity::Medium,
                    format!("a binfmt.d entry whose interpreter {interp} is outside /usr"),
                ),
            );
        }
    }
    worst
}

fn modprobe(ctx: &Ctx, t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        let mut f = line.split_whitespace();
        if f.next() != Some("install") {
            continue;
        }
        let module = f.next().unwrap_or("");
        let cmd: Vec<&str> = f.collect();
        let cmd = cmd.join(" ");
        let first = basename(cmd.split_whitespace().next().unwrap_or(""));
        if matches!(first, "true" | "false" | "modprobe" | "insmod" | "echo")
            || cmd.starts_with("/bin/true")
            || cmd.starts_with("/usr/bin/true")
            || cmd.starts_with("/bin/false")
            || cmd.starts_with("/usr/bin/false")
        {
            continue;
        }
        let l = cmd.to_ascii_lowercase();
        let bad = ["/tmp/", "/var/tmp/", "/dev/shm/", "/home/", "curl", "wget"]
            .iter()
            .any(|d| l.contains(d));
        let s = if bad {
            (
                Severity::Critical,
                format!(
                    "a modprobe.d `install` line that runs `{cmd}` as root whenever {module} is loaded: a file anyone can write, or a download"
                ),
            )
        } else if mentions_own(ctx, &cmd) || mentions_own(ctx, module) {
            continue;
        } else {
            (
                Severity::Medium,
                format!(
                    "a modprobe.d `install` line that runs `{cmd}` as root whenever {module} is loaded; check the command"
                ),
            )
        };
        worst = worse(worst, s);
    }
    worst
}

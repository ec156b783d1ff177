//! Files root's own tools act on after install and at every boot (attack 31 F16; class:
//! *persistence places listed, not the tools that act on files*): `tmpfiles.d` lines
//! (systemd-tmpfiles, run by Arch's hook right after the transaction), `sysusers.d` accounts,
//! udev rules' programs, `binfmt.d` interpreters and `modprobe.d` `install` commands — read
//! line by line as the tool reads them, the way an install file is read.

use super::super::{Ctx, Sink};
use super::written::{Written, fed_text, mentions_own};
use crate::audit::names;
use crate::audit::names::basename;
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase};

mod tmpfiles;

use tmpfiles::{tmpfiles, worse};

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
    } else if in_dirs(p, "ld.so.conf.d/") || p == "/etc/ld.so.conf" {
        w.text.as_ref().and_then(|t| ld_paths(t))
    } else if in_dirs(p, "sysctl.d/") || p == "/etc/sysctl.conf" {
        w.text.as_ref().and_then(|t| sysctl(ctx, t))
    } else {
        None
    };
    if let Some((sev, why)) = found {
        let place = if w.in_pkg { "ships" } else { "writes" };
        w.report(sink, ID, sev, place, &why);
    }
}

/// A scriptlet that hands lines to root's tools directly: `systemd-tmpfiles --create -` (or
/// `/dev/stdin`) fed a here-document or an `echo`, `systemd-sysusers --inline LINE` or `-`.
pub(super) fn direct(ctx: &Ctx, cmd: &Cmd, sink: &mut Sink) {
    if !matches!(cmd.phase, Phase::Install | Phase::Hook) {
        return;
    }
    let (prog, args) = names::program(cmd);
    // `-` (which the shell model does not keep as a word) or `/dev/stdin`; a here-document or a
    // pipe into it with no file named is read only that way.
    let from_stdin = args
        .iter()
        .any(|a| matches!(a.text.as_str(), "-" | "/dev/stdin" | "/proc/self/fd/0"))
        || (args.iter().all(|a| a.text.starts_with('-')) && fed_text(ctx, cmd).is_some());
    let found = match prog {
        "systemd-tmpfiles" if from_stdin => fed_text(ctx, cmd).and_then(|t| tmpfiles(ctx, &t)),
        "systemd-sysusers" => {
            let inline = args.iter().any(|a| a.text == "--inline");
            let text = if inline {
                Some(
                    args.iter()
                        .filter(|a| !a.text.starts_with('-'))
                        .map(|a| a.text.as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                )
            } else if from_stdin {
                fed_text(ctx, cmd)
            } else {
                None
            };
            text.and_then(|t| sysusers(&t))
        }
        _ => None,
    };
    if let Some((sev, why)) = found {
        sink.cmd(
            ID,
            sev,
            cmd,
            format!(
                "hands root's {prog} its lines directly {}: {why}",
                cmd.phase.label()
            ),
        );
    }
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
                            Severity::Low,
                            format!(
                                "a sysusers.d line `{line}` that gives the system account {name} a login shell ({sh}); sysusers sets no password, so it is only a way in for what already runs as it"
                            ),
                        ),
                    );
                }
            }
            "m" if f.get(2).is_some_and(|g| {
                matches!(g.as_str(), "root" | "wheel" | "sudo" | "disk" | "shadow")
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
    // A file that jumps over its rules (`GOTO`/`LABEL`) matches its devices on other lines.
    let labelled = t.contains("GOTO=") || t.contains("LABEL=");
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
            } else if !matches_device && !labelled {
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

/// Places any user can write: a library or program from one runs as whoever loads it.
fn user_writable(p: &str) -> bool {
    let p = p.trim();
    [
        "/tmp",
        "/var/tmp",
        "/dev/shm",
        "/home",
        "/run/user",
        "/var/spool",
        "/var/mail",
    ]
    .iter()
    .any(|d| p == *d || p.starts_with(&format!("{d}/")))
        || !(p.starts_with('/') || p.is_empty())
}

/// `ld.so.conf.d`: directories ldconfig puts before nothing — every program of every user,
/// root's included, loads its libraries from them.
fn ld_paths(t: &str) -> Option<(Severity, String)> {
    for line in t.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let dir = line.strip_prefix("include").map_or(line, str::trim);
        if user_writable(dir) {
            return Some((
                Severity::Critical,
                format!(
                    "an ld.so.conf.d line `{line}` that makes every program, root's included, load libraries from a place any user can write"
                ),
            ));
        }
    }
    None
}

/// `sysctl.d`: the kernel's own hooks that run a program as root — on every crash
/// (`kernel.core_pattern=|PROGRAM`) or every module request (`kernel.modprobe`).
fn sysctl(ctx: &Ctx, t: &str) -> Option<(Severity, String)> {
    let mut worst = None;
    for line in t.lines().map(str::trim) {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let k = k.trim().trim_start_matches('-').replace('/', ".");
        let v = v.trim();
        let prog = match k.as_str() {
            "kernel.core_pattern" => match v.strip_prefix('|') {
                Some(p) => p.split_whitespace().next().unwrap_or(""),
                None => continue,
            },
            "kernel.modprobe" => v,
            _ => continue,
        };
        let s = if user_writable(prog) {
            (
                Severity::Critical,
                format!(
                    "a sysctl line `{line}` that makes the kernel run {prog}, a file any user can write, as root"
                ),
            )
        } else if k == "kernel.modprobe"
            && !matches!(
                prog,
                "/sbin/modprobe" | "/usr/bin/modprobe" | "/usr/sbin/modprobe"
            )
        {
            (
                Severity::High,
                format!(
                    "a sysctl line `{line}` that makes the kernel run {prog} as root for every module request"
                ),
            )
        } else if prog.contains("systemd-coredump") || mentions_own(ctx, prog) {
            (
                Severity::Low,
                format!("a sysctl line `{line}` that hands crashes to {prog}"),
            )
        } else {
            (
                Severity::Medium,
                format!(
                    "a sysctl line `{line}` that makes the kernel run {prog} as root on every crash; check it is the package's own"
                ),
            )
        };
        worst = worse(worst, s);
    }
    worst
}

//! Modes and privileges a package sets on files: world-writable modes (`chmod 777`, `o+w`,
//! `install -m 666`), setuid/setgid bits (`chmod u+s`, `4755`, `install -m 2755`) and file
//! capabilities (`setcap`) — in package() on the packaged files, or in install scripts on the
//! live system.

use super::files::absolute;
use super::{Ctx, Sink, argv};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word};

/// Where a mode is set: inside the package, or on the live system from a root script.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Package,
    System,
}

fn place(cmd: &Cmd, w: &Word) -> Option<(Place, String)> {
    let p = absolute(cmd, &w.text);
    if let Some(rest) = p.strip_prefix("$pkgdir") {
        return Some((
            Place::Package,
            if rest.is_empty() {
                "/".into()
            } else {
                rest.to_owned()
            },
        ));
    }
    if cmd.phase.runs_on_system() && p.starts_with('/') {
        // As the kernel resolves it (attack 31 F2's class: `/usr/bin//find`, `/usr/./bin/find`
        // name the system's find).
        let p = super::files::as_kernel_resolves(cmd, &p);
        if p == "/tmp" || p.starts_with("/tmp/") || p == "<descriptor>" {
            return None;
        }
        return Some((Place::System, p));
    }
    None
}

/// Directories everyone's programs come from: world-writable there means anyone can replace
/// what root runs.
fn system_critical(path: &str) -> bool {
    let p = path.trim_end_matches('/');
    p.is_empty()
        || [
            "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/opt",
        ]
        .contains(&p)
        || [
            "/usr/bin",
            "/usr/sbin",
            "/usr/lib",
            "/usr/lib64",
            "/usr/local/bin",
            "/etc/",
            "/usr/share/libalpm",
            "/boot/",
        ]
        .iter()
        .any(|d| p.starts_with(d))
}

/// Programs that give a shell (or arbitrary file access) when setuid or with capabilities.
fn gives_a_shell(path: &str) -> bool {
    let b = basename(path);
    names::is_interpreter(b)
        || matches!(
            b,
            "env"
                | "find"
                | "vim"
                | "vi"
                | "nano"
                | "less"
                | "more"
                | "cp"
                | "mv"
                | "dd"
                | "tee"
                | "chmod"
                | "chown"
                | "busybox"
                | "tar"
                | "rsync"
                | "nc"
                | "socat"
                | "xargs"
                | "install"
                | "ln"
                | "cat"
        )
}

/// `install -m4755 helper …/chrome-sandbox`: a file given the sandbox helper's name as it is
/// installed, whose own name is another (the low for the helper is earned by what the file is,
/// not by the name it is given — attack 31 F11's class).
fn renamed_into_place(cmd: &Cmd, path: &str) -> bool {
    let (prog, args) = names::program(cmd);
    if !matches!(prog, "install" | "cp" | "mv") {
        return false;
    }
    let parsed = if prog == "install" {
        argv::install(args)
    } else {
        argv::copy_like(args)
    };
    if parsed.value_word(&["-t", "--target-directory"]).is_some() {
        return false;
    }
    let ops = parsed.operands;
    let name = basename(path);
    match ops.split_last() {
        Some((_, sources)) if !sources.is_empty() => sources
            .iter()
            .any(|s| basename(&s.text) != name && !sandbox_helper(&s.text)),
        _ => false,
    }
}

/// The Chromium/Electron sandbox helper, setuid root by design where user namespaces are off.
fn sandbox_helper(path: &str) -> bool {
    let b = basename(path);
    b == "chrome-sandbox" || b == "chrome_sandbox" || b.ends_with("-sandbox")
}

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
        if matches!(cmd.phase, Phase::Runtime | Phase::Global) {
            continue;
        }
        let (name, args) = names::program(cmd);
        match name {
            "chmod" => {
                let p = argv::parse(args, "", "", &["--reference"]);
                let cluster = args.iter().find(|a| {
                    a.text.len() > 1
                        && a.text.starts_with('-')
                        && a.text[1..].chars().all(|c| "rwxXst".contains(c))
                });
                let (mode, targets): (String, Vec<&Word>) = match cluster {
                    Some(c) => (c.text.clone(), p.operands),
                    None => match p.operands.split_first() {
                        Some((m, rest)) => (m.text.clone(), rest.to_vec()),
                        None => continue,
                    },
                };
                judge_mode(ctx, cmd, &mode, &targets, Made::Unknown, sink);
            }
            "install" | "mkdir" => {
                let p = if name == "install" {
                    argv::install(args)
                } else {
                    argv::parse(args, "m", "", &["--mode"])
                };
                let Some(mode) = p.value(&["-m", "--mode"]) else {
                    continue;
                };
                let targets = super::files::write_targets(cmd);
                // `install -m 4755 /usr/bin/bash "$pkgdir/…/.helper"`: a copy of a shell.
                let copies_a_shell = name == "install"
                    && !(p.has("-d") || p.has("--directory"))
                    && p.operands.len() >= 2
                    && p.operands[..p.operands.len() - 1]
                        .iter()
                        .any(|w| gives_a_shell(&w.text));
                let made = if copies_a_shell {
                    Made::ShellCopy
                } else if name == "mkdir" || p.has("-d") || p.has("--directory") {
                    Made::Directory
                } else {
                    Made::Unknown
                };
                judge_mode(ctx, cmd, &mode, &targets, made, sink);
            }
            "setcap" => {
                let p = argv::parse(args, "n", "", &[]);
                if p.has("-r") {
                    continue;
                }
                let mut ops = p.operands.iter();
                while let (Some(caps), Some(file)) = (ops.next(), ops.next()) {
                    judge_caps(cmd, &caps.text, file, sink);
                }
            }
            _ => {}
        }
    }
}

/// What the command that sets a mode made, when it says so.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Made {
    Unknown,
    /// `mkdir -m`, `install -d -m`.
    Directory,
    /// `install -m 4755 /usr/bin/bash …`: a copy of a shell.
    ShellCopy,
}

/// Is `path` (installed-system spelling) made as a directory anywhere in the package or its
/// scripts (`install -d`, `mkdir`)? `chmod g+s /opt/app` then names a directory.
fn made_as_directory(ctx: &Ctx, path: &str) -> bool {
    let want = path.trim_end_matches('/');
    ctx.an.cmds.iter().any(|c| {
        let (n, a) = names::program(c);
        let dir_cmd = n == "mkdir"
            || (n == "install" && {
                let p = argv::install(a);
                p.has("-d") || p.has("--directory")
            });
        dir_cmd
            && super::files::write_targets(c).iter().any(|w| {
                let p = absolute(c, &w.text);
                let p = p.strip_prefix("$pkgdir").unwrap_or(&p);
                p.trim_end_matches('/') == want
            })
    })
}

/// Is `path` the package's own file: one its package() installs, or named after the package
/// (`/usr/bin/intelbacklight` for `intelbacklight-git`, `/opt/Notion Enhanced/…`)? A mode set
/// on it from an install script has the same effect as setting it in package().
fn own_file(ctx: &Ctx, path: &str) -> bool {
    let installed = ctx.an.cmds.iter().any(|c| {
        c.phase == Phase::Package
            && super::files::write_targets(c).iter().any(|w| {
                let p = absolute(c, &w.text);
                p.strip_prefix("$pkgdir").is_some_and(|r| {
                    r == path
                        || (r.len() > 1
                            && path.starts_with(&format!("{}/", r.trim_end_matches('/')))
                            && !system_critical(r))
                })
            })
    });
    if installed {
        return true;
    }
    let l = path.to_ascii_lowercase().replace(' ', "-");
    const GENERIC: &[&str] = &["git", "bin", "utils", "tools", "linux", "desktop", "app"];
    ctx.pkgnames.iter().any(|n| {
        n.to_ascii_lowercase()
            .split(['-', '_', '.'])
            .filter(|t| t.len() >= 4 && !GENERIC.contains(t))
            .any(|t| l.split('/').any(|seg| seg.contains(t)))
    })
}

fn judge_mode(ctx: &Ctx, cmd: &Cmd, mode: &str, targets: &[&Word], made: Made, sink: &mut Sink) {
    let (ww, su, sg, sticky) = argv::mode_bits(mode);
    if !(ww || su || sg) {
        return;
    }
    let shell_copy = made == Made::ShellCopy;
    for t in targets {
        let Some((at, path)) = place(cmd, t) else {
            continue;
        };
        let directory = made == Made::Directory || made_as_directory(ctx, &path);
        let own = at == Place::System && own_file(ctx, &path);
        let where_ = match at {
            Place::Package => format!("{path} in the package"),
            Place::System => format!("{path} on the live system"),
        };
        if ww {
            let (sev, why) = if sticky {
                (
                    Severity::Low,
                    format!(
                        "makes {where_} world-writable with the sticky bit (mode {mode}), like /tmp: anyone may add files there"
                    ),
                )
            } else {
                // The package's own file made world-writable from an install script is the
                // same effect as in package(); another file of the live system is worse.
                let sev = if (at == Place::System && !own) || system_critical(&path) {
                    Severity::High
                } else {
                    Severity::Medium
                };
                (
                    sev,
                    format!(
                        "makes {where_} world-writable (mode {mode}) {}: any user or program can change what it holds, and what root later runs from it",
                        cmd.phase.label()
                    ),
                )
            };
            sink.cmd("AUR-WORLD-WRITABLE", sev, cmd, why);
        }
        if su || sg {
            let bit = match (su, sg) {
                (true, true) => "setuid and setgid",
                (true, false) => "setuid",
                _ => "setgid",
            };
            let (sev, why) = if gives_a_shell(&path) || shell_copy {
                (
                    Severity::Critical,
                    format!(
                        "sets the {bit} bit (mode {mode}) on {where_}, a program that hands out a shell or any file: a root backdoor for every user"
                    ),
                )
            } else if sandbox_helper(&path)
                && (at == Place::Package || own)
                && !renamed_into_place(cmd, &path)
            {
                (
                    Severity::Low,
                    format!(
                        "sets the {bit} bit (mode {mode}) on the sandbox helper {where_} {}; Chromium-based apps need it where user namespaces are off; check the path is the app's own chrome-sandbox",
                        cmd.phase.label()
                    ),
                )
            } else if directory {
                (
                    Severity::Low,
                    format!(
                        "sets the {bit} bit (mode {mode}) on the directory {where_}: files made in it keep its group (a setuid bit on a directory does nothing on Linux); no program gains rights. Check who may write there"
                    ),
                )
            } else if !directory
                && argv::octal(mode).is_some_and(|v| v & 0o111 == 0)
                && !mode_changed_elsewhere(ctx, cmd, &path)
            {
                (
                    Severity::Low,
                    format!(
                        "sets the {bit} bit (mode {mode}) on {where_}, but the mode lets no one execute it: set-id acts only when a file is run, so no program gains rights. Check nothing else makes it executable"
                    ),
                )
            } else if !su
                && [
                    "/var/lib/",
                    "/var/cache/",
                    "/var/log/",
                    "/var/spool/",
                    "/var/games",
                    "/srv/",
                ]
                .iter()
                .any(|d| path.starts_with(d))
            {
                (
                    Severity::Low,
                    format!(
                        "sets the setgid bit (mode {mode}) on {where_}, a state directory: files made in it keep its group, the usual way to share it"
                    ),
                )
            } else if let Some(group) = (!su && at == Place::System && !own)
                .then(|| super::own_group::own_group_of(ctx, cmd, &path))
                .flatten()
            {
                (
                    Severity::Medium,
                    format!(
                        "sets the setgid bit (mode {mode}) on {where_} {}, after giving it the group {group} that the package creates for itself: the program runs with that group's rights only, the package's own account. Check the program needs them and that nothing else is in the group",
                        cmd.phase.label()
                    ),
                )
            } else if at == Place::System && !own {
                (
                    Severity::High,
                    format!(
                        "sets the {bit} bit (mode {mode}) on {where_} from a root script, a file the package does not install: every user may run it with its owner's rights. Check what the program is and why it needs the bit"
                    ),
                )
            } else if at == Place::System {
                (
                    Severity::Medium,
                    format!(
                        "sets the {bit} bit (mode {mode}) on {where_}, the package's own program, {}: the same as shipping it setuid. Check the program needs root rights and handles its input carefully",
                        cmd.phase.label()
                    ),
                )
            } else {
                (
                    Severity::Medium,
                    format!(
                        "sets the {bit} bit (mode {mode}) on {where_}: the program runs with its owner's rights (usually root) for every user. Check the program needs them and handles its input carefully"
                    ),
                )
            };
            sink.cmd("AUR-SETUID", sev, cmd, why);
        }
    }
}

fn judge_caps(cmd: &Cmd, caps: &str, file: &Word, sink: &mut Sink) {
    let Some((at, path)) = place(cmd, file).or_else(|| {
        // setcap in an install script names the installed path.
        (file.text.starts_with('/')).then(|| (Place::System, file.text.clone()))
    }) else {
        return;
    };
    let c = caps.to_ascii_lowercase();
    const STRONG: &[&str] = &[
        "cap_sys_admin",
        "cap_dac_override",
        "cap_dac_read_search",
        "cap_setuid",
        "cap_setgid",
        "cap_sys_ptrace",
        "cap_sys_module",
        "cap_fowner",
        "cap_chown",
        "cap_sys_rawio",
        "cap_setfcap",
        "cap_sys_chroot",
        "cap_linux_immutable",
        "cap_mac_admin",
        "cap_bpf",
    ];
    const COMMON: &[&str] = &[
        "cap_net_raw",
        "cap_net_bind_service",
        "cap_net_admin",
        "cap_sys_nice",
        "cap_ipc_lock",
        "cap_sys_resource",
        "cap_perfmon",
        "cap_sys_time",
        "cap_wake_alarm",
        "cap_block_suspend",
        "cap_audit_write",
    ];
    let all =
        c.starts_with('=') || c.starts_with("all") || c.contains(",all") || c.contains(" all");
    let listed: Vec<&str> = c
        .split(['=', '+', '-', ','])
        .filter(|p| p.starts_with("cap_"))
        .collect();
    let where_ = match at {
        Place::Package => format!("{path} in the package"),
        Place::System => path.clone(),
    };
    let (sev, what) = if gives_a_shell(&path) && (all || !listed.is_empty()) {
        (
            Severity::Critical,
            "a program that runs any code or file: every user gets those powers".to_owned(),
        )
    } else if all || listed.iter().any(|l| STRONG.contains(l)) {
        (
            Severity::High,
            "powers close to root (reading or changing any file, other users' processes, the kernel)".to_owned(),
        )
    } else if !listed.is_empty() && listed.iter().all(|l| COMMON.contains(l)) {
        (
            Severity::Low,
            "a narrow network or scheduling power that tools like this commonly need".to_owned(),
        )
    } else {
        (
            Severity::Medium,
            "privileges beyond a normal program's".to_owned(),
        )
    };
    sink.cmd(
        "AUR-CAPABILITY",
        sev,
        cmd,
        format!(
            "gives {where_} the file capabilities `{caps}` {}: {what}",
            cmd.phase.label()
        ),
    );
}

/// Something else in the package may change the file's mode, so the mode set here may not be
/// the one it ends with (attack 31 F11; class: *a mend from a false positive that lowers a
/// class, guarded by a spelling* — only a later `chmod` of the same name was seen, while the
/// effect is the file's final mode). Any other command, in the PKGBUILD, an install script or
/// a hook, that:
/// - changes modes (`chmod`, `setfacl`, `install`, `cp`, `rsync`) on the file, a directory
///   above it (`chmod -R a+x DIR`), a glob that matches it (`chmod a+x DIR/*`), a relative or
///   computed name (after `cd`, `chmod +x *`), or a file of the same name;
/// - moves or copies the file elsewhere (`mv helper h2; chmod +x h2`);
/// - runs `chmod` through another program (`find … -exec chmod`, `xargs chmod`, `perl -e
///   'chmod …'`, `sh -c`);
/// - writes a tmpfiles.d configuration (whose `z`/`Z`/`m` lines set modes when it is applied),
///   or the package carries one with such a line.
fn mode_changed_elsewhere(ctx: &Ctx, cmd: &Cmd, path: &str) -> bool {
    let name = basename(path);
    let inside = |p: &str| -> String {
        let p = p.strip_prefix("$pkgdir").unwrap_or(p);
        crate::audit::shell::join_path(None, p)
    };
    let reaches = |c: &Cmd, w: &Word| {
        let q = absolute(c, &w.text);
        // The build's own trees are not the package's or the system's files.
        if ["$srcdir", "$startdir", "$HOME"]
            .iter()
            .any(|d| q.starts_with(d))
        {
            return false;
        }
        if w.dynamic || !w.subs.is_empty() || !(q.starts_with('/') || q.starts_with("$pkgdir")) {
            return true;
        }
        let q = inside(&q);
        q == path
            || basename(&q) == name
            || path.starts_with(&format!("{}/", q.trim_end_matches('/')))
            || super::files::glob_match(&q, path)
    };
    let tmpfiles_line = |t: &str| {
        t.lines().any(|l| {
            let mut f = l.split_whitespace();
            matches!(f.next(), Some("z" | "Z" | "m" | "M"))
                && f.nth(1).is_some_and(|m| {
                    argv::octal(m).is_some_and(|v| v & 0o6000 != 0) || m.starts_with('~')
                })
        })
    };
    if ctx.local_texts.iter().any(|(_, t)| tmpfiles_line(t)) {
        return true;
    }
    ctx.an.cmds.iter().any(|c| {
        if std::ptr::eq(c, cmd) {
            return false;
        }
        let (prog, args) = names::program(c);
        let targets = super::files::write_targets(c);
        if targets.iter().any(|t| t.text.contains("tmpfiles.d")) {
            return true;
        }
        let runs_chmod = !matches!(prog, "chmod" | "install" | "mkdir")
            && (c.argv.iter().any(|a| a.text.contains("chmod"))
                || c.embed.is_some() && c.snippet.contains("chmod"));
        if runs_chmod {
            return true;
        }
        match prog {
            "chmod" | "setfacl" => {
                let p = argv::parse(args, "", "", &["--reference"]);
                let cluster = args.iter().any(|a| {
                    a.text.len() > 1
                        && a.text.starts_with('-')
                        && a.text[1..].chars().all(|ch| "rwxXst".contains(ch))
                });
                p.operands
                    .iter()
                    .skip(usize::from(prog == "chmod" && !cluster))
                    .chain(targets.iter())
                    .any(|w| reaches(c, w))
            }
            "install" | "cp" | "mv" | "rsync" => {
                let ops = if prog == "install" {
                    argv::install(args).operands
                } else {
                    argv::copy_like(args).operands
                };
                // The file written with another mode, or the file moved or copied to a name
                // whose mode is then set.
                targets.iter().any(|w| {
                    let q = inside(&absolute(c, &w.text));
                    q == path || basename(&q) == name
                }) || ops.iter().any(|w| {
                    let q = inside(&absolute(c, &w.text));
                    q == path
                })
            }
            _ => false,
        }
    })
}

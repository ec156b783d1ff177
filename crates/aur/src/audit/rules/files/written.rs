//! The files a command puts on the installed system, with the text it puts there when the
//! audit can see it: `package()` writing into `$pkgdir` (the file ships at that path) or an
//! install script / hook writing the live path (relative paths from `/`, where scriptlets run).
//! Shared by the rules that read what such a file tells root's own tools (polkit, sudo, PAM,
//! systemd-tmpfiles, sysusers, udev, binfmt, modprobe, systemd unit links and drop-ins).

use super::super::argv;
use super::super::{Ctx, Sink};
use super::write_targets;
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Phase, Word, join_path};

/// One file the command leaves on the system.
pub(super) struct Written<'a> {
    /// Its path on the installed system, normalised (`/etc/sudoers.d/foo`).
    pub path: String,
    /// Shipped in the package (`$pkgdir/…`), rather than written by a scriptlet.
    pub in_pkg: bool,
    /// How the command spells it.
    pub raw: String,
    /// The text written, when the audit can see it (an echo/printf, a here-document, a local
    /// source file copied there); `None` when it cannot (a file of the upstream tarball, a
    /// variable's value it does not know).
    pub text: Option<String>,
    /// For a symbolic link: what it points to.
    pub link: Option<String>,
    pub cmd: &'a Cmd,
}

impl Written<'_> {
    /// Says what the command does to this file and why it matters: `place` is how it gets there
    /// ("ships", "writes", …), the path and its spelling, the phase.
    pub(super) fn report(
        &self,
        sink: &mut Sink,
        id: &'static str,
        sev: Severity,
        place: &str,
        why: &str,
    ) {
        sink.cmd(
            id,
            sev,
            self.cmd,
            format!(
                "{place} {} ({}) {}: {why}",
                self.path,
                self.raw,
                self.cmd.phase.label()
            ),
        );
    }
}

/// A path inside the package folded as the kernel resolves it: `//`, `/./` and `dir/..`
/// (attack 31 F2, F15). The shell model already tidies every `$pkgdir` word so
/// (`shell::text::tidy_build_path`); this folds what is joined here (a directory and the name
/// a file gets in it).
pub(super) fn normalise(p: &str) -> String {
    join_path(None, p)
}

/// Directory names that only ever hold configuration files: an operand ending in one is a
/// directory the sources are copied into, whatever its spelling.
fn config_dir(p: &str) -> bool {
    let b = basename(p.trim_end_matches('/'));
    b.ends_with(".d")
        || b.ends_with(".wants")
        || b.ends_with(".requires")
        || matches!(b, "actions" | "hooks" | "system" | "user")
}

fn makes_dir(cmd: &Cmd) -> bool {
    let (prog, args) = names::program(cmd);
    prog == "mkdir"
        || (prog == "install"
            && (argv::install(args).has("-d") || argv::install(args).has("--directory")))
}

/// echo/printf's output for its words, with the common escapes decoded.
pub(super) fn printed(prog: &str, args: &[Word]) -> Option<String> {
    let mut words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match prog {
        "echo" => {
            let mut escapes = false;
            while let Some(w) = words.first() {
                if w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "neE".contains(c)) {
                    escapes |= w.contains('e');
                    words.remove(0);
                } else {
                    break;
                }
            }
            let s = words.join(" ");
            Some(if escapes { unescape(&s) } else { s })
        }
        "printf" => {
            if words.first() == Some(&"-v") {
                return None;
            }
            if words.first() == Some(&"--") {
                words.remove(0);
            }
            let fmt = words.first()?;
            let rest = words[1..].join(" ");
            let f = unescape(fmt).replace("%%", "\u{0}");
            let f = if f.contains("%s") || f.contains("%b") {
                f.replacen("%s", &rest, 1)
                    .replacen("%b", &unescape(&rest), 1)
            } else if rest.is_empty() {
                f
            } else {
                format!("{f}{rest}")
            };
            Some(f.replace('\u{0}', "%"))
        }
        _ => None,
    }
}

fn unescape(s: &str) -> String {
    s.replace("\\n", "\n").replace("\\t", "\t")
}

/// The text of the package's local file `src` names (by its file name), if the audit has it.
fn local_text(ctx: &Ctx, src: &str) -> Option<String> {
    let b = basename(src);
    if b.is_empty() || b.starts_with('$') {
        return None;
    }
    if let Some(suffix) = b.strip_prefix('*') {
        let all: Vec<&str> = ctx
            .local_texts
            .iter()
            .filter(|(n, _)| n.ends_with(suffix))
            .map(|(_, t)| t.as_str())
            .collect();
        return (!all.is_empty()).then(|| all.join("\n"));
    }
    ctx.local_texts
        .iter()
        .find(|(n, _)| basename(n) == b)
        .map(|(_, t)| t.clone())
}

/// Where the command's written path lands on the installed system.
fn placed(cmd: &Cmd, p: &str) -> Option<(String, bool)> {
    let p = super::absolute(cmd, p);
    for d in ["$pkgdir", "${pkgdir}"] {
        if let Some(r) = p.strip_prefix(d)
            && (r.is_empty() || r.starts_with('/'))
        {
            return (cmd.phase == Phase::Package).then(|| (normalise(&format!("/{r}")), true));
        }
    }
    if !matches!(cmd.phase, Phase::Install | Phase::Hook) || p.is_empty() {
        return None;
    }
    if p.starts_with('/') {
        // The live path as the kernel resolves it (`/proc/self/root/etc/…`, `/var/run/../etc`).
        Some((super::as_kernel_resolves(cmd, &p), false))
    } else if p.starts_with('$') {
        None
    } else {
        Some((super::as_kernel_resolves(cmd, &format!("/{p}")), false))
    }
}

/// The files `cmd` leaves on the system (not directories it only makes).
pub(super) fn written<'a>(ctx: &Ctx, cmd: &'a Cmd) -> Vec<Written<'a>> {
    if !matches!(cmd.phase, Phase::Package | Phase::Install | Phase::Hook) || makes_dir(cmd) {
        return Vec::new();
    }
    let (prog, args) = names::program(cmd);
    // What reaches its standard input: a here-document, or an `echo` piped into it.
    let stdin = fed_text(ctx, cmd);
    let mut out = Vec::new();
    let redirected: Vec<&Word> = cmd
        .redirs
        .iter()
        .filter(|r| matches!(r.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>"))
        .map(|r| &r.target)
        .collect();
    for t in &redirected {
        let Some((path, in_pkg)) = placed(cmd, &t.text) else {
            continue;
        };
        let text = match prog {
            "echo" | "printf" => printed(prog, args),
            "cat" => {
                let srcs: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-')).collect();
                if srcs.is_empty() {
                    stdin.clone()
                } else {
                    let all: Option<Vec<String>> =
                        srcs.iter().map(|s| local_text(ctx, &s.text)).collect();
                    all.map(|v| v.join("\n"))
                }
            }
            _ => None,
        };
        out.push(Written {
            path,
            in_pkg,
            raw: t.text.clone(),
            text,
            link: None,
            cmd,
        });
    }
    match prog {
        "tee" => {
            for t in argv::parse(args, "", "", &[]).operands {
                if let Some((path, in_pkg)) = placed(cmd, &t.text) {
                    out.push(Written {
                        path,
                        in_pkg,
                        raw: t.text.clone(),
                        text: stdin.clone(),
                        link: None,
                        cmd,
                    });
                }
            }
        }
        "install" | "cp" | "ln" => {
            let p = if prog == "install" {
                argv::install(args)
            } else {
                argv::copy_like(args)
            };
            let (dir, srcs): (Option<&Word>, Vec<&Word>) =
                match p.value_word(&["-t", "--target-directory"]) {
                    Some(d) => (Some(d), p.operands.clone()),
                    None if p.operands.len() >= 2 => {
                        let last = p.operands[p.operands.len() - 1];
                        let srcs = p.operands[..p.operands.len() - 1].to_vec();
                        let is_dir = last.text.ends_with('/')
                            || srcs.len() > 1
                            || (config_dir(&last.text) && !basename(&last.text).ends_with(".conf"));
                        if is_dir {
                            (Some(last), srcs)
                        } else {
                            let Some((path, in_pkg)) = placed(cmd, &last.text) else {
                                return out;
                            };
                            let src = &srcs[0].text;
                            out.push(Written {
                                path,
                                in_pkg,
                                raw: last.text.clone(),
                                text: source_text(ctx, prog, src, &stdin),
                                link: (prog == "ln").then(|| src.clone()),
                                cmd,
                            });
                            return out;
                        }
                    }
                    None => return out,
                };
            let Some(dir) = dir else { return out };
            let Some((d, in_pkg)) = placed(cmd, &dir.text) else {
                return out;
            };
            for s in srcs {
                let name = basename(s.text.trim_end_matches('/'));
                if name.is_empty() {
                    continue;
                }
                out.push(Written {
                    path: normalise(&format!("{d}/{name}")),
                    in_pkg,
                    raw: format!("{}/{name}", dir.text.trim_end_matches('/')),
                    text: source_text(ctx, prog, &s.text, &stdin),
                    link: (prog == "ln").then(|| s.text.clone()),
                    cmd,
                });
            }
        }
        _ => {}
    }
    // Anything else the shared parser says the command writes (`dd of=`, `sed -i` …): the
    // place, without its text.
    for t in write_targets(cmd) {
        if redirected.iter().any(|r| std::ptr::eq(*r, t))
            || matches!(prog, "tee" | "install" | "cp" | "ln")
        {
            continue;
        }
        // An edit in place of a file the package already holds (`sed -i`) is judged where
        // the file was put there.
        if matches!(prog, "sed" | "perl") {
            continue;
        }
        if let Some((path, in_pkg)) = placed(cmd, t.text.trim_start_matches("of=")) {
            out.push(Written {
                path,
                in_pkg,
                raw: t.text.clone(),
                text: None,
                link: None,
                cmd,
            });
        }
    }
    out
}

fn source_text(ctx: &Ctx, prog: &str, src: &str, stdin: &Option<String>) -> Option<String> {
    if prog == "ln" {
        return None;
    }
    if matches!(src, "/dev/stdin" | "-" | "/proc/self/fd/0" | "/dev/fd/0") {
        return stdin.clone();
    }
    local_text(ctx, src).or_else(|| built_text(ctx, src))
}

/// The text of a file the build itself wrote before copying it in (`printf … > rule.js`, then
/// `install rule.js "$pkgdir/…"`): what the printing command put there, by the file's name.
fn built_text(ctx: &Ctx, src: &str) -> Option<String> {
    let b = basename(src);
    if b.is_empty() || b.starts_with('$') || b.contains('*') {
        return None;
    }
    let mut text: Option<String> = None;
    for c in &ctx.an.cmds {
        let (prog, args) = names::program(c);
        let into: Vec<&Word> = c
            .redirs
            .iter()
            .filter(|r| matches!(r.op.as_str(), ">" | ">>" | ">|" | "&>" | "&>>"))
            .map(|r| &r.target)
            .chain(if prog == "tee" {
                argv::parse(args, "", "", &[]).operands
            } else {
                Vec::new()
            })
            .filter(|t| basename(&t.text) == b && !t.text.contains("$pkgdir"))
            .collect();
        if into.is_empty() {
            continue;
        }
        let t = match prog {
            "echo" | "printf" => printed(prog, args),
            "cat" | "tee" => fed_text(ctx, c),
            _ => None,
        };
        if let Some(t) = t {
            let appended = c.redirs.iter().any(|r| r.op == ">>");
            text = Some(match (text, appended) {
                (Some(old), true) => format!("{old}\n{t}"),
                _ => t,
            });
        }
    }
    text
}

/// The package's own names, lower case, and their parts of at least four letters.
pub(super) fn own_tokens(ctx: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for n in &ctx.pkgnames {
        let l = n.to_ascii_lowercase();
        for t in l.split(['-', '_', '.']) {
            if t.len() >= 4
                && !matches!(
                    t,
                    "git"
                        | "bin"
                        | "utils"
                        | "tools"
                        | "dkms"
                        | "daemon"
                        | "linux"
                        | "server"
                        | "client"
                        | "desktop"
                        | "settings"
                        | "config"
                        | "common"
                )
            {
                out.push(t.to_owned());
            }
        }
        out.push(l);
    }
    out.sort();
    out.dedup();
    out
}

/// `s` names the package (one of its own names or their parts appears in it).
pub(super) fn mentions_own(ctx: &Ctx, s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    own_tokens(ctx).iter().any(|t| l.contains(t.as_str()))
}

/// The text fed to `cmd` on its standard input: a here-document or here-string, or what an
/// `echo`/`printf` before it in the same pipeline prints.
pub(super) fn fed_text(ctx: &Ctx, cmd: &Cmd) -> Option<String> {
    if let Some(s) = &cmd.stdin {
        return Some(s.text.clone());
    }
    let (id, stage, _) = cmd.pipe?;
    let prev = ctx.an.cmds.iter().find(|c| {
        c.file == cmd.file && c.pipe.is_some_and(|(i, s, _)| i == id && s + 1 == stage)
    })?;
    let (prog, args) = names::program(prev);
    printed(prog, args)
}

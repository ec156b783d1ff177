//! Files a package touches: writes outside `$pkgdir`/`$srcdir`, persistence (systemd units
//! enabled, cron, linger, autostart, shell rc files, `~/.local/bin` shadows), and secrets
//! (`~/.ssh`, `~/.gnupg`, browser profiles, tokens).

use super::{Ctx, Sink, argv, units};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, FileKind, Phase, Word, join_path};

mod build_files;
mod command_dirs;
mod deletes;
mod grants;
mod home_find;
mod persistence;
mod reach;
mod secrets;
mod tool_configs;
mod unit_links;
mod written;

use build_files::{fills_in_values, rewritten_build_file};
use command_dirs::{
    command_dirs, files_into_dir, links_to_the_same_system_program, tree_brings_command,
};
use deletes::{deletes_a_system_tree, sweeping_delete};
use persistence::{persistence, startup_location, startup_text_effect, system_path_only};
pub(super) use reach::{as_kernel_resolves, glob_match};
use secrets::{credential_vars, secret};

pub(super) fn check(ctx: &Ctx, sink: &mut Sink) {
    for cmd in &ctx.an.cmds {
        let (name, _) = names::program(cmd);
        let message = names::is_message(name);
        // Secrets: any path a command reads or writes.
        let mut paths: Vec<&Word> = cmd.redirs.iter().map(|r| &r.target).collect();
        if !message {
            paths.extend(cmd.argv.iter().skip(1));
            paths.extend(cmd.env.iter().map(|(_, w)| w));
        }
        let redirected = cmd.redirs.len();
        let written = write_targets(cmd);
        for (i, w) in paths.iter().enumerate() {
            let p = absolute(cmd, &w.text);
            // A launcher the package installs may touch its own app's profile (a Discord
            // wrapper and ~/.config/discord); anything else's is still a secret.
            if cmd.phase == Phase::Runtime && own_app_path(ctx, &p) {
                continue;
            }
            // Deleting sudo rules or password files reads nothing and grants nothing (removing
            // a package's own sudoers.d file on uninstall); keys and profiles stay secrets,
            // whose deletion is destruction.
            let drops_rules = matches!(name, "rm" | "unlink")
                && (p.starts_with("/etc/sudoers") || p.starts_with("/etc/shadow"));
            // Making an empty directory reads nothing and writes no rule or key into it
            // (`mkdir -p etc/sudoers.d`); a mode that opens nothing to others for writing
            // grants nothing on the sudo rules (world-writable modes are the modes rule's).
            let rules = p.starts_with("/etc/sudoers");
            // Reading the sudo rules (a backup tool copying them out, `grep` in them) discloses
            // who may become root, no password, key or token; writing them is what grants root.
            // Only programs that read what they are given, and only operands they do not write.
            let reads_rules = rules
                && RULE_READERS.contains(&name)
                && !written.iter().any(|t| std::ptr::eq(*t, *w));
            // Only the command's own operands: a redirection of `mkdir` or `chmod` still writes.
            let operand = i >= redirected;
            if drops_rules
                || reads_rules
                || (operand && (makes_dir(cmd) || (rules && narrowing_mode(cmd))))
            {
                continue;
            }
            if !in_image_root(ctx, cmd, &p)
                && let Some(what) = secret(&p)
            {
                sink.cmd(
                    "AUR-SECRETS",
                    Severity::Critical,
                    cmd,
                    format!("touches {what} ({}): a package has no business there; this is how credentials get stolen", w.text),
                );
            }
        }
        credential_vars(cmd, sink);
        let effect = match name {
            "rm" | "rmdir" | "unlink" | "shred" | "find" => Effect::Delete,
            "chmod" | "chown" | "chgrp" => Effect::Mode,
            _ => Effect::Write,
        };
        for t in write_targets(cmd) {
            // As the kernel resolves it: `//home`, `/./home`, `/tmp/../home` are `/home` (attack
            // 28 F3), and for a deletion `/proc/self/root/home`, `/var/run/../home` too (attack
            // 29 F1, `deletes::as_kernel_resolves`).
            let p = absolute(cmd, &t.text);
            let p = if effect == Effect::Delete {
                deletes::through_links(ctx, cmd, &as_directory(&t.text, p))
            } else {
                p
            };
            let p = if !p.starts_with('/') {
                p
            } else if effect == Effect::Delete {
                deletes::as_kernel_resolves(cmd, &p)
            } else {
                join_path(None, &p)
            };
            if effect == Effect::Delete && p.starts_with("$pkgdir") {
                continue;
            }
            // A redirection of `mkdir` still writes its file: only the operands are directories.
            let operand = !cmd.redirs.iter().any(|r| std::ptr::eq(&r.target, t));
            judge_write(ctx, cmd, &p, &t.text, effect, operand, sink);
        }
        // `install -t DIR NAME…`, `cp NAME… DIR/`: each file lands as DIR/NAME, judged by the
        // name it gets there (attack 31 F3 q30: `install -Dm755 -t "$pkgdir/usr/local/bin"
        // sudo` was read as a write of the directory alone).
        if effect == Effect::Write {
            for (p, raw) in files_into_dir(cmd) {
                let p = if p.starts_with('/') {
                    join_path(None, &p)
                } else {
                    p
                };
                judge_write(ctx, cmd, &p, &raw, effect, true, sink);
            }
        }
        for t in deletes::other_deletions(ctx, cmd) {
            let p =
                deletes::through_links(ctx, cmd, &as_directory(&t.text, absolute(cmd, &t.text)));
            if p.starts_with('/') {
                let p = deletes::as_kernel_resolves(cmd, &p);
                deletes_a_system_tree(cmd, &p, &t.text, sink);
            }
        }
        units::services(ctx, cmd, sink);
        for w in written::written(ctx, cmd) {
            grants::judge(ctx, &w, sink);
            tool_configs::judge(ctx, &w, sink);
            unit_links::judge(ctx, &w, sink);
        }
        tool_configs::direct(ctx, cmd, sink);
    }
}

/// Programs that only read the files they are given as sources (what they write is
/// `write_targets`'): copying, archiving, printing, searching, comparing.
const RULE_READERS: &[&str] = &[
    "cp",
    "rsync",
    "tar",
    "bsdtar",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "diff",
    "cmp",
    "stat",
    "ls",
    "test",
    "[",
    "wc",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
];

/// `ln -s …/graphical.target /etc/systemd/system/default.target`: the boot target linked, as
/// `systemctl set-default` links it, to systemd's own `graphical` or `multi-user` target.
fn standard_default_target(cmd: &Cmd, p: &str) -> bool {
    let (name, args) = names::program(cmd);
    if name != "ln"
        || !p
            .trim_end_matches('/')
            .ends_with("/etc/systemd/system/default.target")
    {
        return false;
    }
    let ops = argv::copy_like(args).operands;
    ops.len() == 2
        && matches!(
            basename(&ops[0].text),
            "graphical.target" | "multi-user.target"
        )
        && ["/usr/lib/systemd/system/", "/lib/systemd/system/"]
            .iter()
            .any(|d| ops[0].text.starts_with(d))
}

/// What a command does to the files it names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Creates or changes content (a redirection, `cp`, `install`, `sed -i` …).
    Write,
    /// Removes it: a deletion adds nothing that could run later.
    Delete,
    /// Changes only its mode or owner (judged by the modes rule, not as content).
    Mode,
}

/// Under the build folders makepkg gives the build (`$srcdir`, the PKGBUILD's own directory):
/// nothing there is installed or run on the system by being there.
fn in_build_folder(p: &str) -> bool {
    ["$srcdir", "${srcdir}", "$startdir", "${startdir}"]
        .iter()
        .any(|d| {
            p.strip_prefix(d)
                .is_some_and(|r| r.is_empty() || r.starts_with('/'))
        })
}

/// mkinitcpio's functions an install hook's `build()` calls to put files into the image.
const INITCPIO_API: &[&str] = &[
    "add_binary",
    "add_file",
    "add_dir",
    "add_symlink",
    "add_full_dir",
    "add_module",
    "add_all_modules",
    "add_checked_modules",
    "add_runscript",
    "add_udev_rule",
    "add_systemd_unit",
    "add_firmware",
];

/// Under `$BUILDROOT` in a mkinitcpio install hook the package ships: mkinitcpio sources the
/// hook and runs its `build()` (and the helpers it calls) with `BUILDROOT` set to the
/// initramfs image it is assembling, a staging
/// root like `$pkgdir` — `$BUILDROOT/etc/shadow` is the image's file, not the system's. A file
/// is such a hook when it is one of the package's files (not the PKGBUILD or an install script)
/// and calls mkinitcpio's `add_*` functions without defining them. Anywhere else nothing sets
/// `BUILDROOT`, and the path is the live one.
fn in_image_root(ctx: &Ctx, cmd: &Cmd, p: &str) -> bool {
    let under = ["${BUILDROOT}", "$BUILDROOT"].iter().any(|d| {
        p.strip_prefix(d)
            .is_some_and(|r| r.is_empty() || r.starts_with('/'))
    });
    under
        && ctx
            .an
            .files
            .get(cmd.file)
            .is_some_and(|f| f.kind == FileKind::Local)
        && ctx.an.cmds.iter().any(|c| {
            let name = names::program(c).0;
            c.file == cmd.file
                && INITCPIO_API.contains(&name)
                && !ctx.an.functions.iter().any(|f| f == name)
        })
}

/// A path as the command sees it: relative paths are resolved against the directory the
/// shell model says it runs in (`$srcdir` in PKGBUILD functions, then every `cd`).
/// `abs` (`raw` made absolute) with the trailing `/` that `raw`'s own spelling gives it kept:
/// `rm -rf cache/` and `cache/.` go through a link named `cache` into the directory it names,
/// `rm -rf cache` removes only the link — and the joining of a relative path drops the slash
/// (attack 32 F9: `ln -s "$HOME" cache; rm -rf cache/` read as removing the link).
fn as_directory(raw: &str, mut abs: String) -> String {
    let dir_form = raw.ends_with('/') || raw.ends_with("/.") || raw == ".";
    if dir_form && !abs.ends_with('/') {
        abs.push('/');
    }
    abs
}

pub(super) fn absolute(cmd: &Cmd, p: &str) -> String {
    if p.starts_with('/') || p.starts_with('$') || p.is_empty() {
        return p.to_owned();
    }
    match &cmd.cwd {
        Some(c) if c.starts_with('$') || c.starts_with('/') => join_path(Some(c), p),
        _ => p.to_owned(),
    }
}

fn own_app_path(ctx: &Ctx, p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    ctx.pkgnames.iter().any(|n| {
        n.to_ascii_lowercase()
            .split(['-', '_', '.'])
            .filter(|t| t.len() >= 4 && !matches!(*t, "electron" | "desktop" | "bin" | "git"))
            .any(|t| l.contains(&format!("/.config/{t}")) || l.contains(&format!("/.{t}")))
    })
}

/// Files and directories a command creates, changes or deletes: its written operands, parsed
/// as the program reads its options (a sed expression, a mode or a suffix is never a path).
pub(super) fn write_targets(cmd: &Cmd) -> Vec<&Word> {
    let mut out: Vec<&Word> = cmd
        .redirs
        .iter()
        .filter(|r| r.op.starts_with('>') || r.op == "&>" || r.op == "&>>")
        .filter(|r| {
            !(r.op == ">&"
                && r.target
                    .text
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '-'))
        })
        .map(|r| &r.target)
        .collect();
    let (name, args) = names::program(cmd);
    match name {
        "tee" => out.extend(argv::parse(args, "", "", &[]).operands),
        "mkdir" => out.extend(argv::parse(args, "m", "", &["--mode"]).operands),
        "touch" => out.extend(argv::parse(args, "dtr", "", &["--date", "--reference"]).operands),
        "truncate" => out.extend(argv::parse(args, "sr", "", &["--size", "--reference"]).operands),
        "rm" | "rmdir" | "unlink" => out.extend(argv::parse(args, "", "", &[]).operands),
        // `find PATH … -delete` and `find PATH … -exec rm …` delete under PATH: its starting
        // points are what it deletes in (attack 28 F3).
        // The program `-exec` runs is read through wrappers (`-exec /usr/bin/env rm`).
        "find"
            if args.iter().any(|a| a.text == "-delete")
                || args.windows(2).enumerate().any(|(k, w)| {
                    matches!(w[0].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") && {
                        let rest = &args[k + 1..];
                        matches!(
                            basename(&rest[names::effective(rest)].text),
                            "rm" | "shred" | "unlink"
                        )
                    }
                }) =>
        {
            out.extend(deletes::find_starts(args))
        }
        "shred" => out.extend(argv::parse(args, "ns", "", &["--iterations", "--size"]).operands),
        "chmod" | "chown" | "chgrp" => {
            let p = argv::parse(args, "", "", &["--reference"]);
            let skip = usize::from(p.value(&["--reference"]).is_none());
            // `chmod -x FILE`: GNU reads a leading `-rwx` cluster as the mode.
            let mode_as_opt = name == "chmod"
                && args.iter().any(|a| {
                    a.text.len() > 1
                        && a.text.starts_with('-')
                        && a.text[1..].chars().all(|c| "rwxXst".contains(c))
                });
            out.extend(
                p.operands
                    .into_iter()
                    .skip(if mode_as_opt { 0 } else { skip }),
            );
        }
        "install" => {
            let p = argv::install(args);
            if let Some(t) = p.value_word(&["-t", "--target-directory"]) {
                out.push(t);
            } else if p.has("-d") || p.has("--directory") {
                out.extend(p.operands);
            } else if p.operands.len() >= 2 {
                out.extend(p.operands.last().copied());
            }
        }
        "cp" | "mv" | "ln" | "rsync" => {
            let p = argv::copy_like(args);
            if let Some(t) = p.value_word(&["-t", "--target-directory"]) {
                out.push(t);
            } else if p.operands.len() >= 2 {
                out.extend(p.operands.last().copied());
            }
        }
        "sed" => out.extend(argv::sed_in_place(args)),
        "perl" => out.extend(argv::perl_in_place(args)),
        "dd" => out.extend(args.iter().filter(|a| a.text.starts_with("of="))),
        "curl" => {
            let p = argv::parse(
                args,
                "odHXAuFeTwrmCK",
                "",
                &["--output", "--data", "--header"],
            );
            out.extend(p.value_word(&["-o", "--output"]));
        }
        "wget" => {
            let p = argv::parse(
                args,
                "OPo",
                "",
                &["--output-document", "--directory-prefix"],
            );
            out.extend(p.value_word(&["-O", "-P", "--output-document", "--directory-prefix"]));
        }
        "tar" | "bsdtar" => {
            let p = argv::parse(args, "CfT", "", &["--directory", "--file"]);
            out.extend(p.value_word(&["-C", "--directory"]));
        }
        "unzip" => {
            let p = argv::parse(args, "dx", "", &[]);
            out.extend(p.value_word(&["-d"]));
        }
        "crontab" => out.extend(argv::parse(args, "u", "", &[]).operands),
        _ => {}
    }
    out
}

fn strip_dd(w: &str) -> &str {
    w.strip_prefix("of=").unwrap_or(w)
}

fn judge_write(
    ctx: &Ctx,
    cmd: &Cmd,
    p: &str,
    raw: &str,
    effect: Effect,
    operand: bool,
    sink: &mut Sink,
) {
    let p = strip_dd(p);
    if effect == Effect::Delete {
        deletes_a_system_tree(cmd, p, raw, sink);
    }
    if effect == Effect::Write
        && let Some(what) = rewritten_build_file(ctx, cmd, p)
    {
        let later = if what.starts_with("the PKGBUILD") {
            "the fakeroot pass sources the PKGBUILD anew"
        } else {
            "it copies the install script or changelog into the package after package(), and root runs the install script"
        };
        let read = what == "the PKGBUILD"
            || ctx
                .local_texts
                .iter()
                .any(|(n, _)| basename(n) == basename(p));
        let (prog, args) = names::program(cmd);
        let copies_read = matches!(prog, "cp" | "install")
            && !cmd.redirs.iter().any(|r| r.op.starts_with('>'))
            && {
                let ops = if prog == "install" {
                    argv::install(args).operands
                } else {
                    argv::copy_like(args).operands
                };
                ops.split_last().is_some_and(|(_, srcs)| {
                    !srcs.is_empty()
                        && srcs.iter().all(|w| {
                            ctx.local_texts
                                .iter()
                                .any(|(n, _)| basename(n) == basename(&w.text))
                        })
                })
            };
        let (sev, why) = if what == "the changelog" {
            (
                Severity::Low,
                format!(
                    "writes {what} ({raw}) {}: pacman shows a changelog (`pacman -Qc`) and never runs it",
                    cmd.phase.label()
                ),
            )
        } else if copies_read {
            (
                Severity::Low,
                format!(
                    "copies a file the audit read onto {what} ({raw}) {}: {later}; what is copied is text judged here",
                    cmd.phase.label()
                ),
            )
        } else if let Some(values) = fills_in_values(cmd) {
            (
                if what == "the PKGBUILD" {
                    Severity::Medium
                } else {
                    Severity::Low
                },
                format!(
                    "fills in values of {what} ({raw}) {} — `{values}`: only the value of an assignment changes, and {later}; check the values are plain (a version, a directory name)",
                    cmd.phase.label()
                ),
            )
        } else if !read {
            (
                Severity::Medium,
                format!(
                    "writes {what} ({raw}) {}, a file the repository does not hold: the package makes its install script at build time, so no one (not this audit) has read what root will run; {later}",
                    cmd.phase.label()
                ),
            )
        } else {
            (
                Severity::Critical,
                format!(
                    "rewrites {what} ({raw}) {}: {later}, so what runs is not the text this audit (or anyone) read",
                    cmd.phase.label()
                ),
            )
        };
        sink.cmd("AUR-REWRITES-BUILDFILE", sev, cmd, why);
        return;
    }
    if effect == Effect::Write && standard_default_target(cmd, p) {
        sink.cmd(
            "AUR-PERSISTENCE",
            Severity::Low,
            cmd,
            format!(
                "points the boot target ({raw}) at one of systemd's own standard targets, as `systemctl set-default` does: it starts what is already enabled, nothing new ({})",
                cmd.phase.label()
            ),
        );
        return;
    }
    if effect == Effect::Write
        && let Some(inside) = p.strip_prefix("$pkgdir")
        && startup_location(inside)
        && !(operand && makes_dir(cmd))
        && let Some(text) = written_text(ctx, cmd, raw)
        && let Some((what, sev)) = startup_text_effect(&text, &command_dirs(ctx))
    {
        // The template new accounts are made from runs in no existing session.
        // A distribution's shell configuration aliasing `ls` to another lister there is its
        // purpose; a variable that loads code in those accounts is still worth reading.
        let sev = if inside.starts_with("/etc/skel/") {
            sev.min(if what.starts_with("an alias or function") {
                Severity::Low
            } else {
                Severity::Medium
            })
        } else {
            sev
        };
        // The same text judged the same whether the package ships the file or a scriptlet
        // writes it (a scriptlet's write there is high by its place alone, below).
        sink.cmd(
            "AUR-PERSISTENCE",
            sev,
            cmd,
            format!(
                "ships start-up text read by every login or session ({inside}) {} that sets {what}",
                cmd.phase.label()
            ),
        );
        return;
    }
    let persists = if in_build_folder(p)
        || in_image_root(ctx, cmd, p)
        || effect == Effect::Mode
        || links_to_the_same_system_program(cmd, p)
    {
        None
    } else {
        persistence(p)
    };
    // `ln -s /usr/bin "$pkgdir/usr/local/bin"`: the directory made a link to the system's own
    // programs brings no name of the package's.
    let persists = persists.filter(|(what, _)| {
        !(what.contains("as a whole directory")
            && names::program(cmd).0 == "ln"
            && argv::copy_like(names::program(cmd).1)
                .operands
                .first()
                .is_some_and(|t| {
                    let t = t.text.strip_prefix("$pkgdir").unwrap_or(&t.text);
                    persistence::SYSTEM_BIN_DIRS.contains(&t.trim_end_matches('/'))
                }))
    });
    // A tree copied in as `/usr/local/bin` that the build filled with a system command's name
    // (`cp sudo-helper t/bin/sudo; cp -r t/bin "$pkgdir/usr/local/"`, attack 31 F3 p08).
    let persists = persists.map(|(what, sev)| {
        if what.contains("as a whole directory") && tree_brings_command(ctx, cmd).is_some() {
            (
                "/usr/local/bin or /usr/local/sbin, first on the PATH, as a whole directory the build filled with a system command's name, which runs in its place",
                Severity::Critical,
            )
        } else {
            (what, sev)
        }
    });
    if let (Some((what, _)), Effect::Delete) = (persists, effect) {
        if cmd.phase.runs_on_system() {
            sink.cmd(
                "AUR-PERSISTENCE",
                Severity::Low,
                cmd,
                format!(
                    "removes {raw}, in {what}, {}: a deletion starts nothing, but check it is the package's own old file (a migration), not another package's",
                    cmd.phase.label()
                ),
            );
        }
    } else if let Some((what, mut sev)) = persists {
        if what.contains(".wants") {
            // The directory alone enables nothing; a link to a unit the package (or a package
            // it depends on) ships is how packages enable their own sockets, services and
            // timers — in package() or, the same effect, from an install script.
            if p.ends_with(".wants") || p.ends_with(".wants/") {
                return;
            }
            let unit = basename(p);
            if units::shipped_unit(ctx, unit) || units::dependency_unit(ctx, unit).is_some() {
                sink.cmd(
                    "AUR-PERSISTENCE",
                    Severity::Low,
                    cmd,
                    format!("links {unit} into a .wants directory {}: it enables a unit the package or its dependency ships; check the unit is the one you expect", cmd.phase.label()),
                );
                return;
            }
        }
        if operand && makes_dir(cmd) {
            // An empty directory (`install -d "$pkgdir/etc/sudoers.d"`, or `mkdir -p
            // etc/sudoers.d` from an install script) holds no rule and runs nothing,
            // wherever it is made; only where it is made on the live system during the build
            // is it judged, below, as any other write.
            if p.starts_with("$pkgdir") || cmd.phase.runs_on_system() {
                return;
            }
        } else {
            if cmd.phase == Phase::Runtime {
                // A program the person runs later changing their own session is not the
                // package reaching out while it is built or installed.
                sev = sev.min(Severity::Medium);
            }
            if cmd.phase.runs_on_system()
                && let Some(line) = system_path_only(cmd, p)
            {
                // What is written decides: a PATH of root's own program directories lets
                // nothing new run; it still changes every login's PATH, outside pacman's
                // files (it stays after removal).
                sink.cmd(
                    "AUR-PERSISTENCE",
                    sev.min(Severity::Medium),
                    cmd,
                    format!(
                        "writes `{line}` into /etc/environment {}: every login's PATH, but only root-owned system program directories, so nothing of anyone else's runs by it; pacman does not track the edit (it stays after removal): check it replaces no PATH an administrator set",
                        cmd.phase.label()
                    ),
                );
                return;
            }
            sink.cmd(
                "AUR-PERSISTENCE",
                sev,
                cmd,
                format!(
                    "writes to {what} ({raw}) {}: code that comes back after every boot or login",
                    cmd.phase.label()
                ),
            );
            return;
        }
    }
    if p.is_empty()
        || p.starts_with("$pkgdir")
        || p.starts_with("$srcdir")
        || p.starts_with("$startdir")
        || p.starts_with("${")
        || p.starts_with("$(")
        || !(p.starts_with('/') || p.starts_with("$HOME") || p.starts_with("$USER"))
    {
        return;
    }
    const HARMLESS: &[&str] = &[
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/fd/",
        "/proc/self/",
        "/tmp",
        "/var/tmp",
        "/dev/shm",
    ];
    if HARMLESS.iter().any(|h| p.starts_with(h)) {
        return;
    }
    let home =
        p.starts_with("$HOME") || p == "/home" || p.starts_with("/home/") || p.starts_with("/root");
    match cmd.phase {
        Phase::Install | Phase::Hook => {
            if home
                && effect == Effect::Delete
                && home_find::own_dir_in_every_home(ctx, cmd, p, sink)
            {
                return;
            }
            if home && effect == Effect::Write && operand && makes_dir(cmd) && !dir_mode_opens(cmd)
            {
                sink.cmd(
                    "AUR-WRITE-HOME",
                    Severity::Low,
                    cmd,
                    format!("a root install script makes the empty directory {raw} in a home: it holds nothing and runs nothing by itself (what is later written into it is judged on its own); it belongs to root, so check the program does not need to write there as the person"),
                );
                return;
            }
            if home && effect == Effect::Delete && !sweeping_delete(ctx, cmd, p) {
                sink.cmd(
                    "AUR-WRITE-HOME",
                    Severity::Medium,
                    cmd,
                    format!("a root install script removes {raw} from a home directory: a deletion starts nothing, but check it is a file the package itself put there, not the person's"),
                );
            } else if home {
                sink.cmd(
                    "AUR-WRITE-HOME",
                    Severity::High,
                    cmd,
                    format!("a root install script writes into a home directory ({raw})"),
                );
            }
        }
        Phase::Runtime => {}
        _ => {
            let (id, what) = if home {
                ("AUR-WRITE-HOME", "the builder's home directory")
            } else {
                ("AUR-WRITE-SYSTEM", "the live system")
            };
            sink.cmd(
                id,
                Severity::High,
                cmd,
                format!(
                    "writes to {what} ({raw}) {} instead of into $pkgdir or $srcdir",
                    cmd.phase.label()
                ),
            );
        }
    }
}

/// The text a command writes into the file named `raw`, when the audit can read it: `echo` or
/// `printf` words into a redirection, a here-document or here-string fed to `cat`, `tee` or
/// `install /dev/stdin`, or a file of the package's own copied there by `install` or `cp`.
fn written_text(ctx: &Ctx, cmd: &Cmd, raw: &str) -> Option<String> {
    let (prog, args) = names::program(cmd);
    match prog {
        // `printf '%s\n' LINE…`: the lines; a format with no `%` is the text itself.
        "printf" => {
            let words: Vec<&str> = args
                .iter()
                .map(|a| a.text.as_str())
                .skip_while(|a| a.starts_with('-'))
                .collect();
            let (fmt, rest) = words.split_first()?;
            Some(if fmt.contains('%') && !rest.is_empty() {
                rest.join("\n")
            } else {
                words.join(" ")
            })
        }
        "echo" => Some(
            args.iter()
                .filter(|a| !(prog == "echo" && a.text.starts_with('-')) && a.text != "-v")
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "cat" | "tee" if cmd.stdin.is_some() => cmd.stdin.as_ref().map(|w| w.text.clone()),
        "install" | "cp" => {
            if let Some(w) = &cmd.stdin
                && args.iter().any(|a| a.text == "/dev/stdin")
            {
                return Some(w.text.clone());
            }
            let ops = if prog == "install" {
                argv::install(args).operands
            } else {
                argv::copy_like(args).operands
            };
            let target_dir = args.iter().any(|a| {
                a.text == "-t"
                    || a.text.starts_with("--target-directory")
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains('t'))
            });
            let sources: Vec<&&Word> = if target_dir {
                ops.iter().filter(|o| o.text != raw).collect()
            } else {
                ops.split_last()
                    .map(|(_, s)| s.iter().collect())
                    .unwrap_or_default()
            };
            let name = basename(raw);
            let src = sources
                .iter()
                .find(|s| basename(&s.text) == name)
                .or(sources.first())?;
            let base = basename(&src.text);
            ctx.local_texts
                .iter()
                .find(|(n, _)| basename(n) == base)
                .map(|(_, t)| t.clone())
        }
        _ => None,
    }
}

fn makes_dir(cmd: &Cmd) -> bool {
    let (prog, args) = names::program(cmd);
    prog == "mkdir"
        || (prog == "install"
            && (argv::install(args).has("-d") || argv::install(args).has("--directory")))
}

/// `mkdir -m MODE` / `install -d -m MODE` with a mode other than an octal one that lets
/// neither the group nor others write (`-m 777`, `-m a+w`): the directory is opened to others.
fn dir_mode_opens(cmd: &Cmd) -> bool {
    let (_, args) = names::program(cmd);
    let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    let mut modes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if let Some(m) = w.strip_prefix("--mode=") {
            modes.push(m);
        } else if matches!(*w, "-m" | "--mode") {
            modes.extend(words.get(i + 1).copied());
        } else if w.starts_with('-') && !w.starts_with("--") && w.contains('m') {
            // `-dm777`, `-m0700`, `-pm 755`: the value follows the `m` or is the next word.
            let rest = &w[w.find('m').map_or(w.len(), |k| k + 1)..];
            modes.push(if rest.is_empty() {
                words.get(i + 1).copied().unwrap_or("")
            } else {
                rest
            });
        }
    }
    modes
        .iter()
        .any(|m| argv::octal(m).is_none_or(|v| v & 0o022 != 0))
}

/// A `chmod` to an octal mode that lets neither the group nor others write (`0750`, `440`):
/// it opens nothing.
fn narrowing_mode(cmd: &Cmd) -> bool {
    let (prog, args) = names::program(cmd);
    if prog != "chmod" {
        return false;
    }
    args.iter()
        .map(|a| a.text.as_str())
        .find(|a| !a.starts_with('-'))
        .filter(|m| m.len() >= 3)
        .and_then(argv::octal)
        .is_some_and(|v| v & 0o022 == 0)
}

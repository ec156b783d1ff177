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
mod judge;
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
use judge::{judge_write, makes_dir, narrowing_mode};
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

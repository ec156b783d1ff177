//! One write, delete or mode change of a path, judged: the decision table behind
//! [`super::check`] — what a target outside `$pkgdir`/`$srcdir` means by where it lands (system
//! trees, start-up files, command directories, the person's home, the build's own files) and by
//! what the command writes there.

use super::*;

fn strip_dd(w: &str) -> &str {
    w.strip_prefix("of=").unwrap_or(w)
}

pub(super) fn judge_write(
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

pub(super) fn makes_dir(cmd: &Cmd) -> bool {
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
pub(super) fn narrowing_mode(cmd: &Cmd) -> bool {
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

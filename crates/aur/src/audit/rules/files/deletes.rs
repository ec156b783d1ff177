//! Deletions that reach more than the files they name: a whole system tree or every home
//! (`rm -rf /home`, `find / -delete`), a home itself, a pattern, a recursive delete in a home.

use super::super::{Ctx, Sink, argv, sources};
use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Word};

use super::reach::glob_match;
pub(crate) use super::reach::{as_kernel_resolves, through_links};

/// Directories whose recursive deletion is the whole system's or everyone's files.
pub(super) const SYSTEM_TREES: &[&str] = &[
    "/",
    "/home",
    "/root",
    "/usr",
    "/etc",
    "/var",
    "/boot",
    "/bin",
    "/sbin",
    "/lib",
    "/lib64",
    "/opt",
    "/srv",
    "/usr/bin",
    "/usr/lib",
    "/usr/share",
    "/usr/local",
    "/var/lib",
    "/efi",
    // Every mounted disk, the package database, headers, logs, 32-bit libraries (attack 29 F1).
    "/mnt",
    "/media",
    "/run/media",
    "/var/lib/pacman",
    "/usr/include",
    "/var/log",
    "/usr/lib32",
];

/// The system trees `p` reaches: the tree it names (through a glob: `/h?me`, `/*`), or the
/// tree whose contents a trailing `/*` names.
fn trees_reached(p: &str) -> Vec<&'static str> {
    let base = p.trim_end_matches('/');
    let base = if base.is_empty() { "/" } else { base };
    let parent = base
        .strip_suffix("/*")
        .map(|b| if b.is_empty() { "/" } else { b });
    SYSTEM_TREES
        .iter()
        .copied()
        .filter(|t| {
            glob_match(base, t)
                || parent.is_some_and(|b| glob_match(b, t))
                || (base.trim_end_matches('*').trim_end_matches('/') == *t)
        })
        .collect()
}

/// A recursive or pattern deletion of a whole system tree or every home, wherever it runs:
/// `rm -rf /home`, `rm -rf --no-preserve-root /`, `find /home -mindepth 1 -delete` (attack 28
/// F3: a root scriptlet deleting every home was `ok` with no finding).
pub(super) fn deletes_a_system_tree(cmd: &Cmd, p: &str, raw: &str, sink: &mut Sink) {
    let (name, args) = names::program(cmd);
    // `rmdir` never removes a directory that holds anything (attack 29 F4: `rmdir /opt/*` was
    // critical).
    // Nor does an empty operand name anything (`rm -rf ""`: "cannot remove ''"); an empty
    // variable before a slash (`"$d/"`) is `/` and judged.
    if name == "rmdir" || p.is_empty() {
        return;
    }
    let recursive = match name {
        "find" => !find_narrows(args) || find_exec_picks_a_tree(args, p),
        "tar" | "bsdtar" => !args.iter().any(|a| a.text == "--no-recursion"),
        "zip" => args.iter().any(|a| {
            a.text == "--recurse-paths"
                || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('r'))
        }),
        "rsync" | "mv" | "systemd-tmpfiles" => true,
        // An interpreter's tree removal (`shutil.rmtree`), found by `other_deletions`.
        _ if names::inline_code(name, args).is_some() => true,
        _ => recursive_rm(args),
    };
    let reaches = if name == "find" {
        recursive
    } else {
        recursive || p.trim_end_matches('/').ends_with('*')
    };
    if !reaches {
        return;
    }
    if p == "<descriptor>" {
        sink.cmd(
            "AUR-DELETE-SYSTEM",
            Severity::High,
            cmd,
            format!(
                "recursively deletes {raw}, a directory named through a file descriptor, a process's directory or a link the build made to a place outside its folders (`ln -s \"$HOME\" h`, `ln -s ../../.. r`): which tree it is is only known when it runs (`exec 3</home; rm -rf /dev/fd/3/` deletes every home) — {}",
                cmd.phase.label()
            ),
        );
        return;
    }
    let mut trees = trees_reached(p);
    if name == "find" && find_exec_picks_a_tree(args, p) {
        trees.extend(picked_trees(args, p));
    }
    let Some(tree) = trees.first() else { return };
    let via = if raw.trim_end_matches('/') == *tree {
        String::new()
    } else {
        format!(" (that is {tree})")
    };
    sink.cmd(
        "AUR-DELETE-SYSTEM",
        Severity::Critical,
        cmd,
        format!(
            "deletes {raw}{via} — a whole system directory or every home — {}",
            cmd.phase.label()
        ),
    );
}

/// `find START … -name NAME -exec rm -r …`: a tree picked by its own name under the starting
/// point (`find / -maxdepth 1 -name home -exec rm -rf {} +`, attack 29 F1).
fn find_exec_picks_a_tree(args: &[Word], start: &str) -> bool {
    !picked_trees(args, start).is_empty()
        && args.windows(2).enumerate().any(|(k, w)| {
            matches!(w[0].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") && {
                let rest = &args[k + 1..];
                let e = names::effective(rest);
                basename(&rest[e].text) == "rm" && recursive_rm(&rest[e + 1..])
            }
        })
}

fn picked_trees(args: &[Word], start: &str) -> Vec<&'static str> {
    let start = start.trim_end_matches('/');
    args.windows(2)
        .filter(|w| {
            matches!(
                w[0].text.as_str(),
                "-name" | "-iname" | "-path" | "-wholename"
            )
        })
        .flat_map(|w| {
            let v = w[1].text.clone();
            let by_path = w[0].text != "-name" && w[0].text != "-iname";
            SYSTEM_TREES.iter().copied().filter(move |t| {
                if by_path {
                    glob_match(&v, t)
                } else {
                    let parent = t.rsplit_once('/').map_or("", |(a, _)| a);
                    parent == start && glob_match(&v, basename(t))
                }
            })
        })
        .collect()
}

/// Deletions a program makes besides its plain operands (attack 29 F1): `xargs rm` of what the
/// pipeline's previous stage prints, `rsync --delete` in its destination and
/// `--remove-source-files` of its sources, `tar --remove-files` and `zip -m` of what they
/// archive, and the paths an interpreter's inline code removes a tree at (`shutil.rmtree`,
/// `File::Path`'s `rmtree`/`remove_tree`).
pub(crate) fn other_deletions(ctx: &Ctx, cmd: &Cmd) -> Vec<Word> {
    let (name, args) = names::program(cmd);
    let mut out: Vec<Word> = Vec::new();
    let deleter = matches!(name, "rm" | "shred" | "unlink");
    if deleter
        && names::wrappers(cmd).contains(&"xargs")
        && let Some((id, stage, _)) = cmd.pipe
        && stage > 0
        && let Some(prev) = ctx.an.cmds.iter().find(|c| {
            c.file == cmd.file && c.pipe.is_some_and(|(i, s, _)| i == id && s + 1 == stage)
        })
    {
        let (pn, pargs) = names::program(prev);
        match pn {
            "echo" => out.extend(pargs.iter().filter(|a| !a.text.starts_with('-')).cloned()),
            "printf" => out.extend(pargs.iter().skip(1).cloned()),
            "find" => out.extend(find_starts(pargs).iter().map(|w| (*w).clone())),
            _ => {}
        }
    }
    match name {
        // Moving a tree away empties it where it was (`mv /home/* /var/tmp/.x/`, then the
        // copy is deleted there: attack 29 F1 d73).
        "mv" => {
            let p = argv::copy_like(args);
            let n = p.operands.len();
            let moved = if p.value_word(&["-t", "--target-directory"]).is_some() {
                n
            } else {
                n.saturating_sub(1)
            };
            out.extend(p.operands[..moved].iter().map(|w| (*w).clone()));
        }
        "rsync" => {
            let p = argv::copy_like(args);
            if args.iter().any(|a| a.text.starts_with("--del")) {
                out.extend(p.operands.last().map(|w| (*w).clone()));
            }
            if args.iter().any(|a| a.text == "--remove-source-files") && p.operands.len() > 1 {
                out.extend(
                    p.operands[..p.operands.len() - 1]
                        .iter()
                        .map(|w| (*w).clone()),
                );
            }
        }
        "tar" | "bsdtar" if args.iter().any(|a| a.text == "--remove-files") => {
            let p = argv::parse(
                args,
                "CfTXbHKLNVg",
                "",
                &[
                    "--file",
                    "--directory",
                    "--files-from",
                    "--exclude-from",
                    "--exclude",
                ],
            );
            out.extend(p.operands.into_iter().cloned());
        }
        "zip"
            if args.iter().any(|a| {
                a.text == "--move"
                    || (a.text.starts_with('-')
                        && !a.text.starts_with("--")
                        && a.text.contains('m'))
            }) =>
        {
            let p = argv::parse(args, "bntxi", "", &[]);
            out.extend(p.operands.into_iter().skip(1).cloned());
        }
        _ => {}
    }
    // `systemd-tmpfiles --remove CONFIG` removes what CONFIG's `R`/`r`/`D` lines name; a config
    // this file writes (`printf 'R /home/*\n' > /tmp/x.conf`, attack 29 F1 d82) is read.
    if name == "systemd-tmpfiles"
        && args
            .iter()
            .any(|a| matches!(a.text.as_str(), "--remove" | "--purge"))
    {
        for conf in args.iter().filter(|a| !a.text.starts_with('-')) {
            for w in ctx.an.cmds.iter().filter(|c| c.file == cmd.file) {
                if !w.redirs.iter().any(|r| r.target.text == conf.text) {
                    continue;
                }
                let (wn, wargs) = names::program(w);
                let mut text: Vec<&str> = Vec::new();
                if matches!(wn, "echo" | "printf") {
                    text.extend(wargs.iter().map(|a| a.text.as_str()));
                }
                text.extend(w.stdin.iter().map(|s| s.text.as_str()));
                for t in text {
                    for line in t.split("\\n").flat_map(|l| l.lines()) {
                        let mut f = line.split_whitespace();
                        if let (Some(kind), Some(path)) = (f.next(), f.next())
                            && matches!(
                                kind.trim_end_matches(['!', '-', '=', '^', '+']),
                                "R" | "r" | "D"
                            )
                        {
                            out.push(Word {
                                text: path.to_owned(),
                                pos: conf.pos,
                                ..Word::default()
                            });
                        }
                    }
                }
            }
        }
    }
    if let Some(code) = names::inline_code(name, args)
        && ["rmtree", "remove_tree", "rm_rf", "rmdir_p"]
            .iter()
            .any(|f| code.text.contains(f))
    {
        for lit in code.text.split(['"', '\'']).skip(1).step_by(2) {
            if lit.starts_with('/') {
                out.push(Word {
                    text: lit.to_owned(),
                    pos: code.pos,
                    ..Word::default()
                });
            }
        }
    }
    out
}

/// `find`'s starting points: its words before the first test, past the options that come
/// first (`-P`, `-L`, `-H`, `-O3`, `-D opts`; attack 29 F1: `find -P /home -delete` had none).
pub(crate) fn find_starts(args: &[Word]) -> Vec<&Word> {
    let mut i = 0;
    while i < args.len() {
        match args[i].text.as_str() {
            "-P" | "-L" | "-H" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    args[i.min(args.len())..]
        .iter()
        .take_while(|a| !a.text.starts_with('-') && !matches!(a.text.as_str(), "(" | "!" | ","))
        .collect()
}

/// `rm`'s recursion, as its getopt_long reads it: `-r`/`-R` in a cluster, `--recursive` or any
/// unambiguous prefix of it (`--recur`, attack 29 F1).
pub(super) fn recursive_rm(args: &[Word]) -> bool {
    args.iter().any(|a| {
        let t = a.text.as_str();
        (t.len() >= 3 && t.starts_with("--r") && "--recursive".starts_with(t))
            || (t.starts_with('-') && !t.starts_with("--") && (t.contains('r') || t.contains('R')))
    })
}

/// Whether `find`'s tests pick what it deletes, by what they match: a name or path pattern
/// that matches every name (`-name '*'`, attack 29 F1) picks nothing; only empty entries
/// (`-empty`) or dangling links (`-xtype l`) are no tree's files (attack 29 F4: `find /opt
/// -maxdepth 1 -type d -empty -delete` was critical); a negation undoes any pick, and with
/// `-o` every alternative must pick.
fn find_narrows(args: &[Word]) -> bool {
    args.split(|a| matches!(a.text.as_str(), "-o" | "-or"))
        .all(branch_narrows)
}

fn branch_narrows(args: &[Word]) -> bool {
    const PICKS: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-inum",
        "-samefile",
        "-user",
        "-uid",
        "-newer",
        "-mtime",
        "-mmin",
    ];
    if args.iter().any(|a| matches!(a.text.as_str(), "!" | "-not")) {
        return false;
    }
    args.windows(2).any(|w| {
        let (test, v) = (w[0].text.as_str(), w[1].text.as_str());
        let everything = v.chars().all(|c| c == '*')
            || matches!(v, "?*" | "*?" | ".*" | ".+" | "^.*" | "^.*$" | ".*.*");
        (PICKS.contains(&test) && !everything) || (test == "-xtype" && v == "l")
    }) || args.iter().any(|a| a.text == "-empty")
}

/// A deletion that can reach more than the files it names: by a pattern (`/home/*/.bashrc`),
/// of a home itself (`$HOME`, `/root`), or recursive (`rm -r`, `-rf`, `--recursive`) — unless
/// the tree it removes is inside a directory of the home named for the package itself
/// (`rm -rf $HOME/.Yozo_Office/UserConfig` for yozo-office: the program's own state).
pub(super) fn sweeping_delete(ctx: &Ctx, cmd: &Cmd, p: &str) -> bool {
    let (_, args) = names::program(cmd);
    let recursive = recursive_rm(args);
    let parts: Vec<&str> = p
        .trim_start_matches("$HOME")
        .trim_start_matches("/root")
        .trim_start_matches("/home/")
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let depth = parts.len();
    let pattern = p.contains(['*', '?', '[']);
    let home_itself = depth == 0 || (p.starts_with("/home/") && depth < 2);
    if pattern || home_itself {
        return true;
    }
    if !recursive {
        return false;
    }
    // The directory of the home the deletion is in: `/home/USER/X` names X second.
    let own_dir = if p.starts_with("/home/") {
        parts.get(1)
    } else {
        parts.first()
    };
    let own = own_dir.is_some_and(|d| {
        let shared =
            SHARED_HOME_DIRS.contains(&d.trim_start_matches('.').to_ascii_lowercase().as_str());
        let d = sources::norm(d);
        !shared
            && !parts.contains(&"..")
            && d.len() >= 3
            && ctx.pkgnames.iter().any(|n| {
                let n = sources::stem(n);
                n.len() >= 3 && (d == n || (n.len() >= 4 && d.contains(&n)))
            })
    });
    !own
}

/// Directories of a home that hold many programs' files or the person's own: never one
/// program's own, whatever the package is called (`config`, `ssh`, `local`).
pub(super) const SHARED_HOME_DIRS: &[&str] = &[
    "config",
    "local",
    "cache",
    "var",
    "ssh",
    "gnupg",
    "pki",
    "mozilla",
    "kde",
    "kde4",
    "gnome",
    "themes",
    "icons",
    "fonts",
    "desktop",
    "documents",
    "downloads",
    "music",
    "pictures",
    "videos",
    "public",
    "templates",
    "bin",
    "share",
];

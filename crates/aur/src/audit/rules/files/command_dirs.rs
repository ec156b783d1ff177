//! Directories of commands: which a login's PATH searches before the system's own, the files a
//! command puts into one (`-t DIR`, `DIR/`), a whole tree copied in as one, and a link that only
//! names the system's own program again.

use super::super::{Ctx, argv};
use super::persistence::SYSTEM_COMMANDS;
use super::{absolute, write_targets};
use crate::audit::names::{self, basename};
use crate::audit::shell::{Cmd, Word, join_path};

/// The system command's name a copied tree holds, when the package wrote a file of that name
/// directly into one of the directories `cmd` copies (in the build folder or in the package).
pub(super) fn tree_brings_command(ctx: &Ctx, cmd: &Cmd) -> Option<String> {
    let (prog, args) = names::program(cmd);
    if !matches!(prog, "cp" | "rsync" | "mv" | "install") {
        return None;
    }
    let parsed = argv::copy_like(args);
    let sources: Vec<String> = match parsed.value_word(&["-t", "--target-directory"]) {
        Some(_) => parsed
            .operands
            .iter()
            .map(|w| absolute(cmd, &w.text))
            .collect(),
        None => parsed
            .operands
            .split_last()
            .map(|(_, s)| s.iter().map(|w| absolute(cmd, &w.text)).collect())
            .unwrap_or_default(),
    };
    let bare = |p: &str| {
        let p = p.strip_prefix("$pkgdir").unwrap_or(p);
        join_path(None, p.trim_end_matches('/'))
    };
    let sources: Vec<String> = sources
        .iter()
        .map(|s| bare(s.trim_end_matches("/*").trim_end_matches("/.")))
        .collect();
    ctx.an.cmds.iter().find_map(|c| {
        if std::ptr::eq(c, cmd) {
            return None;
        }
        let mut written: Vec<String> = write_targets(c)
            .iter()
            .map(|w| absolute(c, &w.text))
            .collect();
        written.extend(files_into_dir(c).into_iter().map(|(p, _)| p));
        written.iter().find_map(|w| {
            let w = bare(w);
            let (dir, name) = w.rsplit_once('/')?;
            (SYSTEM_COMMANDS.contains(&name) && sources.iter().any(|s| s == dir))
                .then(|| name.to_owned())
        })
    })
}

/// The files `install`, `cp`, `mv` or `ln` puts into a directory named as such (`-t DIR`, or a
/// last operand ending in `/`): (DIR/NAME, as written).
pub(super) fn files_into_dir(cmd: &Cmd) -> Vec<(String, String)> {
    let (prog, args) = names::program(cmd);
    if !matches!(prog, "install" | "cp" | "mv" | "ln") {
        return Vec::new();
    }
    let parsed = if prog == "install" {
        argv::install(args)
    } else {
        argv::copy_like(args)
    };
    if prog == "install" && (parsed.has("-d") || parsed.has("--directory")) {
        return Vec::new();
    }
    let (dir, sources): (&Word, Vec<&Word>) = match parsed.value_word(&["-t", "--target-directory"])
    {
        Some(d) => (d, parsed.operands.clone()),
        None => match parsed.operands.split_last() {
            Some((d, s)) if d.text.ends_with('/') && !s.is_empty() => (*d, s.to_vec()),
            _ => return Vec::new(),
        },
    };
    let d = absolute(cmd, &dir.text);
    sources
        .iter()
        .map(|s| basename(s.text.trim_end_matches('/')))
        .filter(|n| !n.is_empty() && *n != "." && *n != "..")
        .map(|n| {
            (
                format!("{}/{n}", d.trim_end_matches('/')),
                format!("{}/{n}", dir.text.trim_end_matches('/')),
            )
        })
        .collect()
}

/// The package's directories (without `$pkgdir`) into which it installs a program named like a
/// system command (`install sudo-helper "$pkgdir/usr/lib/foopkg/sudo"`).
pub(super) fn command_dirs(ctx: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for c in &ctx.an.cmds {
        let (prog, args) = names::program(c);
        for t in write_targets(c) {
            let Some(inside) = t.text.strip_prefix("$pkgdir") else {
                continue;
            };
            let name = basename(&t.text);
            if SYSTEM_COMMANDS.contains(&name) && !t.text.ends_with('/') {
                let dir = &inside[..inside.len() - name.len()];
                out.push(dir.trim_end_matches('/').to_owned());
            }
            // `install -t DIR sudo`, `cp sudo DIR/`: the names the directory receives.
            if matches!(prog, "install" | "cp")
                && args
                    .iter()
                    .any(|a| SYSTEM_COMMANDS.contains(&basename(&a.text)) && !std::ptr::eq(a, t))
            {
                out.push(inside.trim_end_matches('/').to_owned());
            }
        }
    }
    out
}

/// Does the command only make directories (`mkdir`, `install -d`)?
/// `ln -s /usr/bin/NAME …/usr/local/bin/NAME`: a link to the system's own program of that name
/// (a tool that hard-codes the `/usr/local` path) runs nothing else in its place.
pub(super) fn links_to_the_same_system_program(cmd: &Cmd, p: &str) -> bool {
    let (prog, args) = names::program(cmd);
    if prog != "ln" {
        return false;
    }
    let name = basename(p);
    args.iter().any(|w| {
        !w.dynamic
            && ["/usr/bin/", "/usr/sbin/", "/bin/"]
                .iter()
                .any(|d| w.text.strip_prefix(d) == Some(name))
    })
}

//! The package's own service group: a group its install scripts give a file (`chgrp G`,
//! `chown user:G`) that the package itself creates — in the sysusers.d file it installs
//! (`g G …`, or `u G …`, which makes a group of the same name) or with `groupadd`/`useradd` in
//! its scripts. A setgid bit with such a group hands out only the package's own account's
//! rights. Groups of the base system are never the package's own, even when declared: a
//! sysusers `g` line of an existing group creates nothing.

use super::files::{absolute, write_targets};
use super::{Ctx, argv};
use crate::audit::names::{self, basename};
use crate::audit::shell::{Cmd, Phase};

/// Groups of the base system (Arch's filesystem and systemd sysusers files) and others whose
/// members read secrets, devices or the whole disk, or become root.
const BASE_GROUPS: &[&str] = &[
    "root",
    "bin",
    "daemon",
    "sys",
    "adm",
    "wheel",
    "sudo",
    "shadow",
    "disk",
    "kmem",
    "mem",
    "tty",
    "utmp",
    "log",
    "lock",
    "proc",
    "network",
    "storage",
    "input",
    "kvm",
    "video",
    "audio",
    "render",
    "lp",
    "uucp",
    "optical",
    "floppy",
    "scanner",
    "power",
    "rfkill",
    "users",
    "games",
    "ftp",
    "http",
    "mail",
    "smmsp",
    "nobody",
    "nogroup",
    "docker",
    "libvirt",
    "systemd-journal",
    "dialout",
    "cdrom",
    "tape",
    "operator",
    "staff",
    "sgx",
];

/// The group an install script gives `path` (resolved as the live file) with chgrp/chown, when
/// the package creates that group itself and it is not a base-system group.
pub(super) fn own_group_of(ctx: &Ctx, cmd: &Cmd, path: &str) -> Option<String> {
    // `install -g G -m 2755 …` gives the group in the same command.
    let (name, args) = names::program(cmd);
    let same = (name == "install")
        .then(|| argv::install(args).value_word(&["-g", "--group"]))
        .flatten()
        .filter(|w| !w.dynamic)
        .map(|w| w.text.clone());
    let group = match same {
        Some(g) => g,
        None => ctx
            .an
            .cmds
            .iter()
            .filter(|c| c.file == cmd.file && c.phase.runs_on_system())
            .find_map(|c| group_given(c, path))?,
    };
    let fixed = !group.is_empty()
        && group
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_'));
    if !fixed {
        return None;
    }
    (!BASE_GROUPS.contains(&group.as_str()) && creates_group(ctx, &group)).then_some(group)
}

fn group_given(c: &Cmd, path: &str) -> Option<String> {
    let (name, args) = names::program(c);
    let p = argv::parse(args, "", "", &["--reference"]);
    let (spec, targets) = p.operands.split_first()?;
    let names_path = targets.iter().any(|t| {
        let a = absolute(c, &t.text);
        a == path || (!a.starts_with('/') && !a.starts_with('$') && format!("/{a}") == path)
    });
    if !names_path || spec.dynamic {
        return None;
    }
    let group = match name {
        "chgrp" => spec.text.as_str(),
        "chown" => spec.text.split_once([':', '.'])?.1,
        _ => return None,
    };
    Some(group.to_owned())
}

fn creates_group(ctx: &Ctx, group: &str) -> bool {
    let by_command = ctx.an.cmds.iter().any(|c| {
        let (name, args) = names::program(c);
        matches!(name, "groupadd" | "addgroup" | "useradd" | "adduser")
            && c.phase.runs_on_system()
            && args.last().is_some_and(|a| a.text == group)
    });
    by_command
        || ctx.local_texts.iter().any(|(file, text)| {
            installed_as_sysusers(ctx, file)
                && text.lines().any(|l| {
                    let mut f = l.split_whitespace();
                    matches!(f.next(), Some("g" | "u")) && f.next() == Some(group)
                })
        })
}

/// package() installs the local file `file` into a sysusers.d directory.
fn installed_as_sysusers(ctx: &Ctx, file: &str) -> bool {
    ctx.an.cmds.iter().any(|c| {
        c.phase == Phase::Package
            && c.argv.iter().any(|w| basename(&w.text) == file)
            && write_targets(c)
                .iter()
                .any(|t| t.text.contains("/sysusers.d/"))
    })
}

//! Deletions that reach more than the files they name: a whole system tree or every home
//! (`rm -rf /home`, `find / -delete`), a home itself, a pattern, a recursive delete in a home.

use super::super::{Ctx, Sink, sources};
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::Cmd;

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
];

/// A recursive or pattern deletion of a whole system tree or every home, wherever it runs:
/// `rm -rf /home`, `rm -rf --no-preserve-root /`, `find /home -mindepth 1 -delete` (attack 28
/// F3: a root scriptlet deleting every home was `ok` with no finding).
pub(super) fn deletes_a_system_tree(cmd: &Cmd, p: &str, raw: &str, sink: &mut Sink) {
    let (name, args) = names::program(cmd);
    // `rmdir` never removes a directory that holds anything (attack 29 F4: `rmdir /opt/*` was
    // critical).
    if name == "rmdir" {
        return;
    }
    let recursive = if name == "find" {
        !find_narrows(args)
    } else {
        recursive_rm(args)
    };
    let tree = p.trim_end_matches(['*', '/']);
    let tree = if tree.is_empty() { "/" } else { tree };
    let reaches = if name == "find" {
        recursive
    } else {
        recursive || p.ends_with('*')
    };
    if !reaches || !SYSTEM_TREES.contains(&tree) {
        return;
    }
    sink.cmd(
        "AUR-DELETE-SYSTEM",
        Severity::Critical,
        cmd,
        format!(
            "deletes {raw} — a whole system directory or every home — {}",
            cmd.phase.label()
        ),
    );
}

/// `rm`'s recursion, as its getopt_long reads it: `-r`/`-R` in a cluster, `--recursive` or any
/// unambiguous prefix of it (`--recur`, attack 29 F1).
pub(super) fn recursive_rm(args: &[crate::audit::shell::Word]) -> bool {
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
fn find_narrows(args: &[crate::audit::shell::Word]) -> bool {
    args.split(|a| matches!(a.text.as_str(), "-o" | "-or"))
        .all(branch_narrows)
}

fn branch_narrows(args: &[crate::audit::shell::Word]) -> bool {
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

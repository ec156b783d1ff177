//! `find /home -maxdepth 2 -name .aicube-isp -exec rm -rf {} \;` in an install script: the
//! program's own hidden directory removed from each home at the one place it lives
//! (`/home/USER/.aicube-isp`) — the `find` spelling of `rm -rf $HOME/.Yozo_Office`, which
//! [`super::deletes::sweeping_delete`] judges the program's own. A deeper search
//! (`-maxdepth 5`), a name that is not the program's, a pattern, or an `-o` that widens what
//! matches still reaches the person's own files and stays high.

use super::super::{Ctx, Sink, sources};
use super::deletes::SHARED_HOME_DIRS;
use crate::audit::names;
use crate::audit::report::Severity;
use crate::audit::shell::Cmd;

/// Endings naming how a program is packaged, not the program (`h7toolpc-wine` runs
/// `h7toolpc` under Wine): its own directory carries the program's name.
const FLAVOURS: &[&str] = &["-wine", "-deepin", "-electron", "-appimage", "-bin", "-git"];

/// The program's names: each package name without its packaging endings, normalised.
fn program_names(ctx: &Ctx) -> Vec<String> {
    ctx.pkgnames
        .iter()
        .map(|n| {
            let mut n = n.to_ascii_lowercase();
            while let Some(s) = FLAVOURS.iter().find_map(|f| n.strip_suffix(f)) {
                n = s.to_owned();
            }
            sources::stem(&n)
        })
        .filter(|n| n.len() >= 4)
        .collect()
}

/// `cmd` is `find` under every home (`/home`) or one home (`$HOME`, `/root`) that removes
/// only the entries named `.NAME` at the depth of a home's own directories, and `.NAME` is the
/// program's own: reports it (medium: it deletes, it starts nothing; the reviewer checks the
/// directory is the program's) and returns true. False for anything else, judged as before.
pub(super) fn own_dir_in_every_home(ctx: &Ctx, cmd: &Cmd, p: &str, sink: &mut Sink) -> bool {
    let (name, args) = names::program(cmd);
    if name != "find" {
        return false;
    }
    let start = p.trim_end_matches('/');
    let depth_of_own = match start {
        "/home" => 2,
        "$HOME" | "/root" => 1,
        _ => return false,
    };
    let words: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    // Only one start, and nothing that widens the match (`-o`, `,`, `!`, `-not`).
    let starts = words.iter().take_while(|w| !w.starts_with('-')).count();
    if starts != 1
        || words
            .iter()
            .any(|w| matches!(*w, "-o" | "-or" | "," | "!" | "-not" | "-follow" | "-L"))
    {
        return false;
    }
    let value = |opt: &str| {
        words
            .windows(2)
            .find(|w| w[0] == opt)
            .map(|w| w[1].to_owned())
    };
    let Some(max) = value("-maxdepth").and_then(|d| d.parse::<u32>().ok()) else {
        return false;
    };
    let names: Vec<&str> = words
        .windows(2)
        .filter(|w| matches!(w[0], "-name" | "-iname"))
        .map(|w| w[1])
        .collect();
    let [dir] = names.as_slice() else {
        return false;
    };
    let hidden = dir.strip_prefix('.').filter(|d| {
        !d.is_empty()
            && !d.contains(['/', '*', '?', '[', '$'])
            && !SHARED_HOME_DIRS.contains(&d.to_ascii_lowercase().as_str())
    });
    let Some(bare) = hidden else {
        return false;
    };
    let own = program_names(ctx).iter().any(|n| *n == sources::norm(bare));
    if max > depth_of_own || !own {
        return false;
    }
    sink.cmd(
        "AUR-WRITE-HOME",
        Severity::Medium,
        cmd,
        format!(
            "removes the program's own hidden directory {dir} from {} (only at the top of a home: -maxdepth {max}) {}: a deletion starts nothing, but it is the person's data in that program (a Wine bottle, settings) — check the package tells them, and that {dir} is the directory the program itself makes",
            if depth_of_own == 2 { "every home" } else { "the home" },
            cmd.phase.label()
        ),
    );
    true
}

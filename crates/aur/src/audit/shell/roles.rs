//! The roles a package's files play, read from the PKGBUILD's commands: a local helper run
//! while building, a script or unit installed to run later, or data; and loops that never end.

use tree_sitter::Node;

use super::source::ParsedSrc;
use super::{Cmd, Phase, Word};
use crate::audit::names;

/// What the PKGBUILD does with one of its local files.
pub(super) enum LocalRole {
    /// Run (executed, sourced, given to a shell) in this phase.
    Script(Phase),
    /// A systemd unit the package installs: its Exec lines run later.
    Unit,
}

/// Shell code: a shell shebang, a `.sh` name, or no extension and shell-looking text.
fn shell_like(name: &str, text: &str) -> bool {
    let first = text.lines().next().unwrap_or("");
    if first.starts_with("#!") {
        return names::SHELLS.iter().any(|s| {
            first.ends_with(&format!("/{s}"))
                || first.contains(&format!("/{s} "))
                || first.ends_with(&format!(" {s}"))
        });
    }
    name.ends_with(".sh") || name.ends_with(".bash")
}

/// How the PKGBUILD's commands use the local file `name`: run it, install a script or unit
/// from it, or neither (data: patches, desktop files, licenses …).
pub(super) fn local_role(cmds: &[Cmd], name: &str, text: &str) -> Option<LocalRole> {
    let names_it = |w: &Word| names::basename(&w.text) == name;
    for c in cmds {
        if c.argv.is_empty() || !(c.phase.is_build() || c.phase == Phase::Package) {
            continue;
        }
        let i = names::effective(&c.argv);
        let prog = names::basename(&c.argv[i].text);
        let args = &c.argv[i + 1..];
        // Only shell code is walked: `python helper.py` or a Python shebang is not bash.
        // `foo` alone runs the installed program from PATH; `./foo` or `$srcdir/foo` this file.
        let runs = (names_it(&c.argv[i]) && c.argv[i].text.contains('/') && shell_like(name, text))
            || ((names::is_shell(prog) || matches!(prog, "source" | "."))
                && args
                    .iter()
                    .find(|a| !a.text.starts_with('-'))
                    .is_some_and(names_it));
        if runs {
            return Some(LocalRole::Script(c.phase));
        }
    }
    let installed = cmds.iter().any(|c| {
        c.phase == Phase::Package
            && matches!(names::program(c).0, "install" | "cp" | "mv" | "ln")
            && names::program(c).1.iter().any(names_it)
    });
    if !installed {
        return None;
    }
    let unit = [".service", ".socket", ".timer", ".path"]
        .iter()
        .any(|s| name.ends_with(s));
    if unit {
        Some(LocalRole::Unit)
    } else if shell_like(name, text) {
        Some(LocalRole::Script(Phase::Runtime))
    } else {
        None
    }
}

/// `while true`, `while :`, `while [ 1 ]`, `until false`: a loop only `break` or `exit` ends.
pub(super) fn endless_loop(src: &ParsedSrc, node: Node) -> bool {
    let until = src.raw(node).trim_start().starts_with("until");
    let Some(cond) = node.child_by_field_name("condition") else {
        return false;
    };
    let body = node.child_by_field_name("body").map_or("", |b| src.raw(b));
    if ["break", "exit", "return"].iter().any(|k| body.contains(k)) {
        return false;
    }
    let c = src.raw(cond).trim().trim_end_matches(';').trim();
    if until {
        matches!(c, "false" | "/bin/false")
    } else {
        matches!(
            c,
            "true" | ":" | "/bin/true" | "[ 1 ]" | "[[ 1 ]]" | "(( 1 ))" | "((1))"
        )
    }
}

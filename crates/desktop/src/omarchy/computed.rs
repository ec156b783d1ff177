//! Commands whose name a route's script computes when it runs.
//!
//! Class (attack 26 F8; *a reader of shell text that knows literal spellings*): the pick reader
//! finds a picker by the name a script writes (`omarchy-hook NAME`), so `h=omarchy-hook; "$h"
//! NAME`, `omarchy-$k NAME` or `$(printf omarchy-launch-%s webapp) URL` ran the person's hook or
//! browser entry under developer mode. A command whose name is an expansion can be any picker, or
//! any program: it is a pick no file decides before the script runs (never automatic, and the
//! question says so). A line reader cannot tell a command's name from a string's text (a
//! multi-line `awk` program's `$1 == x` is not a command), so the script is parsed as bash
//! parses it (tree-sitter-bash) and only the `command_name` of each command is judged, with the
//! program a wrapper (`exec`, `setsid`, `env` …) runs.
//!
//! The text is first respelt where tree-sitter-bash reads bash otherwise — `((cmd); (cmd))`,
//! which bash runs as subshells (attack 29 F7: `((:); "$h" post-update)` was `tier: act`), and
//! here-document delimiters with quotes (`cat <<E"O"F`, attack 28 F5) — by the AUR audit's own
//! lexer, included from its source: one reader of bash's quoting for both.

use tree_sitter::{Node, Parser};

#[path = "../../../aur/src/audit/shell/lexer.rs"]
mod lexer;

use crate::omarchy::sourced::WRAPPERS;

/// Node kinds whose text is computed when the script runs.
const EXPANSIONS: &[&str] = &[
    "simple_expansion",
    "expansion",
    "command_substitution",
    "process_substitution",
    "arithmetic_expansion",
];

/// Wrapper options whose value is the next word (`nice -n 5`, `env -u NAME`, `exec -a NAME`).
const OPTIONS_WITH_VALUES: &[&str] = &[
    "-n",
    "-u",
    "-a",
    "-s",
    "-k",
    "-C",
    "-S",
    "-I",
    "-P",
    "-L",
    "-d",
    "-E",
    "-p",
    "-c",
    "-w",
    "--unset",
    "--signal",
    "--kill-after",
    "--chdir",
    "--adjustment",
    "--unit",
    "--property",
];

/// Wrappers whose first word that is not an option is not the program (`timeout 10 PROGRAM`,
/// `flock FILE PROGRAM`, `taskset MASK PROGRAM`, `chrt PRIORITY PROGRAM`).
const WRAPPERS_WITH_A_FIRST_VALUE: &[&str] = &["timeout", "flock", "taskset", "chrt"];

/// Every command of `text` whose name is computed: its line (1-based) and the name as written.
pub fn commands(text: &str) -> Vec<(usize, String)> {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return Vec::new();
    }
    let mut bytes = text.as_bytes().to_vec();
    lexer::as_bash_reads_it(&mut bytes);
    let Some(tree) = parser.parse(&bytes, None) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "command"
            && let Some(name) = program_word(node, text)
            && computed(name)
        {
            let shown = name.utf8_text(text.as_bytes()).unwrap_or("").to_owned();
            if may_be_a_picker(&shown) {
                out.push((name.start_position().row + 1, shown));
            }
        }
        let mut cursor = node.walk();
        stack.extend(node.children(&mut cursor));
    }
    out.sort();
    out
}

/// Whether a computed name may be a picker: its written start (quotes out, up to the first
/// expansion) is the start of a picker's name, or empty. `omarchy-restart-"$service"` can only be
/// an `omarchy-restart-…` program, and no picker is one; `omarchy-$k` may be `omarchy-hook`.
fn may_be_a_picker(name: &str) -> bool {
    let unquoted: String = name.chars().filter(|c| *c != '"' && *c != '\'').collect();
    let prefix = unquoted.split(['$', '`']).next().unwrap_or("");
    // A directory then a computed name (`/usr/bin/$b`) may be any program of that directory.
    let prefix = prefix.rsplit('/').next().unwrap_or(prefix);
    prefix.is_empty()
        || crate::omarchy::picks::PICKERS
            .iter()
            .map(|p| p.name)
            .chain(crate::omarchy::sourced::RUNS_CODE.iter().copied())
            .any(|p| p.starts_with(prefix))
}

/// The word that names the program a command runs: its name, or for a wrapper the first of its
/// arguments that is not an option (nor an assignment, for `env`).
fn program_word<'t>(command: Node<'t>, text: &str) -> Option<Node<'t>> {
    let name = command.child_by_field_name("name")?;
    let plain = name.utf8_text(text.as_bytes()).ok()?;
    if !WRAPPERS.contains(&plain) {
        return Some(name);
    }
    let mut cursor = command.walk();
    let args: Vec<Node<'t>> = command
        .children_by_field_name("argument", &mut cursor)
        .collect();
    let arg = |a: &Node| a.utf8_text(text.as_bytes()).unwrap_or("").to_owned();
    // `command -v NAME` and `command -V NAME` look a name up; they run nothing.
    if plain == "command" && args.iter().any(|a| ["-v", "-V"].contains(&arg(a).as_str())) {
        return None;
    }
    // Past the wrappers' options (and their values), assignments, a wrapper's first value, and
    // wrappers wrapping wrappers (`exec setsid nice -n 5 "$c"`).
    let mut wrapper = plain.to_owned();
    let mut skip = WRAPPERS_WITH_A_FIRST_VALUE.contains(&plain);
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        let t = arg(&a);
        if OPTIONS_WITH_VALUES.contains(&t.as_str()) {
            args.next();
        } else if t.starts_with('-') || (t.contains('=') && wrapper == "env") {
        } else if skip {
            skip = false;
        } else if WRAPPERS.contains(&t.as_str()) {
            skip = WRAPPERS_WITH_A_FIRST_VALUE.contains(&t.as_str());
            wrapper = t;
        } else {
            return Some(a);
        }
    }
    Some(name)
}

/// Whether `node` holds an expansion anywhere in it.
fn computed(node: Node) -> bool {
    if EXPANSIONS.contains(&node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).any(computed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        commands(text).into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn a_command_whose_name_is_an_expansion_is_found_and_nothing_else_is() {
        // Attack 26 F8's spellings (our own lines in the shape of its rig's routes).
        assert_eq!(names("h=omarchy-hook; \"$h\" post-update\n"), ["\"$h\""]);
        assert_eq!(names("k=hook\nomarchy-$k post-update\n"), ["omarchy-$k"]);
        assert_eq!(
            names("$(printf omarchy-launch-%s webapp) https://x\n"),
            ["$(printf omarchy-launch-%s webapp)"]
        );
        assert_eq!(names("x=xdg-terminal; ${x}-exec\n"), ["${x}-exec"]);
        assert_eq!(names("exec setsid \"$c\" URL\n"), ["\"$c\""]);
        assert_eq!(names("exec \"$@\"\n"), ["\"$@\""]);
        assert_eq!(names("x$y\n"), ["x$y"]);
        // Attack 27 F1: a shell's name in pieces, a directory then a name, wrappers' values.
        assert_eq!(names("x=sh\nba$x -lc 'echo hi'\n"), ["ba$x"]);
        assert_eq!(names("/usr/bin/$b -lc 'echo hi'\n"), ["/usr/bin/$b"]);
        // Attack 29 F7: subshells spelt like arithmetic; attack 28 F5: a partly quoted
        // here-document delimiter; commands on a here-document's line; a function whose body
        // is a loop.
        for text in [
            "h=omarchy-hook\n((:); \"$h\" post-update)\n",
            "h=omarchy-hook\nx=$((:); \"$h\" post-update)\n",
            "if ((true) && (\"$h\" post-update)); then :; fi\n",
            "cat <<E\"O\"F\nhi\nEOF\n\"$h\" post-update\nE\"O\"F\n",
            "cat <<\"E'OF\"\nhi\nE'OF\n\"$h\" post-update\nEOF\n",
            "cat <<EOF; \"$h\" post-update\nhi\nEOF\n",
            "cat <<EOF && \"$h\" post-update\nhi\nEOF\n",
            "f() for x in 1; do \"$h\" post-update; done\nf\n",
        ] {
            assert_eq!(names(text), ["\"$h\""], "{text}");
        }
        // Arithmetic is still arithmetic; a string is no here-document.
        assert!(names("(( x = (1 + 2) * 3 ))\n").is_empty());
        assert_eq!(
            names("echo 'a<<\"x\"y'\n\"$h\" post-update\necho 'end'\n"),
            ["\"$h\""]
        );
        for line in [
            "nice -n 5 \"$h\" post-update\n",
            "timeout 10 \"$h\" post-update\n",
            "exec -a name \"$h\" post-update\n",
            "env -u FOO \"$h\" post-update\n",
            "stdbuf -oL \"$h\" post-update\n",
            "echo post-update | xargs \"$h\"\n",
        ] {
            assert_eq!(names(line), ["\"$h\""], "{line}");
        }
        // Not a command's name: arguments, tests, arithmetic, a multi-line awk program, a
        // here-document, an assignment.
        for text in [
            "omarchy-notification-send -g x \"Mirroring enabled ($EXTERNAL)\"\n",
            "if [[ -z $install_user || $install_user == \"root\" ]]; then :; fi\n",
            "while (($# > 0)); do shift; done\n",
            "args+=(\"$1\")\n",
            "awk -v package=\"$p\" '\n$1 == package { print; exit }\n' file\n",
            "lua <<'LUA'\n$x = 1\nLUA\n",
            "export OMARCHY_INSTALL=\"${OMARCHY_INSTALL:-$OMARCHY_PATH/install}\"\n",
            "exec setsid uwsm-app -- omarchy-launch-browser \"$1\"\n",
            "env FOO=\"$x\" omarchy-hook name\n",
            // Looked up, not run; or a name only programs no picker is can have (Omarchy 4's
            // omarchy-cmd-present, omarchy-bar, omarchy-update-restart).
            "command -v \"$cmd\" &>/dev/null\n",
            "\"omarchy-installed-service-$service\"\n",
            "omarchy-restart-\"$service\"\n",
        ] {
            assert!(names(text).is_empty(), "{text}: {:?}", names(text));
        }
    }
}

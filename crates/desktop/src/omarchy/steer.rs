//! What a script does with its arguments *as paths and as code to keep*, read from its text
//! (issue 33, attack 5a F5/F7/F8, attack 5b F5):
//!
//! - **steers a destructive step**: an argument (or a variable built from one) is the target of a
//!   delete or an overwrite — `rm -rf "$DIR/$NAME"`, `rm -f ".../$FLAG_NAME.lua"`,
//!   `cat >"$HOME/…/$id.desktop"`, the destination of `cp`/`mv`/`ln`/`install`/`git clone`, a
//!   file `tee`, `truncate`, `sed -i` or `chmod` write. Which positional arguments reach it is
//!   kept, so the call's own values can be judged ([`crate::omarchy::judge_call`]);
//! - **installs code that runs later**: a repository named by an argument is cloned (a theme's
//!   files are loaded by terminals and the editor as code), or a file built from an argument is
//!   made executable (a hook copied where it is run);
//! - **forwards its arguments to another route**: `exec omarchy-bar-plugin "$@"` in the `plugin)`
//!   arm of a dispatcher's `case`, or a whole script that is `exec omarchy-X "$@"` — the call is
//!   then judged as the route it reaches too.
//!
//! Class: *a value that steers a script's destructive step judged by the route's name*, and
//! *a route judged by its own words while its script forwards its arguments to another route*.

use std::collections::{BTreeMap, BTreeSet};

use crate::omarchy::argcode::{assignment, commands, logical_lines, references};

/// A positional argument: `$1`…`$9`, or every one (`$@`, `$*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Position {
    /// `$N` (1-based).
    Nth(usize),
    /// `$@` or `$*`.
    All,
}

impl Position {
    /// Whether the call's argument at `index` (0-based) is this position.
    pub fn covers(self, index: usize) -> bool {
        match self {
            Position::Nth(n) => n == index + 1,
            Position::All => true,
        }
    }
}

/// Where a script's destructive step or code install is steered by its arguments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Steering {
    /// The first delete or overwrite of a path built from an argument: (line, program).
    pub destroys: Option<(usize, String)>,
    /// Every argument position that reaches a deleted or overwritten path.
    pub positions: BTreeSet<Position>,
    /// The first install of code named by an argument — or fed by one: a file an argument names,
    /// copied where the script makes a file executable (attack 35 F6) — (line, what).
    pub installs_code: Option<(usize, String)>,
    /// Every argument position a command reads as a file (a copy's source, `cat`'s, an
    /// archive unpacked).
    pub reads_from: BTreeSet<Position>,
    /// The first change of directory (`cd`, `pushd`): (line, the command). Relative values read
    /// as files after it name files wherever it went.
    pub changes_dir: Option<(usize, String)>,
}

/// Where a script hands its arguments to another Omarchy script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forward {
    /// The `case` words that lead there (the first argument), or `None`: always.
    pub words: Option<Vec<String>>,
    /// The script it runs (`omarchy-bar-plugin`).
    pub script: String,
}

/// The positions each variable is built from, transitively.
fn origins(lines: &[(usize, String)]) -> BTreeMap<String, BTreeSet<Position>> {
    let mut out: BTreeMap<String, BTreeSet<Position>> = BTreeMap::new();
    loop {
        let mut grew = false;
        for (_, l) in lines {
            for cmd in commands(l) {
                for word in &cmd {
                    let Some((name, value)) = assignment(word) else {
                        continue;
                    };
                    let from = positions_in(value, &out);
                    let entry = out.entry(name.to_owned()).or_default();
                    for p in from {
                        grew |= entry.insert(p);
                    }
                }
            }
        }
        out.retain(|_, v| !v.is_empty());
        if !grew {
            return out;
        }
    }
}

/// `s` without its single-quoted text (literal for the shell: `sed 's/$1/x/'` names no
/// argument), kept inside double quotes where a `'` is literal.
fn without_single_quoted(s: &str) -> String {
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if single {
            single = c != '\'';
            continue;
        }
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '"' {
            double = !double;
        } else if c == '\'' && !double {
            single = true;
            continue;
        }
        out.push(c);
    }
    out
}

/// The argument positions a word's references reach.
fn positions_in(word: &str, vars: &BTreeMap<String, BTreeSet<Position>>) -> BTreeSet<Position> {
    let mut out = BTreeSet::new();
    for r in references(&without_single_quoted(word)) {
        match r.as_str() {
            "@" | "*" => {
                out.insert(Position::All);
            }
            n if n.len() == 1 && n != "0" && n.chars().all(|c| c.is_ascii_digit()) => {
                out.insert(Position::Nth(n.parse().unwrap_or(1)));
            }
            n => {
                if let Some(ps) = vars.get(n) {
                    out.extend(ps.iter().copied());
                }
            }
        }
    }
    out
}

fn base(w: &str) -> &str {
    let w = w.trim_matches('"').trim_matches('\'');
    w.rsplit('/').next().unwrap_or(w)
}

/// The command word's index: after keywords and assignments.
fn command_at(toks: &[String]) -> Option<usize> {
    toks.iter().position(|t| {
        !matches!(
            t.as_str(),
            "if" | "then" | "do" | "else" | "elif" | "while" | "until" | "time" | "!" | "{" | "}"
        ) && assignment(t).is_none()
    })
}

/// The words a command deletes or overwrites, and whether it makes a file executable.
fn targets(toks: &[String]) -> (Vec<&str>, Option<&'static str>) {
    let mut out: Vec<&str> = Vec::new();
    // Redirections anywhere: `>file`, `> file`, `>>file`, `&>file` (not `>&2`, `>/dev/null`).
    for (i, t) in toks.iter().enumerate() {
        if let Some(at) = t.rfind('>') {
            let rest = &t[at + 1..];
            let target = if rest.is_empty() {
                toks.get(i + 1).map(String::as_str).unwrap_or("")
            } else {
                rest
            };
            if !target.starts_with('&') && !target.contains("/dev/null") && !t.starts_with("<<") {
                out.push(target);
            }
        }
    }
    let Some(first) = command_at(toks) else {
        return (out, None);
    };
    // Wrappers that run the next word as the program.
    let mut at = first;
    while at < toks.len() && matches!(base(&toks[at]), "exec" | "command" | "nohup" | "env") {
        at += 1;
    }
    let Some(program) = toks.get(at).map(|t| base(t)) else {
        return (out, None);
    };
    let operands: Vec<&str> = toks[at + 1..]
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-') && !w.contains('>') && !w.starts_with('<'))
        .collect();
    match program {
        "rm" | "rmdir" | "unlink" | "shred" | "truncate" | "tee" | "mv" => out.extend(&operands),
        "cp" | "ln" | "install" | "rsync" => out.extend(operands.last()),
        "sed" if toks[at + 1..].iter().any(|w| w.starts_with("-i")) => out.extend(&operands),
        "find" if toks[at + 1..].iter().any(|w| w == "-delete") => out.extend(&operands),
        "git" => {
            if let Some(c) = operands.iter().position(|w| *w == "clone") {
                out.extend(operands.get(c + 2));
            }
        }
        "chmod" => {
            let executable = operands
                .first()
                .is_some_and(|m| m.contains('x') || m.chars().any(|c| "1357".contains(c)));
            out.extend(operands.iter().skip(1));
            return (out, executable.then_some("chmod (makes it executable)"));
        }
        _ => {}
    }
    (out, None)
}

/// The files a command reads to put somewhere: a copy's sources (`cp SRC… DST`: every operand
/// but the last), what `cat` prints, an archive unpacked (`tar -xf A -C D`, `unzip A -d D`).
fn copy_sources(toks: &[String]) -> Vec<&str> {
    let Some(at) = command_at(toks) else {
        return Vec::new();
    };
    let operands: Vec<&str> = toks[at + 1..]
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-') && !w.contains('>') && !w.starts_with('<'))
        .collect();
    match base(&toks[at]) {
        "cp" | "ln" | "install" | "rsync" | "mv" | "tar" | "bsdtar" | "unzip" => {
            operands[..operands.len().saturating_sub(1)].to_vec()
        }
        "cat" => operands,
        _ => Vec::new(),
    }
}

/// What `text` (a route's own script) does with its arguments as paths and code.
pub fn steering(text: &str) -> Steering {
    let lines = logical_lines(text);
    let vars = origins(&lines);
    steering_of(lines.iter(), &vars)
}

/// The name a line defines a function by (`name() {`, `function name {`).
fn defines(line: &str) -> Option<&str> {
    let l = line.strip_prefix("function ").unwrap_or(line);
    let end = l.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))?;
    let rest = l[end..].trim_start();
    let rest = rest.strip_prefix("()").unwrap_or(rest).trim_start();
    (end > 0 && rest.starts_with('{') && (line.starts_with("function ") || l[end..].contains("()")))
        .then(|| &l[..end])
}

/// For a dispatcher (a top-level `case` whose arms run the verbs), what each arm does with the
/// arguments: the arm's lines, the script's top-level lines outside the `case`, and the
/// functions they call, transitively — so `plugin list` is judged by what listing does, not by
/// the `git clone` in the `add` arm. A script with no such `case` has no arms.
pub fn steering_by_arm(text: &str) -> Vec<(Vec<String>, Steering)> {
    let lines = logical_lines(text);
    let vars = origins(&lines);
    // Functions: name → the indices of their lines; every index inside one.
    let mut functions: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut inside = BTreeSet::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = defines(&lines[i].1) else {
            i += 1;
            continue;
        };
        let mut body = vec![i];
        let one_line = lines[i].1.trim_end().ends_with('}');
        let mut depth = usize::from(!one_line);
        let mut j = i + 1;
        while depth > 0 && j < lines.len() {
            let l = lines[j].1.trim();
            if l.starts_with('}') {
                depth -= 1;
            }
            if l.ends_with('{') {
                depth += 1;
            }
            body.push(j);
            j += 1;
        }
        inside.extend(body.iter().copied());
        functions.insert(name.to_owned(), body);
        i = j.max(i + 1);
    }
    // The first top-level `case`, when it is on the first argument (`case "$command" in` with
    // `command="${1:-}"`): its arms' lines. A `case` on anything else chooses no arm here.
    let Some(start) = (0..lines.len())
        .find(|i| !inside.contains(i) && lines[*i].1.trim_start().starts_with("case "))
    else {
        return Vec::new();
    };
    let subject = lines[start]
        .1
        .trim_start()
        .trim_start_matches("case ")
        .split_whitespace()
        .next()
        .unwrap_or("");
    if positions_in(subject, &vars) != BTreeSet::from([Position::Nth(1)]) {
        return Vec::new();
    }
    let mut arms: Vec<(Vec<String>, Vec<usize>)> = Vec::new();
    let mut depth = 1usize;
    let mut end = lines.len();
    for (j, (_, l)) in lines.iter().enumerate().skip(start + 1) {
        let l = l.trim();
        if l.starts_with("case ") {
            depth += 1;
        } else if l.starts_with("esac") {
            depth -= 1;
            if depth == 0 {
                end = j;
                break;
            }
        }
        if depth == 1
            && let Some((words, _)) = arm(l)
        {
            arms.push((words, Vec::new()));
        }
        if let Some(a) = arms.last_mut() {
            a.1.push(j);
        }
    }
    let top: Vec<usize> = (0..lines.len())
        .filter(|i| !inside.contains(i) && (*i < start || *i > end))
        .collect();
    arms.into_iter()
        .map(|(words, body)| {
            let mut keep: BTreeSet<usize> = top.iter().chain(&body).copied().collect();
            let mut queue: Vec<usize> = keep.iter().copied().collect();
            while let Some(k) = queue.pop() {
                for toks in commands(&lines[k].1) {
                    let Some(f) = command_at(&toks).and_then(|c| functions.get(toks[c].as_str()))
                    else {
                        continue;
                    };
                    for &x in f {
                        if keep.insert(x) {
                            queue.push(x);
                        }
                    }
                }
            }
            let s = steering_of(keep.iter().map(|k| &lines[*k]), &vars);
            (words, s)
        })
        .collect()
}

fn steering_of<'a>(
    lines: impl Iterator<Item = &'a (usize, String)>,
    vars: &BTreeMap<String, BTreeSet<Position>>,
) -> Steering {
    let vars = vars.clone();
    let mut s = Steering::default();
    // A file an argument names, copied in (line, program); and any file made executable.
    let mut copied_in: Option<(usize, String)> = None;
    let mut made_executable = false;
    for (n, line) in lines {
        for toks in commands(line) {
            let (hit, exec_bit) = targets(&toks);
            made_executable |= exec_bit.is_some();
            let read: BTreeSet<Position> = copy_sources(&toks)
                .iter()
                .flat_map(|w| positions_in(w, &vars))
                .collect();
            if copied_in.is_none() && !read.is_empty() {
                let program = command_at(&toks).map(|i| base(&toks[i]).to_owned());
                copied_in = Some((*n, program.unwrap_or_default()));
            }
            s.reads_from.extend(read);
            if s.changes_dir.is_none()
                && let Some(at) = command_at(&toks)
                && matches!(base(&toks[at]), "cd" | "pushd")
            {
                s.changes_dir = Some((*n, toks[at..].join(" ")));
            }
            let mut reached = BTreeSet::new();
            for w in hit {
                reached.extend(positions_in(w, &vars));
            }
            if !reached.is_empty() {
                if s.destroys.is_none() {
                    let what = command_at(&toks)
                        .and_then(|i| toks.get(i))
                        .map(|w| base(w).to_owned())
                        .unwrap_or_default();
                    s.destroys = Some((*n, what));
                }
                s.positions.extend(reached.iter().copied());
                if let Some(what) = exec_bit
                    && s.installs_code.is_none()
                {
                    s.installs_code = Some((*n, what.to_owned()));
                }
            }
            // A repository named by an argument, cloned: its files are loaded as code later.
            if let Some(at) = command_at(&toks)
                && base(&toks[at]) == "git"
            {
                let operands: Vec<&String> = toks[at + 1..]
                    .iter()
                    .filter(|w| !w.starts_with('-'))
                    .collect();
                if let Some(c) = operands.iter().position(|w| *w == "clone")
                    && operands
                        .get(c + 1)
                        .is_some_and(|src| !positions_in(src, &vars).is_empty())
                    && s.installs_code.is_none()
                {
                    s.installs_code = Some((*n, "git clone of an argument".to_owned()));
                }
            }
        }
    }
    // Copied in under a name of the script's own (`cp "$F" "$D/x"`) and made executable: the
    // argument's file is installed as code all the same (attack 35 F6).
    if s.installs_code.is_none()
        && made_executable
        && let Some((n, program)) = copied_in
    {
        s.installs_code = Some((
            n,
            format!("{program} of an argument's file, made executable"),
        ));
    }
    s
}

/// A `case` arm's label (`plugin)`, `add | move)`), and what follows it on the line.
fn arm(line: &str) -> Option<(Vec<String>, &str)> {
    let close = line.find(')')?;
    let label = &line[..close];
    if label.is_empty()
        || label.contains(['(', '$', '=', '[', '{'])
        || !label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " |-_.\"*".contains(c))
    {
        return None;
    }
    let words = label
        .split('|')
        .map(|w| w.trim().trim_matches('"').to_owned())
        .collect();
    Some((words, line[close + 1..].trim()))
}

/// The Omarchy script a command hands every argument to (`exec omarchy-X "$@"`), named by its
/// name or by a path to it (`"$OMARCHY_PATH/bin/omarchy-X"`, `/…/omarchy-X`): a dispatcher that
/// spells its sub-script by path forwards as surely as one that spells it by name (attack 10 F6:
/// a path hid `bar plugin …` from the guards). The answer is the script's name.
fn forwarded_to(toks: &[String]) -> Option<String> {
    let first = command_at(toks)?;
    let at = if toks[first] == "exec" {
        first + 1
    } else {
        first
    };
    let token = toks.get(at)?.trim_matches(|c| c == '"' || c == '\'');
    let name = &token[token.rfind('/').map_or(0, |i| i + 1)..];
    let all = toks[at + 1..]
        .iter()
        .any(|w| matches!(w.as_str(), "\"$@\"" | "$@" | "\"$*\"" | "$*"));
    (name.starts_with("omarchy-")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && all)
        .then(|| name.to_owned())
}

/// Where `text` forwards its arguments to another Omarchy script.
pub fn forwards(text: &str) -> Vec<Forward> {
    let mut out = Vec::new();
    let mut label: Option<Vec<String>> = None;
    let mut depth = 0usize;
    for (_, line) in logical_lines(text) {
        let l = line.trim();
        if l.starts_with("case ") {
            depth += 1;
            continue;
        }
        if l == "esac" || l.starts_with("esac") {
            depth = depth.saturating_sub(1);
            label = None;
            continue;
        }
        let mut body = l;
        if depth > 0
            && let Some((words, rest)) = arm(l)
        {
            label = Some(words);
            body = rest;
        }
        for toks in commands(body) {
            if let Some(script) = forwarded_to(&toks) {
                out.push(Forward {
                    words: if depth > 0 { label.clone() } else { None },
                    script,
                });
            }
        }
        if body.ends_with(";;") {
            label = None;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Lines in the shape of Omarchy 4's bin/ scripts (our own text).
    #[test]
    fn a_deleted_path_built_from_an_argument() {
        let s = steering("N=\"$1\"\nF=\"$HOME/.local/state/x/$N.lua\"\noff() {\n  rm -f \"$F\"\n}");
        assert_eq!(s.destroys.as_ref().map(|d| d.1.as_str()), Some("rm"));
        assert_eq!(s.positions, BTreeSet::from([Position::Nth(1)]));
        let s = steering(
            "g=\"$2\"\nname=$(printf '%s' \"${g##*/}\" | perl -pe 's/(^| )(.)/$1\\U$2/g')\nf=\"$D/$name.desktop\"\ncat >\"$f\" <<EOF\nExec=$1\nEOF",
        );
        assert_eq!(s.positions, BTreeSet::from([Position::Nth(2)]));
        let s = steering(
            "U=\"$1\"\nP=\"$U\"\nN=$(basename \"$P\" .git)\nT=\"$D/$N\"\nrm -rf \"$T\"\ngit clone \"$U\" \"$T\"",
        );
        assert!(s.destroys.is_some());
        assert!(
            s.installs_code.is_some(),
            "a cloned repository named by a value"
        );
        let s = steering("T=$1\nF=$2\nD=\"$H/$T.d\"\ncp \"$F\" \"$D/x\"\nchmod 755 \"$D/x\"");
        assert!(s.installs_code.is_some());
        assert!(s.positions.contains(&Position::Nth(1)));
        // A file an argument names, copied to a fixed name that is made executable: installed
        // code though no argument steers where it lands (attack 35 F6).
        let s = steering(
            "F=$1\ncp \"$F\" \"$HOME/.config/omarchy/hooks/post-update.d/x\"\nchmod +x \"$HOME/.config/omarchy/hooks/post-update.d/x\"",
        );
        assert_eq!(s.destroys, None);
        assert_eq!(
            s.installs_code.as_ref().map(|c| c.1.as_str()),
            Some("cp of an argument's file, made executable")
        );
        // Where a value is read as a file, and where the script changes directory first
        // (attack 36 F4).
        let s = steering(
            "cd /tmp || exit 1\ncp \"$1\" \"$D/dl\"\ntar -xf \"$2\" -C \"$D\"\ncat \"$3\"",
        );
        assert_eq!(
            s.reads_from,
            BTreeSet::from([Position::Nth(1), Position::Nth(2), Position::Nth(3)])
        );
        assert_eq!(
            s.changes_dir.as_ref().map(|c| c.1.as_str()),
            Some("cd /tmp")
        );
        // Copied without being made executable, or made executable without a copy: neither.
        assert_eq!(
            steering("cp \"$1\" \"$HOME/.config/x.conf\"").installs_code,
            None
        );
        assert_eq!(steering("chmod +x \"$HOME/bin/y\"").installs_code, None);
    }

    #[test]
    fn what_does_not_steer() {
        for text in [
            "rm -f \"$_TMP\"",
            "echo \"$1\" >&2",
            "omarchy-theme-set \"$1\" >/dev/null 2>&1",
            "mv \"$TMP\" \"$CONFIG_FILE\"",
            "x=\"$1\"\nhyprctl keyword \"$x\"",
            "cat <<EOF\n$1\nEOF",
        ] {
            assert_eq!(steering(text), Steering::default(), "{text}");
        }
    }

    #[test]
    fn a_dispatcher_is_judged_by_the_arm_its_verb_chooses() {
        let text = "add_one() {\n  local url=\"$1\"\n  git clone \"$url\" \"$D/x\"\n}\n\
                    show() {\n  echo \"$1\"\n}\ncommand=\"${1:-}\"\ncase \"$command\" in\n\
                    list | ls)\n  shift\n  show \"$@\"\n  ;;\nadd)\n  shift\n  add_one \"$@\"\n  ;;\nesac";
        let arms = steering_by_arm(text);
        let of = |w: &str| {
            &arms
                .iter()
                .find(|(ws, _)| ws.iter().any(|x| x == w))
                .unwrap()
                .1
        };
        assert_eq!(of("list"), &Steering::default());
        assert_eq!(of("ls"), &Steering::default());
        assert!(of("add").installs_code.is_some());
        assert!(
            steering(text).installs_code.is_some(),
            "the whole script clones"
        );
        assert!(
            steering_by_arm("rm -rf \"$1\"").is_empty(),
            "no dispatcher, no arms"
        );
        // A `case` on another argument chooses no arm: the whole script is judged.
        assert!(
            steering_by_arm(
                "A=\"${2:-x}\"\ncase $A in\n  on) echo ;;\n  off) rm -f \"$1\" ;;\nesac"
            )
            .is_empty()
        );
    }

    #[test]
    fn forwarding_is_found_by_the_dispatcher_shape() {
        let f = forwards(
            "command=\"${1:-}\"\nshift\ncase \"$command\" in\n  use)\n    cmd_use \"$@\"\n    ;;\n  plugin)\n    exec omarchy-bar-plugin \"$@\"\n    ;;\n  clone) exec omarchy-plugin-clone \"$@\" ;;\nesac",
        );
        assert_eq!(
            f,
            vec![
                Forward {
                    words: Some(vec!["plugin".into()]),
                    script: "omarchy-bar-plugin".into()
                },
                Forward {
                    words: Some(vec!["clone".into()]),
                    script: "omarchy-plugin-clone".into()
                },
            ]
        );
        assert_eq!(
            forwards("exec omarchy-x-y \"$@\""),
            vec![Forward {
                words: None,
                script: "omarchy-x-y".into()
            }]
        );
        assert!(forwards("omarchy-x-y \"$1\"").is_empty());
        // By a path to the script, as surely as by its name.
        for line in [
            "plugin) exec \"$OMARCHY_PATH/bin/omarchy-bar-plugin\" \"$@\" ;;",
            "plugin) exec /opt/omarchy/bin/omarchy-bar-plugin \"$@\" ;;",
        ] {
            assert_eq!(
                forwards(&format!("case \"$c\" in\n  {line}\nesac")),
                vec![Forward {
                    words: Some(vec!["plugin".into()]),
                    script: "omarchy-bar-plugin".into()
                }],
                "{line}"
            );
        }
    }
}

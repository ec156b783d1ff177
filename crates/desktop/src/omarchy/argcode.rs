//! Whether a script runs one of its arguments as code: hands it to a shell (`bash -c "$cmd"`,
//! `eval`), runs it as a program (`exec "$@"`, a terminal's `-e "$1"`, `uwsm-app -- "$@"`, `"$@"`
//! in a command's place) or runs a file named from it (`bash "$HOME/…/$1"`). Read from the
//! script's text (trusted: it lives where only root and the person can write), shell-aware
//! enough for Omarchy's bin/: logical lines (continuations and multi-line quotes joined),
//! comments and test brackets (`[[ … ]]`, `(( … ))`) dropped, single-quoted text taken as
//! literal. Variables named from arguments (`cmd="$*"`, `HOOK_PATH=…/$1`) count as arguments.

use std::collections::BTreeSet;

/// Commands as the shell reads them: (first line number, text), comments removed, lines joined
/// across `\` continuations and open quotes.
pub(crate) fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let (mut single, mut double) = (false, false);
    let mut cur = String::new();
    let mut start = 0usize;
    let mut heredoc: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        // A here-document's body is data, not commands.
        if let Some(end) = &heredoc {
            if line.trim() == end {
                heredoc = None;
            }
            continue;
        }
        if !single
            && !double
            && let Some(at) = line.find("<<")
            && !line[at..].starts_with("<<<")
        {
            let d: String = line[at + 2..]
                .trim_start_matches('-')
                .trim_start()
                .chars()
                .filter(|c| *c != '\'' && *c != '"')
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !d.is_empty() {
                heredoc = Some(d);
            }
        }
        if cur.is_empty() {
            start = i + 1;
        }
        let mut escaped = false;
        let mut prev_space = true;
        for c in line.chars() {
            if single {
                single = c != '\'';
            } else if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if double {
                double = c != '"';
            } else if c == '\'' {
                single = true;
            } else if c == '"' {
                double = true;
            } else if c == '#' && prev_space {
                break;
            }
            prev_space = c.is_whitespace() || c == ';';
            cur.push(c);
        }
        if single || double {
            cur.push('\n');
            continue;
        }
        if cur.ends_with('\\') {
            cur.pop();
            cur.push(' ');
            continue;
        }
        let t = cur.trim().to_owned();
        if !t.is_empty() {
            out.push((start, t));
        }
        cur.clear();
    }
    out
}

/// A logical line split the way a shell splits it: simple commands (at `;`, `|`, `&`,
/// parentheses and newlines outside quotes), each a list of words with their quotes kept and
/// command substitutions (`$(…)`) whole. Test brackets (`[[ … ]]`, `(( … ))`) are dropped.
pub(crate) fn commands(line: &str) -> Vec<Vec<String>> {
    let mut stripped = line.to_owned();
    for (open, close) in [("[[", "]]"), ("((", "))")] {
        while let Some(a) = stripped.find(open) {
            let Some(b) = stripped[a..].find(close) else {
                break;
            };
            stripped.replace_range(a..a + b + close.len(), "true");
        }
    }
    let line = stripped.as_str();
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut w = String::new();
    let (mut single, mut double, mut depth) = (false, false, 0usize);
    let mut chars = line.chars().peekable();
    let end_word = |w: &mut String, words: &mut Vec<String>| {
        if !w.is_empty() {
            words.push(std::mem::take(w));
        }
    };
    while let Some(c) = chars.next() {
        if single {
            w.push(c);
            single = c != '\'';
            continue;
        }
        if c == '\\' {
            w.push(c);
            if let Some(n) = chars.next() {
                w.push(n);
            }
            continue;
        }
        if double {
            w.push(c);
            if c == '"' {
                double = false;
            } else if c == '$' && chars.peek() == Some(&'(') {
                w.push(chars.next().unwrap_or('('));
                depth += 1;
            } else if c == ')' && depth > 0 {
                depth -= 1;
            }
            continue;
        }
        if depth > 0 {
            w.push(c);
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                '\'' => single = true,
                '"' => double = true,
                _ => {}
            }
            continue;
        }
        match c {
            '\'' => {
                single = true;
                w.push(c);
            }
            '"' => {
                double = true;
                w.push(c);
            }
            '$' if chars.peek() == Some(&'(') => {
                w.push(c);
                w.push(chars.next().unwrap_or('('));
                depth += 1;
            }
            // An array literal (`list+=("$1")`) is one word of an assignment.
            '(' if w.ends_with('=') => {
                w.push(c);
                depth += 1;
            }
            c if c.is_whitespace() && c != '\n' => end_word(&mut w, &mut words),
            ';' | '|' | '&' | '(' | ')' | '\n' => {
                end_word(&mut w, &mut words);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            _ => w.push(c),
        }
    }
    end_word(&mut w, &mut words);
    if !words.is_empty() {
        out.push(words);
    }
    out.retain(|c| !c.is_empty());
    out
}

/// An assignment word: `NAME=…` or `NAME+=…`, its name and value.
pub(crate) fn assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    (!name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .then_some((name, value))
}

/// The variable names referenced in `s` (`$name`, `${name…}`, `$1`, `$@`, `$*`).
pub(crate) fn references(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            if j < b.len() && b[j] == b'{' {
                j += 1;
            }
            let k = j;
            if j < b.len() && (b[j] == b'@' || b[j] == b'*' || b[j].is_ascii_digit()) {
                out.push((b[j] as char).to_string());
                i = j + 1;
                continue;
            }
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > k {
                out.push(s[k..j].to_owned());
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

fn is_arg(name: &str, from_args: &BTreeSet<String>) -> bool {
    matches!(
        name,
        "@" | "*" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"
    ) || from_args.contains(name)
}

/// Whether a word (quotes dropped) is a reference to an argument.
fn word_is_arg(word: &str, from_args: &BTreeSet<String>) -> bool {
    let w = word.trim_matches('"');
    w.starts_with('$') && references(w).first().is_some_and(|n| is_arg(n, from_args))
}

/// Variables a script sets from its arguments, transitively.
fn arg_variables(lines: &[(usize, String)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    loop {
        let before = out.len();
        for (_, l) in lines {
            for cmd in commands(l) {
                for word in &cmd {
                    if let Some((name, value)) = assignment(word)
                        && references(value).iter().any(|r| is_arg(r, &out))
                    {
                        out.insert(name.to_owned());
                    }
                }
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

const TERMINALS: &[&str] = &[
    "xdg-terminal-exec",
    "foot",
    "footclient",
    "alacritty",
    "kitty",
    "ghostty",
    "wezterm",
    "xterm",
];
const LAUNCHERS: &[&str] = &["uwsm-app", "app2unit", "systemd-run", "setsid", "env"];
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash"];

fn runs_in(line: &str, from_args: &BTreeSet<String>) -> bool {
    let base = |w: &str| -> String {
        let w = w.trim_matches('"');
        w.rsplit('/').next().unwrap_or(w).to_owned()
    };
    for toks in commands(line) {
        // The command word: after keywords and assignments.
        let Some(first) = toks.iter().position(|t| {
            !matches!(
                t.as_str(),
                "if" | "then"
                    | "do"
                    | "else"
                    | "elif"
                    | "while"
                    | "until"
                    | "time"
                    | "!"
                    | "{"
                    | "}"
                    | "local"
                    | "export"
                    | "readonly"
                    | "declare"
            ) && assignment(t).is_none()
        }) else {
            continue;
        };
        if word_is_arg(&toks[first], from_args) {
            return true;
        }
        let refs_arg = |w: &str| references(w).iter().any(|r| is_arg(r, from_args));
        if base(&toks[first]) == "eval" && toks[first + 1..].iter().any(|t| refs_arg(t)) {
            return true;
        }
        for i in first..toks.len() {
            let t = base(&toks[i]);
            let next = toks.get(i + 1).map(String::as_str).unwrap_or("");
            let in_terminal = toks[first..i]
                .iter()
                .any(|b| TERMINALS.contains(&base(b).as_str()));
            let prev = if i > first {
                base(&toks[i - 1])
            } else {
                String::new()
            };
            let after_shell = toks[first..i]
                .iter()
                .any(|b| SHELLS.contains(&base(b).as_str()));
            let run_next = match t.as_str() {
                "exec" | "source" | "." => i == first || prev == "exec",
                "-e" => in_terminal,
                "--" => LAUNCHERS.contains(&prev.as_str()),
                "setsid" | "env" | "uwsm-app" | "app2unit" => true,
                // A shell given a file; not the `$0` name after a `-c` script.
                s if SHELLS.contains(&s) => {
                    !next.starts_with('-') && !toks[first..i].iter().any(|b| b == "-c")
                }
                "-c" => after_shell,
                _ => false,
            };
            if !run_next {
                continue;
            }
            // `bash "$HOME/…/$1"`: a file named from a value; `bash -c "$cmd"`: a shell string
            // (a single-quoted script is literal: its `$1` is the shell's own argument).
            let named_file = SHELLS.contains(&t.as_str()) || matches!(t.as_str(), "source" | ".");
            if word_is_arg(next, from_args)
                || (named_file && next.contains('/') && refs_arg(next))
                || (t == "-c" && !next.starts_with('\'') && refs_arg(next))
            {
                return true;
            }
        }
    }
    false
}

/// The first place `text` runs one of its arguments as code: (line number, the line).
pub fn runs_values(text: &str) -> Option<(usize, String)> {
    let lines = logical_lines(text);
    let from_args = arg_variables(&lines);
    lines.into_iter().find(|(_, l)| runs_in(l, &from_args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(text: &str) -> bool {
        runs_values(text).is_some()
    }

    // Lines in the shape of Omarchy 4's bin/ scripts (our own text).
    #[test]
    fn what_runs_a_value() {
        assert!(runs(
            r#"exec setsid uwsm-app -- xdg-terminal-exec --app-id=x -e "$1" "${@:2}""#
        ));
        assert!(runs(r#"setsid uwsm-app -- "$@" >/dev/null 2>&1 &"#));
        assert!(runs(
            "cmd=\"$*\"\nscript=\"logo; $cmd; done\"\nexec setsid uwsm-app -- xdg-terminal-exec -e bash -c \"$script\""
        ));
        assert!(runs(
            "HOOK_PATH=\"$HOME/.config/omarchy/hooks/$1\"\nbash \"$HOOK_PATH\" \"$@\""
        ));
        assert!(runs(r#"bash "$HOME/.config/omarchy/hooks/$1""#));
        assert!(runs("L=\"$2\"\neval \"$L\""));
        assert!(runs(r#""$@""#));
        assert!(runs(r#"sleep 1; "$@""#));
        assert!(runs(r#"exec "$1" "$@""#));
    }

    #[test]
    fn what_does_not() {
        assert!(!runs(r#"echo "$1""#));
        assert!(!runs(r#"theme="$1""#));
        assert!(!runs(r#"omarchy-theme-set "$1""#));
        assert!(!runs("exec setsid uwsm-app -- waybar"));
        assert!(!runs(r#"hyprctl eval "hl.device({ name = \"$1\" })""#));
        assert!(!runs(r#"jq -S -e "$@" "$program" > "$tmp""#));
        assert!(!runs(r#"if [[ ${1:-} != "" && $1 != "--x" ]]; then"#));
        assert!(!runs("printf '%s' \\\n  \"$1\" \\\n  \"$2\""));
        assert!(!runs(
            "bash -c 'notify \"$1\"; rm -f \"$2\"' bash \"$1\" \"$file\""
        ));
        assert!(!runs("$0 hypr/hyprland.lua"));
        assert!(!runs(r#"sudo asdcontrol "$device" -- "$1""#));
        assert!(!runs("awk '\n$1 == \"prefix\" { print $2 }\n' \"$1\""));
        assert!(!runs(r#"list+=("$1" "${2:-}")"#));
        assert!(!runs(
            "n=\"$1\"\ncat > f <<EOF\nExec=$n\n$n --x\nEOF\necho done"
        ));
        assert!(!runs(
            "m=\"$1\"\nsystemd-run --user -- bash -c 'notify \"$1\"' bash \"$m\""
        ));
    }
}

//! Where a route's script runs a file of the person's as its own code: a `source` of a file
//! under the home, a shell that reads the person's start-up files, an interpreter given a file
//! of theirs, code that loads a file it names at run time.
//!
//! Class (attack 25 F1, attack 26 F1 and F2; *a reader of shell text that matches one
//! spelling*): the first reader knew `source ~/FILE` and, later, `bash -lc`; twelve other
//! spellings ran the agent's file under developer mode — `bash -O extglob -lc`, a line
//! continued with `\`, `ba""sh`, `"$BASH"`, `exec -l bash`, `exec -a -bash`, `BASH_ENV=FILE`,
//! `--rcfile FILE`, `source "$HOME"/FILE`, `source "$f"`, `eval "$(cat FILE)"`, `bash FILE` — and
//! Omarchy 4's `omarchy-menu-keybindings` ran `~/.config/hypr/hyprland.lua` through Lua's
//! `dofile`. So this reader goes by what the words do, and where it cannot tell which file a
//! script will run, it still calls the run the person's (a site with no file: never automatic,
//! the question says the file is chosen when the script runs):
//!
//! - a shell (`bash`, `sh`, `dash`, `ksh`, `zsh`, `fish`, `csh`, … or `$BASH`, `$SHELL`) reads the
//!   person's start-up files when it is a login shell (`-l` in any cluster, `--login`, `exec -l`,
//!   `exec -a -NAME`), interactive (`-i`, `--rcfile FILE`, `--init-file FILE`), or always (zsh's
//!   `.zshenv`, fish's `config.fish`, csh's `.cshrc`); option arguments (`-o pipefail`,
//!   `-O extglob`) do not end the flags;
//! - a shell or interpreter (`lua`, `python3`, `perl`, `ruby`, `node` …) given a script file: a
//!   file under the home, or one a variable names;
//! - `BASH_ENV=` or `ENV=` on the line (bash and sh read the file it names at start);
//! - `source` or `.` (in a command's place) of a file under the home or one a variable names —
//!   `source omarchy-restart-gum` and `$OMARCHY_PATH/…`, `$OMARCHY_INSTALL/…` are Omarchy's own;
//! - `eval` of a command's output (`eval "$(cat FILE)"`, `eval "$(opam env)"`);
//! - a line that loads code from a file at run time in another language: Lua's `dofile` and
//!   `loadfile`, Python's `runpy` and `exec(open(…))`.
//!
//! A line that merely names a shell (`echo "use bash -l"`) counts too: a question where none was
//! needed, never a run nobody approved.

/// A file of the person's a line runs as code: what runs it, and the file under the home
/// (`None`: one the script names only when it runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunsAsCode {
    pub by: &'static str,
    pub file: Option<String>,
}

/// Every program this reader knows to run code it is given: the shells and interpreters (a
/// computed name that may be one of them is judged as such: `computed.rs`).
pub const RUNS_CODE: &[&str] = &[
    "bash", "rbash", "sh", "dash", "ash", "ksh", "mksh", "zsh", "fish", "csh", "tcsh", "lua",
    "luajit", "python", "python3", "perl", "ruby", "node", "php", "awk", "gawk", "sed",
];

/// Shells, with the start-up files each reads: always, as a login shell, interactive.
const SHELLS: &[(&str, Startup)] = &[
    ("bash", BASH),
    ("rbash", BASH),
    ("sh", SH),
    ("dash", SH),
    ("ash", SH),
    ("ksh", KSH),
    ("mksh", MKSH),
    ("zsh", ZSH),
    ("fish", FISH),
    ("csh", CSH),
    ("tcsh", TCSH),
];

struct Startup {
    always: &'static [&'static str],
    login: &'static [&'static str],
    interactive: &'static [&'static str],
}

const BASH: Startup = Startup {
    always: &[],
    login: &[".bash_profile", ".bash_login", ".profile"],
    interactive: &[".bashrc"],
};
const SH: Startup = Startup {
    always: &[],
    login: &[".profile"],
    interactive: &[],
};
const KSH: Startup = Startup {
    always: &[],
    login: &[".profile"],
    interactive: &[".kshrc"],
};
const MKSH: Startup = Startup {
    always: &[],
    login: &[".profile"],
    interactive: &[".mkshrc"],
};
const ZSH: Startup = Startup {
    always: &[".zshenv"],
    login: &[".zprofile", ".zlogin"],
    interactive: &[".zshrc"],
};
const FISH: Startup = Startup {
    always: &[".config/fish/config.fish"],
    login: &[],
    interactive: &[],
};
const CSH: Startup = Startup {
    always: &[".cshrc"],
    login: &[".login"],
    interactive: &[],
};
const TCSH: Startup = Startup {
    always: &[".tcshrc", ".cshrc"],
    login: &[".login"],
    interactive: &[],
};

/// Programs that run the program named by their next word that is not an option (a wrapper's
/// own values aside: `computed.rs`).
pub const WRAPPERS: &[&str] = &[
    "exec",
    "setsid",
    "nohup",
    "env",
    "command",
    "builtin",
    "time",
    "nice",
    "timeout",
    "stdbuf",
    "xargs",
    "flock",
    "systemd-run",
    "uwsm-app",
    "chrt",
    "ionice",
    "taskset",
    "unbuffer",
];

/// Programs that run a file of code given after an option: `awk -f FILE`, `sed -f FILE` (GNU
/// sed's `e` runs a command), `perl -I DIR` (its modules), and the option's name.
const CODE_FILE_OPTIONS: &[(&str, &str)] = &[
    ("awk", "-f"),
    ("gawk", "-f"),
    ("mawk", "-f"),
    ("sed", "-f"),
    ("perl", "-I"),
];

/// Assignments that make an interpreter load code from a directory or file they name.
const CODE_PATH_VARIABLES: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PERL5LIB",
    "PERL5OPT",
    "RUBYLIB",
    "RUBYOPT",
    "NODE_PATH",
    "NODE_OPTIONS",
    "LUA_PATH",
    "LUA_CPATH",
    "LUA_INIT",
];

/// Interpreters that run a script file given as their first word that is not an option.
const INTERPRETERS: &[&str] = &[
    "lua", "luajit", "lua5.1", "lua5.2", "lua5.3", "lua5.4", "python", "python3", "perl", "ruby",
    "node", "php",
];

/// Words of code, in any language a script embeds, that run a file named at run time or change
/// where its modules come from.
const LOADS_A_FILE: &[&str] = &[
    "dofile",
    "loadfile",
    "runpy",
    "execfile",
    "exec(",
    "exec (",
    "sys.path",
    "importlib",
    "__import__",
    "package.path",
    "@INC",
];

/// A word of the line: its text with quotes taken out, and whether a command may start at it
/// (the line's start, or after `;`, `|`, `&`, `(`, `` ` `` or `then`, `do`, `else`…).
struct Word {
    text: String,
    command_place: bool,
    /// The target of a redirection (`< FILE`, `<<WORD`, `> FILE`): no argument of the command.
    redirected: bool,
}

/// `${NAME}` written as `$NAME` (a name only; `${NAME:-…}` and others are left).
fn braces_off(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            out.push('$');
            out.push_str(&after[..name_len]);
            rest = &after[name_len + 1..];
        } else {
            out.push_str("${");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn words(line: &str) -> Vec<Word> {
    let line = braces_off(line);
    let mut out: Vec<Word> = Vec::new();
    let mut cur = String::new();
    // Whether a command may start at the next word; whether the last word was a wrapper (or
    // one of its options); whether the next word is a redirection's target.
    let (mut place, mut after_wrapper, mut redirect) = (true, false, false);
    let mut flush = |cur: &mut String, place: &mut bool, redirect: &mut bool| {
        if cur.is_empty() {
            return;
        }
        let text: String = cur.chars().filter(|c| *c != '"' && *c != '\'').collect();
        let text = text.strip_prefix('\\').unwrap_or(&text).to_owned();
        let keyword = [
            "then", "do", "else", "elif", "if", "while", "until", "!", "{",
        ]
        .contains(&text.as_str());
        // A wrapper's options and then its program: `exec -a NAME PROGRAM`, `setsid -f PROGRAM`.
        let wrapped = *place
            && (WRAPPERS.contains(&text.as_str())
                || (after_wrapper && text.starts_with('-'))
                || assignment(&text));
        out.push(Word {
            text,
            command_place: *place,
            redirected: std::mem::take(redirect),
        });
        after_wrapper = wrapped;
        *place = keyword || wrapped;
        cur.clear();
    };
    for c in line.chars() {
        if c.is_whitespace() {
            flush(&mut cur, &mut place, &mut redirect);
        } else if ";|&(){}`<>".contains(c) {
            flush(&mut cur, &mut place, &mut redirect);
            if ";|&(`{".contains(c) {
                place = true;
            }
            redirect = "<>".contains(c);
        } else {
            cur.push(c);
        }
    }
    flush(&mut cur, &mut place, &mut redirect);
    out
}

/// `NAME=value`: an assignment, which leaves the command's place to the next word.
fn assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A path a script writes under the home (`~/X`, `$HOME/X`, quotes already out), as `X`; `None`
/// for any other path, or one that climbs out (`..`).
pub(crate) fn under_home(word: &str) -> Option<String> {
    let rel = ["~/", "$HOME/"].iter().find_map(|p| word.strip_prefix(p))?;
    let ok = !rel.is_empty()
        && rel.split('/').all(|c| !c.is_empty() && c != "..")
        && rel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
    ok.then(|| rel.to_owned())
}

/// Omarchy's own files, which a script names through its install variables.
fn omarchy_own(word: &str) -> bool {
    ["$OMARCHY_PATH/", "$OMARCHY_INSTALL/"]
        .iter()
        .any(|p| word.starts_with(p))
}

/// What a file word names: a file under the home (`Some(Some(rel))`), a file the script names at
/// run time (`Some(None)`: a variable, a command's output, a path under the home it could not
/// read), or none of the person's (`None`: a name or path the script writes out).
fn persons_file(word: &str) -> Option<Option<String>> {
    if let Some(rel) = under_home(word) {
        return Some(Some(rel));
    }
    if omarchy_own(word) {
        return None;
    }
    (word.contains('$') || word.starts_with('~')).then_some(None)
}

/// A program word as a name: `$BASH` is bash; `$SHELL` any shell (the person's login shell).
fn program_name(word: &str) -> &str {
    match word {
        "$BASH" => "bash",
        "$SHELL" => "$SHELL",
        w => w.rsplit('/').next().unwrap_or(w),
    }
}

/// How a shell is started: its flags read as the shell reads them, and the script file it runs.
struct ShellCall {
    login: bool,
    interactive: bool,
    rcfile: Option<String>,
    script: Option<String>,
    /// `-c`: the code is the next word.
    command: bool,
    /// `-s`, or no script and no `-c`: the code is what comes in on standard input.
    stdin: bool,
}

fn shell_call(rest: &[Word], login: bool) -> ShellCall {
    let mut call = ShellCall {
        login,
        interactive: false,
        rcfile: None,
        script: None,
        command: false,
        stdin: false,
    };
    let mut i = 0;
    while let Some(w) = rest.get(i) {
        i += 1;
        if w.redirected {
            continue;
        }
        let w = w.text.as_str();
        match w {
            "--" => {
                call.script = rest.get(i).map(|w| w.text.clone());
                break;
            }
            "--login" => call.login = true,
            "--rcfile" | "--init-file" => {
                call.interactive = true;
                call.rcfile = rest.get(i).map(|w| w.text.clone());
                i += 1;
            }
            "-o" | "+o" | "-O" | "+O" => i += 1,
            _ if w.starts_with("--") => {}
            _ if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 => {
                call.login |= w.contains('l');
                call.interactive |= w.contains('i');
                if w.contains('c') || w.contains('s') {
                    call.command = w.contains('c');
                    call.stdin = !call.command;
                    break;
                }
            }
            _ => {
                call.script = Some(w.to_owned());
                break;
            }
        }
    }
    call.stdin |= !call.command && call.script.is_none();
    call
}

/// The first word of `rest` that is not an option: the script an interpreter runs. `None` when
/// its code comes another way (`-c`, `-e`, `-` for standard input, a here-document).
fn interpreter_script(rest: &[Word]) -> Option<&str> {
    let mut words = rest.iter().map(|w| w.text.as_str());
    while let Some(w) = words.next() {
        match w {
            // An option's own argument: a warning filter, an implementation option, a directory.
            "-W" | "-X" | "-I" => {
                words.next();
            }
            // node's module loaded before the program: a file as much as the script.
            "-r" | "--require" => return words.next(),
            _ if w == "-"
                || ["-c", "-e", "-E", "-m", "-p", "-n"]
                    .iter()
                    .any(|f| w.starts_with(f)) =>
            {
                return None;
            }
            _ if w.starts_with('-') => {}
            _ => return Some(w),
        }
    }
    None
}

/// Every file of the person's `line` runs as code (`picks::sites_in` makes them pick sites).
pub fn sites(line: &str) -> Vec<RunsAsCode> {
    let mut found: Vec<(&'static str, Option<String>)> = Vec::new();
    let ws = words(line);
    for (i, w) in ws.iter().enumerate() {
        let text = w.text.as_str();
        let rest = &ws[i + 1..];
        // bash reads BASH_ENV, sh (and bash as sh) ENV, at start; interpreters their paths.
        for var in CODE_PATH_VARIABLES {
            if let Some(value) = text.strip_prefix(var).and_then(|v| v.strip_prefix('=')) {
                found.push((var, under_home(value)));
            }
        }
        if text == "source" || (text == "." && w.command_place) {
            // From standard input or a process (`source <(…)`, `source /dev/stdin`): code the
            // line computes.
            let from_input = rest
                .first()
                .is_some_and(|f| ["/dev/", "/proc/"].iter().any(|p| f.text.starts_with(p)))
                || line.contains(&format!("{text} <("));
            if from_input {
                found.push(("source", None));
            } else if let Some(file) = rest.first().and_then(|f| persons_file(&f.text)) {
                found.push(("source", file));
            }
            continue;
        }
        // `eval` of a variable's or a command's text.
        if text == "eval"
            && w.command_place
            && line
                .split_once("eval")
                .is_some_and(|(_, after)| after.contains('$') || after.contains('`'))
        {
            found.push(("eval", None));
            continue;
        }
        if let Some((_, option)) = CODE_FILE_OPTIONS
            .iter()
            .find(|(p, _)| program_name(text) == *p)
        {
            for (j, o) in rest.iter().enumerate() {
                let file = if o.text == *option {
                    rest.get(j + 1).map(|f| f.text.as_str())
                } else {
                    o.text.strip_prefix(option).filter(|f| !f.is_empty())
                };
                if let Some(file) = file.and_then(persons_file) {
                    found.push(("source", file));
                }
            }
        }
        // `exec -l PROGRAM` and `exec -a -NAME PROGRAM` start PROGRAM as a login shell.
        let (login, rest) = if text == "exec" {
            let mut j = 0;
            let mut login = false;
            while let Some(o) = rest.get(j).filter(|o| o.text.starts_with('-')) {
                login |= o.text.contains('l');
                if o.text == "-a" {
                    login |= rest.get(j + 1).is_some_and(|a| a.text.starts_with('-'));
                    j += 1;
                }
                j += 1;
            }
            (login, &rest[j.min(rest.len())..])
        } else {
            (false, rest)
        };
        let (program, rest) = if text == "exec" {
            match rest.split_first() {
                Some((p, r)) => (p.text.as_str(), r),
                None => continue,
            }
        } else {
            (text, rest)
        };
        let name = program_name(program);
        if name == "$SHELL" {
            found.push(("$SHELL", None));
            continue;
        }
        if let Some((_, startup)) = SHELLS.iter().find(|(s, _)| *s == name) {
            let call = shell_call(rest, login);
            let mut files: Vec<&str> = startup.always.to_vec();
            if call.login {
                files.extend(startup.login);
            }
            if call.interactive && call.rcfile.is_none() {
                files.extend(startup.interactive);
            }
            for f in files {
                found.push(("source", Some(f.to_owned())));
            }
            for file in [call.rcfile, call.script.clone()].into_iter().flatten() {
                if let Some(file) = persons_file(&file) {
                    found.push(("source", file));
                }
            }
            // Code from standard input (`| bash`, `bash -s < FILE`, a here-document), code a
            // command prints (`bash -c "$(cat FILE)"`), or each file `find -exec` names.
            if call.stdin
                || (call.command && (line.contains("$(") || line.contains('`')))
                || ["-exec", "-execdir", "-ok"]
                    .iter()
                    .any(|x| line.contains(x))
            {
                found.push(("a shell", None));
            }
        } else if INTERPRETERS.contains(&name)
            && let Some(file) = interpreter_script(rest).and_then(persons_file)
        {
            found.push(("source", file));
        }
    }
    if LOADS_A_FILE
        .iter()
        .any(|l| line.contains(l) && word_at(line, l))
    {
        found.push(("code that loads a file", None));
    }
    let mut out: Vec<RunsAsCode> = Vec::new();
    for (by, file) in found {
        let r = RunsAsCode { by, file };
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// Whether `needle` occurs in `line` as a word of its own (not inside a longer name).
fn word_at(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + needle.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            && (needle.ends_with('(')
                || !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_'))
    })
}

#[cfg(test)]
mod tests;

//! One fixed D-Bus message sent, as the person who ran pacman, to their own session bus:
//! `sudo -u "#$SUDO_UID" dbus-send --session --dest=org.Cinnamon /org/Cinnamon
//! org.Cinnamon.RestartCinnamon boolean:false` — how an artwork or theme package asks the
//! running desktop to reload (the shape of RebornOS's mint-artwork).
//!
//! The principle for work a root script does as another account: what runs there is what
//! matters. `dbus-send` is the system's own program; it runs nothing of the package and opens,
//! reads and writes none of the person's files. It hands one message to a service already
//! serving their session, and the service does its own fixed thing. So the message must be
//! fixed in the file and must carry nothing a service could run or open:
//!
//! - the program is `dbus-send` by its system name (not a path a package could ship), reached
//!   by `sudo` with only the options that pick the account and its home — no `env`, no
//!   `NAME=value`, no login shell (`-i`, `-s`), no `-E`; sudo resets the environment, while
//!   `runuser` and `su` pass root's on (`LD_PRELOAD`, `DBUS_SESSION_BUS_ADDRESS` naming a
//!   `unixexec:` transport), and `su` always runs the person's shell with `-c` text;
//! - the file leaves the lookup of `dbus-send` alone: `PATH` only read (without sudo's
//!   `secure_path` sudo searches the caller's PATH: `PATH=/usr/lib/pkg:$PATH` would run the
//!   package's own `dbus-send` as the person), no function named `sudo`, no `alias`, `hash`
//!   or `enable`, no `eval` or `source`, no command whose name is computed;
//! - every word is written in the file: the method, the object, the destination; no variable,
//!   no substitution's output, nothing downloaded, decoded or hidden;
//! - the bus is the person's session bus: no option, `--session`, or the address
//!   `unix:path=/run/user/UID/bus` with UID written out or the invoker's `$SUDO_UID` /
//!   `$PKEXEC_UID` that the file never assigns, written in the word or in a variable the file
//!   assigns once from those alone (a D-Bus address may list `unixexec:` transports, which
//!   start a program: a computed address, or one of several values, could run anything);
//! - its arguments are numbers and booleans only: no `string:`, `objpath:`, `variant:`, array
//!   or dict, so no program, path, unit, script or setting rides in the message (a literal
//!   `string:` to `org.gnome.Shell.Eval` or systemd's `StartUnit` would run code);
//! - the package shows no D-Bus service of its own (no `dbus-1` or `[D-BUS Service]` in its
//!   files or commands): a message to a name the package's own service file declares would
//!   start the package's program in the session. A service file copied from an upstream tree
//!   unseen (`cp -a usr/share/*`) is not visible to this check; the finding says to check the
//!   destination.
//!
//! - the message does not end, lock or take apart the person's session (attack 31 F9; class:
//!   *an allowlist by shape instead of by effect* — numbers ride in `Logout uint32:2`): no
//!   message to a service that runs the session itself (systemd's user manager, logind, a
//!   desktop's session manager, the secret store, the screen saver), and no method named for
//!   ending, locking or powering off (`Exit`, `Logout`, `LockService`, `PowerOff` …), whatever
//!   its arguments are.
//!
//! Anything else as another account — a shell, `-c` text, a program of the package, a message
//! with text or a computed part — stays high in [`super::elevation`].

use super::Ctx;
use crate::audit::names;
use crate::audit::shell::{Cmd, Pos, Taint, Word};

/// `dbus-send`'s options that choose the message's kind, destination and printing.
const PLAIN_OPTIONS: &[&str] = &[
    "--session",
    "--print-reply",
    "--print-reply=literal",
    "--type=method_call",
    "--type=signal",
];

/// Argument types that carry a number or a truth value, never text.
const PLAIN_TYPES: &[&str] = &[
    "boolean", "byte", "int16", "uint16", "int32", "uint32", "int64", "uint64", "double",
];

/// Variables the invoking `sudo`/`pkexec` sets to the invoker's numeric id.
const INVOKER_IDS: &[&str] = &["SUDO_UID", "PKEXEC_UID"];

/// Builtins that assign variables by a name given as a word.
const ASSIGNERS: &[&str] = &[
    "declare",
    "typeset",
    "local",
    "export",
    "readonly",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "let",
    "printf",
    "unset",
];

/// The method (`INTERFACE.MEMBER`) when `cmd` only sends one fixed message without text to the
/// session bus of the account it switches to (module doc).
pub(super) fn fixed_session_message(ctx: &Ctx, cmd: &Cmd) -> Option<String> {
    if !cmd.env.is_empty() || cmd.decoded.is_some() || cmd.embed.is_some() {
        return None;
    }
    let words = after_switch(&cmd.argv)?;
    if !lookup_untouched(ctx, cmd.file) {
        return None;
    }
    let (prog, args) = words.split_first()?;
    if !written(prog) || !matches!(prog.text.as_str(), "dbus-send" | "/usr/bin/dbus-send") {
        return None;
    }
    let mut rest = args.iter();
    let mut positional: Vec<&Word> = Vec::new();
    for a in rest.by_ref() {
        let t = a.text.as_str();
        if !t.starts_with('-') {
            positional.push(a);
            break;
        }
        let ok = if let Some(addr) = t
            .strip_prefix("--bus=")
            .or_else(|| t.strip_prefix("--address="))
        {
            a.subs.is_empty() && !foreign(a) && session_address(ctx, cmd.file, a, addr)
        } else {
            written(a)
                && (PLAIN_OPTIONS.contains(&t)
                    || t.strip_prefix("--dest=").is_some_and(bus_name)
                    || t.strip_prefix("--reply-timeout=")
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
        };
        if !ok {
            return None;
        }
    }
    positional.extend(rest);
    let (object, rest) = positional.split_first()?;
    let (method, values) = rest.split_first()?;
    let fixed = |w: &&Word| written(w);
    if !fixed(object) || !object.text.starts_with('/') || !fixed(method) {
        return None;
    }
    if !bus_name(&method.text) {
        return None;
    }
    let dest = args
        .iter()
        .find_map(|a| a.text.strip_prefix("--dest="))
        .unwrap_or("");
    if controls_the_session(dest, &object.text, &method.text) {
        return None;
    }
    let plain = values.iter().all(|v| {
        written(v)
            && v.text.split_once(':').is_some_and(|(ty, val)| {
                PLAIN_TYPES.contains(&ty)
                    && !val.is_empty()
                    && val
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
            })
    });
    (plain && !ships_bus_service(ctx)).then(|| method.text.clone())
}

/// Services that run the person's session itself, by bus name, object path or interface
/// (lower case): whatever they are told to do happens to the whole session.
const SESSION_SERVICES: &[&str] = &[
    "org.freedesktop.systemd1",
    "/org/freedesktop/systemd1",
    "org.freedesktop.login1",
    "/org/freedesktop/login1",
    "sessionmanager",
    "ksmserver",
    "org.kde.shutdown",
    "org.kde.logoutprompt",
    "org.freedesktop.secrets",
    "/org/freedesktop/secrets",
    "org.freedesktop.secret.",
    "screensaver",
    "org.freedesktop.powermanagement",
    "org.freedesktop.upower",
    "org.xfce.session",
    "org.lxqt.session",
    "org.mate.sessionmanager",
    "org.cinnamon.sessionmanager",
    "org.gnome.sessionmanager",
    "org.gnome.shell.extensions",
    "org.freedesktop.portal.inhibit",
];

/// Method names that end, lock, suspend or power off what receives them.
const ENDING_VERBS: &[&str] = &[
    "exit",
    "quit",
    "logout",
    "logoff",
    "signout",
    "shutdown",
    "poweroff",
    "halt",
    "reboot",
    "restartsystem",
    "suspend",
    "hibernate",
    "hybridsleep",
    "lock",
    "terminate",
    "kill",
    "abandon",
    "stop",
    "reexecute",
    "clearjobs",
    "unload",
    "disable",
];

/// The message goes to a service that runs the session, or asks its receiver to end, lock or
/// stop something: judged by what it does, not by its argument types (attack 31 F9).
fn controls_the_session(dest: &str, object: &str, method: &str) -> bool {
    let (dest, object, method) = (
        dest.to_ascii_lowercase(),
        object.to_ascii_lowercase(),
        method.to_ascii_lowercase(),
    );
    let member = method.rsplit('.').next().unwrap_or("");
    SESSION_SERVICES
        .iter()
        .any(|s| dest.contains(s) || object.contains(s) || method.contains(s))
        || ENDING_VERBS.iter().any(|v| member.contains(v))
}

/// The words after `sudo [-u USER] [-g GROUP] [-H] [-n] [--]`: the command run as the
/// account, when nothing but the account, its group and its home is chosen.
fn after_switch(argv: &[Word]) -> Option<&[Word]> {
    let (first, mut rest) = argv.split_first()?;
    if !written(first) {
        return None;
    }
    let prog = first.text.as_str();
    if !matches!(prog, "sudo" | "/usr/bin/sudo") {
        return None;
    }
    loop {
        let (w, tail) = rest.split_first()?;
        let t = w.text.as_str();
        if t == "--" {
            return Some(tail);
        }
        if !t.starts_with('-') {
            return Some(rest);
        }
        rest = match t {
            "-u" | "--user" => tail.get(1..)?,
            "-g" | "--group" => tail.get(1..)?,
            "-H" | "--set-home" | "-n" | "--non-interactive" => tail,
            _ if t.starts_with("--user=") => tail,
            _ => return None,
        };
    }
}

/// Written in the file as it stands: no variable, substitution, download, decoder or hiding.
fn written(w: &Word) -> bool {
    !w.dynamic && w.subs.is_empty() && !foreign(w)
}

fn foreign(w: &Word) -> bool {
    w.taint
        .has(Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED))
}

/// A D-Bus bus name or `INTERFACE.MEMBER`: dotted letters, digits, `_` and `-`.
fn bus_name(s: &str) -> bool {
    s.contains('.')
        && s.split('.').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
}

/// `unix:path=/run/user/UID/bus` (`addr`, as the walk resolved `word`), UID digits or an
/// invoker id the file leaves alone; and the word as written names only variables whose value
/// is that one: an invoker id, or a variable the file assigns once, from invoker ids alone
/// (`export DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/${SUDO_UID}/bus"`). A second
/// assignment (`A=unixexec:…; [ -e x ] && A=unix:path=…`, of which the walk shows the last) or
/// a value from elsewhere would make the resolved text one of several.
fn session_address(ctx: &Ctx, file: usize, word: &Word, addr: &str) -> bool {
    let Some(uid) = addr
        .strip_prefix("unix:path=/run/user/")
        .and_then(|r| r.strip_suffix("/bus"))
    else {
        return false;
    };
    let uid_ok = (!uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()))
        || INVOKER_IDS
            .iter()
            .any(|v| uid == format!("${{{v}}}") && assigned_at_most(ctx, file, v, 0));
    let Some(text) = file_text(ctx, file) else {
        return false;
    };
    let Some(raw) = raw_word(text, word.pos) else {
        return false;
    };
    uid_ok
        && (raw.starts_with("--bus=") || raw.starts_with("--address="))
        && variables(raw).is_some_and(|vars| {
            vars.iter().all(|v| {
                if INVOKER_IDS.contains(v) {
                    assigned_at_most(ctx, file, v, 0)
                } else {
                    assigned_at_most(ctx, file, v, 1)
                }
            })
        })
}

/// The text of one of the package's files (`analyze` numbers them after the PKGBUILD, in the
/// order given).
fn file_text<'a>(ctx: &Ctx<'a>, file: usize) -> Option<&'a str> {
    file.checked_sub(1)
        .and_then(|i| ctx.local_texts.get(i))
        .map(|(_, t)| t.as_str())
}

/// The word as written at `pos` (line and column counted from 1, the column in characters).
fn raw_word(text: &str, pos: Pos) -> Option<&str> {
    let line = text.lines().nth((pos.line as usize).checked_sub(1)?)?;
    let (i, _) = line
        .char_indices()
        .nth((pos.col as usize).checked_sub(1)?)?;
    statement_words(&line[i..]).first().copied()
}

/// The variables a word as written expands, when each is a plain `$NAME` or `${NAME}` (no
/// substitution, default, positional or special parameter).
fn variables(raw: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut rest = raw;
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let (name, tail) = match after.strip_prefix('{') {
            Some(inner) => {
                let end = inner.find('}')?;
                (&inner[..end], &inner[end + 1..])
            }
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], &after[end..])
            }
        };
        if name.is_empty()
            || name.starts_with(|c: char| c.is_ascii_digit())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return None;
        }
        out.push(name);
        rest = tail;
    }
    Some(out)
}

/// The file assigns `var` at most `n` times (0 or 1) in any way bash allows: at most `n`
/// assignments the walk recorded, each from invoker ids alone; the name in its text at most
/// `n` times other than as a plain read (`$VAR`, `${VAR}`); no assigning command whose name is
/// `var` once resolved or is computed. (Declarations of computed names, namerefs, `${!n}`,
/// `eval`, `source` and computed command names: [`lookup_untouched`], already met.)
fn assigned_at_most(ctx: &Ctx, file: usize, var: &str, n: usize) -> bool {
    // One place in the file, however often the walk passed it (a function called twice).
    let mut assigns: Vec<_> = ctx
        .an
        .assigns
        .iter()
        .filter(|a| a.file == file && a.name == var)
        .collect();
    assigns.sort_by_key(|a| (a.pos.line, a.pos.col));
    assigns.dedup_by_key(|a| (a.pos.line, a.pos.col));
    if assigns.len() > n || !assigns.iter().all(|a| from_invoker_ids(&a.snippet)) {
        return false;
    }
    let Some(text) = file_text(ctx, file) else {
        return false;
    };
    if writes_of(text, var) > n {
        return false;
    }
    ctx.an.cmds.iter().filter(|c| c.file == file).all(|c| {
        let (prog, args) = names::program(c);
        if !ASSIGNERS.contains(&prog) {
            return true;
        }
        if prog == "printf" {
            // Only `printf -v NAME` assigns: its NAME written out.
            return match args.iter().position(|a| a.text.starts_with("-v")) {
                None => true,
                Some(i) => {
                    args[i].text == "-v"
                        && args.get(i + 1).is_some_and(|w| written(w) && w.text != var)
                }
            };
        }
        // Every name written out (an option, a fixed word, or `NAME=value` with NAME literal),
        // and none of them `var` as the walk resolves it (`n=SUDO; declare "${n}_UID=…"`).
        args.iter().all(|a| {
            let t = a.text.as_str();
            t.split_once('=').map_or(t, |(l, _)| l) != var
        }) && args.iter().all(|a| {
            let t = a.text.as_str();
            let lhs = t.split_once('=').map(|(l, _)| l);
            t.starts_with('-')
                || written(a)
                || (a.subs.is_empty()
                    && !foreign(a)
                    && lhs.is_some_and(|l| {
                        !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    }))
        })
    })
}

/// The file changes nothing of how a command name is found: `PATH` only read (and never
/// assigned), no function named `sudo`, no `alias`, `hash`, `enable`, `eval`, `source` or `.`,
/// every command's name written in it (a computed name may be any of these), every
/// declaration's names written ([`declared_names_written`]) and no indirect expansion
/// (`${!n}`, which may assign).
fn lookup_untouched(ctx: &Ctx, file: usize) -> bool {
    let Some(text) = file_text(ctx, file) else {
        return false;
    };
    !ctx.an
        .assigns
        .iter()
        .any(|a| a.file == file && a.name == "PATH")
        && only_read(text, "PATH")
        && declared_names_written(text)
        && !text.contains("${!")
        // A function of the file named sudo runs instead of sudo.
        && !ctx.an.defined.iter().any(|(f, n)| *f == file && n == "sudo")
        && ctx.an.cmds.iter().filter(|c| c.file == file).all(|c| {
            let named = c.argv.first().is_some_and(written)
                && c.argv.get(names::effective(&c.argv)).is_some_and(written);
            let prog = names::program(c).0;
            named
                && !matches!(
                    prog,
                    "eval" | "source" | "." | "alias" | "hash" | "enable" | "PATH"
                )
                && c.env.iter().all(|(n, _)| n != "PATH")
        })
}

/// Every `declare`, `typeset`, `local`, `export` or `readonly` in `text` names its variables
/// as written (`NAME`, `NAME=…`, `NAME+=…`, `NAME[…]=…`), with no nameref (`-n`): the walk
/// reads these as assignments only where the name is a plain word, and skips a quoted or
/// computed one (`declare "${n}_UID=x"`) without a trace.
fn declared_names_written(text: &str) -> bool {
    const KEYWORDS: &[&str] = &["declare", "typeset", "local", "export", "readonly"];
    let b = text.as_bytes();
    // Where a command word starts and ends (`/usr/local/bin` holds no `local` command).
    let opens = |c: u8| c.is_ascii_whitespace() || matches!(c, b';' | b'&' | b'|' | b'(' | b'{');
    for kw in KEYWORDS {
        for (i, _) in text.match_indices(kw) {
            let end = i + kw.len();
            if (i > 0 && !opens(b[i - 1]))
                || b.get(end)
                    .is_some_and(|&c| !c.is_ascii_whitespace() && c != b';')
            {
                continue;
            }
            for token in statement_words(&text[end..]) {
                if let Some(opts) = token.strip_prefix('-').or_else(|| token.strip_prefix('+')) {
                    if *kw != "export" && opts.contains('n') {
                        return false;
                    }
                    continue;
                }
                let name_len = token
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(token.len());
                let after = &token[name_len..];
                if name_len == 0
                    || !(after.is_empty()
                        || after.starts_with('=')
                        || after.starts_with("+=")
                        || after.starts_with('['))
                {
                    return false;
                }
            }
        }
    }
    true
}

/// The words of one statement from the start of `text`, split at unquoted blanks, up to an
/// unquoted `;`, `&`, `|`, `)`, newline or comment.
fn statement_words(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut words = Vec::new();
    let mut start = None;
    let mut quote = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None => match c {
                b'\'' | b'"' => {
                    quote = Some(c);
                    start.get_or_insert(i);
                }
                b'\\' => {
                    start.get_or_insert(i);
                    i += 1;
                }
                b' ' | b'\t' => {
                    if let Some(s) = start.take() {
                        words.push(&text[s..i]);
                    }
                }
                b';' | b'&' | b'|' | b')' | b'\n' => break,
                b'#' if start.is_none() => break,
                _ => {
                    start.get_or_insert(i);
                }
            },
        }
        i += 1;
    }
    if let Some(s) = start {
        words.push(&text[s..i.min(b.len())]);
    }
    words
}

/// Every mention of `var` in `text` is `$var` (not followed by a name character) or `${var}`.
fn only_read(text: &str, var: &str) -> bool {
    writes_of(text, var) == 0
}

/// How many mentions of `var` in `text` are not a plain read (`$var` not followed by a name
/// character, `${var}`): an assignment, a loop variable, `read var`, `${var:=…}`, a comment.
fn writes_of(text: &str, var: &str) -> usize {
    let b = text.as_bytes();
    let name_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(var)
        .filter(|(i, _)| {
            let (i, end) = (*i, *i + var.len());
            let after = b.get(end).copied();
            if after.is_some_and(name_char) || (i > 0 && name_char(b[i - 1])) {
                return false; // part of a longer name (MY_SUDO_UID, SUDO_UIDS)
            }
            !((i >= 1 && b[i - 1] == b'$')
                || (i >= 2 && &b[i - 2..i] == b"${" && after == Some(b'}')))
        })
        .count()
}

/// An assignment's text whose every expansion is an invoker id (`$SUDO_UID`, `${PKEXEC_UID}`).
fn from_invoker_ids(snippet: &str) -> bool {
    let value = snippet.split_once('=').map_or("", |(_, v)| v);
    !value.contains('`')
        && variables(value).is_some_and(|vars| vars.iter().all(|v| INVOKER_IDS.contains(v)))
}

/// The package shows a D-Bus service of its own: `dbus-1` named in any of its files or
/// commands, or a service file's `[D-BUS Service]` section among its files.
fn ships_bus_service(ctx: &Ctx) -> bool {
    ctx.local_texts
        .iter()
        .any(|(_, t)| t.contains("dbus-1") || t.contains("[D-BUS Service]"))
        || ctx
            .an
            .cmds
            .iter()
            .any(|c| c.argv.iter().any(|w| w.text.contains("dbus-1")))
}

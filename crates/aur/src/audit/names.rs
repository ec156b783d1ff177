//! What a command is: wrappers (sudo, env, nohup …) are looked through, and program names are
//! sorted into shells, interpreters, downloaders, decoders and package managers.

use super::shell::{Cmd, Word};

/// The last path component: `/usr/bin/curl` → `curl`.
pub(crate) fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "rbash",
];

/// Programs that run whatever they are told — shells and interpreters, the wrappers that start
/// another program, editors and pagers with a shell escape, and the tools that write any file:
/// set-id on one, or a grant that lets an account run one as root, is root for anything. One
/// list for every rule that asks (`files/grants.rs`, `files/tool_configs/tmpfiles.rs`).
pub(crate) const RUNS_ANYTHING: &[&str] = &[
    "sh",
    "bash",
    "dash",
    "zsh",
    "fish",
    "ksh",
    "csh",
    "tcsh",
    "busybox",
    "env",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "lua",
    "php",
    "su",
    "sudo",
    "doas",
    "pkexec",
    "xargs",
    "find",
    "awk",
    "gawk",
    "vi",
    "vim",
    "nvim",
    "nano",
    "less",
    "more",
    "tar",
    "cp",
    "mv",
    "dd",
    "tee",
    "install",
    "chmod",
    "chown",
    "rsync",
    "systemctl",
    "nsenter",
    "chroot",
    "script",
    "expect",
    "tclsh",
    "wish",
    "socat",
    "nc",
    "ncat",
    "gdb",
    "strace",
    "ld.so",
];

pub(crate) const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "bun",
    "deno",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "pwsh",
    "osascript",
    "Rscript",
    "awk",
    "gawk",
];

/// Programs whose output is bytes from the network.
pub(crate) const DOWNLOADERS: &[&str] = &[
    "curl",
    "wget",
    "wget2",
    "aria2c",
    "axel",
    "fetch",
    "lwp-download",
    "lwp-request",
    "GET",
    "http",
    "https",
    "xh",
    "curlie",
    "lynx",
    "links",
    "w3m",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "tftp",
];

/// Wrappers that run the command that follows them.
const WRAPPERS: &[&str] = &[
    "sudo",
    "doas",
    "pkexec",
    "run0",
    "env",
    "nohup",
    "exec",
    "builtin",
    "command",
    "time",
    "unbuffer",
    "setsid",
    "fakeroot",
    "stdbuf",
    "nice",
    "ionice",
    "chrt",
    "taskset",
    "xargs",
    "timeout",
    "systemd-run",
    "busybox",
    "daemonize",
    "torsocks",
    "proxychains",
    "proxychains4",
    "eatmydata",
    "catchsegv",
    "strace",
    "firejail",
    "unshare",
    "flock",
    "script",
];

/// Options of wrappers that take a separate value.
fn takes_value(wrapper: &str, opt: &str) -> bool {
    match wrapper {
        "sudo" | "doas" => matches!(
            opt,
            "-u" | "-g" | "-C" | "-D" | "-p" | "-r" | "-t" | "-U" | "-h"
        ),
        "env" => matches!(opt, "-u" | "-C" | "-S" | "--unset" | "--chdir"),
        "nice" => matches!(opt, "-n"),
        "ionice" => matches!(opt, "-c" | "-n" | "-p"),
        "timeout" => matches!(opt, "-s" | "-k" | "--signal" | "--kill-after"),
        "xargs" => matches!(opt, "-I" | "-n" | "-P" | "-d" | "-a" | "-L" | "-s" | "-E"),
        "systemd-run" => matches!(
            opt,
            "-p" | "-u"
                | "-E"
                | "--unit"
                | "--property"
                | "--setenv"
                | "--on-calendar"
                | "--on-active"
        ),
        "flock" => matches!(opt, "-w" | "-E"),
        "script" => matches!(opt, "-c"),
        "chrt" | "taskset" => true,
        "stdbuf" => matches!(opt, "-i" | "-o" | "-e"),
        _ => false,
    }
}

/// Index of the program that actually runs, looking through wrappers.
pub(crate) fn effective(argv: &[Word]) -> usize {
    let mut i = 0;
    while i < argv.len() {
        let w = basename(&argv[i].text);
        if !WRAPPERS.contains(&w) {
            return i;
        }
        if w == "command"
            && argv
                .get(i + 1)
                .is_some_and(|a| a.text == "-v" || a.text == "-V")
        {
            return i;
        }
        let mut j = i + 1;
        while j < argv.len() {
            let a = argv[j].text.as_str();
            if a == "--" {
                j += 1;
                break;
            }
            if w == "env" && !a.starts_with('-') && a.contains('=') {
                j += 1;
                continue;
            }
            if a.starts_with('-') && a.len() > 1 {
                j += if takes_value(w, a) { 2 } else { 1 };
                continue;
            }
            break;
        }
        if w == "timeout" || w == "flock" || w == "chrt" || w == "taskset" {
            j += 1; // the duration / lock file / priority / mask
        }
        if j >= argv.len() {
            return i;
        }
        i = j;
    }
    argv.len().saturating_sub(1)
}

/// The program name (basename) that runs and its arguments.
pub(crate) fn program(cmd: &Cmd) -> (&str, &[Word]) {
    if cmd.argv.is_empty() {
        return ("", &[]);
    }
    let i = effective(&cmd.argv);
    (basename(&cmd.argv[i].text), &cmd.argv[i + 1..])
}

/// The wrappers before the program (`sudo`, `nohup` …).
pub(crate) fn wrappers(cmd: &Cmd) -> Vec<&str> {
    if cmd.argv.is_empty() {
        return Vec::new();
    }
    let i = effective(&cmd.argv);
    cmd.argv[..i]
        .iter()
        .map(|w| basename(&w.text))
        .filter(|w| WRAPPERS.contains(w))
        .collect()
}

pub(crate) fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

pub(crate) fn is_interpreter(name: &str) -> bool {
    SHELLS.contains(&name)
        || INTERPRETERS.contains(&name)
        || name.starts_with("python3.")
        || name.starts_with("perl5")
}

/// The inline program of `python -c CODE`, `perl -e CODE`, `node -e CODE` …
pub(crate) fn inline_code<'a>(name: &str, args: &'a [Word]) -> Option<&'a Word> {
    if !is_interpreter(name) || is_shell(name) {
        return None;
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let t = a.text.as_str();
        if matches!(t, "-c" | "-e" | "-E" | "--eval" | "-r" | "-p" | "--print")
            || (t.starts_with('-')
                && !t.starts_with("--")
                && (t.ends_with('c') || t.ends_with('e'))
                && t.len() <= 4)
        {
            return it.next();
        }
        if !t.starts_with('-') {
            return None;
        }
    }
    None
}

/// The script text of `sh -c SCRIPT` (also `-ec`, `-lc` …).
pub(crate) fn shell_c_arg(name: &str, args: &[Word]) -> Option<usize> {
    if !is_shell(name) {
        return None;
    }
    for (i, a) in args.iter().enumerate() {
        let t = a.text.as_str();
        if t.starts_with('-') && !t.starts_with("--") && t.contains('c') {
            return if i + 1 < args.len() {
                Some(i + 1)
            } else {
                None
            };
        }
        if !t.starts_with('-') && !t.starts_with('+') {
            return None;
        }
    }
    None
}

/// Paths that name a process's standard input: a script read from one is read from the pipe
/// (`curl … | sh /dev/stdin`, attack 32 F3).
pub(crate) const STDIN_PATHS: &[&str] = &["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// A path of an open descriptor (`/dev/fd/N`, `/proc/self/fd/N`, `/dev/stdin`): a program read
/// from one is whatever was opened there (`exec 3< <(curl …); source /dev/fd/3`).
pub(crate) fn is_descriptor_path(p: &str) -> bool {
    STDIN_PATHS.contains(&p)
        || ["/dev/fd/", "/proc/self/fd/", "/proc/$$/fd/"]
            .iter()
            .any(|d| p.starts_with(d))
}

/// A shell or interpreter that reads its program from standard input.
pub(crate) fn reads_script_from_stdin(cmd: &Cmd) -> bool {
    let (name, args) = program(cmd);
    if !is_interpreter(name) || matches!(name, "awk" | "gawk") {
        return false;
    }
    for a in args {
        let t = a.text.as_str();
        if t == "-" || t == "-s" || t == "--" || STDIN_PATHS.contains(&t) {
            return true;
        }
        if t.starts_with('-') {
            if shell_c_arg(name, std::slice::from_ref(a)).is_some()
                || matches!(t, "-c" | "-e" | "-m")
            {
                return false;
            }
            continue;
        }
        return false;
    }
    true
}

/// Inline interpreter code that reaches the network.
fn code_uses_network(code: &str) -> bool {
    const MARKS: &[&str] = &[
        "urllib",
        "urlopen",
        "requests.get",
        "requests.post",
        "http.client",
        "socket.",
        "import socket",
        "LWP::",
        "IO::Socket",
        "HTTP::Tiny",
        "open-uri",
        "Net::HTTP",
        "fetch(",
        "http.get",
        "https.get",
        "XMLHttpRequest",
        "/dev/tcp/",
        "URI.open",
    ];
    MARKS.iter().any(|m| code.contains(m))
}

fn code_decodes(code: &str) -> bool {
    const MARKS: &[&str] = &[
        "b64decode",
        "base64",
        "decode('hex')",
        "bytes.fromhex",
        "codecs.decode",
        "unhexlify",
        "decode_base64",
        "pack(",
        "Buffer.from",
        "atob(",
        "zlib.decompress",
        "marshal.loads",
        "rot13",
        "rot_13",
    ];
    MARKS.iter().any(|m| code.contains(m))
}

/// A command whose output is bytes from the network.
pub(crate) fn is_downloader(cmd: &Cmd) -> bool {
    let (name, args) = program(cmd);
    if DOWNLOADERS.contains(&name) {
        return true;
    }
    if name == "openssl" && args.first().is_some_and(|a| a.text == "s_client") {
        return true;
    }
    if let Some(code) = inline_code(name, args) {
        return code_uses_network(&code.text);
    }
    cmd.redirs
        .iter()
        .any(|r| r.op.starts_with('<') && r.target.text.starts_with("/dev/tcp/"))
}

/// A command that decodes or unpacks its input (base64, hex, rot13, compression …).
pub(crate) fn is_decoder(cmd: &Cmd) -> bool {
    let (name, args) = program(cmd);
    let has = |opts: &[&str]| args.iter().any(|a| opts.contains(&a.text.as_str()));
    let has_flag = |c: char| {
        args.iter()
            .any(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains(c))
    };
    match name {
        "base64" | "base32" | "basenc" => has(&["--decode"]) || has_flag('d') || has_flag('D'),
        "xxd" => has_flag('r') || has(&["--revert"]),
        "openssl" => (has(&["base64", "enc", "-base64", "-a"])) && has_flag('d'),
        "uudecode" | "rev" | "gunzip" | "zcat" | "unxz" | "xzcat" | "bunzip2" | "bzcat"
        | "unzstd" | "zstdcat" | "unlzma" | "lzcat" | "uncompress" => true,
        "gzip" | "xz" | "bzip2" | "zstd" | "lzma" => has_flag('d') || has(&["--decompress"]),
        "tr" => {
            let sets: Vec<&str> = args
                .iter()
                .map(|a| a.text.as_str())
                .filter(|t| !t.starts_with('-'))
                .collect();
            sets.len() == 2
                && sets[0] != sets[1]
                && sets.iter().all(|s| {
                    s.contains("a-z") || s.contains("A-Z") || s.contains("n-z") || s.contains("N-Z")
                })
        }
        _ => inline_code(name, args).is_some_and(|c| code_decodes(&c.text)),
    }
}

/// `cat <<EOF … EOF` shown to the person: text given on standard input to `cat` with no file
/// of its own, sent to the terminal (no redirection into a file, not piped on, not captured by
/// `$(…)`). An address in it is read by a person, not fetched — as in an `echo`.
pub(crate) fn only_prints(cmd: &Cmd) -> bool {
    let (name, args) = program(cmd);
    let to_terminal = cmd
        .redirs
        .iter()
        .filter(|r| r.op.starts_with('>') || r.op.starts_with("&>"))
        .all(|r| {
            matches!(
                r.target.text.as_str(),
                "/dev/stdout" | "/dev/stderr" | "/dev/tty"
            ) || (r.op == ">&" && r.target.text.chars().all(|c| c.is_ascii_digit()))
        });
    // The line as written, too: a pipe after the here-document's start (`cat <<EOF | sh`)
    // is not always seen as a pipeline.
    let line = cmd.snippet.lines().next().unwrap_or("");
    name == "cat"
        && cmd.stdin.is_some()
        && !line.contains(['|', '>', '`', ';', '&'])
        && !line.contains("$(")
        && args
            .iter()
            .all(|a| a.text.starts_with('-') && a.text != "-")
        && to_terminal
        && cmd.in_subst.is_none()
        && cmd
            .pipe
            .is_none_or(|(_, stage, stages)| stage + 1 == stages)
}

/// Echo-like commands whose arguments are messages, not actions.
pub(crate) fn is_message(name: &str) -> bool {
    matches!(
        name,
        "echo"
            | "printf"
            | "msg"
            | "msg2"
            | "warning"
            | "error"
            | "plain"
            | "stat_busy"
            | "stat_done"
            | "note"
            | "notice"
            | "_msg"
            | "info"
            | "log"
            | "say"
            | ":"
            | "true"
            | "false"
            | "test"
            | "["
            | "[["
            | "logger"
            | "print"
            | "read"
    ) || name.starts_with("_msg")
        || name.starts_with("_echo")
        || name.starts_with("msg_")
}

/// Package managers of languages: (program, the subcommands that fetch and install code).
pub(crate) const PKG_MANAGERS: &[(&str, &[&str])] = &[
    (
        "npm",
        &[
            "install", "i", "add", "ci", "exec", "x", "update", "isntall", "in", "ins", "inst",
            "insta", "instal", "link", "rebuild",
        ],
    ),
    ("npx", &[]),
    ("pnpm", &["install", "i", "add", "dlx", "exec", "update"]),
    ("pnpx", &[]),
    (
        "yarn",
        &["add", "install", "global", "dlx", "exec", "up", "upgrade"],
    ),
    (
        "bun",
        &["install", "i", "add", "a", "x", "update", "link", "pm"],
    ),
    ("bunx", &[]),
    ("pip", &["install", "download"]),
    ("pip3", &["install", "download"]),
    ("pipx", &["install", "run", "inject"]),
    ("uv", &["pip", "tool", "add", "run"]),
    ("uvx", &[]),
    ("cargo", &["install"]),
    ("go", &["install", "get", "run"]),
    ("gem", &["install"]),
    ("composer", &["require", "global", "create-project"]),
    ("cpan", &[]),
    ("cpanm", &[]),
    ("luarocks", &["install"]),
    ("deno", &["install", "run", "add"]),
    ("corepack", &["enable", "install", "prepare"]),
];

/// The language family of a package manager, used to check makedepends.
pub(crate) fn family(pm: &str) -> &'static str {
    match pm {
        "npm" | "npx" | "pnpm" | "pnpx" | "yarn" | "bun" | "bunx" | "corepack" | "deno" => "node",
        "pip" | "pip3" | "pipx" | "uv" | "uvx" => "python",
        "cargo" => "rust",
        "go" => "go",
        "gem" => "ruby",
        "composer" => "php",
        "cpan" | "cpanm" => "perl",
        "luarocks" => "lua",
        _ => "other",
    }
}

/// Arch packages that provide a language's tooling, by family.
pub(crate) fn family_of_package(dep: &str) -> Option<&'static str> {
    let d = dep.split(['>', '<', '=', ':']).next().unwrap_or(dep).trim();
    Some(match d {
        "nodejs"
        | "nodejs-lts-iron"
        | "nodejs-lts-jod"
        | "nodejs-lts-hydrogen"
        | "npm"
        | "yarn"
        | "pnpm"
        | "bun"
        | "bun-bin"
        | "deno"
        | "electron"
        | "corepack"
        | "node-gyp" => "node",
        d if d.starts_with("electron") || d.starts_with("nodejs") => "node",
        "python" | "python-pip" | "python-pipx" | "python-build" | "python-installer"
        | "python-setuptools" | "python-wheel" | "uv" | "python-poetry" | "python-hatchling" => {
            "python"
        }
        d if d.starts_with("python-") => "python",
        "rust" | "cargo" | "rustup" => "rust",
        "go" | "go-tools" => "go",
        "ruby" | "rubygems" | "ruby-bundler" => "ruby",
        "php" | "composer" => "php",
        "perl" => "perl",
        "lua" | "luarocks" => "lua",
        _ => return None,
    })
}

/// Packages that are themselves package managers (suspicious as runtime dependencies).
pub(crate) fn is_pkg_manager_package(dep: &str) -> bool {
    let d = dep.split(['>', '<', '=', ':']).next().unwrap_or(dep).trim();
    matches!(
        d,
        "npm"
            | "yarn"
            | "pnpm"
            | "bun"
            | "bun-bin"
            | "python-pip"
            | "python-pipx"
            | "pipx"
            | "uv"
            | "composer"
            | "rubygems"
            | "luarocks"
            | "cpanminus"
            | "deno"
    )
}

/// The git subcommand, skipping `-C DIR`, `-c KEY=VAL` and other global options.
pub(crate) fn git_subcommand(args: &[Word]) -> Option<&str> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let t = a.text.as_str();
        if matches!(t, "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace") {
            it.next();
            continue;
        }
        if t.starts_with('-') {
            continue;
        }
        return Some(t);
    }
    None
}

/// Does this command run a language package manager that fetches code? Returns its name.
pub(crate) fn pkg_manager(cmd: &Cmd) -> Option<&'static str> {
    let (name, args) = program(cmd);
    let (pm, subs) =
        if matches!(name, "python" | "python3" | "python2") || name.starts_with("python3.") {
            // python -m pip install …
            let m = args.iter().position(|a| a.text == "-m")?;
            let module = args.get(m + 1)?.text.as_str();
            let (pm, subs) = PKG_MANAGERS.iter().find(|(p, _)| *p == module)?;
            let rest = &args[m + 2..];
            return rest
                .iter()
                .find(|a| !a.text.starts_with('-'))
                .filter(|a| subs.contains(&a.text.as_str()))
                .map(|_| *pm);
        } else {
            PKG_MANAGERS.iter().find(|(p, _)| *p == name)?
        };
    if subs.is_empty() {
        return Some(pm);
    }
    let first = args.iter().find(|a| !a.text.starts_with('-'))?;
    subs.contains(&first.text.as_str()).then_some(*pm)
}

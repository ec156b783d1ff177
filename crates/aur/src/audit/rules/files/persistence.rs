//! Persistence locations: where a written file comes back after every boot or login.

use crate::audit::names::{self, basename};
use crate::audit::report::Severity;
use crate::audit::shell::{Cmd, Taint, Word};

pub(super) const SYSTEM_COMMANDS: &[&str] = &[
    "ls",
    "cd",
    "cp",
    "mv",
    "rm",
    "cat",
    "sudo",
    "su",
    "ssh",
    "scp",
    "git",
    "gpg",
    "pacman",
    "yay",
    "paru",
    "makepkg",
    "curl",
    "wget",
    "bash",
    "sh",
    "zsh",
    "fish",
    "python",
    "python3",
    "node",
    "npm",
    "passwd",
    "doas",
    "pkexec",
    "systemctl",
    "ps",
    "top",
    "grep",
    "find",
    "vim",
    "nvim",
    "code",
    "firefox",
    "chromium",
    "kitty",
    "alacritty",
    "hyprctl",
    "swaymsg",
    "omarchy",
    // Programs that ask for a password or passphrase (attack 31 F3): one of the package's
    // named so, first on the PATH, receives the secret.
    "sudoedit",
    "visudo",
    "run0",
    "login",
    "chsh",
    "chfn",
    "newgrp",
    "sg",
    "ssh-add",
    "ssh-keygen",
    "ssh-agent",
    "ssh-copy-id",
    "sftp",
    "gpg2",
    "gpg-agent",
    "pinentry",
    "pinentry-curses",
    "pinentry-tty",
    "pinentry-gnome3",
    "pinentry-qt",
    "kinit",
    "cryptsetup",
    "systemd-ask-password",
    "mount",
    "umount",
    "env",
    "id",
    "which",
    "rsync",
    "gio",
];

/// Persistence locations: (what, severity) — also checked inside `$pkgdir` where relevant.
pub(super) fn persistence(p: &str) -> Option<(&'static str, Severity)> {
    let (in_pkg, rest) = match p.strip_prefix("$pkgdir") {
        Some(r) => (true, r),
        None => (false, p),
    };
    let l = rest.to_ascii_lowercase();
    let home = l.starts_with("$home")
        || l.starts_with("/home/")
        || l.starts_with("/root")
        || l.starts_with("${home");
    if l.contains("/etc/ld.so.preload") {
        return Some((
            "/etc/ld.so.preload, which injects a library into every program",
            Severity::Critical,
        ));
    }
    if l.contains("/systemd/")
        && (l.contains(".wants/") || l.contains(".requires/") || l.ends_with(".wants"))
    {
        return Some((
            "a systemd .wants link, which enables a unit without asking",
            Severity::High,
        ));
    }
    // `/usr/local/sbin` and `/usr/local/bin` come before `/usr/bin` on every login's PATH (Arch's
    // /etc/profile appends them in that order), and no package of Arch's installs there: a
    // package's program named like a system command there runs in its place — a `sudo` that
    // keeps the password (attack 30 F3; class: *the same effect judged in one place and not its
    // twin* — the `~/.local/bin` rule below). In the package or written on the system alike.
    if let Some(prog) = ["/usr/local/bin/", "/usr/local/sbin/"]
        .iter()
        .find_map(|d| l.strip_prefix(d))
        .filter(|prog| !prog.is_empty() && !prog.contains('/'))
    {
        if SYSTEM_COMMANDS.contains(&prog) {
            return Some((
                "/usr/local/bin or /usr/local/sbin with the name of a system command, which comes before /usr/bin on every login's PATH and runs in its place",
                Severity::Critical,
            ));
        }
        // Another name: worth a look in the package; written on the live system it is judged
        // below as any write outside the package.
        if in_pkg {
            return Some((
                "/usr/local/bin or /usr/local/sbin, where Arch's packages never install (it is the administrator's), first on the PATH",
                Severity::Medium,
            ));
        }
    }
    // A whole tree copied in as `/usr/local/bin` (`cp -r bin "$pkgdir/usr/local/"`,
    // `cp -r /usr/lib/x/bin /usr/local/` from a scriptlet): the names it brings are not in the
    // text, and any of them may be a system command's (attack 31 F3 p08, p16).
    if matches!(
        l.trim_end_matches('/'),
        "/usr/local/bin" | "/usr/local/sbin" | "/usr/local"
    ) {
        return Some(if in_pkg {
            (
                "/usr/local/bin or /usr/local/sbin, first on the PATH, as a whole directory whose program names the audit cannot see",
                Severity::Medium,
            )
        } else {
            (
                "/usr/local/bin or /usr/local/sbin on the live system, first on the PATH, as a whole directory whose program names the audit cannot see (a system command's name among them runs in its place)",
                Severity::High,
            )
        });
    }
    if in_pkg {
        if l.starts_with("/home/") || l.starts_with("/root") {
            return Some((
                "a user's home directory inside the package",
                Severity::Medium,
            ));
        }
        if l.starts_with("/etc/sudoers.d") {
            // In pacman's file list, owned and removed with the package: worth reading.
            return Some(("sudo rules", Severity::Medium));
        }
        if l.starts_with("/etc/cron") || l.starts_with("/var/spool/cron") {
            return Some(("a cron job", Severity::Medium));
        }
        return None;
    }
    let rules: &[(&str, &str, Severity)] = &[
        // pam_env's own file and systemd's environment generators' directories: the twins of
        // `/etc/environment` (attack 31 F8), read into every login or user session.
        (
            "/etc/security/pam_env.conf",
            "pam_env's environment of every login",
            Severity::High,
        ),
        (
            "/environment.d/",
            "the environment of every user session (environment.d)",
            Severity::High,
        ),
        (
            ".pam_environment",
            "pam_env's environment of a login",
            Severity::High,
        ),
        (
            "/etc/fish/",
            "a system-wide shell startup file",
            Severity::High,
        ),
        (
            "/fish/vendor_conf.d/",
            "a system-wide shell startup file",
            Severity::High,
        ),
        ("/etc/systemd/", "a systemd unit directory", Severity::High),
        (
            "/usr/lib/systemd/",
            "a systemd unit directory",
            Severity::High,
        ),
        ("/lib/systemd/", "a systemd unit directory", Severity::High),
        (
            ".config/systemd/user",
            "a user systemd unit",
            Severity::High,
        ),
        ("/etc/cron", "a cron job", Severity::High),
        ("/var/spool/cron", "a cron job", Severity::High),
        ("/etc/anacrontab", "a cron job", Severity::High),
        (".config/autostart", "desktop autostart", Severity::High),
        ("/etc/xdg/autostart", "desktop autostart", Severity::High),
        (".bashrc", "a shell startup file", Severity::High),
        (".bash_profile", "a shell startup file", Severity::High),
        (".bash_login", "a shell startup file", Severity::High),
        (".profile", "a shell startup file", Severity::High),
        (".zshrc", "a shell startup file", Severity::High),
        (".zprofile", "a shell startup file", Severity::High),
        (".zshenv", "a shell startup file", Severity::High),
        (".zlogin", "a shell startup file", Severity::High),
        ("config.fish", "a shell startup file", Severity::High),
        (".xinitrc", "an X session startup file", Severity::High),
        (".xprofile", "an X session startup file", Severity::High),
        (
            "/etc/profile",
            "a system-wide shell startup file",
            Severity::High,
        ),
        (
            "/etc/bash.bashrc",
            "a system-wide shell startup file",
            Severity::High,
        ),
        (
            "/etc/zsh/",
            "a system-wide shell startup file",
            Severity::High,
        ),
        ("/etc/environment", "the system environment", Severity::High),
        (
            ".config/hypr/",
            "the Hyprland config (exec-once runs at login)",
            Severity::High,
        ),
        (
            ".config/sway/",
            "the Sway config (exec runs at login)",
            Severity::High,
        ),
        (".config/i3/", "the i3 config", Severity::High),
        ("/etc/pam.d/", "PAM authentication", Severity::High),
        ("/etc/sudoers", "sudo rules", Severity::Critical),
        ("/etc/udev/rules.d", "udev rules", Severity::High),
        ("/etc/pacman.d/hooks", "an ALPM hook", Severity::High),
        ("/usr/share/libalpm/hooks", "an ALPM hook", Severity::High),
        ("/etc/pacman.conf", "pacman's configuration", Severity::High),
    ];
    // The template new accounts are made from: `useradd -m` copies it into accounts created
    // later, so its start-up files run in no existing session.
    let skel = l.starts_with("/etc/skel/");
    // A start-up file's name in a system directory (`/etc/xdg/.bashrc`, `/usr/share/x/.profile`)
    // is read by no shell: only homes (and the template for them) hold them.
    let system_dir = !skel && (l.starts_with("/etc/") || l.starts_with("/usr/"));
    // Dot-file names (`.profile`) match a whole file name, not part of one (`x.profiles`).
    let hit = |m: &str| {
        if m.starts_with('.') && !m.contains('/') {
            !system_dir && basename(&l) == m
        } else {
            l.contains(m)
        }
    };
    if let Some((_, what, sev)) = rules.iter().find(|(m, _, _)| hit(m)) {
        if skel {
            return Some((
                "the template new accounts are made from (/etc/skel): it runs in accounts created later, not in any existing one; check the text is the package's own and harmless",
                (*sev).min(Severity::Medium),
            ));
        }
        return Some((what, *sev));
    }
    if home && l.contains("/.local/bin/") {
        let prog = basename(&l);
        return Some(if SYSTEM_COMMANDS.contains(&prog) {
            (
                "~/.local/bin with the name of a system command, which shadows it",
                Severity::High,
            )
        } else {
            ("~/.local/bin", Severity::Medium)
        });
    }
    None
}

/// Directories of programs that only root can write and only packages fill: a PATH of these
/// alone lets no one's file run in place of a system command.
pub(super) const SYSTEM_BIN_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/usr/bin/site_perl",
    "/usr/bin/vendor_perl",
    "/usr/bin/core_perl",
];

/// The line, when `cmd` writes into `/etc/environment` itself (pam_env's `NAME=value` file,
/// read and never run) only fixed `PATH=` lines naming [`SYSTEM_BIN_DIRS`]: `echo` of text
/// written in the file (no variable, substitution, escape or hidden text), or `cat`/`tee` of
/// a here-document holding only such lines (veeam-agent-arch's post_install appends
/// `PATH="/usr/local/bin:/usr/bin:/bin"` so its service finds its tools). Any other variable
/// (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `BASH_ENV`, `PYTHONPATH` …), a PATH naming a home, /tmp,
/// /opt, a relative directory or a variable, and any other file (`/etc/profile.d`,
/// `/etc/environment.d`, which are shell code or another reader's) are not.
pub(super) fn system_path_only(cmd: &Cmd, p: &str) -> Option<String> {
    if p != "/etc/environment" || !cmd.env.is_empty() || cmd.embed.is_some() {
        return None;
    }
    let fixed = |w: &Word| {
        !w.dynamic
            && w.subs.is_empty()
            && !w
                .taint
                .has(Taint::NET.with(Taint::DECODED).with(Taint::OBFUSCATED))
            && !w.text.contains('\\')
    };
    let (prog, args) = names::program(cmd);
    if !names::wrappers(cmd).is_empty() || !cmd.argv.first().is_some_and(fixed) {
        return None;
    }
    let text = match prog {
        "echo" if cmd.stdin.is_none() => {
            let words: Vec<&Word> = args.iter().skip_while(|a| a.text == "-n").collect();
            if words.iter().any(|a| !fixed(a) || a.text.starts_with('-')) {
                return None;
            }
            words
                .iter()
                .map(|a| a.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        }
        "cat" | "tee" => {
            let ops: Vec<&Word> = args.iter().filter(|a| a.text != "-a").collect();
            let target_ok = match prog {
                "cat" => ops.is_empty(),
                _ => ops.len() == 1 && ops[0].text == p,
            };
            let body = cmd.stdin.as_ref().filter(|w| fixed(w))?;
            if !target_ok {
                return None;
            }
            body.text.clone()
        }
        _ => return None,
    };
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let system_path = |l: &str| {
        let v = l.trim().strip_prefix("PATH=")?;
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        v.split(':')
            .all(|d| SYSTEM_BIN_DIRS.contains(&d.trim_end_matches('/')))
            .then_some(())
    };
    (!lines.is_empty() && lines.iter().all(|l| system_path(l).is_some()))
        .then(|| text.trim().to_owned())
}

/// A package path where a shell or pam_env reads what is written as the start-up of every login
/// or session (`/etc/profile.d/*.sh`, `/etc/bash.bashrc(.d)`, `/etc/zsh/…`, fish's `conf.d`,
/// `/etc/environment`, pam_env's file, `environment.d`) — the path without `$pkgdir`.
pub(super) fn startup_location(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    [
        "/etc/profile",
        "/etc/bash.bashrc",
        "/etc/bashrc",
        "/etc/zsh/",
        "/etc/zshrc",
        "/etc/zprofile",
        "/etc/zshenv",
        "/etc/fish/",
        "/usr/share/fish/vendor_conf.d/",
        "/etc/environment",
        "/usr/lib/environment.d/",
        "/usr/local/lib/environment.d/",
        "/etc/security/pam_env.conf",
        "/etc/skel/",
    ]
    .iter()
    .any(|d| l.starts_with(d))
        && !l.ends_with(".csh")
}

/// System commands that ask for a password, a passphrase or root: a definition of one of
/// these names in start-up text, other than the command itself, is how the secret is taken.
const SECRET_ASKERS: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "run0",
    "sudoedit",
    "passwd",
    "login",
    "ssh",
    "scp",
    "sftp",
    "ssh-add",
    "ssh-keygen",
    "gpg",
    "gpg2",
    "pinentry",
    "git",
    "pacman",
    "yay",
    "paru",
    "cryptsetup",
    "kinit",
];

/// Variables whose value makes programs load or run code: any value set for every login is
/// code in every program of it.
const CODE_VARIABLES: &[&str] = &[
    "LD_PRELOAD",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "PERL5DB",
    "RUBYOPT",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GCONV_PATH",
    "SHELLOPTS",
    "BASHOPTS",
];

/// What start-up text does to every login that reads it (attack 31 F3/F8; class: *the same
/// effect judged in one place and not its twin* — a scriptlet writing the file was high, the
/// same file shipped in the package `ok`): a variable that makes programs load or run code
/// (`LD_PRELOAD`, `BASH_ENV` …), a `PATH` that puts a directory before the system's programs,
/// or an alias or function named like a system command. `dirs_with_commands` are the package's
/// directories that hold a program named like a system command. Appending to `PATH`, setting
/// the package's own variables (`FOO_HOME`, `XDG_DATA_DIRS`) do none of that.
pub(super) fn startup_text_effect(
    text: &str,
    dirs_with_commands: &[String],
) -> Option<(String, Severity)> {
    let mut worst: Option<(String, Severity)> = None;
    let mut note = |what: String, sev: Severity| {
        if worst.as_ref().is_none_or(|(_, s)| sev > *s) {
            worst = Some((what, sev));
        }
    };
    let text = text.replace("\\n", "\n");
    for (nested, line) in text.split('\n').flat_map(|l| {
        // A definition indented inside a block (`if status --is-interactive` … `function sudo
        // --wraps sudo`) is made only when that block runs: worth a look, not a shadow of
        // every login by itself.
        let nested = l.starts_with([' ', '\t']);
        l.split(';')
            .flat_map(|l| l.split("&&"))
            .flat_map(|l| l.split("||"))
            .map(move |l| (nested, l))
    }) {
        let line = line.trim().trim_start_matches(['{', '(']).trim();
        let line = ["then ", "do ", "else "]
            .iter()
            .find_map(|k| line.strip_prefix(k))
            .unwrap_or(line)
            .trim();
        let line = line
            .strip_prefix("export ")
            .or_else(|| line.strip_prefix("declare -x "))
            .or_else(|| line.strip_prefix("typeset -x "))
            .unwrap_or(line)
            .trim();
        // `alias sudo=…`, `sudo() {`, `function sudo`, fish `alias sudo …`.
        // `alias ls='ls --color=auto'`: the system's own command with options, nothing in
        // its place.
        // What an alias runs: `alias ls='ls --color=auto'` is the system's own command with
        // options; `alias ls=eza`, `alias cat=/usr/bin/bat` another program of the system's
        // directories, found as the system finds it — neither takes the command's place with
        // the package's own code. A path of the package's (`alias sudo=/usr/lib/foopkg/x`)
        // does.
        let alias = line.strip_prefix("alias ").map(|r| {
            let (n, v) = r.split_once(['=', ' ']).unwrap_or((r, ""));
            let v = v.trim().trim_matches(['\'', '"']).trim();
            let first = v.split_whitespace().next().unwrap_or("");
            let first = if first == "command" {
                v.split_whitespace().nth(1).unwrap_or("")
            } else {
                first.trim_start_matches('\\')
            };
            let system_program = !first.is_empty()
                && (!first.contains('/')
                    || first
                        .rsplit_once('/')
                        .is_some_and(|(d, _)| SYSTEM_BIN_DIRS.contains(&d)));
            (n.trim_matches(['\'', '"']), first == n, system_program)
        });
        let named = match alias {
            Some((n, to_itself, system_program)) => {
                (!to_itself && (!system_program || SECRET_ASKERS.contains(&n))).then_some(n)
            }
            None => line
                .strip_prefix("function ")
                .map(|r| r.split([' ', '(', '{']).next().unwrap_or(""))
                .or_else(|| {
                    line.split_once("()")
                        .map(|(n, _)| n.trim())
                        .filter(|n| !n.contains(' '))
                })
                .map(|n| n.trim_matches(['\'', '"'])),
        };
        if let Some(n) = named
            && SYSTEM_COMMANDS.contains(&n)
        {
            // A function's body is not read here: it may call the command it is named for
            // (`ls() { command ls -F "$@"; }`), so only the commands that ask for a secret are
            // judged high by the name alone.
            let function = alias.is_none();
            note(
                format!(
                    "an alias or function named `{n}`, which runs in place of the system's command in every shell that reads it"
                ),
                if nested || (function && !SECRET_ASKERS.contains(&n)) {
                    Severity::Medium
                } else {
                    Severity::High
                },
            );
        }
        if line.starts_with("alias ") || line.starts_with("function ") || line.contains("()") {
            continue;
        }
        // fish: `set -gx NAME value…`, `set -x NAME …`; pam_env: `NAME DEFAULT=v` / `OVERRIDE=v`.
        let (name, value) = if let Some(rest) = line.strip_prefix("set ") {
            let mut words = rest.split_whitespace().skip_while(|w| w.starts_with('-'));
            let Some(name) = words.next() else { continue };
            (name.to_owned(), words.collect::<Vec<_>>().join(":"))
        } else if let Some((n, v)) = line.split_once('=').filter(|(n, _)| {
            let n = n.trim();
            !n.is_empty()
                && n.split_whitespace().count() <= 2
                && n.split_whitespace()
                    .next()
                    .is_some_and(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        }) {
            let mut parts = n.split_whitespace();
            let name = parts.next().unwrap_or("");
            match parts.next() {
                None | Some("DEFAULT") | Some("OVERRIDE") => {}
                Some(_) => continue,
            }
            (name.to_owned(), v.to_owned())
        } else {
            continue;
        };
        let name = name.trim();
        let value = value
            .trim()
            .trim_matches(['"', '\''])
            .replace("${PATH}", "$PATH")
            .replace("${PATH:+:$PATH}", ":$PATH")
            .replace("${PATH:+$PATH:}", "$PATH:");
        if CODE_VARIABLES.contains(&name) {
            note(
                format!("`{name}`, which makes programs load or run what it names"),
                Severity::High,
            );
        } else if name == "PATH" {
            let dirs: Vec<&str> = value.split([':', ' ']).filter(|d| !d.is_empty()).collect();
            let ahead: Vec<&str> = dirs
                .iter()
                .take_while(|d| **d != "$PATH")
                .copied()
                .filter(|d| !SYSTEM_BIN_DIRS.contains(&d.trim_end_matches('/')))
                .collect();
            for d in ahead {
                let d = d.trim_end_matches('/');
                let home = ["$HOME", "${HOME}", "~"]
                    .iter()
                    .any(|h| d == *h || d.starts_with(&format!("{h}/")));
                // A variable of the package's own (`$FOO_HOME/bin`) is a directory only known
                // when it runs: its own, as far as the text shows.
                let variable = d.starts_with('$') && !home;
                let writable = (!d.starts_with('/') && !variable)
                    || [
                        "/tmp",
                        "/var/tmp",
                        "/dev/shm",
                        "/home",
                        "/root",
                        "/run/user",
                    ]
                    .iter()
                    .any(|w| d == *w || d.starts_with(&format!("{w}/")));
                if dirs_with_commands.iter().any(|c| c == d) {
                    note(
                        format!(
                            "a PATH that puts {d}, where the package ships a program named like a system command, before the system's programs"
                        ),
                        Severity::High,
                    );
                } else if home {
                    note(
                        format!(
                            "a PATH that puts {d}, in the person's home (anything they or their programs write there), before the system's programs"
                        ),
                        Severity::Medium,
                    );
                } else if writable {
                    note(
                        format!(
                            "a PATH that puts {d}, a directory not only root writes (or one only known when it runs), before the system's programs"
                        ),
                        Severity::High,
                    );
                } else {
                    note(
                        format!(
                            "a PATH that puts the package's directory {d} before the system's programs: check nothing in it is named like a system command"
                        ),
                        Severity::Low,
                    );
                }
            }
        }
    }
    worst
}

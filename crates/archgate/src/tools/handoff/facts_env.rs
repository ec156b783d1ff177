//! The environment a hand-off's command runs in: facts archgate observes, nothing of the
//! client's.
//!
//! Class (attack 7 F1): *a value of the client's environment reaching a program that runs with
//! the person's password*. archgate's environment is its client's (a stdio server is started by
//! the agent's client; `archgate serve` can be started by the agent itself), and the allowlist
//! (`archgate_exec::env::TABLE`) passes values such as `USER` as given — harmless for the
//! person's own programs, but Omarchy's sudo scripts put `$USER` into root's commands (`sudo
//! usermod -aG input "$USER"`), so an agent's `USER=someone-else` made root act on another account
//! while the command shown was the route's. A hand-off's command therefore starts from an empty
//! environment and gets only:
//!
//! - `USER`, `LOGNAME`, `HOME`: the account of the uid the helper runs as, from the user
//!   database (`getpwuid`), never from a variable;
//! - `LANG`: the system's locale from `/etc/locale.conf` (root's file; systemd's format, one
//!   `KEY=value` per line), else none;
//! - `LC_COLLATE=C`: pacman expands an `Include` glob with `glob(3)`, which sorts the files in
//!   the collation of its locale, and the order decides what adds up (`SigLevel`) or comes first
//!   (`RootDir`, a section going on into the next file); archgate judges the files in byte
//!   order, which is C's (attack 26 F3: under `en_US.UTF-8`, `a.conf`'s `SigLevel = Required`
//!   came before `B.conf`'s `Never`, in byte order after it — archgate judged Required where
//!   pacman used Never). sudo keeps `LC_*` by default; a sudoers `env_keep` that keeps `LANG`
//!   and not `LC_COLLATE` would let pacman collate in the system's language again;
//! - `LC_CTYPE=C.UTF-8`: pacman's `glob(3)` matches `?` by the character type's characters (one
//!   byte in C, one character in UTF-8: attack 29 F6, `é.conf` under `?.conf`); `C.UTF-8` is UTF-8
//!   where glibc has it and C where it does not (`setlocale(LC_ALL, "")` then fails as a whole),
//!   never a third charset from the system's language, and archgate's reading of an `Include`
//!   refuses a pattern whose files differ between those two (`archgate_pacman::conf`'s glob);
//! - `XDG_RUNTIME_DIR`: `/run/user/UID`, when it exists (checked as every runtime directory);
//! - `PATH`: rebuilt from the trusted directories, as for every program;
//! - for a route's script, the session variables `omarchy_run` gives it, checked by the table's
//!   rules as always.
//!
//! What root's program itself gets is [`for_root`]: the locale above and `PATH` of root's
//! directories, with root's account. The terminal's helper gives [`facts`] to `sudo`, which keeps
//! `PATH`, `LANG` and `LC_*` by its defaults; the line a person types in their own shell carries
//! [`for_root`] after `sudo` through `/usr/bin/env -i` (attack 29 F5: sudo kept the person's
//! `PATH`, and the agent's `ldconfig` ran as root from a pacman scriptlet) — one list, both doors.
//!
//! Nothing of the desktop's sockets: a route script's privileged steps need none, and a socket
//! named by the client could be the agent's own stand-in for the compositor.

/// The variables of a hand-off's environment (see the module documentation).
pub fn facts() -> Vec<(String, String)> {
    let uid = nix::unistd::getuid();
    let mut env = Vec::with_capacity(6);
    if let Ok(Some(user)) = nix::unistd::User::from_uid(uid) {
        env.push(("USER".to_owned(), user.name.clone()));
        env.push(("LOGNAME".to_owned(), user.name));
        env.push(("HOME".to_owned(), user.dir.to_string_lossy().into_owned()));
    }
    env.extend(locale());
    let runtime = format!("/run/user/{}", uid.as_raw());
    if std::path::Path::new(&runtime).is_dir() {
        env.push(("XDG_RUNTIME_DIR".to_owned(), runtime));
    }
    env
}

/// The locale of a hand-off's command: the system's language, C's collation and a UTF-8-or-C
/// character type (see the module documentation).
fn locale() -> Vec<(String, String)> {
    let mut env = Vec::with_capacity(3);
    if let Some(lang) = std::fs::read_to_string("/etc/locale.conf")
        .ok()
        .and_then(|t| system_lang(&t))
    {
        env.push(("LANG".to_owned(), lang));
    }
    env.push(("LC_COLLATE".to_owned(), "C".to_owned()));
    env.push(("LC_CTYPE".to_owned(), "C.UTF-8".to_owned()));
    env
}

/// The whole environment of root's program in a hand-off, as `NAME=value` words for `/usr/bin/env
/// -i` on the typed line: root's account (`USER`, `LOGNAME`, `HOME` from the user database, as
/// `sudo` sets them), `PATH` of root's directories ([`super::pinned::DIRS`], the executor's
/// search path for a hand-off) and the locale of [`facts`].
pub fn for_root() -> Vec<(String, String)> {
    let mut env = Vec::with_capacity(7);
    if let Ok(Some(root)) = nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(0)) {
        env.push(("USER".to_owned(), root.name.clone()));
        env.push(("LOGNAME".to_owned(), root.name));
        env.push(("HOME".to_owned(), root.dir.to_string_lossy().into_owned()));
    }
    env.push(("PATH".to_owned(), super::pinned::DIRS.join(":")));
    env.extend(locale());
    env
}

/// The resource limits root's program gets on the typed line, as `prlimit` options (name,
/// `soft:hard`, `soft:` the soft one alone): what `commands/handoff/limits.rs` makes whole in the
/// helper — file size, CPU time, address space and data unlimited, hard limits too; an 8 MiB
/// stack and 1,024 descriptors, soft (raising a hard limit above what it is needs
/// `CAP_SYS_RESOURCE`, which root in a container may lack, and these two need no more) — set
/// by root after `sudo`, so a limit the agent lowered on the person's shell (`prlimit --pid`,
/// `ulimit` in a start-up file) never reaches pacman (attack 30 F4: `SIGXFSZ` halfway through
/// extracting a package). Where root cannot set one, `prlimit` fails and nothing runs. One list
/// for both doors: `limits.rs`'s tests hold it to its table.
pub const ROOT_LIMITS: &[(&str, &str)] = &[
    ("fsize", "unlimited"),
    ("cpu", "unlimited"),
    ("as", "unlimited"),
    ("data", "unlimited"),
    ("stack", "8388608:"),
    ("nofile", "1024:"),
];

/// The line a person may type in their own shell for a fixed operation's `argv` (`SUDO -k --
/// PROGRAM ARGS…`): the same command with [`ROOT_LIMITS`] set after `sudo` by `/usr/bin/prlimit`
/// (attack 30 F4) and [`for_root`] by `/usr/bin/env -i`, so that nothing of the person's shell
/// that `sudo` keeps — its resource limits, `PATH`, `LC_*`, `LANGUAGE`, `TZ`, `XAUTHORITY`… —
/// reaches root's program (attack 29 F5). `None` when `prlimit` or `env` is not root's in root's
/// directories, or `argv` is not of that shape: then only `archgate handoff ID` is offered. An
/// Omarchy route never gets one (attack 29 F9: it needs archgate's asking sudo and `HOME=/nonexistent`,
/// which only `archgate handoff ID` gives it).
pub fn typed_line(p: &super::registry::Prepared) -> Option<String> {
    if p.script.is_some() || p.op.is_none() {
        return None;
    }
    let [sudo, k, dashes, rest @ ..] = p.argv.as_slice() else {
        return None;
    };
    if k != "-k" || dashes != "--" || rest.is_empty() || !rest[0].starts_with('/') {
        return None;
    }
    let prlimit = super::pinned::program("prlimit").ok()?;
    let env = super::pinned::program("env").ok()?;
    let mut line = vec![sudo.clone(), k.clone(), dashes.clone()];
    line.push(prlimit.to_string_lossy().into_owned());
    line.extend(
        ROOT_LIMITS
            .iter()
            .map(|(opt, value)| format!("--{opt}={value}")),
    );
    line.push("--".to_owned());
    line.extend([env.to_string_lossy().into_owned(), "-i".to_owned()]);
    line.extend(for_root().into_iter().map(|(k, v)| format!("{k}={v}")));
    line.extend(rest.iter().cloned());
    Some(super::display(&line))
}

/// `LANG` from the text of `/etc/locale.conf` (locale.conf(5): `KEY=value` lines, `#` comments,
/// the value optionally quoted), when it is a locale's name.
fn system_lang(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("LANG="))
        .map(|v| v.trim().trim_matches('"').trim_matches('\'').to_owned())
        .rfind(|v| {
            !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.@-".contains(c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_is_the_user_databases_whatever_the_environment_says() {
        // The process's own USER/HOME are whatever started it; the facts are getpwuid's.
        let me = nix::unistd::User::from_uid(nix::unistd::getuid())
            .unwrap()
            .unwrap();
        let env = facts();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("USER").as_deref(), Some(me.name.as_str()));
        assert_eq!(get("LOGNAME").as_deref(), Some(me.name.as_str()));
        assert_eq!(
            get("HOME").as_deref(),
            Some(me.dir.to_string_lossy().as_ref())
        );
        for (k, _) in &env {
            assert!(
                [
                    "USER",
                    "LOGNAME",
                    "HOME",
                    "LANG",
                    "LC_COLLATE",
                    "LC_CTYPE",
                    "XDG_RUNTIME_DIR"
                ]
                .contains(&k.as_str()),
                "{k}"
            );
        }
        // pacman sorts an `Include` glob's files as archgate reads them: in byte order.
        assert_eq!(get("LC_COLLATE").as_deref(), Some("C"));
        assert!(archgate_core::exec::env::may_set("LC_COLLATE"));
        // pacman's glob matches `?` in UTF-8 or C, never a third charset (attack 29 F6).
        assert_eq!(get("LC_CTYPE").as_deref(), Some("C.UTF-8"));
        assert!(archgate_core::exec::env::may_set("LC_CTYPE"));
    }

    /// Attack 29 F5: what root's program gets is root's directories and the facts' locale,
    /// nothing of whoever started archgate (its `PATH`, `LANGUAGE`, `TZ`, `XAUTHORITY`…).
    #[test]
    fn roots_program_gets_roots_path_and_the_facts_locale_only() {
        let env = for_root();
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("PATH"), Some("/usr/bin:/usr/sbin"));
        assert_eq!(get("USER"), Some("root"));
        assert_eq!(get("LC_COLLATE"), Some("C"));
        assert_eq!(get("LC_CTYPE"), Some("C.UTF-8"));
        for (k, _) in &env {
            assert!(
                [
                    "USER",
                    "LOGNAME",
                    "HOME",
                    "PATH",
                    "LANG",
                    "LC_COLLATE",
                    "LC_CTYPE"
                ]
                .contains(&k.as_str()),
                "{k}"
            );
        }
        // The locale is the one the terminal's helper gives (one list).
        for (k, v) in facts()
            .iter()
            .filter(|(k, _)| k == "LANG" || k.starts_with("LC_"))
        {
            assert_eq!(get(k), Some(v.as_str()), "{k}");
        }
    }

    /// Attack 29 F5: the typed line sets root's environment after sudo, from [`for_root`].
    #[test]
    fn the_typed_line_sets_roots_environment_after_sudo() {
        use super::super::registry::{Prepared, RouteScript};
        let mut p = Prepared::for_tests("x");
        p.op = Some(super::super::ops::Op::SystemUpdate);
        p.argv.extend(["--noconfirm".to_owned(), "-Syu".to_owned()]);
        let line = typed_line(&p).unwrap();
        // Root sets the limits first (attack 30 F4), then the environment.
        assert!(
            line.starts_with("/usr/bin/sudo -k -- /usr/bin/prlimit --fsize=unlimited --cpu=unlimited --as=unlimited --data=unlimited --stack=8388608: --nofile=1024: -- /usr/bin/env -i USER=root LOGNAME=root HOME=/root PATH=/usr/bin:/usr/sbin "),
            "{line}"
        );
        assert!(
            line.contains(" LC_COLLATE=C LC_CTYPE=C.UTF-8 /usr/bin/pacman --noconfirm -Syu"),
            "{line}"
        );
        // Attack 29 F9: a route's script gets none — typed in the person's shell it had their
        // HOME (their hooks) and the real sudo, whose credential the agent's hook used.
        let route = Prepared {
            argv: vec!["/opt/omarchy/bin/omarchy-refresh-pacman".to_owned()],
            script: Some(RouteScript {
                sha256: "0".into(),
                env: vec![],
                files: vec![],
                sudo_programs: vec![],
            }),
            op: None,
            ..Prepared::for_tests("y")
        };
        assert_eq!(typed_line(&route), None);
        // Not even one shaped as a fixed operation's command.
        let route = Prepared {
            script: route.script.clone(),
            ..p
        };
        assert_eq!(typed_line(&route), None);
    }

    #[test]
    fn the_system_locale_is_read_as_locale_conf_writes_it() {
        assert_eq!(
            system_lang("# written by localectl\nLANG=de_DE.UTF-8\nLC_TIME=en_DK.UTF-8\n")
                .as_deref(),
            Some("de_DE.UTF-8")
        );
        assert_eq!(
            system_lang("LANG=\"en_US.UTF-8\"\n").as_deref(),
            Some("en_US.UTF-8")
        );
        assert_eq!(system_lang("LANG=../../tmp/x\n"), None);
        assert_eq!(system_lang("LC_ALL=C\n"), None);
    }
}

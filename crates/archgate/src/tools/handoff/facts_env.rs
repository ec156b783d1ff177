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
//! - `XDG_RUNTIME_DIR`: `/run/user/UID`, when it exists (checked as every runtime directory);
//! - `PATH`: rebuilt from the trusted directories, as for every program;
//! - for a route's script, the session variables `omarchy_run` gives it, checked by the table's
//!   rules as always.
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
    if let Some(lang) = std::fs::read_to_string("/etc/locale.conf")
        .ok()
        .and_then(|t| system_lang(&t))
    {
        env.push(("LANG".to_owned(), lang));
    }
    env.push(("LC_COLLATE".to_owned(), "C".to_owned()));
    let runtime = format!("/run/user/{}", uid.as_raw());
    if std::path::Path::new(&runtime).is_dir() {
        env.push(("XDG_RUNTIME_DIR".to_owned(), runtime));
    }
    env
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
                    "XDG_RUNTIME_DIR"
                ]
                .contains(&k.as_str()),
                "{k}"
            );
        }
        // pacman sorts an `Include` glob's files as archgate reads them: in byte order.
        assert_eq!(get("LC_COLLATE").as_deref(), Some("C"));
        assert!(archgate_core::exec::env::may_set("LC_COLLATE"));
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

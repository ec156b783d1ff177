//! The environment a program starts with: the person's session, less archgate's secrets.
//!
//! A program archgate runs for the person is a program of their session: `omarchy launch editor`
//! needs `EDITOR`, `TERMINAL` and `BROWSER`, a desktop entry needs `XDG_DATA_DIRS`, a script calls
//! `jq` through `PATH`. So everything in archgate's environment passes on — `PATH` included, for
//! the program's own lookups — except what is withheld ([`is_withheld`]):
//!
//! - archgate's own settings and secrets: every `ARCHGATE_*` variable;
//! - anything named like a credential (`…TOKEN…`, `…SECRET…`, `…PASSWORD…`, `…PASSWD…`,
//!   `…API_KEY…`, `…APIKEY…`, `…CREDENTIAL…`, `…PRIVATE_KEY…`, `…ACCESS_KEY…`, case-insensitive):
//!   a stdio archgate inherits its client's environment, which often carries the client's own
//!   keys, and no program archgate runs needs them;
//! - the dynamic loader's variables (`LD_*`): they would load code from outside the trusted
//!   directories into a program that was resolved inside them.
//!
//! Only argv\[0\] is resolved in the fixed trusted directories (see `resolve.rs`); the search
//! directories missing from the inherited `PATH` are appended to it, so a trusted Omarchy script
//! finds its sibling commands even under a client that stripped `PATH`. What a
//! [`CommandSpec`](crate::CommandSpec) adds comes on top.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The variables that name the person's session. Every one of them passes on (as does everything
/// not [withheld](is_withheld)); the desktop crate discovers the missing ones from the runtime
/// directory and sets them on the programs it runs.
pub const ALLOWED: &[&str] = &[
    "HOME",
    "USER",
    "LANG",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "SWAYSOCK",
    "HYPRLAND_INSTANCE_SIGNATURE",
    "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY",
    "OMARCHY_PATH",
];

/// Parts of a name (upper-cased) that mark a credential.
const SECRET_MARKS: &[&str] = &[
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "CREDENTIAL",
    "PRIVATE_KEY",
    "ACCESS_KEY",
];

/// Whether a variable of archgate's environment is kept from the programs it runs: archgate's
/// own (`ARCHGATE_*`), anything named like a credential, and the loader's `LD_*`. A name that is
/// not UTF-8 is withheld too.
pub fn is_withheld(key: &OsStr) -> bool {
    let Some(key) = key.to_str() else {
        return true;
    };
    let upper = key.to_ascii_uppercase();
    upper.starts_with("ARCHGATE_")
        || upper.starts_with("LD_")
        || SECRET_MARKS.iter().any(|m| upper.contains(m))
}

/// Whether a variable of archgate's environment is passed on: the opposite of [`is_withheld`].
pub fn is_allowed(key: &OsStr) -> bool {
    !is_withheld(key)
}

/// The environment for a program: `inherited` less what is withheld, `PATH` kept with the
/// `search_dirs` it lacks appended (or the search directories alone when there is no `PATH`),
/// then `extra` (a later value for a key replaces an earlier one).
pub fn build(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    search_dirs: &[PathBuf],
    extra: &[(String, String)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(k, _)| is_allowed(k))
        .collect();
    let inherited_path = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .filter(|v| !v.is_empty());
    let mut dirs: Vec<PathBuf> = inherited_path
        .as_ref()
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    for d in search_dirs {
        if !dirs.contains(d) {
            dirs.push(d.clone());
        }
    }
    // A directory with a `:` cannot be joined; fall back to the inherited value as it was.
    let path = std::env::join_paths(&dirs)
        .ok()
        .or(inherited_path)
        .unwrap_or_default();
    set(&mut env, OsString::from("PATH"), path);
    for (k, v) in extra {
        set(&mut env, OsString::from(k), OsString::from(v));
    }
    env
}

fn set(env: &mut Vec<(OsString, OsString)>, key: OsString, value: OsString) {
    env.retain(|(k, _)| *k != key);
    env.push((key, value));
}

/// Whether a key may be set at all: non-empty, without `=` or NUL.
pub(crate) fn valid_key(key: &str) -> bool {
    !key.is_empty() && !key.contains(['=', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn the_session_passes_and_secrets_do_not() {
        let inherited = os(&[
            ("HOME", "/home/p"),
            ("EDITOR", "nvim"),
            ("XDG_DATA_DIRS", "/home/p/.local/share:/usr/share"),
            ("LC_TIME", "C"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("PATH", "/home/p/.local/bin:/usr/bin"),
            ("ARCHGATE_TOKEN", "secret"),
            ("archgate_lower", "secret"),
            ("GITHUB_TOKEN", "secret"),
            ("OPENAI_API_KEY", "secret"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("WAYLAND_DISPLAY", "wayland-1"),
        ]);
        let env = build(
            inherited,
            &[PathBuf::from("/usr/local/bin"), PathBuf::from("/usr/bin")],
            &[
                ("LANG".into(), "C.UTF-8".into()),
                ("HOME".into(), "/x".into()),
            ],
        );
        assert_eq!(
            env,
            os(&[
                ("EDITOR", "nvim"),
                ("XDG_DATA_DIRS", "/home/p/.local/share:/usr/share"),
                ("LC_TIME", "C"),
                ("WAYLAND_DISPLAY", "wayland-1"),
                ("PATH", "/home/p/.local/bin:/usr/bin:/usr/local/bin"),
                ("LANG", "C.UTF-8"),
                ("HOME", "/x"),
            ])
        );
    }

    #[test]
    fn without_a_path_the_search_directories_are_the_path() {
        let env = build(
            os(&[("HOME", "/h")]),
            &[PathBuf::from("/opt/o/bin"), PathBuf::from("/usr/bin")],
            &[],
        );
        assert!(env.contains(&("PATH".into(), "/opt/o/bin:/usr/bin".into())));
    }
}

//! The minimal clean environment a program starts with.
//!
//! Nothing of archgate's own environment is passed on except the variables a desktop program
//! needs to find the person's session, language and home ([`ALLOWED`], plus every `LC_*`), and
//! `PATH` is set to the executor's search directories. What a [`CommandSpec`](crate::CommandSpec)
//! adds comes on top.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// Variables kept from archgate's environment (besides `LC_*`).
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

/// Whether a variable of archgate's environment is passed on.
pub fn is_allowed(key: &OsStr) -> bool {
    let Some(key) = key.to_str() else {
        return false;
    };
    ALLOWED.contains(&key) || key.starts_with("LC_")
}

/// The environment for a program: the allowed part of `inherited`, `PATH` set to `search_dirs`,
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
    let path = std::env::join_paths(search_dirs).unwrap_or_default();
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
    fn only_allowed_variables_survive() {
        let inherited = os(&[
            ("HOME", "/home/p"),
            ("LC_TIME", "C"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("PATH", "/tmp/evil"),
            ("ARCHGATE_TOKEN", "secret"),
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
                ("LC_TIME", "C"),
                ("WAYLAND_DISPLAY", "wayland-1"),
                ("PATH", "/usr/local/bin:/usr/bin"),
                ("LANG", "C.UTF-8"),
                ("HOME", "/x"),
            ])
        );
    }
}

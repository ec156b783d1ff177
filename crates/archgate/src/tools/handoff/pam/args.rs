//! Whether a module that asks for a credential by its kind still asks with the arguments it is
//! given, and whether its secret is out of the person's reach (attack 16 F2 and F6).
//!
//! Classes: *"this module asks" decided by the module's name while its arguments decide* (F2:
//! pam_u2f `alwaysok` grants every attempt), and *a credential the person's own user account can
//! read or write is no credential against the agent* (F6: pam_google_authenticator's secret
//! and scratch codes in `~/.google_authenticator`, read by the agent's shell and typed). The
//! agent runs as the person, so a secret the person's uid can read, or a key list it can write
//! (enrolling a key of the agent's choosing), protects nothing. Each module's arguments are
//! from its manual page (pam_u2f(8), pam_yubico(8), google-authenticator's README/pam module,
//! pam_oath(8), pam_userdb(8)); an argument not known to keep the module asking counts as
//! "may grant".

use std::path::Path;

/// What the judgement needs of the machine: who the person is, and whether a file is out of
/// their reach. A seam for tests.
pub trait Places {
    /// The person's user name and home directory.
    fn person(&self) -> (String, String);
    /// `None` when `path` is root's all the way (no one else can write it or a directory above
    /// it) and, if `secret`, readable by root alone; else why not.
    fn reached_by_person(&self, path: &Path, secret: bool) -> Option<String>;
}

/// Why the module `name` with `args` may succeed when nobody gives a credential; `None` when
/// it asks (or when archgate has nothing to say of it here: `dispatch.rs` decides by name).
pub fn grants_anyway(name: &str, args: &[String], places: &dyn Places) -> Option<String> {
    // An argument given twice is read by the module's own rule (pam_u2f and
    // google_authenticator keep the last, attack 20 F3/F4): archgate does not guess which.
    if matches!(
        name,
        "pam_u2f" | "pam_yubico" | "pam_google_authenticator" | "pam_oath" | "pam_userdb"
    ) {
        let mut seen = std::collections::HashSet::new();
        for a in args {
            let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k).trim();
            if !seen.insert(key) {
                return Some(format!(
                    "its argument `{key}` is given more than once, and which one the module \
                     keeps is its own rule"
                ));
            }
        }
    }
    let value = |key: &str| {
        args.iter()
            .find_map(|a| a.strip_prefix(key).and_then(|v| v.strip_prefix('=')))
    };
    let flag = |key: &str| args.iter().any(|a| a == key);
    let unknown = |known: &[&str]| {
        args.iter()
            .find(|a| {
                let key = a.split_once('=').map_or(a.as_str(), |(k, _)| k);
                !known.contains(&key)
            })
            .map(|a| format!("its argument `{a}` is not one archgate knows to keep it asking"))
    };
    match name {
        "pam_u2f" => {
            if flag("alwaysok") {
                return Some("`alwaysok` makes every attempt succeed".into());
            }
            if flag("nouserok") {
                return Some(
                    "`nouserok` lets a person with no key through (pam-u2f before 1.3.1 grants)"
                        .into(),
                );
            }
            // pam_u2f reads the number with `sscanf("%d")` (`+0`, ` 0`, `-0` and a value that
            // overflows are 0 too): only the default or exactly `1` keeps the touch.
            if let Some(v) = value("userpresence").filter(|v| *v != "1") {
                return Some(format!(
                    "`userpresence={v}` may let a plugged-in key answer without a touch"
                ));
            }
            if let Some(why) = unknown(&[
                "debug",
                "debug_file",
                "origin",
                "appid",
                "authfile",
                "expand",
                "authpending_file",
                "interactive",
                "manual",
                "cue",
                "cue_prompt",
                "max_devices",
                "nodetect",
                "userpresence",
                "userverification",
                "pinverification",
                "sshformat",
                "openasuser",
                "prompt",
            ]) {
                return Some(why);
            }
            // Default: `$XDG_CONFIG_HOME/Yubico/u2f_keys` — the person's to write.
            mapping(value("authfile"), "the key list", places)
        }
        "pam_yubico" => {
            if flag("alwaysok") {
                return Some("`alwaysok` makes every attempt succeed".into());
            }
            if flag("nullok") {
                return Some("`nullok` lets a person with no key declared through".into());
            }
            if value("mode").is_some_and(|m| m.eq_ignore_ascii_case("challenge-response")) {
                // The challenge files default to `~/.yubico/challenge-*`.
                return mapping(value("chalresp_path"), "the challenge files", places);
            }
            if value("ldap_uri").is_some() || value("ldapserver").is_some() {
                return Some("its key list is read from a directory archgate cannot judge".into());
            }
            // Default: `~/.yubico/authorized_yubikeys`.
            mapping(value("authfile"), "the key list", places)
        }
        "pam_google_authenticator" => {
            if let Some(g) =
                value("grace_period").filter(|g| g.is_empty() || !g.bytes().all(|b| b == b'0'))
            {
                return Some(format!(
                    "`grace_period={g}` lets a repeat through without a code"
                ));
            }
            // Default: `~/.google_authenticator`, the secret and the scratch codes in plain text.
            secret(value("secret"), "its secret and scratch codes", places)
        }
        "pam_oath" => {
            if flag("alwaysok") {
                return Some("`alwaysok` makes every attempt succeed".into());
            }
            secret(value("usersfile"), "its users file (the secrets)", places)
        }
        "pam_userdb" => {
            // The database: the module opens `db` (Berkeley DB appends `.db`); passwords may
            // be kept in clear (`crypt=none`, the default).
            match value("db") {
                None => Some("it names no database".into()),
                // One of the spellings root's alone and readable by root alone.
                Some(db) => secret(Some(db), "its password database", places).and(secret(
                    Some(&format!("{db}.db")),
                    "its password database",
                    places,
                )),
            }
        }
        // pam_p11's certificates or keys are always the person's own files
        // (`~/.eid/authorized_certificates`, `~/.ssh/authorized_keys`).
        "pam_p11" => Some("its key list is in your home, which you can write".into()),
        _ => None,
    }
}

/// A file that maps people to keys: it must be out of the person's reach to write.
fn mapping(path: Option<&str>, what: &str, places: &dyn Places) -> Option<String> {
    judged(path, what, false, places)
}

/// A file holding the secret itself: out of the person's reach to write and to read.
fn secret(path: Option<&str>, what: &str, places: &dyn Places) -> Option<String> {
    judged(path, what, true, places)
}

fn judged(path: Option<&str>, what: &str, secret: bool, places: &dyn Places) -> Option<String> {
    let Some(path) = path else {
        return Some(format!(
            "{what} are in your home by default, which you can read and write"
        ));
    };
    let (user, home) = places.person();
    let expanded = path
        .replace("${USER}", &user)
        .replace("%u", &user)
        .replace("${HOME}", &home)
        .replace("%h", &home);
    let expanded = match expanded.strip_prefix('~') {
        Some(rest) => format!("{home}{rest}"),
        None => expanded,
    };
    if !expanded.starts_with('/') || expanded.contains(['$', '%', '~']) {
        return Some(format!(
            "{what} (`{path}`) are in a place archgate cannot tell"
        ));
    }
    places
        .reached_by_person(Path::new(&expanded), secret)
        .map(|why| format!("{what} (`{path}`) are within your reach: {why}"))
}

/// The machine: the person from the user database, files judged as `pinned::root_file` does.
pub struct System;

impl Places for System {
    fn person(&self) -> (String, String) {
        match nix::unistd::User::from_uid(nix::unistd::getuid()) {
            Ok(Some(u)) => (u.name, u.dir.to_string_lossy().into_owned()),
            // Nothing to expand with: any path naming the person is then unjudgeable.
            _ => ("$unknown".into(), "$unknown".into()),
        }
    }

    fn reached_by_person(&self, path: &Path, secret: bool) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        if std::fs::symlink_metadata(path).is_err() {
            // Not there: the module finds nothing and fails; it stays so while nobody but
            // root can create it (the nearest directory above that exists is root's all the
            // way).
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| std::fs::symlink_metadata(d).is_err()) {
                dir = d.parent();
            }
            return match dir {
                Some(d) => crate::tools::handoff::pinned::root_dir(d).err(),
                None => Some(format!("{} cannot be judged", path.display())),
            };
        }
        let real = match crate::tools::handoff::pinned::root_file(path) {
            Ok(real) => real,
            Err(why) => return Some(why),
        };
        if secret {
            match std::fs::metadata(&real) {
                Ok(m) if m.mode() & 0o044 == 0 => None,
                Ok(m) => Some(format!(
                    "{} can be read by others than root (mode {:o})",
                    real.display(),
                    m.mode() & 0o7777
                )),
                Err(e) => Some(format!("{}: {e}", real.display())),
            }
        } else {
            None
        }
    }
}

//! pacman's keyring: the installed `archlinux-keyring` against the repositories' version, and the
//! keys in pacman's GnuPG home (`GPGDir`, default `/etc/pacman.d/gnupg`) that expired or expire
//! within 30 days.
//!
//! The keys are listed by `gpg` itself (the caller runs [`gpg_args`] through its permit, as the
//! person, never as root): `--lock-never` and `--no-auto-check-trustdb` let an unprivileged user
//! read the root-owned home without writing to it. [`parse_keys`] reads gpg's `--with-colons`
//! output (`pub` records: field 2 validity, `e` expired and `r` revoked; field 7 the expiry in
//! seconds; the `fpr` record's field 10 the fingerprint; the first `uid` record's field 10 the
//! user id). The home's readability is checked first ([`readable`]), so "not readable without
//! privilege" is said as such.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::conf::PacmanConf;
use crate::db::Snapshot;
use crate::info::Timestamp;
use crate::version::vercmp;

/// The keyring package.
pub const PACKAGE: &str = "archlinux-keyring";
/// Days ahead that count as "expiring soon".
pub const SOON_DAYS: i64 = 30;

/// pacman's GnuPG home for this configuration.
pub fn gpg_dir(conf: &PacmanConf) -> PathBuf {
    conf.gpg_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("/etc/pacman.d/gnupg"))
}

/// The `gpg` arguments that list the keys of `dir` without writing to it.
pub fn gpg_args(dir: &Path) -> Vec<String> {
    vec![
        "--homedir".into(),
        dir.display().to_string(),
        "--no-options".into(),
        "--batch".into(),
        "--lock-never".into(),
        "--no-auto-check-trustdb".into(),
        "--no-permission-warning".into(),
        "--with-colons".into(),
        "--fixed-list-mode".into(),
        "--list-keys".into(),
    ]
}

/// Whether the person can read the keyring in `dir`: `Err` says why not.
pub fn readable(dir: &Path) -> Result<(), String> {
    let meta = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    let mut last = None;
    for name in ["pubring.kbx", "pubring.gpg"] {
        let p = dir.join(name);
        match std::fs::File::open(&p) {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => last = Some(format!("{}: {e}", p.display())),
        }
    }
    Err(last.unwrap_or_else(|| {
        format!(
            "no pubring.kbx or pubring.gpg in {} (pacman-key --init never ran)",
            dir.display()
        )
    }))
}

/// One key worth a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyInfo {
    /// Primary key fingerprint.
    pub fingerprint: String,
    /// First user id.
    pub uid: String,
    /// Expiry.
    pub expires: Timestamp,
    /// Days until expiry (negative: days since).
    pub days_left: i64,
}

/// The keys gpg listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KeyList {
    /// Primary keys listed.
    pub total: usize,
    /// Revoked keys (pacman-key disables retired packagers' keys this way; not a problem).
    pub revoked: usize,
    /// Expired keys (not revoked).
    pub expired: Vec<KeyInfo>,
    /// Keys expiring within 30 days.
    pub expiring: Vec<KeyInfo>,
}

/// Reads `gpg --with-colons --fixed-list-mode --list-keys` output at time `now` (seconds).
pub fn parse_keys(text: &str, now: i64) -> KeyList {
    struct Cur {
        validity: String,
        expires: Option<i64>,
        fpr: String,
        uid: String,
    }
    let mut list = KeyList::default();
    let mut cur: Option<Cur> = None;
    let finish = |c: Cur, list: &mut KeyList| {
        list.total += 1;
        if c.validity == "r" {
            list.revoked += 1;
            return;
        }
        let Some(exp) = c.expires else { return };
        let info = KeyInfo {
            fingerprint: c.fpr,
            uid: c.uid,
            expires: Timestamp(exp),
            days_left: (exp - now).div_euclid(86400),
        };
        if exp <= now || c.validity == "e" {
            list.expired.push(info);
        } else if exp - now <= SOON_DAYS * 86400 {
            list.expiring.push(info);
        }
    };
    for line in text.lines() {
        let f: Vec<&str> = line.split(':').collect();
        match f.first().copied() {
            Some("pub") => {
                if let Some(c) = cur.take() {
                    finish(c, &mut list);
                }
                cur = Some(Cur {
                    validity: f.get(1).copied().unwrap_or("").to_owned(),
                    expires: f.get(6).and_then(|s| s.parse::<i64>().ok()),
                    fpr: f.get(4).copied().unwrap_or("").to_owned(),
                    uid: String::new(),
                });
            }
            Some("sub") | Some("ssb") => {
                // Subkeys have their own fpr records; only the primary's are read.
                if let Some(c) = cur.take() {
                    finish(c, &mut list);
                }
            }
            Some("fpr") => {
                if let Some(c) = cur.as_mut()
                    && c.fpr.len() < 40
                    && let Some(fp) = f.get(9)
                {
                    c.fpr = (*fp).to_owned();
                }
            }
            Some("uid") => {
                if let Some(c) = cur.as_mut()
                    && c.uid.is_empty()
                {
                    c.uid = unescape(f.get(9).copied().unwrap_or(""));
                }
            }
            _ => {}
        }
    }
    if let Some(c) = cur.take() {
        finish(c, &mut list);
    }
    list.expired.sort_by_key(|k| k.expires);
    list.expiring.sort_by_key(|k| k.expires);
    list
}

/// gpg escapes `:` and control bytes in colon output as `\xHH`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1] == b'x'
            && let Ok(v) = u8::from_str_radix(&s[i + 2..i + 4], 16)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The keyring package, installed and in the repositories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyringPackage {
    /// Installed version (absent: not installed).
    pub installed: Option<String>,
    /// Repository holding it.
    pub repo: Option<String>,
    /// The repository's version.
    pub available: Option<String>,
    /// The repository has a newer one.
    pub outdated: bool,
}

/// `archlinux-keyring` in `snap`.
pub fn package_state(snap: &Snapshot) -> KeyringPackage {
    let installed = snap.local.get(PACKAGE).map(|p| p.version.clone());
    let sync = snap.sync_get(PACKAGE);
    let outdated = match (&installed, sync) {
        (Some(i), Some((_, p))) => vercmp(&p.version, i) == std::cmp::Ordering::Greater,
        _ => false,
    };
    KeyringPackage {
        installed,
        repo: sync.map(|(r, _)| r.name.clone()),
        available: sync.map(|(_, p)| p.version.clone()),
        outdated,
    }
}

/// The keys part of the answer.
#[derive(Debug, Clone, Serialize)]
pub struct KeysState {
    /// pacman's GnuPG home.
    pub gpg_dir: String,
    /// Whether archgate could read it as the person.
    pub readable: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The keys, when read.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub list: Option<KeyList>,
}

/// The answer of the `keyring` tool.
#[derive(Debug, Clone, Serialize)]
pub struct KeyringReport {
    /// The package.
    pub package: KeyringPackage,
    /// The keys.
    pub keys: KeysState,
    /// What needs attention.
    pub findings: Vec<String>,
    /// Commands for the person.
    pub commands: Vec<String>,
}

/// Builds the answer; `keys` is the parsed list or why it could not be read.
pub fn report(package: KeyringPackage, dir: &Path, keys: Result<KeyList, String>) -> KeyringReport {
    let mut findings = Vec::new();
    let mut commands = Vec::new();
    match (&package.installed, &package.available) {
        (None, _) => findings.push(format!("{PACKAGE} is not installed")),
        (Some(i), Some(a)) if package.outdated => {
            findings.push(format!(
                "{PACKAGE} {i} is installed, {a} is in the repositories"
            ));
            commands.push(format!("sudo pacman -Sy {PACKAGE} && sudo pacman -Su"));
        }
        _ => {}
    }
    let state = match keys {
        Ok(list) => {
            if !list.expired.is_empty() {
                findings.push(format!(
                    "{} key(s) in pacman's keyring expired",
                    list.expired.len()
                ));
            }
            if !list.expiring.is_empty() {
                findings.push(format!(
                    "{} key(s) expire within {SOON_DAYS} days",
                    list.expiring.len()
                ));
            }
            if (!list.expired.is_empty() || !list.expiring.is_empty())
                && !commands.iter().any(|c| c.contains(PACKAGE))
            {
                commands.push("sudo pacman-key --refresh-keys".into());
            }
            KeysState {
                gpg_dir: dir.display().to_string(),
                readable: true,
                why: None,
                list: Some(list),
            }
        }
        Err(why) => {
            findings.push(format!(
                "pacman's keyring is not readable without privilege: {why}"
            ));
            commands.push("sudo pacman-key --list-keys".into());
            KeysState {
                gpg_dir: dir.display().to_string(),
                readable: false,
                why: Some(why),
                list: None,
            }
        }
    };
    KeyringReport {
        package,
        keys: state,
        findings,
        commands,
    }
}

//! Fail-closed config: whose file it is, and the last config that applied.
//!
//! The class closed here: *configuration fails closed in every way it can go wrong*. A config
//! file is applied only when it is a regular file owned by you (or root), writable by neither
//! group nor others, in a directory of the same kind whose parents are owned by you or root and
//! writable by no one else (a sticky directory such as `/tmp` excepted); a symlink (dotfile
//! managers) must be yours and its target must pass the same checks. Anyone else who can write
//! the file or its directory could lift the person's deny rules. Every config that applies is
//! kept as `config.last-good.toml` (0600, written atomically; another `--config` file has its own
//! name, `last_good_for`) in archgate's default state directory — the default one even when
//! `[paths] state_dir` moves the rest, so a broken file can still find it.
//!
//! A file that cannot be applied (refused here, a syntax error, or an entry that cannot be
//! applied), and a file that is missing while a last good copy exists, give that copy — at start
//! and on reload — never defaults. The copy on disk is the evidence that a config existed:
//! without one (first run) a missing file means defaults; a file that cannot be applied and no
//! copy refuses to start (`ConfigRefused`). To go back to defaults on purpose, leave an empty
//! `config.toml` (it applies, and becomes the last good copy).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The name of the last good copy in the state directory.
pub const LAST_GOOD: &str = "config.last-good.toml";

/// Where the last good copy of `config_file` is kept in `state_dir`: `config.last-good.toml` for
/// the default config file, a name with a digest of the path for any other (`--config`), so two
/// files never share a copy.
pub fn last_good_for(state_dir: &Path, config_file: &Path, default_file: &Path) -> PathBuf {
    if config_file == default_file {
        return state_dir.join(LAST_GOOD);
    }
    use sha2::Digest;
    let d = sha2::Sha256::digest(config_file.as_os_str().as_encoded_bytes());
    state_dir.join(format!("config.last-good-{}.toml", hex::encode(&d[..8])))
}

/// The largest config file read; a bigger one is refused, not read.
const MAX_BYTES: u64 = 1 << 20;

/// What is at the config path, after the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnDisk {
    /// Nothing at the path (no file, no link).
    Missing,
    /// The text of a file that passed every check (it may still not parse).
    Text(String),
    /// Something that may not be applied whatever it says: why, naming the path.
    Refused(String),
}

/// Why `p` (an existing file or directory) must not be trusted: another owner than `uid` or
/// root, or writable by group or others (unless `sticky_ok` and the sticky bit is set).
fn distrust(p: &Path, m: &std::fs::Metadata, uid: u32, sticky_ok: bool) -> Option<String> {
    let owner = m.uid();
    if owner != uid && owner != 0 {
        return Some(format!(
            "{} is owned by uid {owner}, not by you (uid {uid}); the config was not applied (chown it to yourself)",
            p.display()
        ));
    }
    if m.mode() & 0o022 != 0 && !(sticky_ok && m.mode() & 0o1000 != 0) {
        return Some(format!(
            "{} is writable by group or others (mode {:o}); the config was not applied (chmod go-w {})",
            p.display(),
            m.mode() & 0o7777,
            p.display()
        ));
    }
    None
}

/// Why the directory holding a config file may not be trusted: the directory itself (strictly)
/// and every parent up to `/` (a sticky parent such as `/tmp` is fine: no one else can rename
/// what is yours in it).
fn untrusted_dirs(file: &Path, uid: u32) -> Option<String> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty())?;
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    for (i, d) in dir.ancestors().enumerate() {
        // A directory that does not exist yet holds nothing to protect.
        let Ok(m) = std::fs::metadata(d) else {
            continue;
        };
        if let Some(why) = distrust(d, &m, uid, i > 0) {
            return Some(why);
        }
    }
    None
}

/// Reads the config at `path` if, and only if, it may be applied (see the module docs). Never
/// blocks on what is not a regular file (a FIFO put in its place is refused, not read).
pub fn read_guarded(path: &Path, uid: u32) -> OnDisk {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return OnDisk::Missing,
        Err(e) => return OnDisk::Refused(format!("cannot read {}: {e}", path.display())),
    };
    if let Some(why) = untrusted_dirs(path, uid) {
        return OnDisk::Refused(why);
    }
    if link.file_type().is_symlink() {
        // A symlinked file (dotfile managers do that): the link is yours, and its target and
        // the target's directories pass the same checks.
        if link.uid() != uid && link.uid() != 0 {
            return OnDisk::Refused(format!(
                "{} is a symlink owned by uid {}, not by you (uid {uid}); the config was not applied",
                path.display(),
                link.uid()
            ));
        }
        match std::fs::canonicalize(path) {
            Ok(real) => {
                if let Some(why) = untrusted_dirs(&real, uid) {
                    return OnDisk::Refused(why);
                }
            }
            Err(e) => {
                return OnDisk::Refused(format!(
                    "{} is a symlink whose target cannot be read ({e}); the config was not applied",
                    path.display()
                ));
            }
        }
    }
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
    {
        Ok(f) => f,
        Err(e) => return OnDisk::Refused(format!("cannot open {}: {e}", path.display())),
    };
    // Judged on the file opened, so what is checked is what is read.
    let m = match file.metadata() {
        Ok(m) => m,
        Err(e) => return OnDisk::Refused(format!("cannot read {}: {e}", path.display())),
    };
    let ft = m.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return OnDisk::Refused(format!(
            "{} is {kind}, not a regular file; the config was not applied",
            path.display()
        ));
    }
    if let Some(why) = distrust(path, &m, uid, false) {
        return OnDisk::Refused(why);
    }
    if m.len() > MAX_BYTES {
        return OnDisk::Refused(format!(
            "{} is {} bytes, more than a config file's {MAX_BYTES}; the config was not applied",
            path.display(),
            m.len()
        ));
    }
    let mut text = String::new();
    match file.take(MAX_BYTES + 1).read_to_string(&mut text) {
        Ok(_) => OnDisk::Text(text),
        Err(e) => OnDisk::Refused(format!(
            "cannot read {}: {e}; the config was not applied",
            path.display()
        )),
    }
}

/// Why a config file may not be applied whatever it says: `None` when it may (or there is no
/// file).
pub fn unsafe_owner(path: &Path, uid: u32) -> Option<String> {
    match read_guarded(path, uid) {
        OnDisk::Refused(why) => Some(why),
        OnDisk::Missing | OnDisk::Text(_) => None,
    }
}

/// Reads the last good copy: its text and when it was written (Unix seconds). `None` when there
/// is none, or it is not a private file of this user.
pub fn read_last_good(path: &Path, uid: u32) -> Option<(String, u64)> {
    let m = std::fs::symlink_metadata(path).ok()?;
    if !m.is_file() || m.uid() != uid || m.mode() & 0o077 != 0 {
        tracing::warn!(
            "ignoring {}: not a private file of this user",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    Some((text, m.mtime().max(0) as u64))
}

/// Keeps `text` as the last good config (0600, atomic); failures are logged, never fatal.
pub fn save_last_good(path: &Path, uid: u32, text: &str) {
    if let Some(dir) = path.parent()
        && let Err(e) = crate::paths::ensure_private_dir(dir, uid)
    {
        tracing::warn!("cannot keep the last good config: {e}");
        return;
    }
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return;
    }
    if let Err(e) = crate::paths::write_private_file(path, text.as_bytes()) {
        tracing::warn!(
            "cannot keep the last good config in {}: {e}",
            path.display()
        );
    }
}

/// A config file exists but cannot be applied, and no config ever parsed here before.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{file} was not applied ({problems}), and there is no last good config to fall back on ({last_good}). \
archgate does not run on defaults when a config file exists: fix the file (`archgate config check`) and start again"
)]
pub struct ConfigRefused {
    pub file: PathBuf,
    pub last_good: PathBuf,
    pub problems: String,
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc(secs: u64) -> String {
    time::OffsetDateTime::from_unix_timestamp(secs as i64)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn uid() -> u32 {
        nix::unistd::getuid().as_raw()
    }

    #[test]
    fn group_or_other_writable_files_and_directories_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("archgate");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let f = dir.join("config.toml");
        std::fs::write(&f, "").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(unsafe_owner(&f, uid()), None);
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(
            unsafe_owner(&f, uid())
                .unwrap()
                .contains("writable by group")
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(
            unsafe_owner(&f, uid())
                .unwrap()
                .contains("archgate is writable")
        );
        // Through a symlink, the target's directory counts.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let target = open.join("real.toml");
        std::fs::write(&target, "").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.join("linked.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(unsafe_owner(&link, uid()).is_some());
    }

    #[test]
    fn the_last_good_copy_is_private_and_only_a_private_copy_is_read() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("state/archgate").join(LAST_GOOD);
        save_last_good(&f, uid(), "[tools]\ndisabled = [\"x\"]\n");
        let m = std::fs::metadata(&f).unwrap();
        assert_eq!(m.mode() & 0o777, 0o600);
        assert_eq!(
            read_last_good(&f, uid()).unwrap().0,
            "[tools]\ndisabled = [\"x\"]\n"
        );
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_last_good(&f, uid()).is_none());
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        let (state, default) = (Path::new("/s"), Path::new("/c/config.toml"));
        assert_eq!(
            last_good_for(state, default, default),
            state.join(LAST_GOOD)
        );
        let other = last_good_for(state, Path::new("/elsewhere.toml"), default);
        assert_ne!(other, state.join(LAST_GOOD));
        assert_eq!(
            other,
            last_good_for(state, Path::new("/elsewhere.toml"), default)
        );
    }
}

//! Fail-closed config: whose file it is, and the last config that parsed.
//!
//! A config file (or its directory) owned by another user, or writable by group or others, is
//! not applied: anyone who can write it could lift the person's deny rules. Such a file is
//! treated like one that does not parse. Every config that parses and passes that check is kept
//! as `config.last-good.toml` (0600, written atomically; another `--config` file has its own
//! name, `last_good_for`) in archgate's default state directory — the default one even when
//! `[paths] state_dir` moves the rest, so a broken file can still find it. At start, a file that cannot be applied falls back to that copy, never to defaults;
//! with no copy, starting is refused (`ConfigRefused`).

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

/// Why a config file may not be applied whatever it says: `None` when it may.
pub fn unsafe_owner(path: &Path, uid: u32) -> Option<String> {
    let mut check = vec![path.to_owned()];
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        check.push(dir.to_owned());
    }
    // A symlinked file (dotfile managers do that): its target and the target's directory too.
    if let Ok(real) = std::fs::canonicalize(path)
        && real != path
    {
        if let Some(dir) = real.parent() {
            check.push(dir.to_owned());
        }
        check.push(real);
    }
    for p in check {
        let Ok(m) = std::fs::metadata(&p) else {
            continue;
        };
        let owner = m.uid();
        if owner != uid && owner != 0 {
            return Some(format!(
                "{} is owned by uid {owner}, not by you (uid {uid}); it was not applied (chown it to yourself)",
                p.display()
            ));
        }
        if m.mode() & 0o022 != 0 {
            return Some(format!(
                "{} is writable by group or others (mode {:o}); it was not applied (chmod go-w {})",
                p.display(),
                m.mode() & 0o7777,
                p.display()
            ));
        }
    }
    None
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

//! Fail-closed config: whose file it is, and the last config that applied.
//!
//! The class closed here: *configuration fails closed in every way it can go wrong*. A config
//! file is applied only when it is a regular file owned by you (or root), writable by neither
//! group nor others, reached through a chain every hop of which is trusted (`walk`): the path is
//! resolved one component and one link at a time, every link in it (the file's, a symlinked
//! `~/.config`, a link pointing at another link) must be yours or root's, and every directory
//! on the way — the directories of every hop, not only of the first and the last — owned by you
//! or root and writable by no one else (a sticky directory such as `/tmp` only passed through).
//! Anyone else who controls one hop chooses which file is read and could lift the person's deny
//! rules. Every config that applies is kept as `config.last-good.toml` (0600, written
//! atomically; another `--config` file has its own name, `last_good_for`) in archgate's default
//! state directory — the default one even when `[paths] state_dir` moves the rest, so a broken
//! file can still find it. Only text read through a trusted chain ever applies, so only such
//! text ever becomes the last good copy.
//!
//! A file that cannot be applied (refused here, a syntax error, or an entry that cannot be
//! applied), and a file that is missing while a last good copy exists, give that copy — at start
//! and on reload — never defaults. The copy on disk is the evidence that a config existed:
//! without one (first run) a missing file means defaults; a file that cannot be applied and no
//! copy refuses to start (`ConfigRefused`), and so does a copy that exists but cannot be read or
//! trusted (`read_last_good`) when it is needed. To go back to defaults on purpose, leave an
//! empty `config.toml`: it applies once it is still empty at the next look (an in-place save
//! truncates before it writes, and that moment must not mean defaults), and becomes the last
//! good copy.

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
/// root, or writable by group or others (unless `sticky_ok` and the sticky bit is set) — or, for
/// a file, refused so earlier and still the same inode: a descriptor another user opened while
/// the file was theirs to write outlives the fix of its mode (attack 33 F2; `once_open.rs`).
fn distrust(p: &Path, m: &std::fs::Metadata, uid: u32, sticky_ok: bool) -> Option<String> {
    use archgate_exec::once_open;
    // For a file, the fix is a new file: a `chmod` leaves open descriptors writing.
    let fix = |chmod: String| {
        if m.is_file() {
            once_open::replace_hint(p)
        } else {
            chmod
        }
    };
    let owner = m.uid();
    let why = if owner != uid && owner != 0 {
        Some(format!(
            "{} is owned by uid {owner}, not by you (uid {uid}); the config was not applied ({})",
            p.display(),
            fix("chown it to yourself".into())
        ))
    } else if m.mode() & 0o022 != 0 && !(sticky_ok && m.mode() & 0o1000 != 0) {
        Some(format!(
            "{} is writable by group or others (mode {:o}); the config was not applied ({})",
            p.display(),
            m.mode() & 0o7777,
            fix(format!("chmod go-w {}", p.display()))
        ))
    } else if once_open::was_open_to_others(m) {
        Some(format!(
            "{} was writable by another user when archgate looked earlier, and a descriptor opened then can still write it whatever its mode now; the config was not applied ({})",
            p.display(),
            once_open::replace_hint(p)
        ))
    } else {
        None
    };
    if why.is_some() {
        once_open::remember(m);
    }
    why
}

/// Where a chain of links and directories leads, each hop judged.
enum Walk {
    /// The path itself is not there.
    Missing,
    /// A hop may not be trusted (or cannot be followed): why.
    Refused(String),
    /// The real path (no link left in it), every hop to it trusted.
    Found(PathBuf),
}

/// The most links followed on the way to a config file (the kernel's own limit).
const MAX_HOPS: u32 = 40;

/// Resolves `path` one component and one link at a time, judging every hop: each directory
/// passed through is owned by you or root and writable by no one else (a sticky one such as
/// `/tmp` is fine to pass through: no one else can rename what is yours in it); a directory
/// that holds a link of the chain or the file itself must not even be sticky-writable; and
/// every link is yours or root's. Whoever controls any hop chooses which file is read, so one
/// untrusted hop — a link in another user's directory, a symlinked `~/.config` whose target's
/// parent another user can write — refuses the whole chain.
fn walk(path: &Path, uid: u32) -> Walk {
    use std::collections::VecDeque;
    use std::path::Component;
    match std::fs::symlink_metadata(path) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Walk::Missing,
        Err(e) => return Walk::Refused(format!("cannot read {}: {e}", path.display())),
    }
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let parts = |p: &Path| -> Vec<std::ffi::OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_owned()),
                Component::ParentDir => Some("..".into()),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
            })
            .collect()
    };
    let mut todo: VecDeque<std::ffi::OsString> = parts(&abs).into();
    let mut cur = PathBuf::from("/");
    let mut hops = 0;
    while let Some(c) = todo.pop_front() {
        if c == ".." {
            // `cur` holds no link, so its parent is the real one.
            cur.pop();
            continue;
        }
        let next = cur.join(&c);
        let m = match std::fs::symlink_metadata(&next) {
            Ok(m) => m,
            Err(e) => {
                return Walk::Refused(format!(
                    "{} is a symlink whose target cannot be read ({}: {e}); the config was not applied",
                    path.display(),
                    next.display()
                ));
            }
        };
        let passed_through = m.is_dir() && !todo.is_empty();
        let held_by = match std::fs::symlink_metadata(&cur) {
            Ok(d) => d,
            Err(e) => return Walk::Refused(format!("cannot read {}: {e}", cur.display())),
        };
        if let Some(why) = distrust(&cur, &held_by, uid, passed_through) {
            return Walk::Refused(why);
        }
        if m.file_type().is_symlink() {
            if m.uid() != uid && m.uid() != 0 {
                return Walk::Refused(format!(
                    "{} is a symlink owned by uid {}, not by you (uid {uid}); the config was not applied",
                    next.display(),
                    m.uid()
                ));
            }
            hops += 1;
            if hops > MAX_HOPS {
                return Walk::Refused(format!(
                    "{} goes through more than {MAX_HOPS} symlinks; the config was not applied",
                    path.display()
                ));
            }
            let target = match std::fs::read_link(&next) {
                Ok(t) => t,
                Err(e) => return Walk::Refused(format!("cannot read {}: {e}", next.display())),
            };
            if target.is_absolute() {
                cur = PathBuf::from("/");
            }
            for part in parts(&target).into_iter().rev() {
                todo.push_front(part);
            }
            continue;
        }
        if !todo.is_empty() && !m.is_dir() {
            return Walk::Refused(format!(
                "{} leads through {}, which is not a directory; the config was not applied",
                path.display(),
                next.display()
            ));
        }
        cur = next;
    }
    Walk::Found(cur)
}

/// Reads the config at `path` if, and only if, it may be applied (see the module docs). Never
/// blocks on what is not a regular file (a FIFO put in its place is refused, not read).
pub fn read_guarded(path: &Path, uid: u32) -> OnDisk {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let real = match walk(path, uid) {
        Walk::Missing => return OnDisk::Missing,
        Walk::Refused(why) => return OnDisk::Refused(why),
        Walk::Found(real) => real,
    };
    // The real path holds no link: one swapped in since it was judged is not followed.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOFOLLOW).bits())
        .open(&real)
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
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_block_device() {
            "a block device"
        } else {
            "a special file"
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

/// Reads the last good copy: its text and when it was written (Unix seconds). `Ok(None)` when
/// there is none; `Err(why)` when one exists but cannot be read or trusted — a copy that is
/// there is the evidence that a config applied, so its loss must never mean defaults.
///
/// Trusted: a regular file (not a symlink) owned by this user, writable by no one else, in a
/// directory owned by this user or root and writable by no one else. Mode 0644 is accepted:
/// archgate writes it 0600, but a copy others may *read* gives no one a way to change what
/// applies (the person's config file itself may be 0644 too).
pub fn read_last_good(path: &Path, uid: u32) -> Result<Option<(String, u64)>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let fix = format!(
        "remove it if its content is not yours, or make it a regular file of yours, mode 0600 (chmod 600 {})",
        path.display()
    );
    if m.file_type().is_symlink() || !m.is_file() {
        return Err(format!(
            "{} is not a regular file (a symlink or another kind of file); {fix}",
            path.display()
        ));
    }
    if m.uid() != uid || m.mode() & 0o022 != 0 || archgate_exec::once_open::was_open_to_others(&m) {
        archgate_exec::once_open::remember(&m);
        return Err(format!(
            "{} is owned by uid {} with mode {:o}: not a file only you (uid {uid}) can change; {fix}",
            path.display(),
            m.uid(),
            m.mode() & 0o7777
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        match std::fs::symlink_metadata(dir) {
            Ok(d) => {
                if let Some(why) = distrust(dir, &d, uid, false) {
                    return Err(why);
                }
            }
            Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
        }
    }
    let mut text = String::new();
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((nix::fcntl::OFlag::O_NONBLOCK | nix::fcntl::OFlag::O_NOFOLLOW).bits())
        .open(path)
        .and_then(|f| f.take(MAX_BYTES + 1).read_to_string(&mut text));
    match read {
        Ok(_) => Ok(Some((text, m.mtime().max(0) as u64))),
        Err(e) => Err(format!("cannot read {}: {e}; {fix}", path.display())),
    }
}

/// Keeps `text` as the last good config (0600, atomic); failures are logged, never fatal.
pub fn save_last_good(path: &Path, uid: u32, text: &str) {
    if let Some(dir) = path.parent()
        && let Err(e) = crate::paths::ensure_private_dir(dir, uid)
    {
        tracing::warn!("cannot keep the last good config: {e}");
        return;
    }
    // Left as it is only when it is a trusted copy with this text: a link or another user's
    // file in its place is replaced (atomically: the rename replaces the link, not its target).
    if read_last_good(path, uid).is_ok_and(|k| k.is_some_and(|(t, _)| t == text)) {
        return;
    }
    if let Err(e) = crate::paths::write_private_file(path, text.as_bytes()) {
        tracing::warn!(
            "cannot keep the last good config in {}: {e}",
            path.display()
        );
    }
}

/// A config file exists but cannot be applied, and no config ever parsed here before; or the
/// config cannot be applied (or is missing) and the last good copy exists but cannot be used.
#[derive(Debug, Clone)]
pub struct ConfigRefused {
    pub file: PathBuf,
    pub last_good: PathBuf,
    pub problems: String,
    /// Why the last good copy that exists cannot be used; `None`: there is no copy.
    pub kept: Option<String>,
}

impl std::fmt::Display for ConfigRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kept {
            None => write!(
                f,
                "{} was not applied ({}), and there is no last good config to fall back on ({}). \
archgate does not run on defaults when a config file exists: fix the file (`archgate config check`) and start again",
                self.file.display(),
                self.problems,
                self.last_good.display()
            ),
            Some(why) => write!(
                f,
                "{} was not applied ({}), and the last good config cannot be used: {why}. \
archgate does not run on defaults when a config applied here before: fix {} (`archgate config check`) or that copy, and start again",
                self.file.display(),
                self.problems,
                self.file.display()
            ),
        }
    }
}

impl std::error::Error for ConfigRefused {}

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
            read_last_good(&f, uid()).unwrap().unwrap().0,
            "[tools]\ndisabled = [\"x\"]\n"
        );
        // Readable by others changes nothing; writable by others, or a symlink, is refused.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_last_good(&f, uid()).unwrap().is_some());
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o664)).unwrap();
        assert!(read_last_good(&f, uid()).is_err());
        assert_eq!(read_last_good(&t.path().join("none"), uid()), Ok(None));
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

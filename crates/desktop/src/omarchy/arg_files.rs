//! The files a route's values name, judged before the route runs. Class: *trust judged from the
//! words that name a file* (attack 5b F5, attack 35 F6, attack 36 F1, F4): a route copies, links,
//! unpacks or `cat`s a file its value names into a place the person's session later runs (a
//! hook, an autostart entry), and which scripts "install code" was read from a fixed list of
//! programs and an exec bit — a `cp` that keeps the source's mode, a `cat >`, a `tar -x` or a
//! `.desktop` copied to autostart each slipped past. So every value of every route that names an
//! existing file or directory must be the person's own or root's all the way
//! (`archgate_exec::trusted_path`: the file, every directory on its way and every link followed
//! owned by the person or root and writable by no one else; a directory with every entry in it),
//! whatever the script does with it; and it is judged again just before the route runs
//! ([`files_still_the_persons`]), since a value that named nothing when the question was asked
//! may name a stranger's file by the time the person says yes.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::registry::Route;
use super::steer::Steering;
use crate::error::{DesktopError, Result};

/// How many entries a directory value may hold before it is refused unjudged.
const MAX_ENTRIES: usize = 10_000;

/// Every value judged as a file (see the module documentation); a value a script that changes
/// directory reads as a file must be absolute: relative, it names a file in whatever directory
/// the script moved to, which archgate does not follow (attack 36 F4: `cd /tmp` then `cp "$1"`).
pub(super) fn judge(route: &Route, steering: &Steering, args: &[String]) -> Result<()> {
    for (i, a) in args.iter().enumerate() {
        let read = steering.reads_from.iter().any(|p| p.covers(i));
        if let Some((line, cd)) = &steering.changes_dir
            && read
            && !a.starts_with('/')
            && !a.contains("://")
            && !a.is_empty()
        {
            return Err(DesktopError::invalid(
                "args",
                format!(
                    "`{}` reads {a:?} as a file after it changes directory ({} line {line}: \
                     {cd}); give the file as an absolute path",
                    route.route, route.binary
                ),
            ));
        }
        not_anothers_file(route, a, steering.installs_code.is_some())?;
    }
    Ok(())
}

/// At the run: every value still names no file another user could have written (a value that
/// named nothing at the question may name one now).
pub fn files_still_the_persons(route: &Route, args: &[String]) -> Result<()> {
    for a in args {
        not_anothers_file(route, a, false)?;
    }
    Ok(())
}

/// A value that names an existing file or directory (as the route's script sees it: routes run
/// in `/`, so a relative value names a path under `/`, attack 35 L5; a `file://` URL or an
/// `--opt=PATH` by the path in it) must be the person's own or root's all the way, a directory
/// with every entry in it. Addresses, values that name nothing
/// and bare names (an entry of `/` is root's to make) are not files here; nor, unless the route
/// installs code, a device, socket or pipe (`/dev/null` is every user's to write).
fn not_anothers_file(route: &Route, value: &str, installs: bool) -> Result<()> {
    let Some(named) = path_in(value) else {
        return Ok(());
    };
    let path = Path::new("/").join(named);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(());
    }
    let plain = std::fs::metadata(&path).is_ok_and(|m| m.is_file() || m.is_dir());
    if !plain && !installs {
        return Ok(());
    }
    // This process's uid (the person's): the owner of its own /proc entry.
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .map_err(|e| {
            DesktopError::invalid(
                "args",
                format!("cannot tell whose file {value:?} is (/proc/self: {e}); not run"),
            )
        })?;
    let refuse = |what: &str, why: &dyn std::fmt::Display| {
        let does = if installs {
            "installs it as code that runs later"
        } else {
            "is given it"
        };
        DesktopError::invalid(
            "args",
            format!(
                "`{}` {does} ({value:?}), and {what} is not yours alone: {why}; a route is \
                 given only files that you (or root) own all the way",
                route.route
            ),
        )
    };
    let real = archgate_exec::trusted_path(Some(me), &path).map_err(|why| refuse("it", &why))?;
    // A directory is copied with everything in it (`cp -r`): each entry is judged the same way
    // (attack 35 F6: a 0777 file another uid owned, inside the person's directory).
    if real.is_dir() {
        let mut stack = vec![real];
        let mut seen = 0usize;
        while let Some(dir) = stack.pop() {
            let entries = std::fs::read_dir(&dir)
                .map_err(|e| refuse(&format!("{}", dir.display()), &format!("unreadable: {e}")))?;
            for entry in entries {
                let entry = entry.map_err(|e| refuse("an entry", &e))?;
                seen += 1;
                if seen > MAX_ENTRIES {
                    return Err(refuse(
                        "what it holds",
                        &format!("more than {MAX_ENTRIES} entries, too many to judge"),
                    ));
                }
                let p = entry.path();
                let inner = archgate_exec::trusted_path(Some(me), &p)
                    .map_err(|why| refuse(&format!("{}", p.display()), &why))?;
                // A link is judged to its end above; only a real subdirectory is walked (a link
                // to a directory is copied as a link by `cp -r`).
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(inner);
                }
            }
        }
    }
    Ok(())
}

/// The path a value names, as a program given it would read it: itself; a `file://` URL's path;
/// the value of an option spelled `--opt=PATH`. `None` for other addresses and for bare names.
fn path_in(value: &str) -> Option<&str> {
    let named = if let Some(rest) = value.strip_prefix("file://") {
        // `file:///p` and `file://localhost/p` name `/p`.
        rest.strip_prefix("localhost").unwrap_or(rest)
    } else if value.starts_with('-') {
        value.split_once('=')?.1
    } else {
        value
    };
    (named.contains('/') && !named.contains("://")).then_some(named)
}

#[cfg(test)]
mod tests {
    use super::path_in;

    #[test]
    fn the_path_a_value_names_as_a_program_would_read_it() {
        assert_eq!(path_in("/tmp/x"), Some("/tmp/x"));
        assert_eq!(path_in("dir/x"), Some("dir/x"));
        assert_eq!(path_in("file:///tmp/x"), Some("/tmp/x"));
        assert_eq!(path_in("file://localhost/tmp/x"), Some("/tmp/x"));
        assert_eq!(path_in("--from=/tmp/x"), Some("/tmp/x"));
        for not in ["post-update", "https://e.org/x", "--force", "-x", "name"] {
            assert_eq!(path_in(not), None, "{not}");
        }
    }
}

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
use std::path::{Path, PathBuf};

use super::registry::Route;
use super::script::ScriptFacts;
use super::steer::Steering;
use crate::error::{DesktopError, Result};

/// How many entries a directory value may hold before it is refused unjudged.
const MAX_ENTRIES: usize = 10_000;

/// Every value judged as a file (see the module documentation); a value a script that changes
/// directory reads as a file must be absolute: relative, it names a file in whatever directory
/// the script moved to, which archgate does not follow (attack 36 F4: `cd /tmp` then `cp "$1"`).
pub(super) fn judge(
    route: &Route,
    steering: &Steering,
    facts: &ScriptFacts,
    args: &[String],
) -> Result<()> {
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
        judge_value(route, a, facts, steering.installs_code.is_some())?;
    }
    Ok(())
}

/// At the run: every value still names no file another user could have written (a value that
/// named nothing at the question may name one now).
pub fn files_still_the_persons(route: &Route, facts: &ScriptFacts, args: &[String]) -> Result<()> {
    let installs = facts.steering_for(args).installs_code.is_some();
    for a in args {
        judge_value(route, a, facts, installs)?;
    }
    Ok(())
}

/// One value, as every file it may name (attack 37 F2, F5: a script prefixes a value, splits it
/// or reads it where it changed directory to): the value itself; each word of it (an unquoted
/// `$1` splits); a relative one under `/` (where routes start), the person's home, and every
/// directory the route's scripts name literally (`cd /tmp`, `"/tmp/$1"`, `env -C /tmp`:
/// `ScriptFacts::dirs`). A relative value may not climb with `..` (`zz/../../tmp/x` after a
/// prefix reaches `/tmp`). Another user can thereby make a route refuse a value, by creating a
/// file of its name in such a directory — never make it read their file.
fn judge_value(route: &Route, value: &str, facts: &ScriptFacts, installs: bool) -> Result<()> {
    // Words as a script may split the value: at blanks (an unquoted `$1`), commas and colons
    // (`IFS=,`, a `PATH`-like list) — attack 38 F3.
    let words = std::iter::once(value).chain(
        value
            .split(|c: char| c.is_whitespace() || c == ',' || c == ':')
            .filter(|w| !w.is_empty() && *w != value),
    );
    for (n, word) in words.enumerate() {
        let named = path_in(word);
        if let Some(p) = named {
            // Text is not the disk: `..` after a directory the script creates, or a process's
            // own view (`/proc/self/cwd`), reaches elsewhere than the path spelled (attack 38
            // F5, F6). A value may name neither.
            if p.split('/').any(|seg| seg == "..") {
                return Err(DesktopError::invalid(
                    "args",
                    format!(
                        "`{}` is given {value:?}, a path that climbs with `..`; give files as \
                         paths without it",
                        route.route
                    ),
                ));
            }
            if p.starts_with("/proc/") || p == "/proc" {
                return Err(DesktopError::invalid(
                    "args",
                    format!(
                        "`{}` is given {value:?}, a path under /proc, which names what a process \
                         sees, not a file of yours",
                        route.route
                    ),
                ));
            }
        }
        let relative = match named {
            // The value itself, whether or not it names anything yet; a word of it only when it
            // does (a command line or JSON holds words that are paths of no file).
            Some(p) if p.starts_with('/') => {
                if n == 0 || std::fs::symlink_metadata(p).is_ok() {
                    not_anothers_file(route, value, Path::new(p), installs)?;
                }
                continue;
            }
            Some(p) => p,
            // A bare name: a file only where a script puts it under a directory.
            None if !word.is_empty()
                && !word.starts_with('-')
                && !word.contains("://")
                && word != "."
                && word != ".." =>
            {
                word
            }
            None => continue,
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let bases = std::iter::once(PathBuf::from("/"))
            .chain(home)
            .chain(facts.dirs.iter().cloned());
        // And a name a script builds around it, as written and as Omarchy's scripts clean a name
        // (lowercased, blanks as dashes: attack 38 F1).
        let cleaned = relative.to_lowercase().replace(' ', "-");
        let built = facts.names.iter().flat_map(|t| {
            [t.with(relative), t.with(&cleaned)]
                .into_iter()
                .filter(|_| !relative.contains('/'))
        });
        for candidate in bases.map(|b| b.join(relative)).chain(built) {
            // A bare name that is no entry there is nothing; one that is, is judged.
            if std::fs::symlink_metadata(&candidate).is_ok() {
                not_anothers_file(route, value, &candidate, installs)?;
            }
        }
    }
    Ok(())
}

/// The file or directory at `path` (named by `value`) is the person's own or root's all the way,
/// a directory with every entry in it, links to directories followed (`cp -rL` copies what they
/// lead to: attack 37 F7). A root-owned device (`/dev/null`) is no one's to write into code; a
/// pipe, socket or other device another user made is refused like a file (attack 37 F1: a FIFO
/// fed a stranger's script into a hook). A path that names nothing must lie in a directory only
/// root or the person can write: otherwise another user may create it between this judgement
/// and the script's read (attack 37 F1).
fn not_anothers_file(route: &Route, value: &str, path: &Path, installs: bool) -> Result<()> {
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
    let Ok(meta) = std::fs::metadata(path) else {
        if std::fs::symlink_metadata(path).is_ok() {
            // A link that leads nowhere: whoever may create its end chooses the file.
            return crate::omarchy::tree::dangling_end_open(path, Some(me))
                .map_or(Ok(()), |(dir, why)| {
                    Err(refuse(&dir.display().to_string(), &why))
                });
        }
        // A path that names nothing: only root or the person may create it where it would be.
        return crate::omarchy::tree::nearest_existing_open(path, Some(me))
            .map_or(Ok(()), |(dir, why)| {
                Err(refuse(&dir.display().to_string(), &why))
            });
    };
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if (t.is_char_device() || t.is_block_device()) && meta.uid() == 0 && !installs {
            return Ok(());
        }
    }
    let real = archgate_exec::trusted_path(Some(me), path).map_err(|why| refuse("it", &why))?;
    // A directory is copied with everything in it (`cp -r`, `cp -rL`): each entry is judged the
    // same way (attack 35 F6: a 0777 file another uid owned, inside the person's directory).
    if meta.is_dir() {
        let mut stack = vec![real.clone()];
        let mut walked: std::collections::BTreeSet<PathBuf> = [real].into();
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
                if std::fs::metadata(&p).is_ok_and(|m| m.is_dir()) && walked.insert(inner.clone()) {
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
    let lower = value.get(..5).map(str::to_ascii_lowercase);
    let named = if lower.as_deref() == Some("file:") {
        // `file:///p`, `file://localhost/p`, `FILE:///p` and `file:/p` (attack 38 F8) name `/p`.
        let rest = &value[5..];
        let rest = rest.strip_prefix("//").unwrap_or(rest);
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
        assert_eq!(path_in("file:/tmp/x"), Some("/tmp/x"));
        assert_eq!(path_in("FILE:///tmp/x"), Some("/tmp/x"));
        assert_eq!(path_in("--from=/tmp/x"), Some("/tmp/x"));
        for not in ["post-update", "https://e.org/x", "--force", "-x", "name"] {
            assert_eq!(path_in(not), None, "{not}");
        }
    }
}

//! A file a call will write, whose new contents archgate knows before it runs (the hand-off's
//! `.pacnew` adopt replaces a config file with the one pacman left): the change as a unified
//! diff a question carries ([`crate::picture::Picture::Diff`]) and each channel draws itself.
//!
//! Bounded: inputs of at most [`MAX_INPUT`] bytes, at most [`MAX_LINES`] lines carried, each cut
//! to [`MAX_LINE`] characters; the counts of added and removed lines are of the whole change.
//! Every line is made visible-only (`text::for_terminal`): a config line cannot move a
//! terminal's cursor or reorder what the person reads; each surface escapes it again for its
//! own markup.

use serde::Serialize;
use std::path::Path;

use crate::text::for_terminal_cut;

/// Files larger than this are not diffed (the note says so).
pub const MAX_INPUT: u64 = 1024 * 1024;
/// Most diff lines a question carries (hunk headers included).
pub const MAX_LINES: usize = 300;
/// Characters kept of one line.
pub const MAX_LINE: usize = 200;
/// Unchanged lines shown around a change.
const CONTEXT: usize = 3;

/// What one diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `@@ -a,b +c,d @@`
    Hunk,
    Added,
    Removed,
    Same,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Line {
    pub op: Op,
    pub text: String,
}

/// The change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// The file that will be written, visible-only.
    pub path: String,
    /// Where its new contents come from ("its .pacnew"), visible-only.
    pub from: String,
    pub lines: Vec<Line>,
    /// Lines added and removed in the whole change (not only the lines carried).
    pub added: usize,
    pub removed: usize,
    /// Lines were left out: the whole change is longer than [`MAX_LINES`].
    pub cut: bool,
    /// Why there is no diff: `identical`, `binary`, `too_large`, `unreadable`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<&'static str>,
}

impl FileDiff {
    fn empty(path: &str, from: &str, note: &'static str) -> FileDiff {
        FileDiff {
            path: for_terminal_cut(path, MAX_LINE),
            from: for_terminal_cut(from, MAX_LINE),
            lines: Vec::new(),
            added: 0,
            removed: 0,
            cut: false,
            note: Some(note),
        }
    }
}

/// The change from `old` to `new` of the file at `path` (contents from `from`).
pub fn of_texts(path: &str, from: &str, old: &str, new: &str) -> FileDiff {
    if old == new {
        return FileDiff::empty(path, from, "identical");
    }
    let d = similar::TextDiff::from_lines(old, new);
    let mut out = FileDiff::empty(path, from, "identical");
    out.note = None;
    for group in d.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (o_len, n_len) = (last.old_range().end - o, last.new_range().end - n);
        push(
            &mut out,
            Op::Hunk,
            &format!("@@ -{},{o_len} +{},{n_len} @@", o + 1, n + 1),
        );
        for op in &group {
            for change in d.iter_changes(op) {
                let kind = match change.tag() {
                    similar::ChangeTag::Insert => {
                        out.added += 1;
                        Op::Added
                    }
                    similar::ChangeTag::Delete => {
                        out.removed += 1;
                        Op::Removed
                    }
                    similar::ChangeTag::Equal => Op::Same,
                };
                let text = change.value();
                push(&mut out, kind, text.strip_suffix('\n').unwrap_or(text));
            }
        }
    }
    out
}

fn push(out: &mut FileDiff, op: Op, text: &str) {
    if out.lines.len() >= MAX_LINES {
        out.cut = true;
        return;
    }
    out.lines.push(Line {
        op,
        text: for_terminal_cut(text, MAX_LINE),
    });
}

/// The change when `live` is replaced by `new` (`live` may be missing: every line is new), as
/// the two files are now. Only regular files of at most [`MAX_INPUT`] bytes of text are read,
/// opened without following a last link or blocking on a pipe.
pub fn of_files(live: &Path, new: &Path) -> FileDiff {
    let path = live.display().to_string();
    let from = new.display().to_string();
    let new_text = match read(new) {
        Ok(t) => t,
        Err(note) => return FileDiff::empty(&path, &from, note),
    };
    let old_text = match std::fs::symlink_metadata(live) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        _ => match read(live) {
            Ok(t) => t,
            Err(note) => return FileDiff::empty(&path, &from, note),
        },
    };
    of_texts(&path, &from, &old_text, &new_text)
}

fn read(p: &Path) -> Result<String, &'static str> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(p)
        .map_err(|_| "unreadable")?;
    let meta = f.metadata().map_err(|_| "unreadable")?;
    if !meta.is_file() {
        return Err("unreadable");
    }
    if meta.len() > MAX_INPUT {
        return Err("too_large");
    }
    let mut bytes = Vec::new();
    f.take(MAX_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| "unreadable")?;
    if bytes.len() as u64 > MAX_INPUT {
        return Err("too_large");
    }
    if bytes.contains(&0) {
        return Err("binary");
    }
    String::from_utf8(bytes).map_err(|_| "binary")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_a_bounded_unified_diff_with_whole_counts() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
        let d = of_texts("/etc/x.conf", "/etc/x.conf.pacnew", old, new);
        assert_eq!((d.added, d.removed, d.cut, d.note), (2, 1, false, None));
        let shown: Vec<(Op, &str)> = d.lines.iter().map(|l| (l.op, l.text.as_str())).collect();
        assert_eq!(shown[0], (Op::Hunk, "@@ -1,8 +1,9 @@"));
        assert!(shown.contains(&(Op::Removed, "d")), "{shown:?}");
        assert!(shown.contains(&(Op::Added, "D")), "{shown:?}");
        assert!(shown.contains(&(Op::Added, "i")), "{shown:?}");

        let big_old: String = (0..5000).map(|i| format!("{i}\n")).collect();
        let big_new: String = (0..5000).map(|i| format!("{}\n", i * 7)).collect();
        let d = of_texts("p", "q", &big_old, &big_new);
        assert!(d.cut && d.lines.len() == MAX_LINES, "{}", d.lines.len());
        assert!(d.added > MAX_LINES && d.removed > MAX_LINES, "whole counts");
        assert_eq!(of_texts("p", "q", "x\n", "x\n").note, Some("identical"));
    }

    #[test]
    fn every_line_is_visible_only_and_cut() {
        let evil = format!("\u{1b}[2J\u{202e}evil <b>{}\n", "z".repeat(1000));
        let d = of_texts("/etc/\u{1b}x", "n", "", &evil);
        assert_eq!(d.path, "/etc/\\x1bx");
        let line = &d.lines[1];
        assert_eq!(line.op, Op::Added);
        assert!(
            line.text.starts_with("\\x1b[2J\\u{202e}evil <b>"),
            "{}",
            line.text
        );
        assert!(
            line.text.chars().count() <= MAX_LINE + 1,
            "{}",
            line.text.len()
        );
        assert!(!line.text.chars().any(char::is_control));
    }

    #[test]
    fn files_are_read_bounded_and_never_through_a_pipe_or_a_link() {
        let t = tempfile::tempdir().unwrap();
        let live = t.path().join("a.conf");
        let new = t.path().join("a.conf.pacnew");
        std::fs::write(&live, "x = 1\n").unwrap();
        std::fs::write(&new, "x = 2\n").unwrap();
        let d = of_files(&live, &new);
        assert_eq!((d.added, d.removed), (1, 1));
        assert!(d.path.ends_with("a.conf"), "{}", d.path);
        // A missing live file: everything is new.
        let d = of_files(&t.path().join("none"), &new);
        assert_eq!((d.added, d.removed, d.note), (1, 0, None));
        std::fs::write(&new, b"\x00\x01").unwrap();
        assert_eq!(of_files(&live, &new).note, Some("binary"));
        std::fs::write(&new, vec![b'a'; MAX_INPUT as usize + 1]).unwrap();
        assert_eq!(of_files(&live, &new).note, Some("too_large"));
        std::fs::remove_file(&new).unwrap();
        nix::unistd::mkfifo(&new, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(of_files(&live, &new).note, Some("unreadable"));
        std::fs::remove_file(&new).unwrap();
        std::os::unix::fs::symlink(&live, &new).unwrap();
        assert_eq!(of_files(&live, &new).note, Some("unreadable"));
    }
}

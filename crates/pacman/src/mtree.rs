//! The local database's `mtree` files: what every installed file looked like in the package.
//!
//! `DBPath/local/<name>-<version>/mtree` is the package's `.MTREE`, a gzip'd mtree(5) text
//! written by bsdtar for makepkg: `#mtree`, `/set` and `/unset` lines carrying defaults, and one
//! line per entry (`./usr/bin/x time=… mode=… size=… md5digest=… sha256digest=…`), names escaped
//! as `\ooo` octal. Only full paths (`./…`) occur in packages; a relative entry is reported as
//! malformed rather than guessed at.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use crate::error::{MtreeProblem, PacmanError};

/// Largest mtree accepted, decompressed (the biggest real packages are a few MiB).
pub const MAX_MTREE_BYTES: u64 = 64 * 1024 * 1024;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
    /// A device, FIFO or socket (pacman does not check those).
    Other,
}

/// One entry, with the `/set` defaults applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MtreeEntry {
    /// The path as written, decoded, without the leading `./` (e.g. `usr/bin/x`, `.PKGINFO`).
    pub path: String,
    /// `type=`.
    pub kind: EntryType,
    /// `uid=`.
    pub uid: Option<u32>,
    /// `gid=`.
    pub gid: Option<u32>,
    /// `mode=` (permission bits, octal in the file).
    pub mode: Option<u32>,
    /// `time=`, whole seconds.
    pub time: Option<i64>,
    /// `size=`.
    pub size: Option<u64>,
    /// `md5digest=`, lowercase hex.
    pub md5: Option<String>,
    /// `sha256digest=`, lowercase hex.
    pub sha256: Option<String>,
    /// `link=`, decoded.
    pub link: Option<String>,
}

/// Reads and parses one gzip'd mtree file.
pub fn read(path: &Path) -> Result<Vec<MtreeEntry>, PacmanError> {
    let file = std::fs::File::open(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            PacmanError::MtreeMissing {
                path: path.to_owned(),
            }
        } else {
            PacmanError::DbUnreadable {
                path: path.to_owned(),
                source,
            }
        }
    })?;
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(file)
        .take(MAX_MTREE_BYTES + 1)
        .read_to_end(&mut text)
        .map_err(|source| PacmanError::MtreeDamaged {
            path: path.to_owned(),
            source,
        })?;
    if text.len() as u64 > MAX_MTREE_BYTES {
        return Err(PacmanError::TooLarge {
            what: path.display().to_string(),
            limit: MAX_MTREE_BYTES,
        });
    }
    parse(&text).map_err(|(line, problem)| PacmanError::MtreeMalformed {
        path: path.to_owned(),
        line,
        problem,
    })
}

/// Parses decompressed mtree text; the error carries the 1-based line number.
pub fn parse(bytes: &[u8]) -> Result<Vec<MtreeEntry>, (usize, MtreeProblem)> {
    let text = std::str::from_utf8(bytes).map_err(|_| (0, MtreeProblem::NotUtf8))?;
    let mut defaults: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    let mut seen_header = false;
    let mut pending = String::new();
    let mut pending_start = 0;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if pending.is_empty() {
            pending_start = n;
        }
        // A trailing backslash continues the line.
        if let Some(head) = raw.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(raw);
        let line = std::mem::take(&mut pending);
        let n = pending_start;
        let line = line.trim();
        if !seen_header {
            if line.is_empty() {
                continue;
            }
            if !line.starts_with("#mtree") {
                return Err((n, MtreeProblem::NoHeader));
            }
            seen_header = true;
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_ascii_whitespace();
        let first = words.next().unwrap_or_default();
        match first {
            "/set" => {
                for w in words {
                    let (k, v) = keyword(w).map_err(|p| (n, p))?;
                    defaults.insert(k.to_owned(), v.to_owned());
                }
            }
            "/unset" => {
                for w in words {
                    if w == "all" {
                        defaults.clear();
                    } else {
                        defaults.remove(w);
                    }
                }
            }
            _ if first.starts_with('/') => {
                return Err((n, MtreeProblem::UnknownCommand(cut(first))));
            }
            _ => {
                if !first.contains('/') {
                    return Err((n, MtreeProblem::RelativeEntry(cut(first))));
                }
                let mut keys = defaults.clone();
                for w in words {
                    let (k, v) = keyword(w).map_err(|p| (n, p))?;
                    keys.insert(k.to_owned(), v.to_owned());
                }
                let name = decode(first).ok_or_else(|| (n, MtreeProblem::BadEscape(cut(first))))?;
                let path = name.strip_prefix("./").unwrap_or(&name).to_owned();
                out.push(entry(path, &keys).map_err(|p| (n, p))?);
            }
        }
    }
    if !seen_header {
        return Err((1, MtreeProblem::NoHeader));
    }
    Ok(out)
}

fn keyword(word: &str) -> Result<(&str, &str), MtreeProblem> {
    match word.split_once('=') {
        Some((k, v)) => Ok((k, v)),
        // Keywords without a value (`nochange`, `optional`, `ignore`) carry no property here.
        None => Ok((word, "")),
    }
}

fn entry(path: String, keys: &HashMap<String, String>) -> Result<MtreeEntry, MtreeProblem> {
    let kind = match keys.get("type").map(String::as_str) {
        Some("file") | None => EntryType::File,
        Some("dir") => EntryType::Dir,
        Some("link") => EntryType::Link,
        Some("block" | "char" | "fifo" | "socket") => EntryType::Other,
        Some(other) => return Err(MtreeProblem::UnknownType(cut(other))),
    };
    let number = |key: &'static str, radix: u32| -> Result<Option<u64>, MtreeProblem> {
        match keys.get(key) {
            None => Ok(None),
            Some(v) => {
                u64::from_str_radix(v, radix)
                    .map(Some)
                    .map_err(|_| MtreeProblem::BadNumber {
                        keyword: key,
                        value: cut(v),
                    })
            }
        }
    };
    let small = |key: &'static str, radix: u32| -> Result<Option<u32>, MtreeProblem> {
        number(key, radix)?
            .map(|v| {
                u32::try_from(v).map_err(|_| MtreeProblem::BadNumber {
                    keyword: key,
                    value: v.to_string(),
                })
            })
            .transpose()
    };
    let time = match keys.get("time") {
        None => None,
        Some(v) => {
            let secs = v.split('.').next().unwrap_or_default();
            Some(secs.parse::<i64>().map_err(|_| MtreeProblem::BadNumber {
                keyword: "time",
                value: cut(v),
            })?)
        }
    };
    let digest = |names: [&str; 2], len: usize, key: &'static str| match names
        .iter()
        .find_map(|n| keys.get(*n))
    {
        None => Ok(None),
        Some(v) if v.len() == len && v.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(v.to_ascii_lowercase()))
        }
        Some(v) => Err(MtreeProblem::BadDigest {
            keyword: key,
            value: cut(v),
        }),
    };
    let link = match keys.get("link") {
        None => None,
        Some(v) => Some(decode(v).ok_or_else(|| MtreeProblem::BadEscape(cut(v)))?),
    };
    Ok(MtreeEntry {
        path,
        kind,
        uid: small("uid", 10)?,
        gid: small("gid", 10)?,
        mode: small("mode", 8)?,
        time,
        size: number("size", 10)?,
        md5: digest(["md5digest", "md5"], 32, "md5digest")?,
        sha256: digest(["sha256digest", "sha256"], 64, "sha256digest")?,
        link,
    })
}

/// Decodes mtree's escapes: `\ooo` octal bytes and the C escapes libarchive reads.
fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let next = *b.get(i + 1)?;
        if (b'0'..=b'3').contains(&next)
            && b.get(i + 2).is_some_and(|c| (b'0'..=b'7').contains(c))
            && b.get(i + 3).is_some_and(|c| (b'0'..=b'7').contains(c))
        {
            out.push((next - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
            continue;
        }
        out.push(match next {
            b'\\' => b'\\',
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b's' => b' ',
            b't' => b'\t',
            b'v' => 0x0b,
            _ => return None,
        });
        i += 2;
    }
    String::from_utf8(out).ok()
}

/// A value quoted in an error, cut to a readable length.
fn cut(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_escapes_and_overrides() {
        let text = b"#mtree\n/set type=file uid=0 gid=0 mode=644\n\
            ./a\\040b time=12.5 size=3 sha256digest=AB00000000000000000000000000000000000000000000000000000000000000\n\
            /set mode=755\n./d time=1 type=dir\n./l type=link link=../x\\040y time=2\n\
            /unset mode\n./n time=3\n";
        let e = parse(text).unwrap();
        assert_eq!(e[0].path, "a b");
        assert_eq!(
            (e[0].time, e[0].size, e[0].mode),
            (Some(12), Some(3), Some(0o644))
        );
        assert!(e[0].sha256.as_deref().unwrap().starts_with("ab00"));
        assert_eq!((e[1].kind, e[1].mode), (EntryType::Dir, Some(0o755)));
        assert_eq!(e[2].link.as_deref(), Some("../x y"));
        assert_eq!(e[3].mode, None);
    }

    #[test]
    fn damage_is_named_by_line() {
        assert_eq!(parse(b"garbage\n").unwrap_err().0, 1);
        let bad = parse(b"#mtree\n./a mode=9x9\n").unwrap_err();
        assert_eq!(bad.0, 2);
        assert!(matches!(
            bad.1,
            MtreeProblem::BadNumber {
                keyword: "mode",
                ..
            }
        ));
        assert!(matches!(
            parse(b"#mtree\n./a type=weird\n").unwrap_err().1,
            MtreeProblem::UnknownType(_)
        ));
        assert!(matches!(
            parse(b"#mtree\nrelative time=1\n").unwrap_err().1,
            MtreeProblem::RelativeEntry(_)
        ));
        assert!(matches!(
            parse(b"#mtree\n./a md5digest=xyz\n").unwrap_err().1,
            MtreeProblem::BadDigest { .. }
        ));
    }
}

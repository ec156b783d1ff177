//! The `desc` / `files` entry format shared by sync and local databases, parsed leniently.
//!
//! Why not `alpm-repo-db` / `alpm-db` (the official ALPM crates for these formats)? Both were
//! tried against real databases made by pacman's own tools and refuse entries pacman accepts:
//! - `alpm-repo-db` 0.2 infers schema v1 from `%MD5SUM%` and then requires `%PGPSIG%`, so every
//!   entry `repo-add` writes for an unsigned package (custom and local repositories) fails with
//!   `MissingSection(PgpSig)`.
//! - `alpm-db` 0.3 requires `Name <email>` in `%PACKAGER%`; makepkg's default
//!   `Unknown Packager` (every locally built AUR package) fails the whole entry.
//! - both reject unknown sections, so a future pacman field would make a database unreadable.
//!
//! pacman itself ignores what it does not know, and one odd entry must not hide a whole system,
//! so this module follows pacman: `%SECTION%` headers, one value per line, a blank line ends a
//! section, unknown sections are skipped. Only what pacman needs is required (`%NAME%`,
//! `%VERSION%`); numbers must be numbers. Versions are still compared with `alpm-types`.

use crate::error::EntryProblem;
use crate::version::Depend;

/// Largest single `desc`/`files` entry accepted (a `files` list of a huge package is a few MiB).
pub const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// One package as a database describes it (sync or local).
#[derive(Debug, Clone, Default)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub base: Option<String>,
    pub description: String,
    pub filename: Option<String>,
    pub url: Option<String>,
    pub arch: Option<String>,
    pub licenses: Vec<String>,
    pub groups: Vec<String>,
    pub provides: Vec<Depend>,
    pub depends: Vec<Depend>,
    pub optdepends: Vec<Depend>,
    pub makedepends: Vec<Depend>,
    pub checkdepends: Vec<Depend>,
    pub conflicts: Vec<Depend>,
    pub replaces: Vec<Depend>,
    /// Download size (sync `%CSIZE%`).
    pub download_size: Option<u64>,
    /// Installed size (sync `%ISIZE%`, local `%SIZE%`).
    pub installed_size: Option<u64>,
    pub packager: Option<String>,
    pub build_date: Option<i64>,
    pub install_date: Option<i64>,
    /// Local `%REASON%`: 0 explicit, 1 dependency.
    pub reason: Option<u8>,
    /// Local `%VALIDATION%` values (`none`, `md5`, `sha256`, `pgp`).
    pub validation: Vec<String>,
    pub md5sum: Option<String>,
    pub sha256sum: Option<String>,
    pub has_signature: bool,
}

/// The `%FILES%` and `%BACKUP%` sections of a `files` entry.
#[derive(Debug, Clone, Default)]
pub struct FileList {
    /// Paths relative to the root, directories end with `/`.
    pub files: Vec<String>,
    /// Backup entries (`path<TAB>md5`), paths only.
    pub backup: Vec<String>,
}

/// The value lines of one section, kept as the slice of the entry they span (no copy).
///
/// A value line is never blank (a blank line ends its section), so an empty block means the
/// section has no values. Lines keep their text except trailing `\r`s, as pacman reads them.
#[derive(Debug, Clone, Copy)]
struct Values<'a> {
    block: &'a str,
}

impl<'a> Values<'a> {
    fn iter(self) -> impl Iterator<Item = &'a str> {
        // The block never ends with `\n`, so an empty block yields no line.
        self.block
            .split_terminator('\n')
            .map(|l| l.trim_end_matches('\r'))
    }

    fn first(self) -> Option<&'a str> {
        if self.block.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', self.block.as_bytes()).unwrap_or(self.block.len());
        Some(self.block[..end].trim_end_matches('\r'))
    }

    fn is_empty(self) -> bool {
        self.block.is_empty()
    }

    /// The lines joined with `\n` (the block itself unless it holds `\r`s).
    fn joined(self) -> String {
        if memchr::memchr(b'\r', self.block.as_bytes()).is_none() {
            self.block.to_owned()
        } else {
            self.iter().collect::<Vec<_>>().join("\n")
        }
    }
}

/// Walks `%KEY%` sections: calls `f(key, values)` for each.
fn sections<'a>(
    text: &'a str,
    mut f: impl FnMut(&'a str, Values<'a>) -> Result<(), EntryProblem>,
) -> Result<(), EntryProblem> {
    // (key, start and end of its value lines in `text`)
    let mut current: Option<(&str, usize, usize)> = None;
    let mut flush = |current: &mut Option<(&'a str, usize, usize)>| match current.take() {
        Some((key, start, end)) => f(
            key,
            Values {
                block: &text[start..end],
            },
        ),
        None => Ok(()),
    };
    let bytes = text.as_bytes();
    let mut pos = 0;
    let mut index = 0;
    // Same lines as `str::lines`: split at `\n`, no empty line after a final `\n`.
    while pos < bytes.len() {
        let eol = memchr::memchr(b'\n', &bytes[pos..]).map_or(bytes.len(), |i| pos + i);
        let line = text[pos..eol].trim_end_matches('\r');
        index += 1;
        let trimmed = line.trim();
        if trimmed.len() > 2 && trimmed.starts_with('%') && trimmed.ends_with('%') {
            flush(&mut current)?;
            current = Some((&trimmed[1..trimmed.len() - 1], eol, eol));
        } else if trimmed.is_empty() {
            flush(&mut current)?;
        } else if let Some((_, start, end)) = current.as_mut() {
            if *start == *end {
                *start = pos;
            }
            *end = pos + line.len();
        } else {
            return Err(EntryProblem::StrayLine { line: index });
        }
        pos = eol + 1;
    }
    flush(&mut current)
}

fn number(section: &'static str, values: Values<'_>) -> Result<Option<u64>, EntryProblem> {
    match values.first() {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| EntryProblem::NotANumber {
                section,
                value: v.chars().take(40).collect(),
            }),
    }
}

fn date(section: &'static str, values: Values<'_>) -> Result<Option<i64>, EntryProblem> {
    match values.first() {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse::<i64>()
            .map(Some)
            .map_err(|_| EntryProblem::NotANumber {
                section,
                value: v.chars().take(40).collect(),
            }),
    }
}

fn first(values: Values<'_>) -> Option<String> {
    values.first().map(str::to_owned)
}

fn strings(values: Values<'_>) -> Vec<String> {
    values.iter().map(str::to_owned).collect()
}

fn depends(values: Values<'_>) -> Vec<Depend> {
    values.iter().map(Depend::parse).collect()
}

/// Parses a `desc` entry (also the old split `depends` entry) into `pkg`, keeping what is set.
pub fn parse_desc_into(pkg: &mut Package, bytes: &[u8]) -> Result<(), EntryProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| EntryProblem::NotUtf8)?;
    sections(text, |key, values| {
        match key {
            "NAME" => pkg.name = first(values).unwrap_or_default(),
            "VERSION" => pkg.version = first(values).unwrap_or_default(),
            "BASE" => pkg.base = first(values),
            "DESC" => pkg.description = values.joined(),
            "FILENAME" => pkg.filename = first(values),
            "URL" => pkg.url = first(values),
            "ARCH" => pkg.arch = first(values),
            "LICENSE" => pkg.licenses = strings(values),
            "GROUPS" => pkg.groups = strings(values),
            "PROVIDES" => pkg.provides = depends(values),
            "DEPENDS" => pkg.depends = depends(values),
            "OPTDEPENDS" => pkg.optdepends = depends(values),
            "MAKEDEPENDS" => pkg.makedepends = depends(values),
            "CHECKDEPENDS" => pkg.checkdepends = depends(values),
            "CONFLICTS" => pkg.conflicts = depends(values),
            "REPLACES" => pkg.replaces = depends(values),
            "CSIZE" => pkg.download_size = number("CSIZE", values)?,
            "ISIZE" => pkg.installed_size = number("ISIZE", values)?,
            "SIZE" => pkg.installed_size = number("SIZE", values)?,
            "PACKAGER" => pkg.packager = first(values),
            "BUILDDATE" => pkg.build_date = date("BUILDDATE", values)?,
            "INSTALLDATE" => pkg.install_date = date("INSTALLDATE", values)?,
            "REASON" => {
                pkg.reason = number("REASON", values)?.map(|r| u8::from(r != 0));
            }
            "VALIDATION" => pkg.validation = strings(values),
            "MD5SUM" => pkg.md5sum = first(values),
            "SHA256SUM" => pkg.sha256sum = first(values),
            "PGPSIG" => pkg.has_signature = !values.is_empty(),
            _ => {}
        }
        Ok(())
    })
}

/// Checks the sections every package needs.
pub fn check_required(pkg: &Package) -> Result<(), EntryProblem> {
    if pkg.name.is_empty() {
        return Err(EntryProblem::MissingSection("NAME"));
    }
    if pkg.version.is_empty() {
        return Err(EntryProblem::MissingSection("VERSION"));
    }
    Ok(())
}

/// Parses a whole `desc` entry into a new package.
pub fn parse_desc(bytes: &[u8]) -> Result<Package, EntryProblem> {
    let mut pkg = Package::default();
    parse_desc_into(&mut pkg, bytes)?;
    check_required(&pkg)?;
    Ok(pkg)
}

/// Parses a `files` entry.
pub fn parse_files(bytes: &[u8]) -> Result<FileList, EntryProblem> {
    let text = std::str::from_utf8(bytes).map_err(|_| EntryProblem::NotUtf8)?;
    let mut list = FileList::default();
    sections(text, |key, values| {
        match key {
            "FILES" => list.files = strings(values),
            "BACKUP" => {
                list.backup = values
                    .iter()
                    .map(|v| v.split('\t').next().unwrap_or(v).to_owned())
                    .collect();
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(list)
}

/// Splits a database entry directory name `name-version-release` into (name, "version-release").
pub fn split_entry_dir(dir: &str) -> Option<(&str, &str)> {
    let rel = dir.rfind('-')?;
    let ver = dir[..rel].rfind('-')?;
    if ver == 0 {
        return None;
    }
    Some((&dir[..ver], &dir[ver + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DESC: &str = "%NAME%\nfoo\n\n%VERSION%\n1:2.0-3\n\n%DESC%\nA thing\n\n%CSIZE%\n12\n\n\
        %PACKAGER%\nUnknown Packager\n\n%FUTURE%\nwhatever\n\n%DEPENDS%\nbar>=1\nbaz\n\n";

    #[test]
    fn lenient_where_pacman_is() {
        let p = parse_desc(DESC.as_bytes()).unwrap();
        assert_eq!(p.name, "foo");
        assert_eq!(p.version, "1:2.0-3");
        assert_eq!(p.download_size, Some(12));
        assert_eq!(p.packager.as_deref(), Some("Unknown Packager"));
        assert_eq!(p.depends.len(), 2);
    }

    #[test]
    fn strict_where_it_matters() {
        assert_eq!(
            parse_desc(b"%NAME%\nfoo\n\n").unwrap_err(),
            EntryProblem::MissingSection("VERSION")
        );
        assert!(matches!(
            parse_desc(b"%NAME%\nfoo\n\n%VERSION%\n1-1\n\n%CSIZE%\nten\n"),
            Err(EntryProblem::NotANumber {
                section: "CSIZE",
                ..
            })
        ));
        assert_eq!(
            parse_desc(b"garbage\n%NAME%\nx\n").unwrap_err(),
            EntryProblem::StrayLine { line: 1 }
        );
        assert_eq!(
            parse_desc(&[0xff, 0xfe]).unwrap_err(),
            EntryProblem::NotUtf8
        );
    }

    #[test]
    fn entry_dirs_split_at_the_last_two_dashes() {
        assert_eq!(
            split_entry_dir("lib32-gcc-libs-14.1-1"),
            Some(("lib32-gcc-libs", "14.1-1"))
        );
        assert_eq!(split_entry_dir("x-1:2-3"), Some(("x", "1:2-3")));
        assert_eq!(split_entry_dir("nodash"), None);
        assert_eq!(split_entry_dir("-1-1"), None);
    }

    /// The line-by-line walker this module used before it worked on slices: the oracle.
    fn reference_sections(text: &str) -> Result<Vec<(String, Vec<String>)>, EntryProblem> {
        let mut out = Vec::new();
        let mut current: Option<(String, Vec<String>)> = None;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim_end_matches('\r');
            let trimmed = line.trim();
            if trimmed.len() > 2 && trimmed.starts_with('%') && trimmed.ends_with('%') {
                out.extend(current.take());
                current = Some((trimmed[1..trimmed.len() - 1].to_owned(), Vec::new()));
            } else if trimmed.is_empty() {
                out.extend(current.take());
            } else if let Some((_, values)) = current.as_mut() {
                values.push(line.to_owned());
            } else {
                return Err(EntryProblem::StrayLine { line: index + 1 });
            }
        }
        out.extend(current.take());
        Ok(out)
    }

    fn walked(text: &str) -> Result<Vec<(String, Vec<String>)>, EntryProblem> {
        let mut out = Vec::new();
        sections(text, |key, values| {
            let lines: Vec<String> = values.iter().map(str::to_owned).collect();
            assert_eq!(values.first(), lines.first().map(String::as_str));
            assert_eq!(values.is_empty(), lines.is_empty());
            assert_eq!(values.joined(), lines.join("\n"));
            out.push((key.to_owned(), lines));
            Ok(())
        })?;
        Ok(out)
    }

    proptest! {
        #[test]
        fn slices_walk_like_lines(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("%NAME%"), Just("%DESC%"), Just(" %DEPENDS% "), Just("%%"),
                    Just(""), Just("\r"), Just(" "), Just("\r\r"), Just("a b\r"),
                    Just("x\ry"), Just(" v "), Just("%"), Just("é"),
                ],
                0..30,
            ),
            ends in proptest::collection::vec(prop_oneof![Just("\n"), Just("\r\n")], 30),
            last_newline in any::<bool>(),
        ) {
            let mut text = String::new();
            for (i, part) in parts.iter().enumerate() {
                text.push_str(part);
                if i + 1 < parts.len() || last_newline {
                    text.push_str(ends[i]);
                }
            }
            prop_assert_eq!(walked(&text), reference_sections(&text));
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = parse_desc(&bytes);
            let _ = parse_files(&bytes);
        }

        #[test]
        fn section_shaped_garbage_never_panics(
            parts in proptest::collection::vec(
                prop_oneof![
                    Just("%NAME%".to_owned()), Just("%VERSION%".to_owned()),
                    Just("%CSIZE%".to_owned()), Just("%DEPENDS%".to_owned()),
                    Just("%%".to_owned()), Just("%".to_owned()), Just(String::new()),
                    "\\PC{0,20}",
                ],
                0..40,
            )
        ) {
            let text = parts.join("\n");
            if let Ok(p) = parse_desc(text.as_bytes()) {
                prop_assert!(!p.name.is_empty() && !p.version.is_empty());
            }
        }
    }
}

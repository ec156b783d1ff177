//! Reading a sync database archive (`.db` / `.files`): gzip, zstd or plain tar, by magic bytes.
//!
//! Archives are streamed entry by entry through one reused buffer. Inflating a whole `.db` into
//! memory and parsing it in place was measured too: it saves a copy but faults in tens of MiB
//! of fresh pages per load (and a `.files` archive can inflate to hundreds of MiB), which cost
//! as much as the copy on a first load.

use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::desc::{self, FileList, MAX_ENTRY_BYTES, Package};
use crate::error::{EntryProblem, PacmanError};

/// What one archive holds: packages, and for `.files` archives each package's file list.
#[derive(Debug, Default)]
pub struct ArchiveContents {
    /// Packages in archive order.
    pub packages: Vec<Package>,
    /// File lists, by package name (only `.files` archives carry them).
    pub files: HashMap<String, FileList>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    Gzip,
    Zstd,
    None,
}

fn compression(head: &[u8]) -> Result<Compression, &'static str> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Ok(Compression::Gzip)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Ok(Compression::Zstd)
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Err("xz")
    } else if head.starts_with(b"BZh") {
        Err("bzip2")
    } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Err("lz4")
    } else {
        Ok(Compression::None)
    }
}

fn detect(path: &Path, head: &[u8]) -> Result<Compression, PacmanError> {
    compression(head).map_err(|format| PacmanError::UnsupportedCompression {
        path: path.to_owned(),
        format,
    })
}

fn truncated(path: &Path) -> impl Fn(std::io::Error) -> PacmanError + '_ {
    move |source| PacmanError::DbTruncated {
        path: path.to_owned(),
        source,
    }
}

/// Reads and parses an archive file. `with_files` also keeps `%FILES%` lists.
pub fn read_archive(path: &Path, with_files: bool) -> Result<ArchiveContents, PacmanError> {
    let file = std::fs::File::open(path).map_err(|source| PacmanError::DbUnreadable {
        path: path.to_owned(),
        source,
    })?;
    let compressed_len = file.metadata().map_or(0, |m| m.len());
    let mut reader = BufReader::with_capacity(256 * 1024, file);
    let head = {
        use std::io::BufRead;
        reader
            .fill_buf()
            .map_err(|source| PacmanError::DbUnreadable {
                path: path.to_owned(),
                source,
            })?
            .get(..6)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    };
    let decoded: Box<dyn Read> = match detect(path, &head)? {
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(reader)),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::with_buffer(reader).map_err(truncated(path))?)
        }
        Compression::None => Box::new(reader),
    };
    // tar reads 512-byte headers and small entries: buffer above the decoder too, so the
    // decoder inflates in large runs.
    // A compressed `.db` holds a package in a few hundred bytes; reserving for one per 512
    // spares most regrowth of the package list without reserving much too much.
    let expected = if with_files {
        0
    } else {
        usize::try_from(compressed_len / 512).unwrap_or(0)
    };
    parse_tar_sized(
        path,
        BufReader::with_capacity(256 * 1024, decoded),
        with_files,
        expected,
    )
}

/// Collects packages and file lists from entries, in archive order.
struct Collector<'p> {
    path: &'p Path,
    with_files: bool,
    /// Package index of each entry directory.
    by_dir: HashMap<Box<str>, usize>,
    /// The directory of the last package entry (a package's entries are adjacent in every
    /// database pacman's tools write, so most lookups end here).
    last_dir: String,
    packages: Vec<Package>,
    lists: HashMap<String, FileList>,
}

/// Which entries of a package directory matter.
fn wanted(entry_path: &str, with_files: bool) -> Option<(&str, &str)> {
    let (dir, leaf) = entry_path.trim_start_matches("./").split_once('/')?;
    let keep = match leaf {
        "desc" | "depends" => true,
        "files" => with_files,
        _ => false,
    };
    keep.then_some((dir, leaf))
}

impl<'p> Collector<'p> {
    fn new(path: &'p Path, with_files: bool, expected: usize) -> Self {
        Collector {
            path,
            with_files,
            by_dir: HashMap::with_capacity(expected),
            last_dir: String::new(),
            packages: Vec::with_capacity(expected),
            lists: HashMap::new(),
        }
    }

    fn corrupt(&self, entry_path: &str, problem: EntryProblem) -> PacmanError {
        PacmanError::DbCorrupt {
            path: self.path.to_owned(),
            entry: entry_path.to_owned(),
            problem,
        }
    }

    /// One wanted entry's bytes.
    fn entry(&mut self, entry_path: &str, bytes: &[u8]) -> Result<(), PacmanError> {
        let Some((dir, leaf)) = wanted(entry_path, self.with_files) else {
            return Ok(());
        };
        if leaf == "files" {
            let list = desc::parse_files(bytes).map_err(|p| self.corrupt(entry_path, p))?;
            self.lists.insert(dir.to_owned(), list);
            return Ok(());
        }
        let index = if !self.packages.is_empty() && self.last_dir == dir {
            self.packages.len() - 1
        } else {
            self.last_dir.clear();
            self.last_dir.push_str(dir);
            match self.by_dir.get(dir) {
                Some(&i) => i,
                None => {
                    self.by_dir.insert(dir.into(), self.packages.len());
                    self.packages.push(Package::default());
                    self.packages.len() - 1
                }
            }
        };
        desc::parse_desc_into(&mut self.packages[index], bytes)
            .map_err(|p| self.corrupt(entry_path, p))
    }

    fn dir_of(&self, index: usize) -> &str {
        self.by_dir
            .iter()
            .find(|(_, i)| **i == index)
            .map_or("", |(dir, _)| dir)
    }

    fn finish(self) -> Result<ArchiveContents, PacmanError> {
        for (index, pkg) in self.packages.iter().enumerate() {
            desc::check_required(pkg).map_err(|problem| PacmanError::DbCorrupt {
                path: self.path.to_owned(),
                entry: format!("{}/desc", self.dir_of(index)),
                problem,
            })?;
        }
        let mut files = HashMap::with_capacity(self.lists.len());
        if !self.lists.is_empty() {
            // By package order, so a later package of the same name wins, as it always has.
            let mut lists: Vec<(usize, FileList)> = self
                .lists
                .into_iter()
                .filter_map(|(dir, list)| self.by_dir.get(dir.as_str()).map(|&i| (i, list)))
                .collect();
            lists.sort_unstable_by_key(|(i, _)| *i);
            for (i, list) in lists {
                files.insert(self.packages[i].name.clone(), list);
            }
        }
        Ok(ArchiveContents {
            packages: self.packages,
            files,
        })
    }
}

/// Parses the tar stream of a database.
pub fn parse_tar(
    path: &Path,
    reader: impl Read,
    with_files: bool,
) -> Result<ArchiveContents, PacmanError> {
    parse_tar_sized(path, reader, with_files, 0)
}

/// `parse_tar` with room reserved for about `expected` packages.
fn parse_tar_sized(
    path: &Path,
    reader: impl Read,
    with_files: bool,
    expected: usize,
) -> Result<ArchiveContents, PacmanError> {
    let damaged = truncated(path);
    let mut collector = Collector::new(path, with_files, expected);
    let mut archive = tar::Archive::new(reader);
    let mut buf = Vec::new();
    for entry in archive.entries().map_err(&damaged)? {
        let mut entry = entry.map_err(&damaged)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let entry_path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if wanted(&entry_path, with_files).is_none() {
            continue;
        }
        if entry.size() > MAX_ENTRY_BYTES {
            return Err(collector.corrupt(
                &entry_path,
                EntryProblem::TooLarge {
                    limit: MAX_ENTRY_BYTES,
                },
            ));
        }
        // Sized to the entry, so the reused buffer is zeroed only where it grows (read_to_end
        // would zero its spare capacity for every entry).
        let expected = entry.size();
        buf.resize(expected as usize, 0);
        let mut filled = 0;
        while filled < buf.len() {
            match entry.read(&mut buf[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(damaged(e)),
            }
        }
        if filled as u64 != expected {
            return Err(damaged(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{entry_path}: {filled} of {expected} bytes"),
            )));
        }
        collector.entry(&entry_path, &buf)?;
    }
    collector.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, body) in entries {
            let mut header = tar::Header::new_gnu();
            if let Some(dir) = path.strip_suffix('/') {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_size(0);
                header.set_mode(0o755);
                header.set_cksum();
                builder
                    .append_data(&mut header, dir, std::io::empty())
                    .unwrap();
                continue;
            }
            header.set_size(body.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder
                .append_data(&mut header, path, body.as_bytes())
                .unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn names(data: &[u8]) -> Result<Vec<(String, String, usize)>, PacmanError> {
        let contents = parse_tar(Path::new("t.db"), data, false)?;
        Ok(contents
            .packages
            .into_iter()
            .map(|p| (p.name, p.description, p.depends.len() + p.conflicts.len()))
            .collect())
    }

    /// Entries of one package merge even when not adjacent; every cut of the archive gives a
    /// typed error or (at an entry boundary) the packages read so far, never a panic.
    #[test]
    fn entries_merge_and_every_cut_is_typed() {
        let long_name = format!("{}-3-1/desc", "l".repeat(120));
        let data = tar_of(&[
            ("a-1-1/", ""),
            (
                "a-1-1/desc",
                "%NAME%\na\n\n%VERSION%\n1-1\n\n%DESC%\nfirst\n",
            ),
            ("a-1-1/depends", "%DEPENDS%\nb>=2\n"),
            (
                "b-2-1/desc",
                &"%NAME%\nb\n\n%VERSION%\n2-1\n\n%DESC%\nx\n".repeat(40),
            ),
            ("b-2-1/files", "%FILES%\nusr/\n"),
            ("b-2-1/other", "ignored"),
            ("a-1-1/depends", "%CONFLICTS%\nc\n"),
            (&long_name, "%NAME%\nlong\n\n%VERSION%\n3-1\n"),
        ]);
        let got = names(&data).unwrap();
        assert_eq!(
            got,
            [
                ("a".to_owned(), "first".to_owned(), 2),
                ("b".to_owned(), "x".to_owned(), 0),
                ("long".to_owned(), String::new(), 0),
            ]
        );
        for cut in 0..data.len() {
            match names(&data[..cut]) {
                // Only at an entry boundary or inside the closing zero blocks.
                Ok(partial) => {
                    assert!(cut % 512 == 0 || cut > data.len() - 1024, "cut at {cut}");
                    assert!(partial.iter().all(|p| got.iter().any(|g| g.0 == p.0)));
                }
                Err(e) => assert!(
                    matches!(e.kind(), "truncated" | "malformed"),
                    "cut at {cut}: {e}"
                ),
            }
        }
    }
}

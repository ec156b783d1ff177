//! Reading a sync database archive (`.db` / `.files`): gzip, zstd or plain tar, by magic bytes.

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

fn compression(head: &[u8]) -> Result<Option<&'static str>, &'static str> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Ok(Some("gzip"))
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Ok(Some("zstd"))
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Err("xz")
    } else if head.starts_with(b"BZh") {
        Err("bzip2")
    } else if head.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Err("lz4")
    } else {
        Ok(None)
    }
}

/// Reads and parses an archive file. `with_files` also keeps `%FILES%` lists.
pub fn read_archive(path: &Path, with_files: bool) -> Result<ArchiveContents, PacmanError> {
    let file = std::fs::File::open(path).map_err(|source| PacmanError::DbUnreadable {
        path: path.to_owned(),
        source,
    })?;
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
    let decoded: Box<dyn Read> = match compression(&head) {
        Ok(Some("gzip")) => Box::new(flate2::read::MultiGzDecoder::new(reader)),
        Ok(Some(_)) => Box::new(zstd::stream::read::Decoder::with_buffer(reader).map_err(
            |source| PacmanError::DbTruncated {
                path: path.to_owned(),
                source,
            },
        )?),
        Ok(None) => Box::new(reader),
        Err(format) => {
            return Err(PacmanError::UnsupportedCompression {
                path: path.to_owned(),
                format,
            });
        }
    };
    // tar reads 512-byte headers and small entries: buffer above the decoder too.
    parse_tar(
        path,
        BufReader::with_capacity(256 * 1024, decoded),
        with_files,
    )
}

/// Parses the tar stream of a database.
pub fn parse_tar(
    path: &Path,
    reader: impl Read,
    with_files: bool,
) -> Result<ArchiveContents, PacmanError> {
    let damaged = |source: std::io::Error| PacmanError::DbTruncated {
        path: path.to_owned(),
        source,
    };
    let mut archive = tar::Archive::new(reader);
    let mut by_dir: HashMap<String, usize> = HashMap::new();
    let mut pkgs: Vec<(String, Package)> = Vec::new();
    let mut lists: HashMap<String, FileList> = HashMap::new();
    let mut buf = Vec::new();
    for entry in archive.entries().map_err(damaged)? {
        let mut entry = entry.map_err(damaged)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let entry_path = entry
            .path()
            .map_err(damaged)?
            .to_string_lossy()
            .into_owned();
        let Some((dir, leaf)) = entry_path.trim_start_matches("./").split_once('/') else {
            continue;
        };
        if !matches!(leaf, "desc" | "depends" | "files") || (leaf == "files" && !with_files) {
            continue;
        }
        let corrupt = |problem: EntryProblem| PacmanError::DbCorrupt {
            path: path.to_owned(),
            entry: entry_path.clone(),
            problem,
        };
        if entry.size() > MAX_ENTRY_BYTES {
            return Err(corrupt(EntryProblem::TooLarge {
                limit: MAX_ENTRY_BYTES,
            }));
        }
        buf.clear();
        let expected = entry.size();
        entry.read_to_end(&mut buf).map_err(damaged)?;
        if buf.len() as u64 != expected {
            return Err(damaged(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{entry_path}: {} of {expected} bytes", buf.len()),
            )));
        }
        if leaf == "files" {
            let list = desc::parse_files(&buf).map_err(corrupt)?;
            lists.insert(dir.to_owned(), list);
            continue;
        }
        let index = *by_dir.entry(dir.to_owned()).or_insert_with(|| {
            pkgs.push((dir.to_owned(), Package::default()));
            pkgs.len() - 1
        });
        desc::parse_desc_into(&mut pkgs[index].1, &buf).map_err(corrupt)?;
    }
    let mut out = ArchiveContents::default();
    for (dir, pkg) in pkgs {
        desc::check_required(&pkg).map_err(|problem| PacmanError::DbCorrupt {
            path: path.to_owned(),
            entry: format!("{dir}/desc"),
            problem,
        })?;
        if let Some(list) = lists.remove(&dir) {
            out.files.insert(pkg.name.clone(), list);
        }
        out.packages.push(pkg);
    }
    Ok(out)
}

//! Reading the local database's many small files (`<entry>/desc`, `<entry>/files`) cheaply.
//!
//! A cold `pkg_owner` reads two files per installed package, thousands in all, so the cost per
//! file is mostly system calls. Files are opened relative to the already open `local`
//! directory (`openat`: the kernel walks two path components, not the whole path), read
//! without the size probe `std::fs::read` makes (one `statx` less), into a buffer each
//! worker thread reuses.

use std::cell::RefCell;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Mode, OFlags};

/// The local database directory, open for relative lookups.
#[derive(Debug)]
pub(crate) struct EntryDir {
    fd: OwnedFd,
}

/// `File::read_to_end` stats the file for a size hint; reading through a plain `Read` does not.
struct NoSizeHint<'a>(&'a mut std::fs::File);

impl Read for NoSizeHint<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

thread_local! {
    /// Each worker's read buffer (grows to the largest file it read).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl EntryDir {
    /// Opens the directory.
    pub(crate) fn open(dir: &Path) -> std::io::Result<EntryDir> {
        let fd = rustix::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(EntryDir { fd })
    }

    /// Reads `<entry>/<leaf>` and hands its bytes to `f`.
    pub(crate) fn read<R>(
        &self,
        entry: &str,
        leaf: &str,
        f: impl FnOnce(&[u8]) -> R,
    ) -> std::io::Result<R> {
        let rel = format!("{entry}/{leaf}");
        let fd = rustix::fs::openat(
            self.fd.as_fd(),
            rel.as_str(),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let mut file = std::fs::File::from(fd);
        SCRATCH.with_borrow_mut(|buf| {
            buf.clear();
            NoSizeHint(&mut file).read_to_end(buf)?;
            Ok(f(buf))
        })
    }
}

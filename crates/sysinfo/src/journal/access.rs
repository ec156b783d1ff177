//! What of the journal this account may read, found before journalctl runs.
//!
//! journalctl run by a person outside `systemd-journal` (and, on Arch, the `wheel` and `adm`
//! groups that systemd's ACLs let in) silently shows only their own user journal. So the files
//! are looked at first: none at all is [`DiagError::NotAvailable`]; system files that cannot be
//! opened make every answer that needs them [`DiagError::NotReadable`] (when empty) or carry a
//! note (when the person's own entries answered), saying why and what the person can do.

use std::path::{Path, PathBuf};

use crate::diag::{DiagError, DiagOptions, JournalSource, who};

use super::JournalQuery;

/// What this account may read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// Why the system journal cannot be read, when it cannot.
    pub system_unreadable: Option<String>,
}

impl Access {
    /// Why an answer to `q` may miss entries: a system query while the system journal is
    /// unreadable (the person's own user journal is always theirs).
    pub fn limits(&self, q: &JournalQuery) -> Option<String> {
        if q.user {
            None
        } else {
            self.system_unreadable.clone()
        }
    }
}

/// Journal files under `dir` and its machine-id subdirectories.
fn journal_files(dir: &Path, depth: u8, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        let ft = e.file_type()?;
        if ft.is_dir() && depth > 0 {
            // A subdirectory that cannot be listed hides files: that is an answer too.
            journal_files(&p, depth - 1, out)?;
        } else if ft.is_file()
            && p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".journal") || n.ends_with(".journal~"))
        {
            out.push(p);
        }
    }
    Ok(())
}

impl Access {
    /// Looks at the journal files the options point to.
    pub(crate) fn check(opts: &DiagOptions) -> Result<Access, DiagError> {
        check(opts)
    }
}

fn check(opts: &DiagOptions) -> Result<Access, DiagError> {
    let dirs: Vec<PathBuf> = match &opts.journal {
        JournalSource::Directory(d) => {
            if !d.is_dir() {
                return Err(DiagError::NotAvailable {
                    what: format!("the journal directory {} does not exist", d.display()),
                });
            }
            vec![d.clone()]
        }
        JournalSource::Machine => ["var/log/journal", "run/log/journal"]
            .iter()
            .map(|d| opts.root.join(d))
            .filter(|d| d.is_dir())
            .collect(),
    };
    let mut files = Vec::new();
    for d in &dirs {
        if let Err(e) = journal_files(d, 1, &mut files) {
            return Err(DiagError::NotReadable {
                why: format!("{} cannot be listed by {}: {e}", d.display(), who()),
            });
        }
    }
    if files.is_empty() {
        return Err(DiagError::NotAvailable {
            what: match &opts.journal {
                JournalSource::Directory(d) => {
                    format!("no journal files in {}", d.display())
                }
                JournalSource::Machine => "no journal files under /var/log/journal or \
                                           /run/log/journal: systemd-journald keeps no journal here"
                    .into(),
            },
        });
    }
    let system: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| !n.starts_with("user-"))
        })
        .collect();
    let readable = |p: &&PathBuf| std::fs::File::open(p).is_ok();
    let system_unreadable = (!system.is_empty() && !system.iter().any(readable)).then(|| {
        format!(
            "the system journal ({}) is not readable by {}; members of `systemd-journal` (and, on \
             Arch, `wheel` and `adm`) may read it — the person can run \
             `sudo usermod -aG systemd-journal $USER` and log in again. Only the person's own \
             user journal was read.",
            system[0].parent().unwrap_or(Path::new("/")).display(),
            who()
        )
    });
    Ok(Access { system_unreadable })
}

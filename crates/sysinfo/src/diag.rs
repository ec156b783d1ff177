//! What the diagnostics (journal, units, boots) share: their typed error, where the journal is
//! read from, how their programs run, and the checks every agent-written word passes before it
//! reaches a program.
//!
//! Words reach programs literally (argv, never a shell) and only in forms that cannot be read as
//! options: `--unit=VALUE`, or after `--`. A NUL or another control character is refused, and so is
//! anything longer than its field's bound.

use std::path::{Path, PathBuf};
use std::time::Duration;

use archgate_exec::{CommandSpec, Output, Permit};

/// Where and how long the diagnostics look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagOptions {
    /// The machine's journal, or a directory of journal files.
    pub journal: JournalSource,
    /// The directory under which `/var/log/journal`, `/run/log/journal` and `/run/systemd` are
    /// looked for. Default `/`.
    pub root: PathBuf,
    /// Time allowed for each program. Default 20 s.
    pub timeout: Duration,
}

impl Default for DiagOptions {
    fn default() -> Self {
        DiagOptions {
            journal: JournalSource::Machine,
            root: PathBuf::from("/"),
            timeout: Duration::from_secs(20),
        }
    }
}

/// Which journal is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalSource {
    /// The machine's own: what the person's account may read under `/var/log/journal` and
    /// `/run/log/journal`.
    Machine,
    /// The journal files in one directory (`journalctl --directory`): a copied journal, a rescue
    /// mount's `/mnt/var/log/journal`, a test's files.
    Directory(PathBuf),
}

/// Why a diagnostic gave no answer. "Nothing found" is never one of these: it is an empty answer.
#[derive(Debug, thiserror::Error)]
pub enum DiagError {
    /// What is needed is not on this machine (no systemd, no journal files, no such program).
    #[error("{what}")]
    NotAvailable {
        /// What is missing, in words.
        what: String,
    },
    /// The data exists but this account may not read it: could not look, not "nothing there".
    #[error("could not look: {why}")]
    NotReadable {
        /// Why, and how the person can change it.
        why: String,
    },
    /// No unit of that name; `near` holds the closest names that exist.
    #[error("no unit named {name:?}{}", near_text(near))]
    UnknownUnit {
        /// The name asked for (as systemd completes it).
        name: String,
        /// Existing names close to it, best first.
        near: Vec<String>,
    },
    /// A boot offset the journal does not hold.
    #[error(
        "the journal holds no boot {asked}; it holds boots {}",
        boots_text(have)
    )]
    BootOutOfRange {
        /// The offset asked for.
        asked: i64,
        /// The offsets it holds, oldest first.
        have: Vec<i64>,
    },
    /// A cursor that is not one this journal gave.
    #[error("malformed cursor: {why}")]
    InvalidCursor {
        /// What is wrong with it.
        why: String,
    },
    /// An argument that cannot be used as given.
    #[error("{field}: {why}")]
    InvalidArgument {
        /// The argument's name.
        field: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The program ran and failed in a way not foreseen here.
    #[error("`{command}` failed (exit {code:?}): {stderr}")]
    CommandFailed {
        /// The command as written.
        command: String,
        /// Its exit code.
        code: Option<i32>,
        /// The start of its stderr.
        stderr: String,
    },
    /// The program's answer was not in the expected shape.
    #[error("`{command}` answered in an unexpected shape: {what}")]
    Malformed {
        /// The command as written.
        command: String,
        /// What was wrong.
        what: String,
    },
    /// The program could not be run.
    #[error(transparent)]
    Exec(#[from] archgate_exec::ExecError),
}

fn near_text(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", near.join(", "))
    }
}

fn boots_text(have: &[i64]) -> String {
    match (have.first(), have.last()) {
        (Some(a), Some(b)) if a != b => format!("{a} to {b}"),
        (Some(a), _) => a.to_string(),
        _ => "none".into(),
    }
}

impl DiagError {
    /// Stable snake_case code for this error.
    pub fn kind(&self) -> &'static str {
        match self {
            DiagError::NotAvailable { .. } => "not_available",
            DiagError::NotReadable { .. } => "not_readable",
            DiagError::UnknownUnit { .. } => "not_found",
            DiagError::BootOutOfRange { .. } => "out_of_range",
            DiagError::InvalidCursor { .. } => "invalid_cursor",
            DiagError::InvalidArgument { .. } => "invalid_arguments",
            DiagError::CommandFailed { .. } => "command_failed",
            DiagError::Malformed { .. } => "malformed",
            DiagError::Exec(e) => match e.kind() {
                "not_installed" => "not_available",
                k => k,
            },
        }
    }

    /// What the agent can do about it, where that is more precise than the kind says.
    pub fn next_step(&self) -> Option<&'static str> {
        Some(match self {
            DiagError::NotReadable { .. } => {
                "tell the person why and how to grant access; do not read it another way"
            }
            DiagError::UnknownUnit { .. } => {
                "call again with one of the near names, or list units first"
            }
            DiagError::BootOutOfRange { .. } => "call again with one of the boots that exist",
            DiagError::InvalidCursor { .. } => {
                "use the `next` value of the previous page exactly, or start again without a cursor"
            }
            DiagError::InvalidArgument { .. } => "correct that argument and call again",
            _ => return None,
        })
    }
}

/// Refuses what must never reach a program: NULs and other control characters, and text past
/// `max` bytes.
pub(crate) fn check_word(field: &'static str, value: &str, max: usize) -> Result<(), DiagError> {
    if value.is_empty() {
        return Err(DiagError::InvalidArgument {
            field,
            why: "is empty".into(),
        });
    }
    if value.len() > max {
        return Err(DiagError::InvalidArgument {
            field,
            why: format!("is {} bytes; at most {max} are accepted", value.len()),
        });
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(DiagError::InvalidArgument {
            field,
            why: format!("holds the control character {:?}", c),
        });
    }
    Ok(())
}

/// A unit name as systemd accepts one (at most 256 bytes, no control characters; any other
/// byte reaches systemctl literally after `--`, which judges it).
pub(crate) fn check_unit(name: &str) -> Result<(), DiagError> {
    check_word("unit", name, 256)
}

/// Runs one program, its stderr kept for the caller to read.
pub(crate) async fn run(
    permit: &Permit,
    program: &str,
    args: &[String],
    opts: &DiagOptions,
) -> Result<(String, Output), DiagError> {
    let spec = CommandSpec::new(program)
        .args(args.iter().cloned())
        .timeout(opts.timeout);
    let command = spec.display();
    let out = permit.run(spec).await?;
    Ok((command, out))
}

/// The start of a program's stderr, for an error.
pub(crate) fn stderr_head(out: &Output) -> String {
    let mut s = out.stderr_lossy().trim().to_owned();
    if s.len() > 500 {
        let mut end = 500;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// A failure of `program` read for the few answers that mean "not here" rather than "broken".
pub(crate) fn failure(command: String, out: &Output) -> DiagError {
    let stderr = stderr_head(out);
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("failed to connect to bus")
        || lower.contains("has not been booted with systemd")
        || lower.contains("no such file or directory") && lower.contains("bus")
    {
        return DiagError::NotAvailable {
            what: format!("the systemd manager cannot be reached: {stderr}"),
        };
    }
    if lower.contains("insufficient permissions") || lower.contains("permission denied") {
        return DiagError::NotReadable {
            why: format!(
                "{stderr} (as {}); members of `systemd-journal` may read the whole journal",
                who()
            ),
        };
    }
    DiagError::CommandFailed {
        command,
        code: out.status.code,
        stderr,
    }
}

/// Microseconds since the epoch as RFC 3339 in UTC (`2026-12-01T11:39:03.123456Z`).
pub(crate) fn iso_time(usec: u64) -> Option<String> {
    let t = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(usec) * 1000).ok()?;
    t.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// Whether systemd is the init system (what `sd_booted` checks), under `root`.
pub(crate) fn systemd_booted(root: &Path) -> bool {
    crate::systemd::systemd_running(root)
}

/// Names in `names` close to `want`, best first, at most five: containing it (or contained in
/// it), or within two edits of it, before or after a unit suffix.
pub(crate) fn near_names<'a>(names: impl Iterator<Item = &'a str>, want: &str) -> Vec<String> {
    let w = want.to_lowercase();
    let stem = |s: &str| {
        s.rsplit_once('.')
            .map(|(a, _)| a.to_owned())
            .unwrap_or(s.to_owned())
    };
    let ws = stem(&w);
    let mut scored: Vec<(usize, String)> = names
        .filter_map(|n| {
            if n == want {
                return None;
            }
            let l = n.to_lowercase();
            let ls = stem(&l);
            let score = if ls.len() >= 2 && (ls.contains(&ws) || ws.contains(&ls)) {
                ls.len().abs_diff(ws.len())
            } else {
                let d = edit_distance(&ls, &ws);
                if d > 2 {
                    return None;
                }
                d + 100
            };
            Some((score, n.to_owned()))
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

/// Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`: a typo's distance.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// This account and its groups, in words.
pub(crate) fn who() -> String {
    let uid = nix::unistd::geteuid();
    let name = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map(|u| u.name)
        .unwrap_or_else(|| format!("uid {uid}"));
    let groups: Vec<String> = nix::unistd::getgroups()
        .unwrap_or_default()
        .into_iter()
        .map(|g| {
            nix::unistd::Group::from_gid(g)
                .ok()
                .flatten()
                .map(|g| g.name)
                .unwrap_or_else(|| g.to_string())
        })
        .collect();
    if groups.is_empty() {
        format!("`{name}` (in no supplementary group)")
    } else {
        format!("`{name}` (groups: {})", groups.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_find_typos_and_stems() {
        let names = [
            "sshd.service",
            "systemd-networkd.service",
            "NetworkManager.service",
            "cups.socket",
        ];
        assert_eq!(
            near_names(names.into_iter(), "shd.service"),
            ["sshd.service"]
        );
        assert_eq!(
            near_names(names.into_iter(), "networkmanager.service"),
            ["NetworkManager.service"]
        );
        assert!(near_names(names.into_iter(), "zzzzzz.service").is_empty());
        // A swap of two letters is one typo: it comes before two edits.
        let names = ["db.service", "web.service"];
        assert_eq!(
            near_names(names.into_iter(), "wbe.service"),
            ["web.service", "db.service"]
        );
    }

    #[test]
    fn words_with_controls_or_past_their_bound_are_refused() {
        assert!(check_word("grep", "a\0b", 10).is_err());
        assert!(check_word("grep", "a\nb", 10).is_err());
        assert!(check_word("grep", "", 10).is_err());
        assert!(check_word("grep", "abcdefghijk", 10).is_err());
        assert!(check_word("grep", "$(id); `x` | -x", 100).is_ok());
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(
            iso_time(1_764_500_011_000_000).as_deref(),
            Some("2025-11-30T10:53:31Z")
        );
        assert_eq!(
            iso_time(1_764_500_011_000_123).as_deref(),
            Some("2025-11-30T10:53:31.000123Z")
        );
    }
}

//! The journal, read with `journalctl -o json`: entries by unit (system or the person's
//! `--user` units), priority, boot, time range, kernel only and a text match, newest first,
//! capped, with a cursor to page on. Only the fields an agent needs leave here (time, unit,
//! identifier, priority, PID, message), each message cut to [`MESSAGE_MAX`] bytes.
//!
//! What the person's account may read, and no more: nothing here elevates. When the system
//! journal is not readable (`access.rs` says why: not in `systemd-journal`, `wheel` or `adm`),
//! an answer that could come only from it is [`DiagError::NotReadable`], never an empty page;
//! a page that may miss entries says so in its `note`.
//!
//! Paging: `-r -n LIMIT+1 --after-cursor=C` walks from newest to oldest; the extra entry tells
//! whether another page exists, and `next` is the cursor of the page's last (oldest) entry.

mod access;
mod boots;
mod entry;
mod withheld;

use archgate_exec::Permit;
use serde::Serialize;

use crate::diag::{self, DiagError, DiagOptions, JournalSource};

pub use access::Access;
pub use boots::Boot;
pub(crate) use boots::list_boots;
pub use entry::Entry;
pub(crate) use entry::parse_lines;

/// A message longer than this is cut (with `…` appended).
pub const MESSAGE_MAX: usize = 4096;
/// The most entries one page holds.
pub const LIMIT_MAX: usize = 200;

/// syslog priorities, most severe first (`journalctl -p NAME` shows that one and worse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Emerg,
    Alert,
    Crit,
    Err,
    Warning,
    Notice,
    Info,
    Debug,
}

impl Priority {
    /// The name journalctl takes and shows.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 8] = [
            "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
        ];
        NAMES[self as usize]
    }

    /// The priority of a `PRIORITY=` value.
    pub fn from_number(n: u8) -> Option<Priority> {
        use Priority::*;
        [Emerg, Alert, Crit, Err, Warning, Notice, Info, Debug]
            .get(usize::from(n))
            .copied()
    }
}

/// What to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalQuery {
    /// One unit (`sshd`, `sshd.service`, a glob like `systemd-*`).
    pub unit: Option<String>,
    /// The person's user journal and user units instead of the system's.
    pub user: bool,
    /// This priority and worse.
    pub priority: Option<Priority>,
    /// A boot: 0 the current one, -1 the one before; positive counts from the oldest.
    pub boot: Option<i64>,
    /// Not before (journalctl's time syntax: `2026-12-01 10:00`, `yesterday`, `-2h`).
    pub since: Option<String>,
    /// Not after.
    pub until: Option<String>,
    /// Kernel messages only (`--dmesg`; the current boot unless `boot` says otherwise).
    pub kernel: bool,
    /// A pattern the message must match (PCRE2; case-insensitive unless it has capitals).
    pub grep: Option<String>,
    /// Entries per page (1..=[`LIMIT_MAX`]).
    pub limit: usize,
    /// Continue after this cursor (a page's `next`).
    pub cursor: Option<String>,
}

/// One page of entries, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct JournalPage {
    pub entries: Vec<Entry>,
    /// The cursor for the next (older) page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Why the page may miss entries (the system journal is not readable by this account).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The fields asked of journalctl (it adds the cursor, both timestamps and the boot ID).
const FIELDS: &str = "--output-fields=_SYSTEMD_UNIT,_SYSTEMD_USER_UNIT,SYSLOG_IDENTIFIER,_COMM,PRIORITY,MESSAGE,_PID";

/// The source's arguments (`--directory=DIR`, `--user`), first on every journalctl line.
pub(crate) fn source_args(source: &JournalSource, user: bool) -> Vec<String> {
    let mut a = vec!["--no-pager".to_owned(), "--quiet".to_owned()];
    match source {
        // The files of a directory are what they are: `--user` would pick files by their
        // names (`user-UID.journal`); user units are still matched by `--user-unit`.
        JournalSource::Directory(d) => a.push(format!("--directory={}", d.display())),
        JournalSource::Machine if user => a.push("--user".to_owned()),
        JournalSource::Machine => {}
    }
    a
}

/// Checks a query and builds journalctl's arguments for it. Every agent-written value is one
/// `--name=value` word, so none can be read as an option.
pub fn journalctl_args(source: &JournalSource, q: &JournalQuery) -> Result<Vec<String>, DiagError> {
    if q.limit == 0 || q.limit > LIMIT_MAX {
        return Err(DiagError::InvalidArgument {
            field: "limit",
            why: format!("must be 1 to {LIMIT_MAX}"),
        });
    }
    let mut a = source_args(source, q.user);
    // `--all`: a long field is the field, not `null`; the message is cut here instead.
    a.extend([
        "--output=json".into(),
        "--all".into(),
        "--reverse".into(),
        FIELDS.into(),
    ]);
    a.push(format!("--lines={}", q.limit + 1));
    if let Some(u) = &q.unit {
        diag::check_unit(u)?;
        a.push(if q.user {
            format!("--user-unit={u}")
        } else {
            format!("--unit={u}")
        });
    }
    if let Some(p) = q.priority {
        a.push(format!("--priority={}", p.name()));
    }
    if q.kernel {
        a.push("--dmesg".into());
    }
    if let Some(b) = q.boot {
        a.push(format!("--boot={b}"));
    }
    for (field, value, flag) in [
        ("since", &q.since, "--since"),
        ("until", &q.until, "--until"),
    ] {
        if let Some(v) = value {
            diag::check_word(field, v, 64)?;
            a.push(format!("{flag}={v}"));
        }
    }
    if let Some(g) = &q.grep {
        diag::check_word("grep", g, 1024)?;
        a.push(format!("--grep={g}"));
    }
    if let Some(c) = &q.cursor {
        check_cursor(c)?;
        a.push(format!("--after-cursor={c}"));
    }
    Ok(a)
}

/// A journal cursor is `s=…;i=…;b=…;m=…;t=…;x=…`: hex and a few separators, nothing else.
fn check_cursor(c: &str) -> Result<(), DiagError> {
    let bad = |why: &str| {
        Err(DiagError::InvalidCursor {
            why: why.to_owned(),
        })
    };
    if c.is_empty() || c.len() > 512 {
        return bad("a cursor is 1 to 512 bytes");
    }
    if !c.bytes().all(|b| {
        b.is_ascii_hexdigit() || matches!(b, b'=' | b';' | b's' | b'i' | b'b' | b'm' | b't' | b'x')
    }) {
        return bad("a cursor holds only the journal's `s=…;i=…;b=…` fields");
    }
    if !c.split(';').all(|kv| {
        kv.split_once('=')
            .is_some_and(|(k, v)| k.len() == 1 && !v.is_empty())
    }) {
        return bad("a cursor is `key=value` pairs separated by `;`");
    }
    Ok(())
}

/// One page of the journal.
pub async fn query(
    permit: &Permit,
    opts: &DiagOptions,
    q: &JournalQuery,
) -> Result<JournalPage, DiagError> {
    let args = journalctl_args(&opts.journal, q)?;
    let access = Access::check(opts)?;
    let (command, out) = diag::run(permit, "journalctl", &args, opts).await?;
    let limited = access.limits(q);
    // With a pattern, journalctl exits 1 without a word when nothing matched (as grep does).
    let nothing_matched = q.grep.is_some() && out.status.code == Some(1) && out.stderr.is_empty();
    if !out.success() && !nothing_matched {
        return Err(
            match (
                explain_failure(permit, opts, q, command, &out).await,
                limited,
            ) {
                (
                    DiagError::NotReadable { .. }
                    | DiagError::NotAvailable { .. }
                    | DiagError::CommandFailed { .. },
                    Some(why),
                ) => DiagError::NotReadable { why },
                (e, _) => e,
            },
        );
    }
    let text = out.stdout_lossy();
    let (mut entries, complete) = parse_lines(&text, &command)?;
    let mut next = None;
    if entries.len() > q.limit {
        entries.truncate(q.limit);
        next = entries.last().map(|e| e.cursor.clone());
    } else if out.truncated && !complete {
        // The answer was cut at the output cap: the next page starts after the last whole entry.
        next = entries.last().map(|e| e.cursor.clone());
    }
    // journalctl matched a grep on the whole message: an entry whose command line was withheld
    // is left out of a grep's answer, or the pattern would test what was withheld, a character
    // at a time (the page's end is decided above, from what journalctl gave).
    // The note is said on every grep's answer, whether or not a withheld entry matched: said
    // only when one did, it told the pattern's match on the withheld text (attack 14 F4: a
    // password recovered a character at a time; class: *a signal derived from the withheld
    // text*).
    let left_out = q.grep.is_some();
    if left_out {
        entries.retain(|e| !e.withheld);
    }
    if entries.is_empty() {
        if let Some(why) = limited {
            return Err(DiagError::NotReadable { why });
        }
        if let Some(u) = q.unit.as_deref() {
            check_unit_known(permit, opts, q.user, u).await?;
        }
    }
    let note = match (limited, left_out) {
        (Some(l), true) => Some(format!("{l}; {}", withheld::LEFT_OUT_OF_GREP)),
        (None, true) => Some(withheld::LEFT_OUT_OF_GREP.to_owned()),
        (l, false) => l,
    };
    Ok(JournalPage {
        entries,
        next,
        note,
    })
}

/// journalctl's failures that mean a bad argument, told as such.
async fn explain_failure(
    permit: &Permit,
    opts: &DiagOptions,
    q: &JournalQuery,
    command: String,
    out: &archgate_exec::Output,
) -> DiagError {
    let stderr = diag::stderr_head(out);
    if stderr.contains("seek to cursor") {
        return DiagError::InvalidCursor {
            why: "this journal has no entry at that cursor".into(),
        };
    }
    if (stderr.contains("specified boot") || stderr.contains("No such boot ID"))
        && let Some(asked) = q.boot
    {
        return match boot_offsets(permit, opts, q.user).await {
            Ok(have) => DiagError::BootOutOfRange { asked, have },
            Err(e) => e,
        };
    }
    if stderr.contains("Bad pattern") || stderr.contains("pattern") && q.grep.is_some() {
        return DiagError::InvalidArgument {
            field: "grep",
            why: stderr,
        };
    }
    if stderr.contains("timestamp") {
        return DiagError::InvalidArgument {
            field: if q.until.is_some() && q.since.is_none() {
                "until"
            } else {
                "since"
            },
            why: stderr,
        };
    }
    if stderr.contains("No journal files") && !stderr.contains("permission") {
        return DiagError::NotAvailable {
            what: "no journal files were found".into(),
        };
    }
    diag::failure(command, out)
}

/// The boot offsets the journal holds, oldest first (`journalctl --list-boots`).
pub(crate) async fn boot_offsets(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
) -> Result<Vec<i64>, DiagError> {
    Ok(list_boots(permit, opts, user)
        .await?
        .iter()
        .map(|b| b.index)
        .collect())
}

/// An empty answer for a unit the journal never heard of is `UnknownUnit` with the near names it
/// does know (`journalctl -F _SYSTEMD_UNIT`); a glob or a known unit with no matching entries is
/// an empty page.
async fn check_unit_known(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
    unit: &str,
) -> Result<(), DiagError> {
    if unit.contains(['*', '?', '[']) {
        return Ok(());
    }
    let field = if user {
        "_SYSTEMD_USER_UNIT"
    } else {
        "_SYSTEMD_UNIT"
    };
    let mut args = source_args(&opts.journal, user);
    args.push(format!("--field={field}"));
    let (command, out) = diag::run(permit, "journalctl", &args, opts).await?;
    if !out.success() {
        return Err(diag::failure(command, &out));
    }
    let text = out.stdout_lossy();
    let name = crate::unit_name::complete_name(unit);
    if text.lines().any(|l| l == name) {
        return Ok(());
    }
    Err(DiagError::UnknownUnit {
        near: diag::near_names(text.lines(), &name),
        name,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q() -> JournalQuery {
        JournalQuery {
            limit: 10,
            ..Default::default()
        }
    }

    #[test]
    fn every_value_is_one_option_word() {
        let src = JournalSource::Directory("/j".into());
        let a = journalctl_args(
            &src,
            &JournalQuery {
                unit: Some("-x; rm -rf /".into()),
                grep: Some("--output=cat".into()),
                since: Some("-1h".into()),
                boot: Some(-1),
                ..q()
            },
        )
        .unwrap();
        assert!(a.contains(&"--unit=-x; rm -rf /".to_owned()), "{a:?}");
        assert!(a.contains(&"--grep=--output=cat".to_owned()));
        assert!(a.contains(&"--since=-1h".to_owned()));
        assert!(a.contains(&"--boot=-1".to_owned()));
        assert!(a.contains(&"--directory=/j".to_owned()));
        assert!(a.contains(&"--lines=11".to_owned()));
        assert!(a.iter().all(|w| w.starts_with("--")), "{a:?}");
    }

    #[test]
    fn bad_words_and_cursors_are_refused_before_anything_runs() {
        let src = JournalSource::Machine;
        let err = |q: JournalQuery| journalctl_args(&src, &q).unwrap_err().kind();
        assert_eq!(
            err(JournalQuery {
                grep: Some("a\0b".into()),
                ..q()
            }),
            "invalid_arguments"
        );
        assert_eq!(
            err(JournalQuery {
                unit: Some("x".repeat(300)),
                ..q()
            }),
            "invalid_arguments"
        );
        assert_eq!(err(JournalQuery { limit: 0, ..q() }), "invalid_arguments");
        assert_eq!(err(JournalQuery { limit: 201, ..q() }), "invalid_arguments");
        for c in [
            "",
            "garbage",
            "s=1;--user",
            "s=zz",
            "s=ab;i",
            &"s=a;".repeat(200),
        ] {
            assert_eq!(
                err(JournalQuery {
                    cursor: Some(c.into()),
                    ..q()
                }),
                "invalid_cursor",
                "{c}"
            );
        }
        let good = "s=3c8c62a94fc948f8809342f86f83c7f6;i=9;b=00000000000000000000000000000002;m=1e8485;t=644cdac3e1c40;x=94de8b1d5a6a8749";
        assert!(
            journalctl_args(
                &src,
                &JournalQuery {
                    cursor: Some(good.into()),
                    ..q()
                }
            )
            .is_ok()
        );
    }
}

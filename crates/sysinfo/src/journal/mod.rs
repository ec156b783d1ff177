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
//! A `grep` is matched here, on the message as shown, over journalctl's otherwise filtered
//! reads (`grep.rs`): nothing in a page depends on text it withholds.

mod access;
mod audit;
mod boots;
pub(crate) mod cut;
mod entry;
mod grep;
mod launchers;
pub(crate) mod withheld;
mod writers;

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
/// Entries read from journalctl at a time while a grep scans.
pub const SCAN_CHUNK: usize = 1000;
/// The most entries one grep's page reads before it answers with where it stopped.
pub const SCAN_MAX: usize = 20_000;

/// Every grep's note: what it matched.
pub const GREP_ON_SHOWN: &str = "a grep matches each message as shown here: withheld arguments of logged command lines are not matched";

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
    /// A pattern the message as shown must match (journalctl's `--grep` syntax and smart case,
    /// matched here: `grep.rs`).
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
/// `_EXE`, `MESSAGE_ID`, `UNIT` and `USER_UNIT` say who wrote a line and about what
/// (`writers.rs`); they are not shown.
const FIELDS: &str = "--output-fields=_SYSTEMD_UNIT,_SYSTEMD_USER_UNIT,SYSLOG_IDENTIFIER,_COMM,_EXE,PRIORITY,MESSAGE,MESSAGE_ID,UNIT,USER_UNIT,_PID,_TRANSPORT";

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

/// Checks a query and builds journalctl's arguments for its first read. Every agent-written
/// value is one `--name=value` word, so none can be read as an option. A `grep` is not
/// journalctl's: it is matched here on the message as shown (`grep.rs`).
pub fn journalctl_args(source: &JournalSource, q: &JournalQuery) -> Result<Vec<String>, DiagError> {
    let lines = if q.grep.is_some() {
        SCAN_CHUNK
    } else {
        q.limit + 1
    };
    read_args(source, q, lines, q.cursor.as_deref())
}

/// journalctl's arguments for one read of `lines` entries after `cursor`.
fn read_args(
    source: &JournalSource,
    q: &JournalQuery,
    lines: usize,
    cursor: Option<&str>,
) -> Result<Vec<String>, DiagError> {
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
    a.push(format!("--lines={lines}"));
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
    }
    if let Some(c) = cursor {
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

/// One page of the journal. Without a `grep`, one read of `limit + 1` entries; with one, reads
/// of [`SCAN_CHUNK`] entries, each message matched as it is shown, until `limit + 1` match or
/// [`SCAN_MAX`] entries were read (`grep.rs`).
pub async fn query(
    permit: &Permit,
    opts: &DiagOptions,
    q: &JournalQuery,
) -> Result<JournalPage, DiagError> {
    journalctl_args(&opts.journal, q)?;
    let grep = q.grep.as_deref().map(grep::Grep::new).transpose()?;
    let access = Access::check(opts)?;
    let limited = access.limits(q);
    let mut entries = Vec::new();
    let mut cursor = q.cursor.clone();
    let mut scanned = 0;
    let mut next = None;
    let mut scan_cut = false;
    loop {
        let lines = match grep {
            Some(_) => SCAN_CHUNK.min(SCAN_MAX - scanned),
            None => q.limit + 1 - entries.len(),
        };
        let args = read_args(&opts.journal, q, lines, cursor.as_deref())?;
        let (command, out) = diag::run(permit, "journalctl", &args, opts).await?;
        if !out.success() {
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
        let (read, complete) = parse_lines(&out.stdout_lossy(), &command)?;
        // The journal ends here when journalctl gave fewer whole entries than asked for.
        let at_end = read.is_empty() || complete && !out.truncated && read.len() < lines;
        scanned += read.len();
        cursor = read.last().map(|e| e.cursor.clone()).or(cursor);
        entries.extend(
            read.into_iter()
                .filter(|e| grep.as_ref().is_none_or(|g| g.matches(&e.message))),
        );
        if entries.len() > q.limit {
            entries.truncate(q.limit);
            next = entries.last().map(|e| e.cursor.clone());
            break;
        }
        if at_end {
            break;
        }
        if grep.is_some() && scanned >= SCAN_MAX {
            // Where the scan stopped is said whatever matched: the next page goes on from there.
            next = cursor;
            scan_cut = true;
            break;
        }
    }
    if entries.is_empty() && !scan_cut {
        if let Some(why) = limited {
            return Err(DiagError::NotReadable { why });
        }
        if let Some(u) = q.unit.as_deref() {
            check_unit_known(permit, opts, q.user, u).await?;
        }
    }
    let notes: Vec<String> = [
        limited,
        grep.is_some().then(|| GREP_ON_SHOWN.to_owned()),
        scan_cut.then(|| {
            format!("the grep read {SCAN_MAX} entries and stopped; ask again with `next` to go on")
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    Ok(JournalPage {
        entries,
        next,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
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
        assert!(
            !a.iter().any(|w| w.starts_with("--grep")),
            "a grep is matched here, not by journalctl: {a:?}"
        );
        assert!(a.contains(&"--since=-1h".to_owned()));
        assert!(a.contains(&"--boot=-1".to_owned()));
        assert!(a.contains(&"--directory=/j".to_owned()));
        assert!(a.contains(&format!("--lines={SCAN_CHUNK}")));
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

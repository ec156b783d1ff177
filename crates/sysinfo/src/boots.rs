//! Boots and crashes, from the journal: `journalctl --list-boots -o json` with each boot's count
//! of `err` (and worse) entries, and `coredumpctl --json=short` for the core dumps (executable,
//! signal, time). Both read only what the person's account may (see `journal/access.rs`).

use archgate_exec::Permit;
use serde::Serialize;
use serde_json::Value;

use crate::diag::{self, DiagError, DiagOptions, JournalSource};
use crate::journal;
pub use crate::journal::Boot;
use crate::journal::list_boots;

/// Error entries counted per boot, at most (more shows as `errors_capped`).
pub const ERRORS_COUNTED: usize = 1000;
/// The most boots or crashes one answer lists.
pub const BOOTS_MAX: usize = 50;

/// The boots, newest first, at most `limit`, each with its error count.
#[derive(Debug, Clone, Serialize)]
pub struct Boots {
    pub boots: Vec<Boot>,
    /// Why counts may be low (the system journal is not readable by this account).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One core dump.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Crash {
    pub time: String,
    pub exe: String,
    /// The signal's name (`SIGSEGV`), or its number when it has none.
    pub signal: String,
    pub pid: u64,
    pub uid: u64,
    /// `present`, `missing` (removed or never stored), `none`, … as coredumpctl says.
    pub corefile: String,
}

/// Core dumps, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct Crashes {
    pub crashes: Vec<Crash>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn check_limit(limit: usize) -> Result<(), DiagError> {
    if limit == 0 || limit > BOOTS_MAX {
        return Err(DiagError::InvalidArgument {
            field: "limit",
            why: format!("must be 1 to {BOOTS_MAX}"),
        });
    }
    Ok(())
}

/// The newest `limit` boots with their error counts (one `journalctl -b ID -p err` each).
pub async fn boots(permit: &Permit, opts: &DiagOptions, limit: usize) -> Result<Boots, DiagError> {
    check_limit(limit)?;
    let access = journal::Access::check(opts)?;
    let mut all = list_boots(permit, opts, false).await?;
    all.reverse();
    all.truncate(limit);
    for b in &mut all {
        let mut args = journal::source_args(&opts.journal, false);
        args.extend([
            format!("--boot={}", b.id),
            "--priority=err".into(),
            "--output=json".into(),
            "--output-fields=PRIORITY".into(),
            format!("--lines={}", ERRORS_COUNTED + 1),
        ]);
        let (command, out) = diag::run(permit, "journalctl", &args, opts).await?;
        if !out.success() {
            return Err(diag::failure(command, &out));
        }
        let n = out
            .stdout_lossy()
            .lines()
            .filter(|l| l.starts_with('{'))
            .count();
        b.errors = n.min(ERRORS_COUNTED);
        b.errors_capped = n > ERRORS_COUNTED;
    }
    Ok(Boots {
        boots: all,
        note: access.system_unreadable,
    })
}

/// The newest `limit` core dumps (`coredumpctl --json=short --reverse`); none is an empty list.
pub async fn crashes(
    permit: &Permit,
    opts: &DiagOptions,
    limit: usize,
) -> Result<Crashes, DiagError> {
    check_limit(limit)?;
    let access = journal::Access::check(opts)?;
    let mut args = vec![
        // Not `--quiet`: it would hide "No coredumps found", the one way to tell none from a failure.
        "--no-pager".to_owned(),
        "--json=short".into(),
        "--reverse".into(),
        format!("-n{limit}"),
    ];
    if let JournalSource::Directory(d) = &opts.journal {
        args.push(format!("--directory={}", d.display()));
    }
    args.push("list".into());
    let (command, out) = diag::run(permit, "coredumpctl", &args, opts).await?;
    let stderr = diag::stderr_head(&out);
    if !out.success() {
        if stderr.contains("No coredumps found") {
            return Ok(Crashes {
                crashes: Vec::new(),
                note: access.system_unreadable,
            });
        }
        return Err(diag::failure(command, &out));
    }
    let rows: Vec<Value> =
        serde_json::from_str(out.stdout_lossy().trim()).map_err(|e| DiagError::Malformed {
            command: command.clone(),
            what: e.to_string(),
        })?;
    let crashes = rows
        .iter()
        .filter_map(|r| {
            let n = |k: &str| r.get(k).and_then(Value::as_u64);
            let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_owned);
            Some(Crash {
                time: n("time").and_then(diag::iso_time)?,
                exe: s("exe").unwrap_or_default(),
                signal: n("sig").map(signal_name).unwrap_or_default(),
                pid: n("pid")?,
                uid: n("uid").unwrap_or(u64::MAX),
                corefile: s("corefile").unwrap_or_default(),
            })
        })
        .collect();
    Ok(Crashes {
        crashes,
        note: access.system_unreadable,
    })
}

/// Linux's signal names (x86-64 and most architectures).
fn signal_name(n: u64) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(n)
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| NAMES.get(i))
        .map(|s| (*s).to_owned())
        .unwrap_or_else(|| n.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn signals_have_their_names() {
        assert_eq!(super::signal_name(11), "SIGSEGV");
        assert_eq!(super::signal_name(6), "SIGABRT");
        assert_eq!(super::signal_name(0), "0");
        assert_eq!(super::signal_name(64), "64");
    }
}

//! `pacman_log`: transactions from pacman.log, and the time of the last full system upgrade.

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::macros::format_description;

use crate::error::PacmanError;
use crate::info::Timestamp;

/// Most entries returned by default.
pub const DEFAULT_LIMIT: usize = 100;

/// What a log line records.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LogAction {
    /// A package was installed.
    Installed,
    /// A package was upgraded.
    Upgraded,
    /// A package was removed.
    Removed,
    /// A package was downgraded.
    Downgraded,
    /// A package was reinstalled in the same version.
    Reinstalled,
    /// A transaction started.
    TransactionStarted,
    /// A transaction completed.
    TransactionCompleted,
    /// `pacman -Syu` started a full system upgrade.
    FullUpgrade,
    /// Package lists were synchronised (`-Sy`).
    Synchronized,
}

/// One log entry.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LogEntry {
    /// When.
    pub time: Timestamp,
    /// What.
    pub action: LogAction,
    /// Package, for package actions.
    pub package: Option<String>,
    /// Version before (upgrades, downgrades) or the removed/installed version.
    pub old_version: Option<String>,
    /// Version after.
    pub new_version: Option<String>,
}

/// Filters for `pacman_log`.
#[derive(Debug, Clone, Default)]
pub struct LogQuery {
    /// Only this package.
    pub package: Option<String>,
    /// Only this action.
    pub action: Option<LogAction>,
    /// Only at or after this time.
    pub since: Option<i64>,
    /// Most recent entries kept.
    pub limit: Option<usize>,
}

/// The answer to `pacman_log`.
#[derive(Debug, Clone, Serialize)]
pub struct LogResult {
    /// The log file read.
    pub path: String,
    /// Matching entries before the limit.
    pub total: usize,
    /// Most recent matching entries, oldest first.
    pub entries: Vec<LogEntry>,
    /// When the last `pacman -Syu` started.
    pub last_full_upgrade: Option<Timestamp>,
    /// With a package filter: its whole history in the log (whatever `since`, `action` and
    /// `limit` cut from `entries`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<History>,
}

/// Most versions listed in a history.
pub const MAX_HISTORY_VERSIONS: usize = 50;

/// One package's life in the log.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct History {
    /// Installs.
    pub installed: usize,
    /// Upgrades.
    pub upgraded: usize,
    /// Downgrades.
    pub downgraded: usize,
    /// Reinstalls.
    pub reinstalled: usize,
    /// Removals.
    pub removed: usize,
    /// The first entry.
    pub first: Option<LogEntry>,
    /// The last entry: what the log says the package is now.
    pub last: Option<LogEntry>,
    /// The versions it had, oldest first (the last `MAX_HISTORY_VERSIONS`).
    pub versions: Vec<String>,
}

impl History {
    fn add(&mut self, e: &LogEntry) {
        match e.action {
            LogAction::Installed => self.installed += 1,
            LogAction::Upgraded => self.upgraded += 1,
            LogAction::Downgraded => self.downgraded += 1,
            LogAction::Reinstalled => self.reinstalled += 1,
            LogAction::Removed => self.removed += 1,
            _ => return,
        }
        if let Some(v) = &e.new_version
            && self.versions.last() != Some(v)
        {
            self.versions.push(v.clone());
            if self.versions.len() > MAX_HISTORY_VERSIONS {
                self.versions.remove(0);
            }
        }
        if self.first.is_none() {
            self.first = Some(e.clone());
        }
        self.last = Some(e.clone());
    }
}

/// Parses `[2024-01-02T03:04:05+0100]` (pacman ≥ 5.1) or `[2019-01-02 03:04]` (older).
fn parse_time(stamp: &str) -> Option<i64> {
    let modern = format_description!(
        "[year]-[month]-[day]T[hour]:[minute]:[second][offset_hour sign:mandatory][offset_minute]"
    );
    if let Ok(t) = OffsetDateTime::parse(stamp, modern) {
        return Some(t.unix_timestamp());
    }
    let old = format_description!("[year]-[month]-[day] [hour]:[minute]");
    time::PrimitiveDateTime::parse(stamp, old)
        .ok()
        .map(|t| t.assume_utc().unix_timestamp())
}

/// Parses one line; `None` for lines that record nothing listed here.
pub fn parse_line(line: &str) -> Option<LogEntry> {
    let rest = line.strip_prefix('[')?;
    let (stamp, rest) = rest.split_once("] ")?;
    let time = Timestamp(parse_time(stamp)?);
    // Old logs have no "[ALPM]" tag.
    let msg = match rest.strip_prefix('[') {
        Some(tagged) => tagged.split_once("] ")?.1,
        None => rest,
    };
    let simple = |action| {
        Some(LogEntry {
            time,
            action,
            package: None,
            old_version: None,
            new_version: None,
        })
    };
    match msg.trim_end() {
        "transaction started" => return simple(LogAction::TransactionStarted),
        "transaction completed" => return simple(LogAction::TransactionCompleted),
        "starting full system upgrade" => return simple(LogAction::FullUpgrade),
        "synchronizing package lists" => return simple(LogAction::Synchronized),
        _ => {}
    }
    let (verb, rest) = msg.split_once(' ')?;
    let action = match verb {
        "installed" => LogAction::Installed,
        "upgraded" => LogAction::Upgraded,
        "removed" => LogAction::Removed,
        "downgraded" => LogAction::Downgraded,
        "reinstalled" => LogAction::Reinstalled,
        _ => return None,
    };
    let (package, versions) = rest.split_once(" (")?;
    let versions = versions.trim_end().strip_suffix(')')?;
    let (old_version, new_version) = match versions.split_once(" -> ") {
        Some((a, b)) => (Some(a.to_owned()), Some(b.to_owned())),
        None if action == LogAction::Removed => (Some(versions.to_owned()), None),
        None => (None, Some(versions.to_owned())),
    };
    if package.contains(' ') {
        return None;
    }
    Some(LogEntry {
        time,
        action,
        package: Some(package.to_owned()),
        old_version,
        new_version,
    })
}

/// Reads the log and applies `query`.
pub fn read_log(path: &Path, query: &LogQuery) -> Result<LogResult, PacmanError> {
    let file = std::fs::File::open(path).map_err(|source| PacmanError::LogUnreadable {
        path: path.to_owned(),
        source,
    })?;
    let mut matched = Vec::new();
    let mut last_full_upgrade = None;
    let mut history = query.package.as_ref().map(|_| History {
        installed: 0,
        upgraded: 0,
        downgraded: 0,
        reinstalled: 0,
        removed: 0,
        first: None,
        last: None,
        versions: Vec::new(),
    });
    let mut buf = Vec::new();
    let mut reader = BufReader::new(file);
    loop {
        buf.clear();
        let n =
            reader
                .read_until(b'\n', &mut buf)
                .map_err(|source| PacmanError::LogUnreadable {
                    path: path.to_owned(),
                    source,
                })?;
        if n == 0 {
            break;
        }
        let line = String::from_utf8_lossy(&buf);
        let Some(entry) = parse_line(&line) else {
            continue;
        };
        if entry.action == LogAction::FullUpgrade {
            last_full_upgrade = Some(entry.time);
        }
        if let (Some(h), Some(p)) = (history.as_mut(), query.package.as_ref())
            && entry.package.as_ref() == Some(p)
        {
            h.add(&entry);
        }
        if query
            .package
            .as_ref()
            .is_some_and(|p| entry.package.as_ref() != Some(p))
            || query.action.is_some_and(|a| a != entry.action)
            || query.since.is_some_and(|s| entry.time.0 < s)
        {
            continue;
        }
        matched.push(entry);
    }
    let total = matched.len();
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    let entries = matched.split_off(total.saturating_sub(limit));
    Ok(LogResult {
        path: path.to_string_lossy().into_owned(),
        total,
        entries,
        last_full_upgrade,
        history,
    })
}

/// When the last `pacman -Syu` started, per the log (used by the news tool).
pub fn last_full_upgrade(path: &Path) -> Result<Option<Timestamp>, PacmanError> {
    let query = LogQuery {
        action: Some(LogAction::FullUpgrade),
        limit: Some(1),
        ..LogQuery::default()
    };
    Ok(read_log(path, &query)?.last_full_upgrade)
}

/// Parses a `since` argument: RFC 3339, `YYYY-MM-DD`, or Unix seconds.
pub fn parse_since(text: &str) -> Result<i64, PacmanError> {
    if let Ok(secs) = text.parse::<i64>() {
        return Ok(secs);
    }
    if let Ok(t) = OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339) {
        return Ok(t.unix_timestamp());
    }
    let day = format_description!("[year]-[month]-[day]");
    time::Date::parse(text, day)
        .map(|d| d.midnight().assume_utc().unix_timestamp())
        .map_err(|_| PacmanError::InvalidArgument {
            argument: "since",
            problem: format!("{text:?} is not RFC 3339, YYYY-MM-DD or Unix seconds"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_both_eras() {
        let e = parse_line("[2026-11-30T07:19:13+0100] [ALPM] upgraded ca-bundle (1-1 -> 2-1)")
            .unwrap();
        assert_eq!(e.action, LogAction::Upgraded);
        assert_eq!(e.time.0, 1_796_019_553);
        assert_eq!(e.old_version.as_deref(), Some("1-1"));
        let old = parse_line("[2015-03-01 10:00] installed foo (1.0-1)").unwrap();
        assert_eq!(old.package.as_deref(), Some("foo"));
        assert_eq!(old.new_version.as_deref(), Some("1.0-1"));
        let removed = parse_line("[2026-01-01T00:00:00+0000] [ALPM] removed x (3-1)").unwrap();
        assert_eq!(removed.old_version.as_deref(), Some("3-1"));
        assert!(parse_line("[2026-01-01T00:00:00+0000] [ALPM-SCRIPTLET] hello").is_none());
        assert!(parse_line("garbage").is_none());
        assert_eq!(parse_since("2026-11-30").unwrap(), 1_795_996_800);
    }
}

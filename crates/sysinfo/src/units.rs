//! systemd units, system or the person's user manager, through `systemctl`: lists by state
//! (`list-units --output=json`, `list-timers --output=json`) and one unit's status
//! (`systemctl show --timestamp=unix --property=…`), with its unit file and drop-ins read as
//! systemd names them and its last journal lines. The unit name reaches systemctl after `--`
//! (never an option) and is judged there; a name it does not know is [`DiagError::UnknownUnit`]
//! with the near names it does.
//!
//! D-Bus (`org.freedesktop.systemd1`) would answer the same; systemctl is used because it is
//! what the person would run and its JSON and `show` output are stable interfaces.

use std::collections::HashSet;
use std::path::Path;

use archgate_exec::Permit;
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::diag::{self, DiagError, DiagOptions};
use crate::journal::{self, Entry, JournalQuery};
use crate::transient;
use crate::unit_name::SUFFIXES;
pub use crate::unit_name::complete_name;

/// A unit file or drop-in longer than this is cut.
pub const FILE_MAX: usize = 8 * 1024;
/// Journal lines shown with a unit's status.
pub const STATUS_LINES: usize = 10;

/// Which units to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitState {
    Failed,
    Active,
    Timers,
}

/// One unit in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitRow {
    pub unit: String,
    pub load: String,
    pub active: String,
    pub sub: String,
    pub description: String,
}

/// One active timer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimerRow {
    pub unit: String,
    pub activates: String,
    /// When it fires next / fired last (RFC 3339, UTC), when it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
}

/// A list of units or of timers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UnitListing {
    Units(Vec<UnitRow>),
    Timers(Vec<TimerRow>),
}

/// A unit file or drop-in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitFile {
    pub path: String,
    /// Its text (cut to [`FILE_MAX`] bytes), or why it could not be read.
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// How the main process last ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LastExit {
    /// `exited`, `killed` or `dumped`.
    pub code: &'static str,
    /// The exit status, or the signal number when killed.
    pub status: i64,
}

/// One unit's status.
#[derive(Debug, Serialize)]
pub struct UnitStatus {
    pub unit: String,
    pub description: String,
    pub load: String,
    pub active: String,
    pub sub: String,
    /// `enabled`, `disabled`, `static`, … (absent for units without a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<String>,
    /// When it entered its current state (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_pid: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// systemd's result of the last run (`success`, `exit-code`, `signal`, `timeout`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_exit: Option<LastExit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<UnitFile>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub drop_ins: Vec<UnitFile>,
    /// Its last journal lines, newest first, or why they could not be read.
    #[serde(serialize_with = "entries_or_error")]
    pub journal: Result<Vec<Entry>, DiagError>,
}

fn entries_or_error<S: Serializer>(
    v: &Result<Vec<Entry>, DiagError>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match v {
        Ok(e) => e.serialize(s),
        Err(e) => {
            serde_json::json!({"error": {"kind": e.kind(), "message": e.to_string()}}).serialize(s)
        }
    }
}

/// The properties `show` is asked for.
const PROPERTIES: &str = "--property=Id,Description,LoadState,LoadError,ActiveState,SubState,\
UnitFileState,StateChangeTimestamp,MainPID,MemoryCurrent,NRestarts,Result,ExecMainCode,\
ExecMainStatus,FragmentPath,DropInPaths,Transient";

fn scope(opts: &DiagOptions, user: bool) -> Result<Vec<String>, DiagError> {
    if user {
        return Ok(vec!["--user".into(), "--no-pager".into()]);
    }
    if !diag::systemd_booted(&opts.root) {
        return Err(DiagError::NotAvailable {
            what: "systemd is not running on this machine (PID 1 is not systemd)".into(),
        });
    }
    Ok(vec!["--system".into(), "--no-pager".into()])
}

async fn systemctl(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
    rest: &[&str],
) -> Result<String, DiagError> {
    let mut args = scope(opts, user)?;
    args.extend(rest.iter().map(|s| (*s).to_owned()));
    let (command, out) = diag::run(permit, "systemctl", &args, opts).await?;
    if !out.success() {
        return Err(diag::failure(command, &out));
    }
    Ok(out.stdout_lossy())
}

/// Units in a state (`failed`, `active`), or the active timers.
pub async fn list(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
    state: UnitState,
) -> Result<UnitListing, DiagError> {
    if state == UnitState::Timers {
        let text = systemctl(permit, opts, user, &["list-timers", "--output=json"]).await?;
        let rows: Vec<Value> = serde_json::from_str(text.trim()).unwrap_or_default();
        let when = |r: &Value, k: &str| {
            r.get(k)
                .and_then(Value::as_u64)
                .filter(|t| *t > 0)
                .and_then(diag::iso_time)
        };
        return Ok(UnitListing::Timers(
            rows.iter()
                .filter_map(|r| {
                    Some(TimerRow {
                        unit: r.get("unit")?.as_str()?.to_owned(),
                        activates: r
                            .get("activates")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_owned(),
                        next: when(r, "next"),
                        last: when(r, "last"),
                    })
                })
                .collect(),
        ));
    }
    let flag = match state {
        UnitState::Failed => "--state=failed",
        _ => "--state=active",
    };
    let text = systemctl(
        permit,
        opts,
        user,
        &[
            "list-units",
            "--plain",
            "--no-legend",
            "--output=json",
            flag,
        ],
    )
    .await?;
    let units = crate::systemd::parse(&text);
    let transient = transient_units(
        permit,
        opts,
        user,
        &units.iter().map(|u| u.unit.as_str()).collect::<Vec<_>>(),
    )
    .await?;
    Ok(UnitListing::Units(
        units
            .into_iter()
            .map(|u| UnitRow {
                description: transient::description(
                    &u.unit,
                    transient.contains(&u.unit),
                    &u.description,
                ),
                unit: u.unit,
                load: u.load,
                active: u.active,
                sub: u.sub,
            })
            .collect(),
    ))
}

/// Which of `names` are transient units (`transient.rs`): their descriptions are command lines.
async fn transient_units(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
    names: &[&str],
) -> Result<HashSet<String>, DiagError> {
    if names.is_empty() {
        return Ok(HashSet::new());
    }
    let mut args = scope(opts, user)?;
    args.extend(transient::show_args(names));
    let (command, out) = diag::run(permit, "systemctl", &args, opts).await?;
    if !out.success() {
        return Err(diag::failure(command, &out));
    }
    Ok(transient::transient_ids(
        &out.stdout_lossy(),
        out.truncated,
        names,
    ))
}

/// Every unit name the manager knows: loaded units and installed unit files.
async fn known_names(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
) -> Result<Vec<String>, DiagError> {
    let mut names = Vec::new();
    for (rest, key) in [
        (
            &[
                "list-units",
                "--all",
                "--plain",
                "--no-legend",
                "--output=json",
            ][..],
            "unit",
        ),
        (
            &["list-unit-files", "--no-legend", "--output=json"][..],
            "unit_file",
        ),
    ] {
        let text = systemctl(permit, opts, user, rest).await?;
        let rows: Vec<Value> = serde_json::from_str(text.trim()).unwrap_or_default();
        names.extend(
            rows.iter()
                .filter_map(|r| r.get(key).and_then(Value::as_str).map(str::to_owned)),
        );
    }
    Ok(names)
}

/// One unit's status, its files and its last journal lines.
pub async fn status(
    permit: &Permit,
    opts: &DiagOptions,
    user: bool,
    name: &str,
) -> Result<UnitStatus, DiagError> {
    diag::check_unit(name)?;
    let text = systemctl(
        permit,
        opts,
        user,
        &["show", "--timestamp=unix", PROPERTIES, "--", name],
    )
    .await?;
    let props: std::collections::HashMap<&str, &str> =
        text.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |k: &str| props.get(k).copied().filter(|v| !v.is_empty());
    let id = get("Id").unwrap_or(name).to_owned();
    if get("LoadState") == Some("not-found") && get("ActiveState") == Some("inactive") {
        let names = known_names(permit, opts, user).await?;
        return Err(DiagError::UnknownUnit {
            near: diag::near_names(names.iter().map(String::as_str), &id),
            name: id,
        });
    }
    let num = |k: &str| {
        get(k)
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|n| *n != u64::MAX)
    };
    let last_exit = match get("ExecMainCode") {
        Some("1") => Some("exited"),
        Some("2") => Some("killed"),
        Some("3") => Some("dumped"),
        _ => None,
    }
    .map(|code| LastExit {
        code,
        status: get("ExecMainStatus")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0),
    });
    let journal = journal::query(
        permit,
        opts,
        &JournalQuery {
            unit: Some(id.clone()),
            user,
            limit: STATUS_LINES,
            ..Default::default()
        },
    )
    .await
    .map(|p| p.entries)
    .or_else(|e| match e {
        // The unit exists; the journal just never heard of it.
        DiagError::UnknownUnit { .. } => Ok(Vec::new()),
        e => Err(e),
    });
    let fragment = get("FragmentPath");
    // systemd's word, the file's place, or systemd-run's and run0's own names.
    let transient = get("Transient") == Some("yes")
        || fragment.is_some_and(transient::is_transient_file)
        || id.starts_with("run-");
    Ok(UnitStatus {
        description: transient::description(&id, transient, get("Description").unwrap_or("")),
        load: get("LoadState").unwrap_or("").to_owned(),
        active: get("ActiveState").unwrap_or("").to_owned(),
        sub: get("SubState").unwrap_or("").to_owned(),
        enabled: get("UnitFileState").map(str::to_owned),
        since: get("StateChangeTimestamp").and_then(|t| match t.strip_prefix('@') {
            Some(secs) => secs
                .parse::<u64>()
                .ok()
                .and_then(|s| diag::iso_time(s * 1_000_000)),
            None => Some(t.to_owned()),
        }),
        main_pid: num("MainPID")
            .filter(|p| *p > 0)
            .and_then(|p| u32::try_from(p).ok()),
        memory_bytes: num("MemoryCurrent"),
        restarts: num("NRestarts"),
        result: get("Result").map(str::to_owned),
        last_exit,
        file: fragment.map(|p| read_unit_file(Path::new(p), transient)),
        drop_ins: get("DropInPaths")
            .map(|d| {
                d.split_whitespace()
                    .map(|p| read_unit_file(Path::new(p), transient))
                    .collect()
            })
            .unwrap_or_default(),
        journal,
        unit: id,
    })
}

/// A unit file or drop-in as systemd named it: only a regular file whose name is a unit's or a
/// drop-in's (`.conf`) is read, so a unit file that is a symlink elsewhere shows its path only.
/// A transient unit's files (or any under `…/systemd/transient/`) have their command lines and
/// environment withheld (`transient.rs`).
fn read_unit_file(path: &Path, transient: bool) -> UnitFile {
    let shown = path.display().to_string();
    let transient = transient || transient::is_transient_file(&shown);
    let ok_name = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e == "conf" || SUFFIXES.contains(&e))
    };
    let text = match std::fs::canonicalize(path) {
        Ok(real) if ok_name(&real) && real.is_file() => std::fs::read(&real)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| format!("(could not be read: {e})")),
        Ok(real) => Err(format!(
            "(not read: it resolves to {}, not a unit file)",
            real.display()
        )),
        Err(e) => Err(format!("(could not be read: {e})")),
    };
    match text {
        Ok(t) => {
            let mut t = if transient {
                transient::unit_file(&t)
            } else {
                t
            };
            let truncated = t.len() > FILE_MAX;
            if truncated {
                let mut end = FILE_MAX;
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t.truncate(end);
            }
            UnitFile {
                path: shown,
                text: t,
                truncated,
            }
        }
        Err(why) => UnitFile {
            path: shown,
            text: why,
            truncated: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_completed_as_systemd_does() {
        assert_eq!(complete_name("sshd"), "sshd.service");
        assert_eq!(complete_name("getty@tty1"), "getty@tty1.service");
        assert_eq!(complete_name("-.mount"), "-.mount");
        assert_eq!(complete_name("fstrim.timer"), "fstrim.timer");
        assert_eq!(complete_name("org.foo"), "org.foo.service");
    }

    #[test]
    fn only_unit_files_are_read() {
        let t = tempfile::tempdir().unwrap();
        let unit = t.path().join("a.service");
        std::fs::write(&unit, "[Service]\n").unwrap();
        let secret = t.path().join("token");
        std::fs::write(&secret, "s3cret").unwrap();
        let link = t.path().join("b.service");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        assert_eq!(read_unit_file(&unit, false).text, "[Service]\n");
        let f = read_unit_file(&link, false);
        assert!(
            !f.text.contains("s3cret") && f.text.contains("not a unit file"),
            "{f:?}"
        );
        std::fs::write(&unit, "x".repeat(FILE_MAX + 10)).unwrap();
        let f = read_unit_file(&unit, false);
        assert!(f.truncated && f.text.len() == FILE_MAX);
    }

    /// Attack 14 F3: a transient unit's file (the one systemd writes under
    /// `…/systemd/transient/`, our own text in its shape) is shown with its command line and
    /// environment withheld, wherever it is named from.
    #[test]
    fn a_transient_units_file_is_shown_withheld() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("run/user/1000/systemd/transient");
        std::fs::create_dir_all(&dir).unwrap();
        let unit = dir.join("run-u42.service");
        let text = "# This is a transient unit file, created programmatically via the systemd API. Do not edit.\n[Unit]\nDescription=/usr/bin/pg_dump --dbname=postgresql://app:S3cret@db/app\n\n[Service]\nEnvironment=\"PGPASSWORD=S3cret\"\nExecStart=\nExecStart=\"/usr/bin/pg_dump\" \"--dbname=postgresql://app:S3cret@db/app\"\n";
        std::fs::write(&unit, text).unwrap();
        let f = read_unit_file(&unit, false);
        assert!(!f.text.contains("S3cret"), "{f:?}");
        assert!(
            f.text
                .contains("ExecStart=\"/usr/bin/pg_dump\" [arguments withheld")
        );
        // Named transient by systemd (`Transient=yes`) wherever its file is.
        let other = t.path().join("backup.service");
        std::fs::write(&other, text).unwrap();
        assert!(!read_unit_file(&other, true).text.contains("S3cret"));
        assert!(read_unit_file(&other, false).text.contains("S3cret"));
    }
}

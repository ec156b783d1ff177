//! Failed systemd units: one `systemctl` run through the caller's permit, where systemd runs.

use std::path::Path;
use std::time::Duration;

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;

use crate::probe::ProbeError;

/// One failed unit, as `systemctl --failed` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedUnit {
    /// The unit name (e.g. `foo.service`).
    pub unit: String,
    /// Load state (e.g. `loaded`, `not-found`).
    pub load: String,
    /// Active state (`failed`).
    pub active: String,
    /// Sub state (e.g. `failed`).
    pub sub: String,
    /// The unit's description.
    pub description: String,
}

/// The arguments given to `systemctl`.
pub const SYSTEMCTL_ARGS: &[&str] = &[
    "--failed",
    "--no-legend",
    "--plain",
    "--no-pager",
    "--output=json",
];

/// Whether systemd is the init system: `/run/systemd/system` exists (what `sd_booted` checks)
/// or PID 1 is called `systemd`.
pub(crate) fn systemd_running(root: &Path) -> bool {
    root.join("run/systemd/system").is_dir()
        || std::fs::read_to_string(root.join("proc/1/comm")).is_ok_and(|c| c.trim() == "systemd")
}

pub(crate) async fn failed_units(
    permit: &Permit,
    root: &Path,
    timeout: Duration,
) -> Result<Vec<FailedUnit>, ProbeError> {
    if !systemd_running(root) {
        return Err(ProbeError::NotAvailable {
            what: "systemd is not running on this machine",
        });
    }
    let spec = CommandSpec::new("systemctl")
        .args(SYSTEMCTL_ARGS.iter().copied())
        .timeout(timeout);
    let command = spec.display();
    let out = permit.run(spec).await?;
    if !out.success() {
        let mut stderr = out.stderr_lossy();
        stderr.truncate(stderr.trim_end().len().min(500));
        return Err(ProbeError::CommandFailed {
            command,
            code: out.status.code,
            stderr,
        });
    }
    let mut units = parse(&out.stdout_lossy());
    // A transient unit's description is its command line (`transient.rs`): which are transient
    // is asked, and a failure to tell is this probe's failure, never the descriptions whole.
    if !units.is_empty() {
        let names: Vec<&str> = units.iter().map(|u| u.unit.as_str()).collect();
        let spec = CommandSpec::new("systemctl")
            .args(["--no-pager"])
            .args(crate::transient::show_args(&names))
            .timeout(timeout);
        let command = spec.display();
        let shown = permit.run(spec).await?;
        if !shown.success() {
            let mut stderr = shown.stderr_lossy();
            stderr.truncate(stderr.trim_end().len().min(500));
            return Err(ProbeError::CommandFailed {
                command,
                code: shown.status.code,
                stderr,
            });
        }
        let transient =
            crate::transient::transient_ids(&shown.stdout_lossy(), shown.truncated, &names);
        for u in &mut units {
            u.description =
                crate::transient::description(&u.unit, transient.contains(&u.unit), &u.description);
        }
    }
    Ok(units)
}

/// `systemctl --failed` output: JSON where systemd supports `--output=json` for unit lists,
/// else the plain `UNIT LOAD ACTIVE SUB DESCRIPTION` lines.
pub(crate) fn parse(text: &str) -> Vec<FailedUnit> {
    if let Ok(rows) = serde_json::from_str::<Vec<serde_json::Value>>(text.trim()) {
        return rows.iter().filter_map(from_json).collect();
    }
    text.lines().filter_map(from_plain).collect()
}

fn from_json(row: &serde_json::Value) -> Option<FailedUnit> {
    let field = |k: &str| row.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
    let unit = field("unit");
    if unit.is_empty() {
        return None;
    }
    Some(FailedUnit {
        unit,
        load: field("load"),
        active: field("active"),
        sub: field("sub"),
        description: field("description"),
    })
}

fn from_plain(line: &str) -> Option<FailedUnit> {
    // Some versions put a status bullet before the unit even with --plain.
    let line = line.trim_start().trim_start_matches(['●', '*', '×']).trim();
    let mut rest = line.split_whitespace();
    let unit = rest.next()?.to_owned();
    let load = rest.next()?.to_owned();
    let active = rest.next()?.to_owned();
    let sub = rest.next()?.to_owned();
    let description = rest.collect::<Vec<_>>().join(" ");
    Some(FailedUnit {
        unit,
        load,
        active,
        sub,
        description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_output_parses() {
        let text = r#"[{"unit":"backup.service","load":"loaded","active":"failed","sub":"failed","description":"Nightly backup"},{"load":"x"}]"#;
        assert_eq!(
            parse(text),
            vec![FailedUnit {
                unit: "backup.service".into(),
                load: "loaded".into(),
                active: "failed".into(),
                sub: "failed".into(),
                description: "Nightly backup".into(),
            }]
        );
        assert_eq!(parse("[]"), vec![]);
    }

    #[test]
    fn plain_output_parses() {
        let text = "backup.service loaded failed failed Nightly  backup job\n\
                    ● ghost.mount    not-found failed failed ghost.mount\n\
                    \n\
                    short line\n";
        let units = parse(text);
        assert_eq!(units.len(), 2);
        assert_eq!(units[0].unit, "backup.service");
        assert_eq!(units[0].description, "Nightly backup job");
        assert_eq!(units[1].unit, "ghost.mount");
        assert_eq!(units[1].load, "not-found");
        assert_eq!(parse(""), vec![]);
    }
}

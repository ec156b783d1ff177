//! The diagnostics tools: `journal`, `units` and `boots` (boots and core dumps), each one call
//! into `archgate_sysinfo`, read-only and never elevating. The programs they run (journalctl,
//! systemctl, coredumpctl) are fixed, with fixed verbs; the agent's words reach them only as
//! `--name=value` words or after `--`. The permit is not bound to a command list: the commands
//! are built from the arguments, every one of them recorded in the audit, and a match string that
//! merely contains `sudo` (`grep: "sudo"`) is a log search, not an elevation policy should block.
//! Outputs, like every tool's, never reach the activity log.
//!
//! `[diagnostics] journal_dir` points all three at a directory of journal files instead of the
//! machine's journal.

use archgate_core::config::Config;
use archgate_core::exec::Permit;
use archgate_core::gate::Catalogue;
use archgate_core::tool::{CallCx, Tool, ToolError, ToolOutput, ToolSpec};
use archgate_sysinfo::journal::{JournalQuery, Priority};
use archgate_sysinfo::units::UnitState;
use archgate_sysinfo::{DiagError, DiagOptions, JournalSource, boots, journal, units};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::domain_err;

/// A diagnostic's error, with what exists (near unit names, the boots there are) as details.
fn diag_err(e: DiagError) -> ToolError {
    let details = match &e {
        DiagError::UnknownUnit { near, .. } => Some(json!({ "near": near })),
        DiagError::BootOutOfRange { have, .. } => Some(json!({ "boots": have })),
        _ => None,
    };
    let t = domain_err(e);
    match details {
        Some(d) => t.details(d),
        None => t,
    }
}

fn options(config: &Config, permit: &Permit) -> DiagOptions {
    let d = DiagOptions::default();
    DiagOptions {
        journal: match &config.diagnostics.journal_dir {
            Some(dir) => JournalSource::Directory(dir.clone()),
            None => JournalSource::Machine,
        },
        timeout: permit.timeout().unwrap_or(d.timeout),
        ..d
    }
}

/// Declares one read-only diagnostics tool whose `execute` is `$body` with `$permit`, `$opts`
/// and the arguments `$a`.
macro_rules! diag_tool {
    ($ty:ident, $args:ty, $name:literal, $title:literal, $prov:expr, $desc:literal,
     |$permit:ident, $opts:ident, $a:ident| $body:expr) => {
        pub struct $ty;
        impl Tool for $ty {
            type Args = $args;
            type Run = $args;
            archgate_core::resolve_as_planned!();
            fn spec(&self) -> &'static ToolSpec {
                read_spec!(static SPEC = $name, $title, open_world: false, provenance: $prov, $desc);
                &SPEC
            }
            fn execute<'a>(
                &'a self,
                cx: &'a CallCx,
                permit: Permit,
                $a: $args,
            ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
                Box::pin(async move {
                    let $opts = options(&cx.config, &permit);
                    let $permit = &permit;
                    Ok(ToolOutput::json($body.map_err(diag_err)?))
                })
            }
        }
    };
}

/// The journal's arguments. No field carries a description: the tool's own says what needs
/// saying (the context budget gives a new tool 150 tokens in all).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalArgs {
    pub unit: Option<String>,
    pub user: Option<bool>,
    pub priority: Option<String>,
    pub boot: Option<i64>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub kernel: Option<bool>,
    pub grep: Option<String>,
    pub limit: Option<i64>,
    pub cursor: Option<String>,
}

/// A priority as people write it: journalctl's names, their long forms, or 0 to 7.
fn priority(p: &str) -> Result<Priority, DiagError> {
    Ok(match p.trim().to_ascii_lowercase().as_str() {
        "emerg" | "emergency" | "0" => Priority::Emerg,
        "alert" | "1" => Priority::Alert,
        "crit" | "critical" | "2" => Priority::Crit,
        "err" | "error" | "3" => Priority::Err,
        "warning" | "warn" | "4" => Priority::Warning,
        "notice" | "5" => Priority::Notice,
        "info" | "6" => Priority::Info,
        "debug" | "7" => Priority::Debug,
        _ => {
            return Err(DiagError::InvalidArgument {
                field: "priority",
                why: format!(
                    "{p:?} is none of emerg, alert, crit, err, warning, notice, info, debug (or 0-7)"
                ),
            });
        }
    })
}

fn limit(l: Option<i64>, default: usize) -> usize {
    // Out of range is refused by the domain call, with the bounds.
    l.map_or(default, |l| usize::try_from(l).unwrap_or(0))
}

impl JournalArgs {
    fn query(self) -> Result<JournalQuery, DiagError> {
        Ok(JournalQuery {
            unit: self.unit,
            user: self.user.unwrap_or(false),
            priority: self.priority.as_deref().map(priority).transpose()?,
            boot: self.boot,
            since: self.since,
            until: self.until,
            kernel: self.kernel.unwrap_or(false),
            grep: self.grep,
            limit: limit(self.limit, 50),
            cursor: self.cursor,
        })
    }
}

diag_tool!(
    Journal,
    JournalArgs,
    "journal",
    "Journal",
    archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::Journal),
    "Journal, newest first; boot 0 = current; more: cursor.",
    |permit, opts, a| async { journal::query(permit, &opts, &a.query()?).await }.await
);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitsArgs {
    pub unit: Option<String>,
    // A string, not an enum, for the context budget: an enum of an optional field costs its own
    // definition in the schema.
    pub state: Option<String>,
    pub user: Option<bool>,
}

diag_tool!(
    Units,
    UnitsArgs,
    "units",
    "systemd units",
    archgate_core::provenance::Provenance::Untrusted(archgate_core::provenance::Source::Units),
    "Units by state (failed, active or timers), or one unit's status with its files and last log lines.",
    |permit, opts, a| async {
        match &a.unit {
            Some(u) => units::status(permit, &opts, a.user.unwrap_or(false), u)
                .await
                .map(|s| serde_json::to_value(s).unwrap_or_default()),
            None => match state(a.state.as_deref()) {
                Ok(st) => units::list(permit, &opts, a.user.unwrap_or(false), st).await,
                Err(e) => Err(e),
            }
            .map(|l| serde_json::to_value(l).unwrap_or_default()),
        }
    }
    .await
);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootsArgs {
    pub crashes: Option<bool>,
    pub limit: Option<i64>,
}

diag_tool!(
    Boots,
    BootsArgs,
    "boots",
    "Boots and crashes",
    archgate_core::provenance::Provenance::ArchgateOnly,
    "Boots with their error counts, or core dumps (crashes).",
    |permit, opts, a| async {
        let limit = limit(a.limit, 10);
        if a.crashes.unwrap_or(false) {
            boots::crashes(permit, &opts, limit)
                .await
                .map(|c| serde_json::to_value(c).unwrap_or_default())
        } else {
            boots::boots(permit, &opts, limit)
                .await
                .map(|b| serde_json::to_value(b).unwrap_or_default())
        }
    }
    .await
);

fn state(s: Option<&str>) -> Result<UnitState, DiagError> {
    Ok(match s.map(str::trim) {
        None | Some("failed") => UnitState::Failed,
        Some("active") => UnitState::Active,
        Some("timers") => UnitState::Timers,
        Some(other) => {
            return Err(DiagError::InvalidArgument {
                field: "state",
                why: format!("{other:?} is none of failed, active, timers"),
            });
        }
    })
}

pub fn register(c: &mut Catalogue) {
    c.add(Journal);
    c.add(Units);
    c.add(Boots);
}

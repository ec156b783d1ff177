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
use archgate_core::policy::Tier;
use archgate_core::tool::{CallCx, Tool, ToolError, ToolOutput, ToolSpec};
use archgate_sysinfo::journal::{JournalQuery, Priority};
use archgate_sysinfo::units::UnitState;
use archgate_sysinfo::{DiagError, DiagOptions, JournalSource, boots, journal, units};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{Kinded, domain_err};

impl Kinded for DiagError {
    fn kind(&self) -> &'static str {
        DiagError::kind(self)
    }
    fn next_step(&self) -> Option<&'static str> {
        DiagError::next_step(self)
    }
}

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
    ($ty:ident, $args:ty, $name:literal, $title:literal, $desc:literal,
     |$permit:ident, $opts:ident, $a:ident| $body:expr) => {
        pub struct $ty;
        impl Tool for $ty {
            type Args = $args;
            type Run = $args;
            archgate_core::resolve_as_planned!();
            fn spec(&self) -> &'static ToolSpec {
                static SPEC: ToolSpec = ToolSpec {
                    name: $name,
                    title: $title,
                    description: $desc,
                    tier: Tier::Read,
                    read_only: true,
                    destructive: false,
                    idempotent: true,
                    open_world: false,
                    private_args: &[],
                };
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

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Emerg,
    Alert,
    Crit,
    Err,
    Warning,
    Notice,
    Info,
    Debug,
}

impl From<Level> for Priority {
    fn from(l: Level) -> Priority {
        match l {
            Level::Emerg => Priority::Emerg,
            Level::Alert => Priority::Alert,
            Level::Crit => Priority::Crit,
            Level::Err => Priority::Err,
            Level::Warning => Priority::Warning,
            Level::Notice => Priority::Notice,
            Level::Info => Priority::Info,
            Level::Debug => Priority::Debug,
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalArgs {
    /// Name or glob
    pub unit: Option<String>,
    /// The person's user journal
    #[serde(default)]
    pub user: bool,
    /// This or worse
    pub priority: Option<Level>,
    /// 0 current, -1 previous
    pub boot: Option<i64>,
    pub since: Option<String>,
    pub until: Option<String>,
    #[serde(default)]
    pub kernel: bool,
    /// Regex on the message
    pub grep: Option<String>,
    /// ≤200, default 50
    pub limit: Option<u32>,
    /// `next` of the last page
    pub cursor: Option<String>,
}

impl JournalArgs {
    fn query(self) -> JournalQuery {
        JournalQuery {
            unit: self.unit,
            user: self.user,
            priority: self.priority.map(Into::into),
            boot: self.boot,
            since: self.since,
            until: self.until,
            kernel: self.kernel,
            grep: self.grep,
            limit: self.limit.map_or(50, |l| l as usize),
            cursor: self.cursor,
        }
    }
}

diag_tool!(
    Journal,
    JournalArgs,
    "journal",
    "The systemd journal",
    "Journal entries, newest first, filtered; since/until take journalctl times (-2h, yesterday, \
     2026-12-01 10:00). More: call again with cursor = next.",
    |permit, opts, a| journal::query(permit, &opts, &a.query()).await
);

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ListState {
    Failed,
    Active,
    Timers,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitsArgs {
    /// One unit's status
    pub unit: Option<String>,
    /// List (default failed)
    pub state: Option<ListState>,
    /// The person's user units
    #[serde(default)]
    pub user: bool,
}

diag_tool!(
    Units,
    UnitsArgs,
    "units",
    "systemd units",
    "systemd units listed by state, or one unit's status: states, since, PID, memory, restarts, \
     last exit, unit file and drop-ins, last log lines.",
    |permit, opts, a| async {
        match &a.unit {
            Some(u) => units::status(permit, &opts, a.user, u)
                .await
                .map(|s| serde_json::to_value(s).unwrap_or_default()),
            None => units::list(permit, &opts, a.user, state(a.state))
                .await
                .map(|l| serde_json::to_value(l).unwrap_or_default()),
        }
    }
    .await
);

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BootsArgs {
    /// Core dumps instead
    #[serde(default)]
    pub crashes: bool,
    /// ≤50, default 10
    pub limit: Option<u32>,
}

diag_tool!(
    Boots,
    BootsArgs,
    "boots",
    "Boots and crashes",
    "Boots, newest first, with their error counts; or core dumps: executable, signal, time.",
    |permit, opts, a| async {
        let limit = a.limit.map_or(10, |l| l as usize);
        if a.crashes {
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

fn state(s: Option<ListState>) -> UnitState {
    match s {
        None | Some(ListState::Failed) => UnitState::Failed,
        Some(ListState::Active) => UnitState::Active,
        Some(ListState::Timers) => UnitState::Timers,
    }
}

pub fn register(c: &mut Catalogue) {
    c.add(Journal);
    c.add(Units);
    c.add(Boots);
}

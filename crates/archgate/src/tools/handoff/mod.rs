//! `handoff`: privileged work by the person's own hands.
//!
//! archgate never elevates privilege. For a closed set of operations it can build exactly
//! (`ops.rs`) it opens a terminal on the person's desktop (`terminal.rs`) running `archgate
//! handoff-run ID`, a small helper (`commands/handoff/`) that takes the prepared command from
//! this process over the control socket, shows it, waits for Enter in that terminal and runs it;
//! `sudo` asks the person's password there. This call waits for the helper's report
//! (`registry.rs`) up to its own deadline, `[tools] timeouts = { handoff = SECS }` (default
//! `DEFAULT_WAIT`). Without a desktop the answer says so and gives the exact command and the
//! hand-off's id for `archgate handoff ID` in the person's own terminal.
//!
//! The call passes the gate like every call (tier `act`: policy can deny it; an ask rule asks).
//! Whatever approves it — the person, policy, developer mode, a standing rule — approves only
//! that the terminal opens: the command runs only after the person's Enter in that terminal and
//! their sudo password.

use archgate_core::gate::Catalogue;
use archgate_core::tool::{
    Action, CallCx, ErrorKind, Plan, Probe, Resolved, Tool, ToolError, ToolOutput, ToolSpec,
};
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

use super::desktop::DesktopService;
use super::{Services, domain_err};

pub mod asking_sudo;
pub mod claimant;
pub mod facts_env;
pub mod ops;
pub mod pacman;
pub(crate) mod pacman_reads;
pub mod pam;
pub mod pinned;
pub mod registry;
pub mod route;
pub mod sudo;
pub mod sudo_any;
pub mod terminal;

pub use ops::Operation;
pub use registry::{Handoffs, Outcome, Prepared};

/// How long a hand-off waits for the person's Enter when the config names no deadline.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(600);
/// How long a command that started is awaited at most (pacman -Syu can take a while).
pub const RUN_CAP: Duration = Duration::from_secs(6 * 3600);
/// The longest reason shown.
pub const MAX_REASON: usize = 500;

/// Arguments of `handoff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoffArgs {
    /// archgate builds the command.
    pub op: ops::Op,
    /// install/remove: names.
    pub packages: Option<Vec<String>>,
    /// unit_*: a system unit.
    pub unit: Option<String>,
    /// install_file: a pkg_cache file; pacnew_*: a pkg_pacnew file.
    pub path: Option<String>,
    /// omarchy: a sudo route.
    pub route: Option<String>,
    /// omarchy: its arguments.
    pub args: Option<Vec<String>>,
    /// Why, for the person (shown).
    pub reason: String,
}

/// What `execute` takes: the prepared hand-off.
pub struct Run {
    prepared: Prepared,
    wait: Duration,
}

static SPEC: ToolSpec = ToolSpec {
    name: "handoff",
    title: "Hand off a privileged step",
    description: "A terminal on the person's desktop shows the exact privileged command (pacman, paccache, \
                  systemctl, .pacnew, snapshot) and runs it after their Enter and sudo \
                  password. Answers ran/cancelled/refused/unknown, exit status, output tail.",
    tier: archgate_core::policy::Tier::Act,
    read_only: false,
    destructive: false,
    idempotent: false,
    open_world: false,
    private_args: &[],
    // The output's tail carries what packages' install scripts printed.
    provenance: archgate_core::provenance::Provenance::Untrusted(
        archgate_core::provenance::Source::PacmanLog,
    ),
    says: archgate_core::sentence::Phrase {
        cases: &[(
            "",
            "open a terminal where you run {target} yourself, with your Enter and your password",
        )],
        replaces: None,
    },
    // The person's terminal, Enter and password: minutes. A client that speaks MCP tasks gets a
    // task for it instead of a request held open.
    long_running: true,
};

pub struct Handoff {
    svc: Arc<Services>,
    desktop: Arc<DesktopService>,
    handoffs: Arc<Handoffs>,
}

pub fn register(
    c: &mut Catalogue,
    svc: &Arc<Services>,
    desktop: Arc<DesktopService>,
    handoffs: Arc<Handoffs>,
) {
    c.add(Handoff {
        svc: svc.clone(),
        desktop,
        handoffs,
    });
}

fn invalid(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(ErrorKind::InvalidArgument, e.to_string())
        .next("name the operation's values as the schema says; no free-form command is taken")
}

/// The command as one line a person could paste (each word quoted when it needs it).
pub fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"@%+=:,./-_".contains(&b))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Tool for Handoff {
    type Args = HandoffArgs;
    type Run = Run;

    fn spec(&self) -> &'static ToolSpec {
        &SPEC
    }

    fn plan(&self, a: &HandoffArgs) -> Plan {
        if a.op == ops::Op::Omarchy {
            // `handoff omarchy pkg add`: policy can name one route.
            let bare = a
                .route
                .as_deref()
                .and_then(archgate_desktop::omarchy::spelling)
                .unwrap_or_default();
            let words: Vec<&str> = std::iter::once("omarchy")
                .chain(bare.split_whitespace())
                .collect();
            // Rules on the route apply too (`deny = ["omarchy pkg add"]`): one capability, two
            // doors. Its aliases are added once the registry is read.
            let mut p = Plan::with_tier(&SPEC, SPEC.tier, &words);
            if !bare.is_empty() {
                p.names = vec![format!("omarchy {bare}"), bare];
            }
            return p;
        }
        let words: &[&str] = match a.op {
            ops::Op::SystemUpdate => &["system_update"],
            ops::Op::Install => &["install"],
            ops::Op::Remove => &["remove"],
            ops::Op::CleanCache => &["clean_cache"],
            ops::Op::UnitRestart => &["unit", "restart"],
            ops::Op::UnitEnable => &["unit", "enable"],
            ops::Op::UnitDisable => &["unit", "disable"],
            ops::Op::InstallFile => &["install_file"],
            ops::Op::PacnewAdopt => &["pacnew", "adopt"],
            ops::Op::PacnewDiscard => &["pacnew", "discard"],
            ops::Op::SnapshotSnapper => &["snapshot", "snapper"],
            ops::Op::SnapshotTimeshift => &["snapshot", "timeshift"],
            ops::Op::Omarchy => &["omarchy"],
        };
        Plan::with_tier(&SPEC, SPEC.tier, words)
    }

    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        a: HandoffArgs,
    ) -> BoxFuture<'a, Result<Resolved<Run>, ToolError>> {
        Box::pin(async move {
            if a.reason.trim().is_empty() || a.reason.chars().count() > MAX_REASON {
                return Err(invalid(format!(
                    "reason: say why in 1 to {MAX_REASON} characters"
                )));
            }
            if a.op == ops::Op::Omarchy {
                return self.resolve_route(cx, probe, plan, a).await;
            }
            if let Some(field) = [("route", a.route.is_some()), ("args", a.args.is_some())]
                .into_iter()
                .find_map(|(f, is)| is.then_some(f))
            {
                return Err(invalid(ops::OpError::Extra {
                    op: a.op.as_str(),
                    field,
                }));
            }
            let values = ops::Values {
                packages: a.packages,
                unit: a.unit,
                path: a.path,
            };
            let operation = Operation::from_args(a.op, values.clone()).map_err(invalid)?;
            // sudo and the program: root's alone, shown by the absolute path checked (F1).
            let sudo = pinned::program("sudo").map_err(|e| {
                ToolError::new(
                    ErrorKind::NotInstalled,
                    format!("sudo is not usable here ({e}): a hand-off runs the command with the person's sudo"),
                )
                .next("tell the person sudo is not set up; they can run the step as root themselves")
            })?;
            let program = pinned::program(operation.program()).map_err(|e| {
                ToolError::new(ErrorKind::NotInstalled, e)
                    .next("tell the person; a hand-off runs only programs root installed")
            })?;
            let conf = cx.config.arch.pacman_conf.clone();
            let (mut lock, mut log_file) = (None, None);
            let mut changes = operation.changes();
            let pacman = self.svc.pacman(&cx.config);
            let read_conf = if operation.reads_pacman_conf() {
                let c = pacman.conf().await.map_err(domain_err)?;
                pacman::check_conf(&c)?;
                Some(c)
            } else {
                None
            };
            if operation.reads_default_pacman_conf() {
                let c = archgate_pacman::conf::PacmanConf::load(std::path::Path::new(
                    pacman_reads::DEFAULT_CONF,
                ))
                .map_err(domain_err)?;
                pacman::check_conf(&c)?;
            }
            if operation.takes_pacman_lock()
                && let Some(c) = &read_conf
            {
                lock = Some(ops::pacman_lock(&c.db_path));
                log_file = Some(c.log_file.clone());
                if let Operation::InstallFile { path } = &operation {
                    pacman::check_cache_file(path, &c.cache_dirs)?;
                }
                if let Operation::Install { packages } = &operation {
                    // The transaction, computed beforehand (pkg_install_plan's): shown, and
                    // refused when it would remove anything (F13).
                    let plan = pacman
                        .install_plan(&archgate_pacman::args::InstallPlanArgs {
                            names: packages.clone(),
                        })
                        .await
                        .map_err(domain_err)?;
                    changes = pacman::transaction(&plan)?;
                }
            }
            if let Operation::PacnewAdopt { path, .. } | Operation::PacnewDiscard { path } =
                &operation
            {
                let waiting = pacman.pacnew().await.map_err(domain_err)?;
                let found = waiting.files.iter().any(|w| &w.path == path);
                let regular = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
                if !found || !regular {
                    return Err(ToolError::new(
                        ErrorKind::NotFound,
                        format!("{path} is not a .pacnew/.pacsave file waiting here"),
                    )
                    .next("call pkg_pacnew and name one of the files it lists"));
                }
                pacman::check_pacnew_paths(&operation)?;
            }
            let argv = ops::argv(&operation, &sudo, &program, &conf);
            let mut action = Action::from_plan(plan);
            // Adopting replaces a file with contents archgate knows: the person sees the change
            // (as the two files are now; the command below is what runs).
            if let Operation::PacnewAdopt { path, live } = &operation {
                let (live, new) = (
                    std::path::PathBuf::from(live),
                    std::path::PathBuf::from(path),
                );
                let diff =
                    tokio::task::spawn_blocking(move || archgate_core::diff::of_files(&live, &new))
                        .await
                        .map_err(|e| ToolError::new(ErrorKind::Internal, e.to_string()))?;
                action.picture = Some(archgate_core::picture::Picture::Diff(diff));
            }
            action.target = Some(display(&argv));
            action.shown = Some(a.reason.clone());
            let wait = wait_of(cx);
            let prepared = Prepared {
                id: registry::new_id().map_err(|e| ToolError::new(ErrorKind::Internal, e))?,
                argv,
                reason: a.reason,
                changes,
                route: plan.route.clone(),
                client: cx.client.clone(),
                lock,
                log_file,
                script: None,
                op: Some(a.op),
                values,
            };
            Ok(Resolved {
                action,
                run: Run { prepared, wait },
            })
        })
    }

    fn execute<'a>(
        &'a self,
        _cx: &'a CallCx,
        permit: archgate_core::exec::Permit,
        run: Run,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let id = run.prepared.id.clone();
            // The second door gets the first door's protections (attack 29 F5, F9; class: *the
            // second door of a hand-off gets fewer protections than the first*): a route's script
            // only through `archgate handoff ID` (archgate's asking sudo, `HOME=/nonexistent`);
            // a fixed operation's line with root's whole environment set after sudo
            // (`facts_env::typed_line`), never the person's shell's kept by sudo.
            let typed = facts_env::typed_line(&run.prepared);
            let rx = self
                .handoffs
                .open(run.prepared.clone(), registry::Terminal::Opening)
                .map_err(|b| match b {
                    registry::Busy::Waiting(_) => ToolError::new(ErrorKind::Busy, b.to_string())
                        .next("wait for the person to finish the hand-off on their screen, then call again"),
                    registry::Busy::NoLock(_) => ToolError::new(ErrorKind::NotAvailable, b.to_string())
                        .next("tell the person archgate's runtime directory is not writable; run `archgate doctor`"),
                })?;
            let own = format!("archgate handoff {id}");
            let opened = match terminal::desktop() {
                Some(desk) => terminal::open(&permit, &desk, &id).await,
                None => Err(terminal::NO_DESKTOP.to_owned()),
            };
            // Only the terminal's descendants may claim it; without one, the claimant is
            // unverified (registry.rs).
            self.handoffs.opened(&id, opened.as_ref().ok().copied());
            if let Err(why) = opened {
                // No terminal on a desktop: the person runs it from their own terminal.
                let handoffs = self.handoffs.clone();
                let wait = run.wait;
                let id2 = id.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(wait).await;
                    let _ = handoffs.expire(&id2);
                });
                drop(rx);
                let themselves = match &typed {
                    Some(line) => format!(
                        "; that is the preferred way (archgate checks everything again before and after their Enter). \
                         Or they can type the command themselves: {line}"
                    ),
                    None if run.prepared.script.is_some() => "; that is the only way for an Omarchy route (it runs the script with archgate's asking sudo and no home of theirs)".to_owned(),
                    None => "; that is the only way offered here".to_owned(),
                };
                return Err(ToolError::new(ErrorKind::NotAvailable, format!(
                    "{why}: no terminal was opened. The hand-off waits {} s for the person to run `{own}` in their own terminal \
                     (it shows the command and asks for Enter and their sudo password){themselves}",
                    run.wait.as_secs()
                ))
                .next(format!("tell the person to run `{own}` in their terminal"))
                .details(serde_json::json!({"id": id, "command": run.prepared.argv, "run_in_own_terminal": own, "typed_line": typed})));
            }
            let mut rx = rx;
            let ended = tokio::select! {
                r = &mut rx => r.ok(),
                _ = tokio::time::sleep(run.wait) => None,
            };
            let ended = match ended {
                Some(e) => e,
                None => match self.handoffs.expire(&id) {
                    registry::Expired::Withdrawn | registry::Expired::Gone => {
                        return Err(ToolError::new(
                            ErrorKind::TimedOut,
                            format!(
                                "the person did not confirm within {} s; nothing ran (the hand-off is withdrawn)",
                                run.wait.as_secs()
                            ),
                        )
                        .next("ask the person in chat whether they want it, then call again"));
                    }
                    // Confirmed and running: its end is awaited (bounded).
                    registry::Expired::Running => match tokio::time::timeout(RUN_CAP, rx).await {
                        Ok(Ok(e)) => e,
                        _ => {
                            return Err(unknown(
                                &run.prepared,
                                "it was still running when archgate stopped waiting",
                            ));
                        }
                    },
                },
            };
            answer(&run.prepared, ended)
        })
    }
}

impl Handoff {
    /// `op: omarchy`: the route's own script, resolved as `omarchy_run` resolves it (`route.rs`).
    async fn resolve_route(
        &self,
        cx: &CallCx,
        probe: &Probe,
        plan: &Plan,
        a: HandoffArgs,
    ) -> Result<Resolved<Run>, ToolError> {
        if let Some(field) = [
            ("packages", a.packages.is_some()),
            ("unit", a.unit.is_some()),
            ("path", a.path.is_some()),
        ]
        .into_iter()
        .find_map(|(f, is)| is.then_some(f))
        {
            return Err(invalid(ops::OpError::Extra {
                op: "omarchy",
                field,
            }));
        }
        let Some(route) = a.route.as_deref() else {
            return Err(invalid(ops::OpError::Needs {
                op: "omarchy",
                wants: "route",
            }));
        };
        let args = a.args.unwrap_or_default();
        let r = route::prepare(&self.desktop, cx, probe, route, &args).await?;
        // A script that gives sudo pacman reads pacman's configuration as root: root's alone, as
        // for every pacman hand-off (attack 12 F1) — the file its pacman reads, pacman's
        // default, never archgate's `[arch] pacman_conf`, which the agent can write (attack 13
        // F2). A `--config` of the script's own is judged by the asking sudo on the exact line.
        if route::runs_pacman(&r.script) {
            let c = archgate_pacman::conf::PacmanConf::load(std::path::Path::new(
                pacman_reads::DEFAULT_CONF,
            ))
            .map_err(domain_err)?;
            pacman::check_conf(&c)?;
        }
        let mut action = Action::from_plan(plan);
        for n in &r.names {
            if !action.names.contains(n) {
                action.names.push(n.clone());
            }
        }
        action.target = Some(display(&r.argv));
        action.shown = Some(a.reason.clone());
        action.files = r.files;
        let wait = wait_of(cx);
        let prepared = Prepared {
            // Random, as every hand-off's: the id is what a claimant names (attack 5b F2).
            id: registry::new_id().map_err(|e| ToolError::new(ErrorKind::Internal, e))?,
            argv: r.argv,
            reason: a.reason,
            changes: r.changes,
            route: plan.route.clone(),
            client: cx.client.clone(),
            lock: None,
            log_file: None,
            script: Some(r.script),
            op: None,
            values: ops::Values::default(),
        };
        Ok(Resolved {
            action,
            run: Run { prepared, wait },
        })
    }
}

/// How long a hand-off waits for the person: the tool's configured timeout, else the default.
fn wait_of(cx: &CallCx) -> Duration {
    cx.config
        .tools
        .timeouts
        .get(SPEC.name)
        .copied()
        .unwrap_or(DEFAULT_WAIT)
}

fn unknown(p: &Prepared, why: &str) -> ToolError {
    let check = match (&p.log_file, &p.lock) {
        (Some(log), Some(lock)) => format!(
            "check pacman's log ({}) for the transaction and whether {} still exists (pacman still running, or killed mid-transaction)",
            log.display(),
            lock.display()
        ),
        _ => "check the system state yourself (the unit's status, the cache) before acting again"
            .into(),
    };
    ToolError::new(
        ErrorKind::OutcomeUnknown,
        format!(
            "the outcome is unknown: {why}; the command may have run, in part or whole. {check}"
        ),
    )
    .next("tell the person; do not run it again before they checked")
    .details(serde_json::json!({"id": p.id, "command": p.argv}))
}

fn answer(p: &Prepared, ended: registry::Ended) -> Result<ToolOutput, ToolError> {
    let mut base = serde_json::json!({"id": p.id, "command": p.argv, "channel": ended.channel, "verified": ended.verified});
    if !ended.verified {
        base["note"] = "reported by `archgate handoff` outside a terminal archgate opened: archgate did not see who answered, so this is not confirmed as the person's".into();
    }
    match ended.outcome {
        Outcome::Ran {
            exit_code,
            signal,
            duration_ms,
            tail,
        } => {
            let mut v = base;
            v["outcome"] = "ran".into();
            v["exit_code"] = exit_code.into();
            v["signal"] = signal.into();
            v["duration_ms"] = duration_ms.into();
            v["output_tail"] = tail.into();
            if exit_code == Some(0) {
                let mut o = ToolOutput::json(v);
                o.exit_code = exit_code;
                Ok(o)
            } else {
                Err(ToolError::new(
                    ErrorKind::CommandFailed,
                    format!(
                        "the command ran and failed (exit {}); see the output's tail",
                        exit_code.map_or_else(
                            || format!("signal {}", signal.unwrap_or(0)),
                            |c| c.to_string()
                        )
                    ),
                )
                .next("read the tail; tell the person what failed before trying anything else")
                .details(v))
            }
        }
        Outcome::Cancelled { why } => Err(ToolError::new(
            ErrorKind::Cancelled,
            format!("the person cancelled: {why}; nothing ran"),
        )
        .next("ask the person in chat what they want instead")
        .details(base)),
        Outcome::Refused { why } => Err(ToolError::new(
            ErrorKind::Refused,
            format!("the hand-off was refused before anything ran: {why}"),
        )
        .next("tell the person why; they can fix it and you can call again")
        .details(base)),
        Outcome::Failed { why } => Err(ToolError::new(
            ErrorKind::CommandFailed,
            format!("the command could not start: {why}; nothing ran"),
        )
        .details(base)),
        Outcome::Unknown { why } => Err(unknown(p, &why)),
    }
}

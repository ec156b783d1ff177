//! The gate: every call, from MCP or from `archgate call`, passes through `Gate::call`, which
//! reads top to bottom — admit → policy → resolve → approval → execute → record.
//!
//! **Invariant:** exactly one audit record per call. `Pending` writes it when dropped unless
//! `finish` already did, so a call that panics, or whose client goes away mid-approval, is
//! recorded too. **Invariant:** `Permit::__issued_by_gate` appears only in this file; without a
//! permit no tool can start a program.

use archgate_exec::{ExecConfig, Executor, Permit};
use archgate_policy::{Budget, CallFacts, Grant, PolicyInput, Routing, Tier, Verdict};
use futures::FutureExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

mod ask;
mod record;

pub use ask::Relay;
use record::Pending;

use crate::approval::Broker;
use crate::audit::{ApprovalRecord, AuditLog, Outcome, Record};
use crate::config::{Config, ConfigHandle};
use crate::counters::Counters;
use crate::paths::Paths;
use crate::person::{PersonState, now_secs};
use crate::resolve::Resolver;
use crate::tool::{CallCx, DynTool, ToolError, ToolOutput};

/// Told of every finished call (HTTP mode prints a frame per call).
pub type Observer = Box<dyn Fn(&Record) + Send + Sync>;

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Client {
    pub name: String,
    pub grant: Grant,
}

/// Every tool archgate offers, by name.
#[derive(Default, Clone)]
pub struct Catalogue {
    tools: BTreeMap<&'static str, Arc<dyn DynTool>>,
    /// Tools that back resources only: callable through the gate, never listed.
    hidden: std::collections::BTreeSet<&'static str>,
}

impl Catalogue {
    pub fn add(&mut self, t: impl DynTool + 'static) {
        let name = t.spec().name;
        assert!(
            self.tools.insert(name, Arc::new(t)).is_none(),
            "tool {name} declared twice"
        );
    }
    /// A tool that backs a resource: it passes the gate and the audit like any tool, but is not
    /// listed in tools/list, `archgate tools` or TOOLS.md.
    pub fn add_hidden(&mut self, t: impl DynTool + 'static) {
        self.hidden.insert(t.spec().name);
        self.add(t);
    }
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.tools.get(name)
    }
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn DynTool>> {
        self.tools
            .values()
            .filter(|t| !self.hidden.contains(t.spec().name))
    }
    /// The tools this client sees under this config: enabled, granted by name and by tier.
    pub fn visible<'a>(
        &'a self,
        client: &'a Client,
        config: &'a Config,
    ) -> impl Iterator<Item = &'a Arc<dyn DynTool>> + 'a {
        self.all()
            .filter(move |t| is_visible(t.as_ref(), client, config))
    }
}

pub fn is_visible(t: &dyn DynTool, client: &Client, config: &Config) -> bool {
    let s = t.spec();
    !config.tools.disabled.contains(s.name) && client.grant.permits(s.name, s.tier)
}

/// How one call ended, for the transport to render.
#[derive(Debug)]
pub struct CallResult {
    pub id: String,
    pub outcome: Outcome,
    pub output: Result<ToolOutput, ToolError>,
}

pub struct Gate {
    pub config: ConfigHandle,
    pub paths: Paths,
    pub audit: AuditLog,
    pub counters: Counters,
    pub broker: Broker,
    pub person: Arc<PersonState>,
    pub catalogue: Catalogue,
    home: Option<PathBuf>,
    next_id: AtomicU64,
    /// Calls between admission and their audit record (see `wait_idle`).
    in_flight: std::sync::atomic::AtomicUsize,
    observer: Option<Observer>,
    resolver_cache: std::sync::Mutex<Option<(Arc<Config>, Resolver)>>,
    /// Questions handed to relaying clients on the stateless protocol, by ticket (`ask.rs`).
    tickets: ask::Tickets,
}

impl Gate {
    pub fn new(
        config: ConfigHandle,
        paths: Paths,
        audit: AuditLog,
        person: Arc<PersonState>,
        catalogue: Catalogue,
    ) -> Gate {
        Gate {
            config,
            paths,
            audit,
            counters: Counters::default(),
            broker: Broker::new(),
            person,
            catalogue,
            home: std::env::var_os("HOME").map(PathBuf::from),
            next_id: AtomicU64::new(1),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            observer: None,
            resolver_cache: std::sync::Mutex::new(None),
            tickets: Default::default(),
        }
    }

    /// Calls started and not yet recorded.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// Waits (at most `within`) until every call in flight has written its audit record: a
    /// server stopping calls this before it flushes the audit log, so a call whose client went
    /// away mid-approval is still recorded (its future is dropped on another task).
    pub async fn wait_idle(&self, within: std::time::Duration) -> bool {
        let until = Instant::now() + within;
        while self.in_flight() > 0 {
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        true
    }

    pub fn set_observer(&mut self, f: impl Fn(&Record) + Send + Sync + 'static) {
        self.observer = Some(Box::new(f));
    }

    /// The resolver for a config snapshot, built once per snapshot: building one canonicalizes
    /// every protected path, which is too much work for every call.
    fn resolver(&self, config: &Arc<Config>) -> Resolver {
        let mut cache = self
            .resolver_cache
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some((c, r)) = &*cache
            && Arc::ptr_eq(c, config)
        {
            return r.clone();
        }
        let r = Resolver::new(
            &self.paths.private_dirs(),
            self.home.as_deref(),
            config.resolve.protect_sensitive,
            &config.resolve.protected,
        );
        *cache = Some((config.clone(), r.clone()));
        r
    }

    /// The one path every call takes.
    pub async fn call(&self, client: &Client, tool_name: &str, args: Value) -> CallResult {
        self.call_relayed(client, tool_name, args, &Relay::None)
            .await
    }

    /// `call`, for a client the person trusts to relay their answer (`trusted_relay`): the
    /// client is one more channel when the call needs asking (see `ask.rs`).
    pub async fn call_relayed(
        &self,
        client: &Client,
        tool_name: &str,
        args: Value,
        relay: &Relay,
    ) -> CallResult {
        let config = self.config.current(); // one snapshot for the whole call
        // Unique across the instances the CLI may answer (each stdio client starts its own).
        let id = format!(
            "{:x}-{}-{}",
            now_secs(),
            std::process::id(),
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let tool = self.catalogue.get(tool_name).cloned();
        let private = tool.as_ref().map(|t| t.spec().private_args).unwrap_or(&[]);
        let mut rec = Pending::new(self, &id, client, tool_name, &args, private);

        let result = self.run(&mut rec, &config, client, tool, args, relay).await;
        let outcome = match &result {
            Ok(_) => Outcome::Ok,
            Err((o, _)) => *o,
        };
        let output = result.map_err(|(_, e)| e);
        if let Err(e) = &output {
            rec.r.error_kind = Some(e.kind.clone());
            if rec.r.reason.is_none() {
                rec.r.reason = Some(e.message.clone());
            }
        } else if let Ok(o) = &output {
            rec.r.exit_code = o.exit_code;
        }
        rec.finish(outcome);
        CallResult {
            id,
            outcome,
            output,
        }
    }

    async fn run(
        &self,
        rec: &mut Pending<'_>,
        config: &Arc<Config>,
        client: &Client,
        tool: Option<Arc<dyn DynTool>>,
        args: Value,
        relay: &Relay,
    ) -> Result<ToolOutput, (Outcome, ToolError)> {
        let now = now_secs();
        // Admit: the tool exists, is enabled and granted; the budget has room; the arguments fit.
        let Some(tool) = tool else {
            return Err((
                Outcome::NotGranted,
                ToolError::new("unknown_tool", format!("no tool named {:?}", rec.r.tool))
                    .next("list the tools and call one of them"),
            ));
        };
        let spec = tool.spec();
        if !is_visible(tool.as_ref(), client, config) {
            return Err((
                Outcome::NotGranted,
                ToolError::new("not_granted", format!("{} is not available to client {:?}", spec.name, client.name))
                    .next("give up, or ask the person to grant it (`archgate clients`) or enable it in config"),
            ));
        }
        let budget = Budget {
            per_minute: config.budgets.per_minute,
            per_day: config.budgets.per_day,
            questions_per_hour: config.budgets.questions_per_hour,
        };
        if let Err(e) = self.person.charge_call(&client.name, &budget, now) {
            return Err((
                Outcome::BudgetExhausted,
                ToolError::new("budget_exhausted", e.to_string())
                    .next("retry after the reset time"),
            ));
        }
        let size = args.to_string().len();
        if size > config.limits.max_args_bytes {
            return Err((
                Outcome::InvalidArguments,
                ToolError::new(
                    "too_large",
                    format!(
                        "arguments are {size} bytes; the limit is {}",
                        config.limits.max_args_bytes
                    ),
                ),
            ));
        }
        let mut parsed = tool.parse(args.clone()).map_err(|e| {
            (
                Outcome::InvalidArguments,
                ToolError::new("invalid_arguments", e.0)
                    .next("correct the arguments against the tool's schema"),
            )
        })?;

        // Policy: pure, under this call's snapshot.
        let plan = tool.plan(parsed.as_ref());
        rec.r.route = Some(plan.route.clone());
        let acknowledged = self.person.acknowledged();
        let decision = archgate_policy::decide(
            &CallFacts {
                client: &client.name,
                tool: spec.name,
                route: &plan.route,
                declared_tier: plan.tier,
                argv: &plan.argv,
                needs_sudo: plan.needs_sudo,
                targets_archgate: plan.targets_archgate,
            },
            &PolicyInput {
                rules: &config.policy.rules,
                acknowledged: &acknowledged,
            },
        );
        rec.decision(&decision);
        if decision.verdict == Verdict::Deny {
            let next = if decision.tier == Tier::Blocked {
                "give up: archgate never elevates privilege or touches itself; tell the person the command to run themselves"
            } else {
                "give up, or ask the person in chat to change their policy"
            };
            return Err((
                Outcome::Refused,
                ToolError::new("refused", decision.reason.to_string()).next(next),
            ));
        }
        if !client.grant.permits(spec.name, decision.tier) {
            return Err((
                Outcome::NotGranted,
                ToolError::new(
                    "not_granted",
                    format!(
                        "client {:?} is not granted {} calls",
                        client.name, decision.tier
                    ),
                ),
            ));
        }

        // Resolution, before anyone is asked.
        let cx = CallCx {
            id: rec.r.id.clone(),
            client: client.name.clone(),
            config: config.clone(),
            resolver: self.resolver(config),
        };
        let summary = tool
            .resolve(&cx, &mut parsed)
            .await
            .map_err(|e| (Outcome::Unresolved, e))?;
        let summary = summary.unwrap_or_else(|| plan.route.clone());
        rec.r.target = Some(summary.clone());

        // Approval.
        let canonical = args;
        let dev = self.person.dev_mode_until(now);
        rec.r.dev_mode = dev.is_some();
        let always_ask = decision.tier == Tier::Destructive;
        // Standing rules only matter for a call that would otherwise ask.
        let rule = (decision.verdict == Verdict::Ask)
            .then(|| {
                self.person
                    .matching_rule(&client.name, spec.name, &plan.route, &canonical, now)
            })
            .flatten();
        match archgate_policy::route_approval(&decision, always_ask, dev, now, rule.as_ref()) {
            Routing::Refuse(reason) => {
                return Err((
                    Outcome::Refused,
                    ToolError::new("refused", reason.to_string()),
                ));
            }
            Routing::Approved { by } => {
                use archgate_policy::ApprovedBy;
                let (channel, rule_id) = match by {
                    ApprovedBy::Policy => ("policy", None),
                    ApprovedBy::DeveloperMode => ("developer_mode", None),
                    ApprovedBy::StandingRule(id) => {
                        let used = self.person.use_matching_rule(
                            &client.name,
                            spec.name,
                            &plan.route,
                            &canonical,
                            now,
                        );
                        ("standing_rule", used.or(Some(id)))
                    }
                };
                if channel != "policy" {
                    rec.r.approval = Some(ApprovalRecord {
                        outcome: "auto".into(),
                        channel: Some(channel.into()),
                        rule_id,
                    });
                }
            }
            Routing::AskPerson => {
                let ask = ask::Ask {
                    config,
                    client,
                    tool: spec.name,
                    route: &plan.route,
                    summary: &summary,
                    tier: decision.tier,
                    canonical: &canonical,
                    budget: &budget,
                    rule_allowed: !always_ask,
                };
                self.ask_person(rec, ask, relay).await?;
            }
        }

        // Execute, with the permit only this function issues.
        let exec_cfg = exec_config(config, spec.name);
        let permit = Permit::__issued_by_gate(
            Arc::new(Executor::new(exec_cfg)),
            config.tools.timeouts.get(spec.name).copied(),
        );
        let run = AssertUnwindSafe(tool.execute(&cx, permit, parsed))
            .catch_unwind()
            .await;
        let output = match run {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => return Err((Outcome::ToolError, e)),
            Err(_) => {
                tracing::error!(tool = spec.name, "tool panicked; archgate keeps serving");
                return Err((
                    Outcome::Panicked,
                    ToolError::new(
                        "internal_error",
                        "the tool failed unexpectedly; this is a bug in archgate",
                    ),
                ));
            }
        };
        let size = output.size();
        if size > config.limits.max_output_bytes {
            return Err((
                Outcome::ToolError,
                ToolError::new(
                    "too_large",
                    format!(
                        "the answer is {size} bytes; the limit is {}",
                        config.limits.max_output_bytes
                    ),
                )
                .next("narrow the request (a section, a page, a filter) and call again"),
            ));
        }
        Ok(output)
    }
}

fn exec_config(config: &Config, _tool: &str) -> ExecConfig {
    config.executor_config()
}

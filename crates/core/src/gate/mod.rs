//! The gate: every call, from MCP or from `archgate call`, passes through `Gate::call`, which
//! reads top to bottom — admit → policy → resolve → approval → execute → record.
//!
//! **Invariant:** exactly one audit record per call. `Pending` writes it when dropped unless
//! `finish` already did, so a call that panics, or whose client goes away mid-approval, is
//! recorded too. **Invariant:** `Permit::__issued_by_gate` appears only in this file; without a
//! permit no tool can start a program.

use archgate_exec::{CommandSpec, ExecConfig, Executor, Permit};
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
use crate::tool::{Action, CallCx, DynTool, Plan, Probe, ToolError, ToolOutput};

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

/// What the gate would decide for one call (see [`Gate::explain`]).
#[derive(Debug)]
pub struct Explained {
    /// What resolution settled (the plan's words when the plan was already denied).
    pub action: Action,
    /// Policy's decision on it.
    pub decision: archgate_policy::Decision,
    /// The standing rule that would approve it without asking, if any.
    pub standing_rule: Option<String>,
    /// Whether developer mode would approve it without asking.
    pub developer_mode: bool,
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

    /// What the gate would decide for this call, without charging, asking or running anything
    /// but resolution's read-only look-ups: the same plan, resolution and decision `call` takes,
    /// and whether a standing rule or developer mode would approve it. `archgate policy explain`
    /// prints this, so it can never explain a different decision than the gate takes.
    pub async fn explain(
        &self,
        client: &Client,
        tool_name: &str,
        args: Value,
    ) -> Result<Explained, ToolError> {
        let config = self.config.current();
        let tool = self.catalogue.get(tool_name).cloned().ok_or_else(|| {
            ToolError::new("unknown_tool", format!("no tool named {tool_name:?}"))
        })?;
        let spec = tool.spec();
        if !is_visible(tool.as_ref(), client, &config) {
            return Err(ToolError::new(
                "not_granted",
                format!("{} is not available to client {:?}", spec.name, client.name),
            ));
        }
        let parsed = tool
            .parse(args.clone())
            .map_err(|e| ToolError::new("invalid_arguments", e.0))?;
        let plan = tool.plan(parsed.as_ref());
        let early = self.decide(
            &config,
            client,
            spec.name,
            &Action::from_plan(&plan),
            &plan.argv,
        );
        if early.verdict == Verdict::Deny {
            return Ok(Explained {
                action: Action::from_plan(&plan),
                decision: early,
                standing_rule: None,
                developer_mode: false,
            });
        }
        let cx = CallCx {
            id: "explain".into(),
            client: client.name.clone(),
            config: config.clone(),
            resolver: self.resolver(&config),
        };
        let (action, _run) = self
            .resolve(&cx, &config, &*tool, &plan, parsed)
            .await
            .map_err(|(_, e)| e)?;
        let words = self.decide(&config, client, spec.name, &action, &[]);
        if words.verdict == Verdict::Deny {
            return Ok(Explained {
                action,
                decision: words,
                standing_rule: None,
                developer_mode: false,
            });
        }
        let action = pin_programs(&Executor::new(exec_config(&config, spec.name)), action)
            .map_err(|(_, e)| e)?;
        let decision = self.decide(&config, client, spec.name, &action, &[]);
        let now = now_secs();
        let standing_rule = (decision.verdict == Verdict::Ask
            && decision.tier != Tier::Destructive)
            .then(|| {
                self.person.matching_rule(
                    &client.name,
                    spec.name,
                    &action.route,
                    &action.fingerprint(),
                    &args,
                    now,
                )
            })
            .flatten()
            .map(|r| r.id);
        Ok(Explained {
            developer_mode: decision.verdict == Verdict::Ask
                && self.person.dev_mode_until(now).is_some(),
            action,
            decision,
            standing_rule,
        })
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
        let budget = budget_of(config);
        let (tool, parsed) = self.admit(rec, config, client, tool, &args, &budget, now)?;
        let spec = tool.spec();

        // Decide on the words alone: a denied plan is refused before anything is looked up.
        let plan = tool.plan(parsed.as_ref());
        check_route(&plan)?;
        rec.r.route = Some(plan.route.clone());
        let early = self.decide(
            config,
            client,
            spec.name,
            &Action::from_plan(&plan),
            &plan.argv,
        );
        if early.verdict == Verdict::Deny {
            rec.decision(&early);
            return Err(refused(&early));
        }

        // Resolve: what exactly will run, on what, under which canonical route.
        let cx = CallCx {
            id: rec.r.id.clone(),
            client: client.name.clone(),
            config: config.clone(),
            resolver: self.resolver(config),
        };
        let (action, run) = self.resolve(&cx, config, &*tool, &plan, parsed).await?;
        rec.r.route = Some(action.route.clone());
        rec.r.target = Some(action.summary());

        // Decide on what resolution settled, then on the files its programs are: a symlink to
        // `sudo` is `sudo`. The second decision is the one that counts.
        let words = self.decide(config, client, spec.name, &action, &[]);
        if words.verdict == Verdict::Deny {
            rec.decision(&words);
            return Err(refused(&words));
        }
        let action = pin_programs(&Executor::new(exec_config(config, spec.name)), action)?;
        rec.r.target = Some(action.summary());
        let decision = self.decide(config, client, spec.name, &action, &[]);
        rec.decision(&decision);
        if decision.verdict == Verdict::Deny {
            return Err(refused(&decision));
        }
        if !client.grant.permits(spec.name, decision.tier) {
            return Err(not_granted_tier(client, decision.tier));
        }

        // Approve: policy, developer mode, a standing rule on this exact action, or the person.
        self.approve(
            rec, config, client, spec.name, &action, &decision, &args, &budget, now, relay,
        )
        .await?;

        // Execute with a permit bound to exactly the commands that were judged and approved.
        let permit = Permit::__issued_by_gate(
            Arc::new(Executor::new(exec_config(config, spec.name))),
            config.tools.timeouts.get(spec.name).copied(),
        )
        .bound_to(action.commands.clone());
        self.execute(&cx, config, &*tool, permit, run).await
    }

    /// Admission: the budget is charged first (so unknown tools, ungranted tools and malformed
    /// arguments cost the client too), then the tool must exist, be enabled and granted, and the
    /// arguments must fit and parse.
    #[allow(clippy::too_many_arguments)]
    fn admit(
        &self,
        rec: &mut Pending<'_>,
        config: &Config,
        client: &Client,
        tool: Option<Arc<dyn DynTool>>,
        args: &Value,
        budget: &Budget,
        now: u64,
    ) -> Result<(Arc<dyn DynTool>, crate::tool::Erased), (Outcome, ToolError)> {
        if let Err(e) = self.person.charge_call(&client.name, budget, now) {
            return Err((
                Outcome::BudgetExhausted,
                ToolError::new("budget_exhausted", e.to_string())
                    .next("retry after the reset time"),
            ));
        }
        let Some(tool) = tool else {
            return Err((
                Outcome::NotGranted,
                ToolError::new(
                    "unknown_tool",
                    format!(
                        "no tool named {:?}",
                        crate::audit::bound::cap(&rec.r.tool, crate::audit::bound::TOOL_NAME_LIMIT)
                    ),
                )
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
        let parsed = tool.parse(args.clone()).map_err(|e| {
            (
                Outcome::InvalidArguments,
                ToolError::new("invalid_arguments", e.0)
                    .next("correct the arguments against the tool's schema"),
            )
        })?;
        Ok((tool, parsed))
    }

    /// Policy, pure, under this call's snapshot: on the plan (`plan_argv`, before resolution)
    /// or on the resolved action (its commands).
    fn decide(
        &self,
        config: &Config,
        client: &Client,
        tool: &str,
        action: &Action,
        plan_argv: &[String],
    ) -> archgate_policy::Decision {
        let acknowledged = self.person.acknowledged();
        let mut commands = action.argvs();
        if !plan_argv.is_empty() {
            commands.push(plan_argv.to_vec());
        }
        archgate_policy::decide(
            &CallFacts {
                client: &client.name,
                tool,
                route: &action.route,
                names: &action.names,
                declared_tier: action.tier,
                commands: &commands,
                needs_sudo: action.needs_sudo,
                targets_archgate: action.targets_archgate,
            },
            &PolicyInput {
                rules: &config.policy.rules,
                acknowledged: &acknowledged,
            },
        )
    }

    /// Resolution, with an unbound permit for read-only look-ups (policy did not deny the
    /// plan). The plan's words stay a name of the target, so a rule on them still applies.
    async fn resolve(
        &self,
        cx: &CallCx,
        config: &Config,
        tool: &dyn DynTool,
        plan: &Plan,
        parsed: crate::tool::Erased,
    ) -> Result<(Action, crate::tool::Erased), (Outcome, ToolError)> {
        let spec = tool.spec();
        let probe = Probe {
            permit: Permit::__issued_by_gate(
                Arc::new(Executor::new(exec_config(config, spec.name))),
                config.tools.timeouts.get(spec.name).copied(),
            ),
        };
        let (mut action, run) = match AssertUnwindSafe(tool.resolve(cx, &probe, plan, parsed))
            .catch_unwind()
            .await
        {
            Ok(r) => r.map_err(|e| (Outcome::Unresolved, e))?,
            Err(_) => {
                tracing::error!(
                    tool = spec.name,
                    "resolution panicked; archgate keeps serving"
                );
                return Err((
                    Outcome::Panicked,
                    ToolError::new(
                        "internal_error",
                        "resolving the call failed unexpectedly; this is a bug in archgate",
                    ),
                ));
            }
        };
        if action.route != plan.route && !action.names.contains(&plan.route) {
            action.names.push(plan.route.clone());
        }

        // What the plan knew of sudo and of archgate itself is never unlearned by resolution.
        action.needs_sudo |= plan.needs_sudo;
        action.targets_archgate |= plan.targets_archgate;
        Ok((action, run))
    }

    /// Approval: runs when policy allows; otherwise developer mode, a standing rule on this
    /// exact action (its use and this call are one step: a rule that cannot be used asks), or
    /// the person.
    #[allow(clippy::too_many_arguments)]
    async fn approve(
        &self,
        rec: &mut Pending<'_>,
        config: &Arc<Config>,
        client: &Client,
        tool: &str,
        action: &Action,
        decision: &archgate_policy::Decision,
        args: &Value,
        budget: &Budget,
        now: u64,
        relay: &Relay,
    ) -> Result<(), (Outcome, ToolError)> {
        use archgate_policy::ApprovedBy;
        let dev = self.person.dev_mode_until(now);
        rec.r.dev_mode = dev.is_some();
        let always_ask = decision.tier == Tier::Destructive;
        let fingerprint = action.fingerprint();
        let rule = (decision.verdict == Verdict::Ask)
            .then(|| {
                self.person.matching_rule(
                    &client.name,
                    tool,
                    &action.route,
                    &fingerprint,
                    args,
                    now,
                )
            })
            .flatten();
        let mut routing =
            archgate_policy::route_approval(decision, always_ask, dev, now, rule.as_ref());
        if let Routing::Approved {
            by: ApprovedBy::StandingRule(_),
        } = routing
        {
            // The rule may have been revoked or used up since the peek: then the person decides.
            match self.person.use_matching_rule(
                &client.name,
                tool,
                &action.route,
                &fingerprint,
                args,
                now,
            ) {
                Some(id) => {
                    routing = Routing::Approved {
                        by: ApprovedBy::StandingRule(id),
                    }
                }
                None => routing = Routing::AskPerson,
            }
        }
        match routing {
            Routing::Refuse(reason) => Err((
                Outcome::Refused,
                ToolError::new("refused", reason.to_string()),
            )),
            Routing::Approved { by } => {
                let (channel, rule_id) = match by {
                    ApprovedBy::Policy => return Ok(()),
                    ApprovedBy::DeveloperMode => ("developer_mode", None),
                    ApprovedBy::StandingRule(id) => ("standing_rule", Some(id)),
                };
                rec.r.approval = Some(ApprovalRecord {
                    outcome: "auto".into(),
                    channel: Some(channel.into()),
                    rule_id,
                });
                Ok(())
            }
            Routing::AskPerson => {
                let summary = action.summary();
                let ask = ask::Ask {
                    config,
                    client,
                    tool,
                    route: &action.route,
                    summary: &summary,
                    fingerprint: &fingerprint,
                    tier: decision.tier,
                    canonical: args,
                    budget,
                    rule_allowed: !always_ask,
                };
                self.ask_person(rec, ask, relay).await
            }
        }
    }

    /// Execution, with a panic caught and the answer held to the output limit.
    async fn execute(
        &self,
        cx: &CallCx,
        config: &Config,
        tool: &dyn DynTool,
        permit: Permit,
        run: crate::tool::Erased,
    ) -> Result<ToolOutput, (Outcome, ToolError)> {
        let spec = tool.spec();
        let output = match AssertUnwindSafe(tool.execute(cx, permit, run))
            .catch_unwind()
            .await
        {
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

/// Route words are printable and bounded (no control, bidi or invisible character): they reach
/// the person's screen in every question and the log.
fn check_route(plan: &Plan) -> Result<(), (Outcome, ToolError)> {
    let words: Vec<&str> = plan.route.split_whitespace().collect();
    crate::text::check_route_words(&words).map_err(|e| {
        (
            Outcome::InvalidArguments,
            ToolError::new(e.kind(), e.to_string()).next(
                "call again with the route's words as omarchy_search or the schema give them",
            ),
        )
    })
}

/// Each program of the action found and checked now, and pinned to the file found: the person
/// sees its path, policy judges that file, the permit runs only it, and a program that is
/// missing or untrusted is refused before anyone is asked.
fn pin_programs(executor: &Executor, mut action: Action) -> Result<Action, (Outcome, ToolError)> {
    for c in &mut action.commands {
        let file = executor
            .resolve_program(c.program())
            .map_err(|e| (Outcome::Unresolved, ToolError::from(e)))?;
        *c = std::mem::replace(c, CommandSpec::new(""))
            .with_program(file.to_string_lossy().into_owned());
    }
    Ok(action)
}

fn budget_of(config: &Config) -> Budget {
    Budget {
        per_minute: config.budgets.per_minute,
        per_day: config.budgets.per_day,
        questions_per_hour: config.budgets.questions_per_hour,
    }
}

fn refused(d: &archgate_policy::Decision) -> (Outcome, ToolError) {
    let next = if d.tier == Tier::Blocked {
        "give up: archgate never elevates privilege or touches itself; tell the person the command to run themselves"
    } else {
        "give up, or ask the person in chat to change their policy"
    };
    (
        Outcome::Refused,
        ToolError::new("refused", d.reason.to_string()).next(next),
    )
}

fn not_granted_tier(client: &Client, tier: Tier) -> (Outcome, ToolError) {
    (
        Outcome::NotGranted,
        ToolError::new(
            "not_granted",
            format!("client {:?} is not granted {tier} calls", client.name),
        ),
    )
}

fn exec_config(config: &Config, _tool: &str) -> ExecConfig {
    config.executor_config()
}

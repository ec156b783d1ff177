//! The gate: every call, from MCP or from `archgate call`, passes through `Gate::call`, whose
//! `run` reads top to bottom — admit → decide(plan) → resolve → decide(action, its programs
//! pinned) → approve → execute with a permit bound to the action's commands → record. Each
//! stage is one function in `stages.rs`; `explain.rs` takes the same decision without a call.
//!
//! **Invariant:** exactly one audit record per call. `Pending` writes it when dropped unless
//! `finish` already did, so a call that panics, or whose client goes away mid-approval, is
//! recorded too. **Invariant:** `Permit::__issued_by_gate` appears only in this file; without a
//! permit no tool can start a program.

use archgate_exec::{Executor, Permit};
use archgate_policy::{Grant, Verdict};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

mod ask;
mod explain;
mod flood;
mod record;
mod stages;

pub use ask::Relay;
pub use explain::Explained;
use record::Pending;
use stages::{budget_of, check_route, not_granted_tier, pin_programs, refused};

use crate::approval::Broker;
use crate::audit::{AuditLog, Outcome, Record};
use crate::config::{Config, ConfigHandle};
use crate::counters::Counters;
use crate::paths::Paths;
use crate::person::{PersonState, now_secs};
use crate::resolve::Resolver;
use crate::tool::{Action, CallCx, DynTool, Probe, ToolError, ToolOutput};

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
    /// Budget refusals being counted, per client (`flood.rs`).
    floods: flood::Floods,
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
            floods: Default::default(),
        }
    }

    /// The unbound permit resolution uses for read-only look-ups (issued only after the plan
    /// was not denied).
    fn probe(&self, config: &Config, tool: &str) -> Probe {
        Probe {
            permit: Permit::__issued_by_gate(
                executor(config),
                config.tools.timeouts.get(tool).copied(),
            ),
        }
    }

    /// Writes the summary of every refused flood still being counted; a server stopping calls
    /// this before it flushes the audit log.
    pub fn summarise_floods(&self) {
        for s in self.floods.drain() {
            self.audit.event(&s);
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
        let probe = self.probe(config, spec.name);
        let (action, run) = self.resolve(&cx, &probe, &*tool, &plan, parsed).await?;
        rec.r.route = Some(action.route.clone());
        rec.r.target = Some(action.summary());

        // Decide on what resolution settled, then on the files its programs are: a symlink to
        // `sudo` is `sudo`. The second decision is the one that counts.
        let words = self.decide(config, client, spec.name, &action, &[]);
        if words.verdict == Verdict::Deny {
            rec.decision(&words);
            return Err(refused(&words));
        }
        let action = pin_programs(probe.permit.executor(), action)?;
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
            executor(config),
            config.tools.timeouts.get(spec.name).copied(),
        )
        .bound_to(action.commands.clone());
        self.execute(&cx, config, &*tool, permit, run).await
    }
}
/// The executor for this snapshot's `[exec]` and Omarchy settings. Building one looks for
/// Omarchy's install (two file checks) and reads the environment, too much for every call
/// (twice: resolution and execution): it is kept, and built again when those settings change or
/// after a second, so an Omarchy installed while archgate serves is found as it was before.
fn executor(config: &Config) -> Arc<Executor> {
    type Key = (crate::config::ExecSettings, Option<PathBuf>);
    static CACHE: std::sync::Mutex<Option<(Key, Instant, Arc<Executor>)>> =
        std::sync::Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((key, at, e)) = &*cache
        && at.elapsed() < std::time::Duration::from_secs(1)
        && key.0 == config.exec
        && key.1 == config.desktop.omarchy_path
    {
        return e.clone();
    }
    let e = Arc::new(Executor::new(config.executor_config()));
    let key = (config.exec.clone(), config.desktop.omarchy_path.clone());
    *cache = Some((key, Instant::now(), e.clone()));
    e
}

//! The gate: every call, from MCP or from `archgate call`, passes through `Gate::call`, whose
//! `run` reads top to bottom — admit → decide(plan) → resolve → decide(action, its programs
//! pinned by the file) → approve → check the pinned files are unchanged → execute with a permit
//! bound to the action's commands → record. Each stage is one function in `stages.rs` returning
//! one typed `Refusal` (`refusal.rs`); the record is built once from the stages' typed results
//! (`record.rs`); `explain.rs` takes the same decision without a call.
//!
//! **Invariant:** one audit record per call (a flood of budget refusals is summarised,
//! `flood.rs`; a full audit queue drops and counts, `audit/writer.rs`). `Pending` writes it
//! when dropped unless `finish` already did, so a call that panics, or whose client goes away
//! mid-approval, is recorded too. **Invariant:** `Permit::__issued_by_gate` appears only in
//! this file; without a permit no tool can start a program. **Invariant:** `Gate` has no public
//! field; the person's setters are reached only through the `PersonChannel` the binary takes
//! once (`take_person_channel`).

use archgate_exec::{Executor, Permit};
use archgate_policy::Grant;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod ask;
mod asking;
mod detach;
mod explain;
mod flood;
mod record;
mod refusal;
mod stages;
mod started;
pub mod task;
mod transport;

pub use ask::Relay;
pub use detach::{ON_START, StartLatch};
pub use explain::Explained;
use record::Pending;
pub use refusal::{Details, InputRequired, Kind, Refusal};
pub use transport::Transport;

use crate::approval::Broker;
use crate::audit::{AuditLog, Outcome, Record};
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, ConfigHandle};
use crate::counters::Counters;
use crate::paths::Paths;
use crate::person::{PersonChannel, PersonState};
use crate::resolve::Resolver;
use crate::tool::{CallCx, DynTool, Probe, ToolOutput};

/// Told of every finished call (HTTP mode prints a frame per call).
pub type Observer = Box<dyn Fn(&Record) + Send + Sync>;

/// Who is calling.
#[derive(Debug, Clone)]
pub struct Client {
    pub name: String,
    pub grant: Grant,
    /// The agent's own name from its `clientInfo` (`crate::agent::label`): shown to the person
    /// beside `name`, never used for identity or policy.
    pub agent: Option<String>,
    /// How it reached the gate; its records name it beside `name`.
    pub transport: Transport,
    /// The token it authenticated with, as its digest (HTTP); `None` for a client no token
    /// proves (stdio, a bridge, the CLI). What its calls leave waiting carries it.
    pub token: Option<crate::token_id::TokenId>,
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
    !config.tools.is_disabled(s.name) && client.grant.permits(s.name, s.tier)
}

/// How one call ended, for the transport to render.
#[derive(Debug)]
pub struct CallResult {
    pub id: String,
    pub outcome: Outcome,
    pub output: Result<ToolOutput, Refusal>,
}

/// What every stage of one call reads: its id, the tool's name, its one config snapshot, its client, its time
/// and the relay it may ask through.
struct Call<'a> {
    id: &'a str,
    /// The tool's name as the client gave it.
    tool: &'a str,
    config: &'a Arc<Config>,
    client: &'a Client,
    now: u64,
    relay: &'a Relay,
    /// The session the call belongs to (`crate::untrusted`): what it read before counts.
    session: &'a str,
    /// The call's argument digest, as its record will hold it.
    args_sha256: &'a str,
}

pub struct Gate {
    config: ConfigHandle,
    paths: Paths,
    audit: AuditLog,
    counters: Counters,
    broker: Broker,
    person: Arc<PersonState>,
    /// Handed out once, to the binary's person channels (`take_person_channel`).
    person_channel: std::sync::Mutex<Option<PersonChannel>>,
    catalogue: Catalogue,
    clock: Arc<dyn Clock>,
    home: Option<PathBuf>,
    next_id: AtomicU64,
    /// Calls between admission and their audit record (see `wait_idle`).
    in_flight: std::sync::atomic::AtomicUsize,
    observer: Option<Observer>,
    /// Read by every call without a lock all callers share (`arc_swap`).
    resolver_cache: arc_swap::ArcSwapOption<(Arc<Config>, Resolver)>,
    /// Questions handed to relaying clients on the stateless protocol, by ticket (`ask.rs`).
    tickets: ask::Tickets,
    /// Budget refusals being counted, per client (`flood.rs`).
    floods: flood::Floods,
    /// What each session read that archgate did not write, for the window (`untrusted.rs`).
    untrusted: crate::untrusted::Ledger,
    /// Waiting calls whose output the person may see before answering (`crate::preview`).
    previews: Arc<crate::preview::Previews>,
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
            person_channel: std::sync::Mutex::new(Some(PersonChannel::of(person.clone()))),
            person,
            catalogue,
            clock: Arc::new(SystemClock),
            home: std::env::var_os("HOME").map(PathBuf::from),
            next_id: AtomicU64::new(1),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            observer: None,
            resolver_cache: arc_swap::ArcSwapOption::empty(),
            tickets: Default::default(),
            floods: Default::default(),
            untrusted: Default::default(),
            previews: Default::default(),
        }
    }

    /// The same gate reading the time from `clock` (tests turn a minute, or pass an approval's
    /// deadline, without sleeping): its broker judges deadlines on the same clock.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Gate {
        self.broker = Broker::with_clock(clock.clone());
        self.clock = clock;
        self
    }

    /// The person's setters (developer mode, acknowledgements, standing rules), handed out
    /// once: the binary takes it at assembly and gives it to the person's channels only (the
    /// CLI's commands, the control socket, the approval page). `None` after the first call.
    pub fn take_person_channel(&self) -> Option<PersonChannel> {
        self.person_channel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    pub fn config(&self) -> &ConfigHandle {
        &self.config
    }
    pub fn paths(&self) -> &Paths {
        &self.paths
    }
    pub fn audit(&self) -> &AuditLog {
        &self.audit
    }
    pub fn counters(&self) -> &Counters {
        &self.counters
    }
    /// Where calls wait for the person (its answers come from the person's channels).
    pub fn broker(&self) -> &Broker {
        &self.broker
    }
    /// The person's channel asks a waiting call for its output here (`crate::preview`).
    pub fn previews(&self) -> &Arc<crate::preview::Previews> {
        &self.previews
    }
    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }
    /// The person's state, to read (its setters are `PersonChannel`'s).
    pub fn person(&self) -> &PersonState {
        &self.person
    }
    pub fn clock(&self) -> &dyn Clock {
        &*self.clock
    }
    /// Unix seconds on the gate's clock.
    pub fn now_secs(&self) -> u64 {
        self.clock.now_secs()
    }

    /// The catalogue's names are counted by name; others fold into `other`.
    pub fn count_known_tools(&mut self) {
        self.counters
            .set_known(self.catalogue.all().map(|t| t.spec().name.to_owned()));
    }

    /// A permit under this snapshot's executor settings and the tool's timeout: unbound for
    /// resolution's read-only look-ups (issued only after the plan was not denied), bound to
    /// the approved commands for execution.
    fn permit(&self, config: &Config, tool: &str) -> Permit {
        Permit::__issued_by_gate(executor(config), config.tools.timeouts.get(tool).copied())
    }

    fn probe(&self, config: &Config, tool: &str) -> Probe {
        Probe {
            permit: self.permit(config, tool),
        }
    }

    /// What a tool sees of its call.
    fn call_cx(&self, call: &Call<'_>) -> CallCx {
        self.cx_for(call.id, call.client, call.config)
    }

    fn cx_for(&self, id: &str, client: &Client, config: &Arc<Config>) -> CallCx {
        CallCx {
            id: id.to_owned(),
            client: client.name.clone(),
            config: config.clone(),
            resolver: self.resolver(config),
            acknowledged: self.person.acknowledged(),
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
        if let Some(cached) = &*self.resolver_cache.load()
            && Arc::ptr_eq(&cached.0, config)
        {
            return cached.1.clone();
        }
        let r = Resolver::new(
            &self.paths.private_dirs(),
            self.home.as_deref(),
            config.resolve.protect_sensitive,
            &config.resolve.protected,
        );
        // Two calls building it at once after a reload both keep a correct one; the last stays.
        self.resolver_cache
            .store(Some(Arc::new((config.clone(), r.clone()))));
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
        self.call_in_session(client, None, tool_name, args, relay)
            .await
    }

    /// `call_relayed` in `session` (an MCP session, a bridged connection): what the session read
    /// before decides whether a standing rule or developer mode may approve its act calls
    /// (`crate::untrusted`). Without a session, the client's name is the session.
    pub async fn call_in_session(
        &self,
        client: &Client,
        session: Option<&str>,
        tool_name: &str,
        args: Value,
        relay: &Relay,
    ) -> CallResult {
        let session = match session {
            Some(s) => format!("session:{s}"),
            None => crate::untrusted::client_key(&client.name),
        };
        let config = self.config.current(); // one snapshot for the whole call
        let now = self.clock.now_secs();
        // Unique across the instances the CLI may answer (each stdio client starts its own).
        // The pid read once: `std::process::id()` is a getpid system call on every call.
        static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
        let id = format!(
            "{now:x}-{}-{}",
            PID.get_or_init(std::process::id),
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let tool = self.catalogue.get(tool_name).cloned();
        let private = tool.as_ref().map(|t| t.spec().private_args).unwrap_or(&[]);
        let mut pending = Pending::open(self, &id, client, tool_name, &args, private);
        let args_sha256 = pending.args_sha256().to_owned();
        let call = Call {
            id: &id,
            tool: tool_name,
            config: &config,
            client,
            now,
            relay,
            session: &session,
            args_sha256: &args_sha256,
        };
        // Boxed: the stages' state is large, and every future that awaits this one (the MCP
        // handler's, the SDK's task) would hold it inline and copy it at each spawn and move.
        let output = if self.audit.writable() {
            Box::pin(self.run(&call, &mut pending, tool, args)).await
        } else {
            Err(unrecordable())
        };
        // A call whose work began has its `started` line on disk (`started.rs`): what it did is
        // recorded whatever becomes of its last line, and its answer says what ran — withheld,
        // the agent would take a change that happened for none and make it again (attack 34 F7).
        let started = pending.trace.started;
        let (outcome, handed) = pending.finish(&output);
        // Class: *a record that cannot be written does not stop the call it records* (attack 33
        // F1: a full disk, and thirty reads answered with no line). A record the writer thread
        // writes (a file to open or rotate: the last 512 KiB before each rotation, attack 34 F1)
        // is waited for; then, when the log failed meanwhile, the answer is withheld — the agent
        // gets nothing archgate could not record (the reads of `processes`, `journal`, the
        // clipboard are the person's evidence too).
        if output.is_ok() && !started && handed == crate::audit::Handed::ToThread {
            let log = self.audit.clone();
            let _ = tokio::task::spawn_blocking(move || log.flush(Duration::from_secs(2))).await;
        }
        let lost = handed == crate::audit::Handed::Lost || !self.audit.writable();
        let (outcome, output) = match output {
            Ok(_) if lost && !started => (Outcome::Refused, Err(unrecordable())),
            o => (outcome, o),
        };
        CallResult {
            id,
            outcome,
            output,
        }
    }

    /// admit → decide(plan) → resolve → decide(action) → approve → execute. Each stage leaves
    /// its typed result in `trace` (the record is built from it) or ends the call with a
    /// `Refusal`.
    async fn run(
        &self,
        call: &Call<'_>,
        pending: &mut Pending<'_>,
        tool: Option<Arc<dyn DynTool>>,
        args: Value,
    ) -> Result<ToolOutput, Refusal> {
        let trace = &mut pending.trace;
        // Admission: the budget first, then the tool, its grant, the arguments' size and shape.
        let (tool, parsed) = self.admit(call, tool, &args)?;
        let name = tool.spec().name;
        // The words alone: a denied plan is refused before anything is looked up.
        let plan = self.decide_plan(call, trace, &*tool, &parsed)?;
        // Resolution: what exactly will run, on what, under which canonical route.
        let cx = self.call_cx(call);
        let probe = self.probe(call.config, name);
        let (action, run) = self.resolve(&cx, &probe, &*tool, &plan, parsed).await?;
        trace.resolved(&action);
        // Policy on what resolution settled, then on the files its programs are.
        let (action, decision) = self.decide_action(call, trace, name, action, &probe)?;
        // Approval: policy, developer mode, a standing rule on this exact action, or the person.
        // An action the person may see the output of first (a screenshot) is run at most once,
        // on their request while they are asked; its output is held with the call (`preview`).
        let mut run = Some(run);
        let mut held: Option<Result<ToolOutput, Refusal>> = None;
        if action.preview {
            let mut slot = self.previews.open(call.id);
            let approve = self.approve(call, trace, tool.spec(), &action, &decision, &args);
            tokio::pin!(approve);
            loop {
                tokio::select! {
                    r = &mut approve => {
                        r?;
                        break;
                    }
                    Some(req) = slot.requests.recv() => {
                        if req.take && let Some(r) = run.take() {
                            // The run itself, as a yes would start it: the same checks, a permit
                            // bound to the same commands. Its output goes to the person only.
                            let out = match stages::check_pins(probe.permit.executor(), &action) {
                                Ok(()) => {
                                    let permit = self
                                        .permit(call.config, name)
                                        .bound_to(action.commands.clone());
                                    self.execute(&cx, call.config, &*tool, permit, r).await
                                }
                                Err(e) => Err(e),
                            };
                            held = Some(out);
                        }
                        let _ = req.reply.send(shown_first(held.as_ref()));
                    }
                }
            }
        } else {
            self.approve(call, trace, tool.spec(), &action, &decision, &args)
                .await?;
        }
        // The files it was judged on are still those files (what was approved is what runs).
        stages::check_pins(probe.permit.executor(), &action)?;
        // An act or destructive call's start is on disk before its work begins (`started.rs`).
        self.mark_started(call, pending, &action, &decision)?;
        // Execution, with a permit bound to exactly the commands that were judged and approved,
        // each pinned to its file — or, when the person saw the output first, that output.
        let output = match (held, run) {
            // What the person was shown is what the agent receives: never run again.
            (Some(seen), _) => seen,
            (None, Some(run)) => {
                let permit = self.permit(call.config, name).bound_to(action.commands);
                self.execute(&cx, call.config, &*tool, permit, run).await
            }
            // The run is taken only when its output is held.
            (None, None) => Err(Refusal::new(
                crate::audit::Outcome::Refused,
                Kind::InternalError,
                "the call's output was lost; nothing more runs",
            )),
        };
        // Text archgate did not write: the session read it (`untrusted.rs`) — in an answer, or in
        // a tool's error, whose message may carry the outside text too (an AUR error page).
        let read = match &output {
            Ok(o) => Some(std::borrow::Cow::Borrowed(o)),
            Err(r) if matches!(r.kind, Kind::Tool(_)) => {
                Some(std::borrow::Cow::Owned(ToolOutput::text(r.message.clone())))
            }
            Err(_) => None,
        };
        if let Some(o) = read {
            let provenance = tool.spec().provenance;
            self.note_read(call, &mut pending.trace, provenance, &args, &o);
        }
        output
    }
}
/// What the person is shown of a call's output before answering: its image, byte for byte.
fn shown_first(held: Option<&Result<ToolOutput, Refusal>>) -> crate::preview::Preview {
    use crate::preview::Preview;
    match held {
        None => Preview::NotTaken,
        Some(Err(r)) => Preview::Failed(r.message.clone()),
        Some(Ok(o)) => o
            .content
            .iter()
            .find_map(|c| match c {
                crate::tool::Content::Image { data, mime } => Some(Preview::Image {
                    data: data.as_slice().into(),
                    mime,
                }),
                crate::tool::Content::Text(_) => None,
            })
            .unwrap_or_else(|| Preview::Failed("the output holds no image".into())),
    }
}

/// The executor for this snapshot's `[exec]` and Omarchy settings. Building one looks for
/// Omarchy's install (two file checks) and reads the environment, too much for every call
/// (twice: resolution and execution): it is kept, and built again when those settings change or
/// after a second, so an Omarchy installed while archgate serves is found as it was before.
fn executor(config: &Config) -> Arc<Executor> {
    type Key = (crate::config::ExecSettings, Option<PathBuf>);
    // Read by every call (twice) without a lock all callers share.
    static CACHE: std::sync::LazyLock<arc_swap::ArcSwapOption<(Key, Instant, Arc<Executor>)>> =
        std::sync::LazyLock::new(arc_swap::ArcSwapOption::empty);
    if let Some((key, at, e)) = CACHE.load().as_deref()
        && at.elapsed() < std::time::Duration::from_secs(1)
        && key.0 == config.exec
        && key.1 == config.desktop.omarchy_path
    {
        return e.clone();
    }
    let e = Arc::new(Executor::new(config.executor_config()));
    let key = (config.exec.clone(), config.desktop.omarchy_path.clone());
    CACHE.store(Some(Arc::new((key, Instant::now(), e.clone()))));
    e
}

/// The refusal of a call whose record cannot be written (`AuditLog::writable`).
fn unrecordable() -> Refusal {
    Refusal::new(
        Outcome::Refused,
        refusal::Kind::Refused,
        "the activity log cannot be written (a full disk, or its file or directory gone wrong), and archgate answers no call it cannot record; nothing was answered",
    )
    .next("the person checks the disk and the log's directory (`archgate doctor`, `archgate status`); call again once it is writable")
}

//! What a tool is, to the gate: declared once, then planned, resolved and executed in that order.
//!
//! A tool is a type implementing `Tool`: its `ToolSpec` (name, description, tier, annotations),
//! an argument type whose doc comments become the JSON schema, a pure `plan` that tells policy
//! the route and what will run, an optional `resolve` that checks names against live state, and
//! `execute`, which receives the `Permit` only the gate can issue. `DynTool` erases the argument
//! type so the catalogue can hold every tool in one map.

use archgate_exec::{CommandSpec, Permit};
use archgate_policy::Tier;
use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::any::Any;
use std::sync::Arc;

use crate::config::Config;
pub use crate::error_kind::ErrorKind;
use crate::resolve::Resolver;
pub use crate::tool_error::{CHANGED_NEXT, ToolError};
pub use crate::tool_output::{Content, Rendered, ToolOutput};

/// The fixed facts of a tool. One per tool, `'static`.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    /// When to use the tool (not how it is built).
    pub description: &'static str,
    /// The tier when `plan` does not say otherwise.
    pub tier: Tier,
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// Reaches outside the machine (AUR, ArchWiki, archlinux.org).
    pub open_world: bool,
    /// Argument keys whose values are private (clipboard text): the audit keeps their length only.
    pub private_args: &'static [&'static str],
    /// Whether the answer carries text archgate did not write, and from where: a session that
    /// read such text is followed for a while (`crate::untrusted`).
    pub provenance: crate::provenance::Provenance,
    /// The call may take longer than a client holds a request open (a check of every package,
    /// a hand-off): a client that declares the MCP tasks extension gets a task for it once it
    /// runs past a moment (`archgate::server::tasks`); every other client waits inline as
    /// always. `false` for nearly every tool.
    pub long_running: bool,
    /// How a call of this tool is said to the person in one sentence ("… wants to put 42 lines
    /// on your clipboard"): `crate::sentence`. Every tool says; a read tool says `Phrase::READS`.
    pub says: crate::phrase::Phrase,
}

/// What policy needs to know about one call, computed from the arguments alone.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Space-separated words: the tool name, or for families the route inside it.
    pub route: String,
    /// Other names of the target the words already tell (rules on them apply before any
    /// look-up).
    pub names: Vec<String>,
    /// `None` when the route is unclassified (then it is asked).
    pub tier: Option<Tier>,
    /// The command that will run, when known before resolution (policy scans it for sudo).
    pub argv: Vec<String>,
    pub needs_sudo: bool,
    pub targets_archgate: bool,
}

impl Plan {
    pub fn simple(spec: &ToolSpec) -> Plan {
        Plan {
            route: spec.name.to_owned(),
            names: Vec::new(),
            tier: Some(spec.tier),
            argv: Vec::new(),
            needs_sudo: false,
            targets_archgate: false,
        }
    }
    pub fn with_tier(spec: &ToolSpec, tier: Tier, route_words: &[&str]) -> Plan {
        let mut route = spec.name.to_owned();
        for w in route_words {
            route.push(' ');
            route.push_str(w);
        }
        Plan {
            route,
            names: Vec::new(),
            tier: Some(tier),
            argv: Vec::new(),
            needs_sudo: false,
            targets_archgate: false,
        }
    }
}

/// What a call knows while it runs.
#[derive(Clone)]
pub struct CallCx {
    pub id: String,
    pub client: String,
    /// The snapshot the call is decided and run under.
    pub config: Arc<Config>,
    pub resolver: Resolver,
    /// The routes the person acknowledged (policy reads them), as they were when the call
    /// began: what a tool may know of the person's state, to read — nothing more.
    pub acknowledged: Arc<std::collections::BTreeSet<String>>,
}

/// What resolution settled, as policy, the person, a standing rule and the audit see it: the
/// canonical route, the exact commands that will run and the target. Built by the tool's
/// `resolve` next to the typed value its `execute` takes ([`Resolved`]), from the same data, so
/// the two cannot disagree; the gate binds the call's permit to `commands`, so a command built
/// again differently in `execute` is refused.
#[derive(Debug, Clone)]
pub struct Action {
    /// The canonical route: one spelling per target, whatever words or tool reached it
    /// (`omarchy theme set` for `omarchy_run "theme set"`, `theme set` and an alias alike).
    pub route: String,
    /// The target's other names (aliases, the words the agent used): rules on any of them apply.
    pub names: Vec<String>,
    /// The route's tier; `None` when it could not be classified (never auto-approved).
    pub tier: Option<Tier>,
    /// Exactly what will run, in order (empty when nothing runs).
    pub commands: Vec<CommandSpec>,
    /// What the call acts on, in words (a path, a URL, a window, a theme).
    pub target: Option<String>,
    /// Text the call will write or show (clipboard text, a notification), for the person's
    /// question only: the audit keeps its redaction.
    pub shown: Option<String>,
    pub needs_sudo: bool,
    pub targets_archgate: bool,
    /// The files the arguments name (an image, a path of a route), pinned when they were
    /// resolved: at the yes each must still be the file the person was asked about
    /// ([`archgate_exec::FilePin`]), else the call is refused (`changed_since_approval`).
    pub files: Vec<archgate_exec::FilePin>,
    /// What the question can show drawn (a screenshot's screens and area): for the person only,
    /// not part of the fingerprint (the target already says it in words).
    pub picture: Option<crate::picture::Picture>,
    /// The person may see the call's output before answering (a screenshot): while the question
    /// waits, the gate runs it once on their request and holds the output; a yes gives that
    /// output, never a second run (`crate::preview`).
    pub preview: bool,
    /// What the commands will start that their words do not say: the programs a route's script
    /// picks from the person's files (`archgate_desktop::omarchy::picked`), each as "starts the
    /// program your FILE names: …". Shown in the question and the record with the commands, and
    /// part of the fingerprint: a rule made for one pick never covers another.
    pub starts: Vec<String>,
}

impl Action {
    /// The action a plan describes, before anything was looked up: its route, tier and, when the
    /// plan knows it, the command.
    pub fn from_plan(plan: &Plan) -> Action {
        Action {
            route: plan.route.clone(),
            names: plan.names.clone(),
            tier: plan.tier,
            commands: Vec::new(),
            target: None,
            shown: None,
            needs_sudo: plan.needs_sudo,
            targets_archgate: plan.targets_archgate,
            files: Vec::new(),
            picture: None,
            preview: false,
            starts: Vec::new(),
        }
    }

    /// One line for the person and the audit: the commands, else the target, else the route.
    pub fn summary(&self) -> String {
        if !self.commands.is_empty() {
            let commands = self
                .commands
                .iter()
                .map(CommandSpec::display)
                .collect::<Vec<_>>()
                .join(" && ");
            if self.starts.is_empty() {
                return commands;
            }
            return format!("{commands} — {}", self.starts.join("; "));
        }
        self.target.clone().unwrap_or_else(|| self.route.clone())
    }

    /// The argv of each command, as policy reads them.
    pub fn argvs(&self) -> Vec<Vec<String>> {
        self.commands
            .iter()
            .map(|c| {
                std::iter::once(c.program().to_owned())
                    .chain(c.arg_list().iter().cloned())
                    .collect()
            })
            .collect()
    }

    /// A digest of everything that makes this action what it is — route, commands (program,
    /// arguments, stdin), target and shown text. A standing rule keeps it, so a changed command
    /// behind the same words asks again.
    pub fn fingerprint(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut field = |tag: &[u8], bytes: &[u8]| {
            h.update(tag);
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(b"route", self.route.as_bytes());
        for c in &self.commands {
            field(b"program", c.program().as_bytes());
            for a in c.arg_list() {
                field(b"arg", a.as_bytes());
            }
            if let Some(stdin) = c.stdin_value() {
                field(b"stdin", stdin);
            }
        }
        if let Some(t) = &self.target {
            field(b"target", t.as_bytes());
        }
        if let Some(t) = &self.shown {
            field(b"shown", t.as_bytes());
        }
        for s in &self.starts {
            field(b"starts", s.as_bytes());
        }
        crate::audit::record::hex_digest(&h.finalize().into())
    }
}

/// A resolved call: the action everyone judges and the typed value `execute` takes.
#[derive(Debug)]
pub struct Resolved<R> {
    pub action: Action,
    pub run: R,
}

impl<R> Resolved<R> {
    /// Nothing to look up: the plan is the action and the arguments are what runs.
    pub fn planned(plan: &Plan, run: R) -> Resolved<R> {
        Resolved {
            action: Action::from_plan(plan),
            run,
        }
    }
}

/// What resolution may use that policy allowed before anyone is asked: read-only look-ups
/// (a registry listing, the outputs, the sinks). The permit is unbound and issued by the gate
/// only after the plan was not denied.
pub struct Probe {
    pub permit: Permit,
}

pub trait Tool: Send + Sync + 'static {
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// What `execute` takes: the resolved value, never the raw arguments of a tool whose
    /// resolution changes them.
    type Run: Send + Sync + 'static;

    fn spec(&self) -> &'static ToolSpec;

    /// Route and tier as the words say, before any look-up. Pure: no I/O. Policy refuses a
    /// denied plan before resolution runs.
    fn plan(&self, _args: &Self::Args) -> Plan {
        Plan::simple(self.spec())
    }

    /// Checks what the agent named against live state and settles exactly what will run: the
    /// action (canonical route, commands, target) and the typed value for `execute`.
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        args: Self::Args,
    ) -> BoxFuture<'a, Result<Resolved<Self::Run>, ToolError>>;

    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        run: Self::Run,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// `resolve` for a tool that looks nothing up: the plan is the action, the arguments run.
#[macro_export]
macro_rules! resolve_as_planned {
    () => {
        fn resolve<'a>(
            &'a self,
            _cx: &'a $crate::tool::CallCx,
            _probe: &'a $crate::tool::Probe,
            plan: &'a $crate::tool::Plan,
            args: Self::Args,
        ) -> futures::future::BoxFuture<
            'a,
            Result<$crate::tool::Resolved<Self::Run>, $crate::tool::ToolError>,
        > {
            Box::pin(async move { Ok($crate::tool::Resolved::planned(plan, args)) })
        }
    };
}

/// Arguments that did not deserialize: the message names the field.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct ArgsError(pub String);

/// A value behind `dyn Any`: parsed arguments or a resolved run value.
pub type Erased = Box<dyn Any + Send + Sync>;

/// The type-erased face of a `Tool`.
pub trait DynTool: Send + Sync {
    fn spec(&self) -> &'static ToolSpec;
    fn input_schema(&self) -> Arc<Map<String, Value>>;
    fn parse(&self, args: Value) -> Result<Erased, ArgsError>;
    fn plan(&self, args: &(dyn Any + Send + Sync)) -> Plan;
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        args: Erased,
    ) -> BoxFuture<'a, Result<(Action, Erased), ToolError>>;
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        run: Erased,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

/// The JSON schema of an argument type, as MCP wants it: an object schema at the top (never a
/// bare `oneOf`), compacted so the tool list stays small in an agent's context.
pub fn schema_of<T: JsonSchema>() -> Arc<Map<String, Value>> {
    let settings = schemars::generate::SchemaSettings::draft2020_12();
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut v = serde_json::to_value(schema).unwrap_or_default();
    compact(&mut v);
    // One `type` per schema, no bare `true`: what every client's validator takes.
    crate::schema::portable(&mut v);
    // Unknown fields are refused by the server whatever the schema says; say it once, at the top.
    if let Some(m) = v.as_object_mut() {
        for nested in m.values_mut().filter(|x| x.is_object()) {
            strip_key(nested, "additionalProperties");
        }
    }
    if let Some(m) = v.as_object_mut() {
        m.remove("$schema");
        m.remove("title");
        // The tool's own description says what the arguments are for.
        m.remove("description");
        // MCP (and some clients' APIs) want an object schema at the top, never a bare oneOf.
        m.entry("type")
            .or_insert_with(|| Value::String("object".into()));
        if !m.contains_key("properties") && m.get("type").and_then(Value::as_str) == Some("object")
        {
            m.insert("properties".into(), Value::Object(Map::new()));
        }
    }
    Arc::new(v.as_object().cloned().unwrap_or_default())
}

fn strip_key(v: &mut Value, key: &str) {
    match v {
        Value::Object(m) => {
            if m.get(key) == Some(&Value::Bool(false)) {
                m.remove(key);
            }
            m.values_mut().for_each(|c| strip_key(c, key));
        }
        Value::Array(a) => a.iter_mut().for_each(|c| strip_key(c, key)),
        _ => {}
    }
}

/// Shrinks a generated schema without changing what it accepts: a `oneOf` of string constants
/// becomes an `enum`; numeric `format` annotations (which JSON Schema does not check), `default:
/// null` and descriptions of definitions (described where they are used) go.
pub fn compact(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for child in m.values_mut() {
                compact(child);
            }
            if m.get("default") == Some(&Value::Null) {
                m.remove("default");
            }
            // A definition is described where it is used.
            if let Some(Value::Object(defs)) = m.get_mut("$defs") {
                for d in defs.values_mut().filter_map(Value::as_object_mut) {
                    d.remove("description");
                }
            }
            if let Some(fmt) = m.get("format").and_then(Value::as_str)
                && matches!(
                    fmt,
                    "uint"
                        | "uint8"
                        | "uint16"
                        | "uint32"
                        | "uint64"
                        | "int"
                        | "int8"
                        | "int16"
                        | "int32"
                        | "int64"
                        | "double"
                        | "float"
                )
            {
                m.remove("format");
            }
            let consts: Option<Vec<Value>> =
                m.get("oneOf")
                    .and_then(Value::as_array)
                    .and_then(|branches| {
                        branches
                            .iter()
                            .map(|b| {
                                let o = b.as_object()?;
                                let c = o.get("const")?.as_str()?;
                                o.keys()
                                    .all(|k| k == "const" || k == "type" || k == "description")
                                    .then(|| Value::String(c.to_owned()))
                            })
                            .collect()
                    });
            if let Some(values) = consts {
                m.remove("oneOf");
                m.insert("type".into(), Value::String("string".into()));
                m.insert("enum".into(), Value::Array(values));
            }
        }
        Value::Array(a) => a.iter_mut().for_each(compact),
        _ => {}
    }
}

fn downcast<T: 'static>(b: &(dyn Any + Send + Sync)) -> &T {
    b.downcast_ref::<T>()
        .expect("arguments parsed by the same tool")
}

impl<T: Tool> DynTool for T {
    fn spec(&self) -> &'static ToolSpec {
        Tool::spec(self)
    }
    fn input_schema(&self) -> Arc<Map<String, Value>> {
        schema_of::<T::Args>()
    }
    fn parse(&self, args: Value) -> Result<Erased, ArgsError> {
        // MCP allows absent arguments for tools without parameters.
        let args = if args.is_null() {
            Value::Object(Map::new())
        } else {
            args
        };
        serde_json::from_value::<T::Args>(args)
            .map(|a| Box::new(a) as Erased)
            .map_err(|e| ArgsError(e.to_string()))
    }
    fn plan(&self, args: &(dyn Any + Send + Sync)) -> Plan {
        Tool::plan(self, downcast::<T::Args>(args))
    }
    fn resolve<'a>(
        &'a self,
        cx: &'a CallCx,
        probe: &'a Probe,
        plan: &'a Plan,
        args: Erased,
    ) -> BoxFuture<'a, Result<(Action, Erased), ToolError>> {
        let a = *args
            .downcast::<T::Args>()
            .expect("arguments parsed by the same tool");
        Box::pin(async move {
            let r = Tool::resolve(self, cx, probe, plan, a).await?;
            Ok((r.action, Box::new(r.run) as Erased))
        })
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        permit: Permit,
        run: Erased,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        let r = *run.downcast::<T::Run>().expect("resolved by the same tool");
        Tool::execute(self, cx, permit, r)
    }
}

//! Quickshell IPC: the targets and typed method signatures `qs ipc show` lists, and calls
//! checked against them before `qs ipc call TARGET METHOD ARGS…` is built.
//!
//! `qs ipc show` prints one `target NAME` line per IPC handler, followed by indented lines:
//!
//! ```text
//! target bar
//!   function toggle(): void
//!   function setVolume(level: int, notify: bool): string
//!   property visible: bool
//! ```
//!
//! Argument types Quickshell passes over IPC are `string`, `int`, `bool` and `real` (newer
//! releases add `color`); return types add `void`.

use archgate_exec::{CommandSpec, Permit};
use serde::Serialize;
use serde_json::Value;

use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::omarchy::{CommandOutcome, Invocation, targets_archgate};
use crate::programs::{self, Program};

/// A type in an IPC signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IpcType {
    /// Text.
    String,
    /// A whole number.
    Int,
    /// `true` or `false`.
    Bool,
    /// A floating-point number.
    Real,
    /// A colour (`#rrggbb` or a name).
    Color,
    /// No value (return types only).
    Void,
    /// A type this version of archgate does not know; calls using it are refused.
    Other(String),
}

impl IpcType {
    fn parse(s: &str) -> IpcType {
        match s.trim() {
            "string" | "QString" => IpcType::String,
            "int" => IpcType::Int,
            "bool" => IpcType::Bool,
            "real" | "double" | "float" => IpcType::Real,
            "color" => IpcType::Color,
            "void" | "" => IpcType::Void,
            other => IpcType::Other(other.to_owned()),
        }
    }

    fn label(&self) -> &str {
        match self {
            IpcType::String => "string",
            IpcType::Int => "int",
            IpcType::Bool => "bool",
            IpcType::Real => "real",
            IpcType::Color => "color",
            IpcType::Void => "void",
            IpcType::Other(s) => s,
        }
    }
}

/// A parameter of an IPC function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpcParam {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: IpcType,
}

/// A callable IPC function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpcFunction {
    /// Its name.
    pub name: String,
    /// Its parameters, in order.
    pub params: Vec<IpcParam>,
    /// What it returns.
    pub returns: IpcType,
}

/// A readable IPC property.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IpcProperty {
    /// Its name.
    pub name: String,
    /// Its type.
    #[serde(rename = "type")]
    pub ty: IpcType,
}

/// One IPC target (an `IpcHandler` in the shell).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellTarget {
    /// The target name.
    pub name: String,
    /// Its functions.
    pub functions: Vec<IpcFunction>,
    /// Its properties.
    pub properties: Vec<IpcProperty>,
}

fn parse_function(rest: &str) -> Option<IpcFunction> {
    let open = rest.find('(')?;
    let close = rest.rfind(')')?;
    if close < open {
        return None;
    }
    let name = rest[..open].trim();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let inner = rest[open + 1..close].trim();
    let params = if inner.is_empty() {
        Vec::new()
    } else {
        inner
            .split(',')
            .map(|p| {
                let (n, t) = p.split_once(':')?;
                let n = n.trim();
                (!n.is_empty()).then(|| IpcParam {
                    name: n.to_owned(),
                    ty: IpcType::parse(t),
                })
            })
            .collect::<Option<Vec<_>>>()?
    };
    let returns = rest[close + 1..]
        .trim()
        .strip_prefix(':')
        .map_or(IpcType::Void, IpcType::parse);
    Some(IpcFunction {
        name: name.to_owned(),
        params,
        returns,
    })
}

/// Parses the output of `qs ipc show`. Lines that are neither a target, a function nor a
/// property are skipped (and logged); a function before any target is `malformed`.
pub fn parse_ipc_show(text: &str) -> Result<Vec<ShellTarget>> {
    let mut targets: Vec<ShellTarget> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let target_name = if trimmed == "target" {
            Some("")
        } else {
            trimmed.strip_prefix("target ")
        };
        if let Some(name) = target_name {
            let name = name.trim();
            if name.is_empty() {
                return Err(DesktopError::malformed(
                    "qs ipc show",
                    format_args!("line {}: target without a name", n + 1),
                ));
            }
            targets.push(ShellTarget {
                name: name.to_owned(),
                functions: Vec::new(),
                properties: Vec::new(),
            });
            continue;
        }
        let current = targets.last_mut();
        if let Some(rest) = trimmed.strip_prefix("function ") {
            let Some(t) = current else {
                return Err(DesktopError::malformed(
                    "qs ipc show",
                    format_args!("line {}: function before any target", n + 1),
                ));
            };
            match parse_function(rest) {
                Some(f) => t.functions.push(f),
                None => {
                    tracing::warn!(line = n + 1, "unreadable function signature in qs ipc show")
                }
            }
        } else if let Some(rest) = trimmed.strip_prefix("property ") {
            let Some(t) = current else {
                return Err(DesktopError::malformed(
                    "qs ipc show",
                    format_args!("line {}: property before any target", n + 1),
                ));
            };
            if let Some((name, ty)) = rest.split_once(':') {
                t.properties.push(IpcProperty {
                    name: name.trim().to_owned(),
                    ty: IpcType::parse(ty),
                });
            }
        } else {
            tracing::debug!(line = n + 1, "skipping an unknown line in qs ipc show");
        }
    }
    Ok(targets)
}

fn convert(param: &IpcParam, v: &Value) -> Result<String> {
    let bad = || {
        DesktopError::invalid(
            "args",
            format!("`{}` must be {} (got {v})", param.name, param.ty.label()),
        )
    };
    match (&param.ty, v) {
        // A value starting with `-` would reach `qs ipc call` as one of qs's own options
        // (another instance, another config): the signature lists no flags, so none pass.
        (IpcType::String | IpcType::Color, Value::String(s)) if s.starts_with('-') => {
            Err(DesktopError::invalid(
                "args",
                format!(
                    "`{}` starts with '-': qs would read it as one of its own options, so it is refused",
                    param.name
                ),
            ))
        }
        (IpcType::String, Value::String(s)) => Ok(s.clone()),
        (IpcType::Color, Value::String(s)) if !s.is_empty() && !s.starts_with('-') => Ok(s.clone()),
        (IpcType::Int, Value::Number(n)) => n.as_i64().map(|i| i.to_string()).ok_or_else(bad),
        (IpcType::Int, Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(|i| i.to_string())
            .map_err(|_| bad()),
        (IpcType::Bool, Value::Bool(b)) => Ok(b.to_string()),
        (IpcType::Bool, Value::String(s)) if s == "true" || s == "false" => Ok(s.clone()),
        (IpcType::Real, Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| f.to_string())
            .ok_or_else(bad),
        (IpcType::Real, Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| f.to_string())
            .ok_or_else(bad),
        (IpcType::Other(t), _) => Err(DesktopError::invalid(
            "args",
            format!(
                "`{}` has type `{t}`, which archgate cannot pass",
                param.name
            ),
        )),
        _ => Err(bad()),
    }
}

/// The prefix of every `qs ipc` command for this session: `qs ipc`, plus `-n -p
/// $OMARCHY_PATH/shell` when Omarchy's shell is installed (so Omarchy's instance answers).
fn qs_ipc(desktop: &Desktop) -> CommandSpec {
    let mut spec = Program::Qs.spec(&desktop.env).arg("ipc");
    if let Some(dir) = &desktop.env.omarchy_path {
        let shell = dir.join("shell");
        if shell.is_dir()
            && let Some(s) = shell.to_str()
        {
            spec = spec.args(["-n", "-p", s]);
        }
    }
    spec.timeout(desktop.config.program_timeout)
}

/// The checked argv of a call: `qs ipc … call TARGET METHOD ARGS…`. Unknown targets and methods
/// are `not_found` with near names; wrong arity or types are `invalid_argument`; calls that
/// target archgate or its supervisor are `blocked`. Pure, so the gate can show it first.
pub fn plan_shell_call(
    targets: &[ShellTarget],
    base: CommandSpec,
    target: &str,
    method: &str,
    args: &[Value],
) -> Result<CommandSpec> {
    let t = targets
        .iter()
        .find(|t| t.name == target)
        .ok_or_else(|| DesktopError::NotFound {
            what: "shell IPC target",
            name: target.to_owned(),
            near: near(targets.iter().map(|t| t.name.as_str()), target),
        })?;
    let f = t
        .functions
        .iter()
        .find(|f| f.name == method)
        .ok_or_else(|| DesktopError::NotFound {
            what: "shell IPC method",
            name: format!("{target}.{method}"),
            near: near(t.functions.iter().map(|f| f.name.as_str()), method),
        })?;
    if args.len() != f.params.len() {
        return Err(DesktopError::invalid(
            "args",
            format!(
                "{target}.{method} takes {} argument(s) ({}), got {}",
                f.params.len(),
                f.params
                    .iter()
                    .map(|p| format!("{}: {}", p.name, p.ty.label()))
                    .collect::<Vec<_>>()
                    .join(", "),
                args.len()
            ),
        ));
    }
    let argv = f
        .params
        .iter()
        .zip(args)
        .map(|(p, v)| convert(p, v))
        .collect::<Result<Vec<_>>>()?;
    let spec = base
        .arg("call")
        .arg(target)
        .arg(method)
        .args(argv.iter().cloned());
    if targets_archgate(Invocation::ShellCall {
        target,
        method,
        args: &argv,
    }) {
        return Err(DesktopError::Blocked {
            command: spec.display(),
            reason: "the call would stop, restart, reconfigure or remove archgate or its supervisor",
        });
    }
    Ok(spec)
}

fn near<'a>(names: impl Iterator<Item = &'a str>, want: &str) -> Vec<String> {
    let w = want.to_lowercase();
    names
        .filter(|n| {
            let n = n.to_lowercase();
            n.contains(&w) || w.contains(&n) || n.starts_with(w.get(..2).unwrap_or(&w))
        })
        .take(5)
        .map(str::to_owned)
        .collect()
}

impl Desktop {
    /// `shell_targets`: the shell's IPC targets with typed signatures (`qs ipc show`).
    pub async fn shell_targets(&self, permit: &Permit) -> Result<Vec<ShellTarget>> {
        let spec = qs_ipc(self).arg("show");
        let out = programs::run_ok(permit, Program::Qs, spec).await?;
        let text = programs::full_text(&out, "qs ipc show", permit.executor().config().output_cap)?;
        parse_ipc_show(&text)
    }

    /// The command a shell call would run, checked against the live signatures.
    pub async fn plan_shell_call(
        &self,
        permit: &Permit,
        target: &str,
        method: &str,
        args: &[Value],
    ) -> Result<CommandSpec> {
        let targets = self.shell_targets(permit).await?;
        plan_shell_call(&targets, qs_ipc(self), target, method, args)
    }

    /// `shell_call`: checks the call against the signatures, then runs it.
    pub async fn shell_call(
        &self,
        permit: &Permit,
        target: &str,
        method: &str,
        args: &[Value],
    ) -> Result<CommandOutcome> {
        let spec = self.plan_shell_call(permit, target, method, args).await?;
        let shown = spec.display();
        let out = programs::run_any(permit, Program::Qs, spec).await?;
        Ok(CommandOutcome::from_output(shown, &out))
    }
}

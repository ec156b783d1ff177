//! A tool that did not work, or a refusal, as the agent reads it: a stable kind, what happened,
//! and what to do next. Used by tools, by resolution (`resolve.rs`) and by the gate.

use serde_json::Value;

use crate::error_kind::ErrorKind;

/// A tool that did not work, or a refusal: what happened and what the agent can do next.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolError {
    /// Stable snake_case code (`not_found`, `not_installed`, `could_not_reach` …).
    pub kind: ErrorKind,
    pub message: String,
    /// What to do next (retry later, ask the person in chat, install X, give up).
    pub next: Option<String>,
    /// Extra facts (near misses, the command the person could run …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
            next: None,
            details: None,
        }
    }
    pub fn next(mut self, next: impl Into<String>) -> ToolError {
        self.next = Some(next.into());
        self
    }
    pub fn details(mut self, d: Value) -> ToolError {
        self.details = Some(d);
        self
    }
}

/// What to do when a file changed between the question and the yes.
pub const CHANGED_NEXT: &str = "tell the person a file changed after they were asked; call again only if they want it asked about what is there now";

impl From<archgate_exec::ExecError> for ToolError {
    fn from(e: archgate_exec::ExecError) -> ToolError {
        use archgate_exec::ExecError;
        let next = match &e {
            ExecError::NotInstalled { .. } => {
                "install the package that provides it, or ask the person to"
            }
            ExecError::TimedOut { .. } => {
                "retry with a smaller request, or ask the person to raise the tool's timeout"
            }
            ExecError::Changed { .. } => CHANGED_NEXT,
            ExecError::Untrusted { .. }
            | ExecError::Spawn { .. }
            | ExecError::NotApproved { .. } => "tell the person; this needs a look at the machine",
        };
        ToolError::new(ErrorKind::from(&e), e.to_string()).next(next)
    }
}

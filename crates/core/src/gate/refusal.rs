//! A call that did not end in an answer: how it ended (`Outcome`), what kind of refusal it was
//! (`Kind`, typed), what happened, what the agent can do next, and typed details. Every stage of
//! `Gate::call` returns one; the transport renders it (`kind`, `message`, `next`, `details` —
//! the same JSON as a tool's `ToolError`) and the audit record takes its outcome and kind.
//! A relaying client's ticket travels typed (`Details::Ticket`), never matched by its kind's
//! spelling.

use archgate_policy::Tier;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;
use std::borrow::Cow;

use crate::audit::Outcome;
use crate::tool::{ErrorKind, ToolError};

/// What kind of refusal a call met. The gate's own kinds are variants; a tool's error (in
/// resolution or execution) keeps the tool's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    BudgetExhausted,
    UnknownTool,
    NotGranted,
    /// Arguments or an answer over their limit.
    TooLarge,
    InvalidArguments,
    /// Route words that could not be shown safely (`text::check_route_words`).
    InvalidRoute,
    /// Policy denied or blocked the call, or approval routing refused it.
    Refused,
    /// Approval was needed and could not be asked (nag guard, no channel).
    Unsupported,
    /// A trusted relay is to bring the person's answer (`Details::Ticket`).
    InputRequired,
    TicketUnknown,
    TicketMismatch,
    Declined,
    Cancelled,
    TimedOut,
    Unreachable,
    /// The call would have waited as an MCP task, and its client has as many open as it may
    /// (`approval.max_tasks`): nothing was asked, nothing ran.
    TooManyTasks,
    /// A tool or its resolution panicked.
    InternalError,
    /// The tool's own kind (`not_found`, `not_installed`, `not_approved` …).
    Tool(ErrorKind),
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::BudgetExhausted => "budget_exhausted",
            Kind::UnknownTool => "unknown_tool",
            Kind::NotGranted => "not_granted",
            Kind::TooLarge => "too_large",
            Kind::InvalidArguments => "invalid_arguments",
            Kind::InvalidRoute => "invalid_route",
            Kind::Refused => "refused",
            Kind::Unsupported => "unsupported",
            Kind::InputRequired => "input_required",
            Kind::TicketUnknown => "ticket_unknown",
            Kind::TicketMismatch => "ticket_mismatch",
            Kind::Declined => "declined",
            Kind::Cancelled => "cancelled",
            Kind::TimedOut => "timed_out",
            Kind::Unreachable => "unreachable",
            Kind::TooManyTasks => "too_many_tasks",
            Kind::InternalError => "internal_error",
            Kind::Tool(k) => k.as_str(),
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// The question a relaying client is to put to the person, and the ticket to come back with.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequired {
    pub ticket: String,
    pub client: String,
    pub tool: String,
    /// The resolved command (or target) the person is asked about.
    pub command: String,
    pub tier: Tier,
    /// Unix seconds after which silence is no.
    pub deadline: u64,
    /// What the session read just before, when the call follows untrusted text
    /// (`Follows::sentence`): the client shows it to the person with the question.
    pub follows: Option<String>,
}

/// Extra facts of a refusal, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum Details {
    /// What the person was asked about (declined, timed out …): they can run it themselves.
    Command(String),
    /// `input_required`: the ticket and the question.
    Ticket(InputRequired),
    /// A tool's own details (near misses, the command the person could run …).
    Tool(Value),
}

impl Serialize for Details {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Details::Command(c) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("command", c)?;
                m.end()
            }
            Details::Ticket(t) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("ticket", &t.ticket)?;
                m.serialize_entry(
                    "question",
                    &serde_json::json!({
                        "client": t.client, "tool": t.tool, "command": t.command,
                        "tier": t.tier, "deadline": t.deadline, "rule_allowed": false,
                        "follows": t.follows,
                    }),
                )?;
                m.end()
            }
            Details::Tool(v) => v.serialize(s),
        }
    }
}

/// A call that ended without an answer. Serializes as a `ToolError` does (`kind`, `message`,
/// `next`, `details`), so the agent reads one shape whoever refused.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Refusal {
    #[serde(skip)]
    pub outcome: Outcome,
    pub kind: Kind,
    pub message: String,
    /// What to do next (retry later, ask the person in chat, give up).
    pub next: Option<Cow<'static, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Box<Details>>,
}

impl Refusal {
    /// A client over its budget (the gate's first stage, and a question over its hourly limit).
    pub(crate) fn budget_exhausted(e: archgate_policy::Exhausted) -> Refusal {
        Refusal::new(
            Outcome::BudgetExhausted,
            Kind::BudgetExhausted,
            e.to_string(),
        )
        .next("retry after the reset time")
    }

    pub fn new(outcome: Outcome, kind: Kind, message: impl Into<String>) -> Refusal {
        Refusal {
            outcome,
            kind,
            message: message.into(),
            next: None,
            details: None,
        }
    }

    pub fn next(mut self, next: impl Into<Cow<'static, str>>) -> Refusal {
        self.next = Some(next.into());
        self
    }

    pub fn details(mut self, d: Details) -> Refusal {
        self.details = Some(Box::new(d));
        self
    }

    /// A tool's own error (from resolution or execution), ending the call as `outcome`.
    pub fn of_tool(outcome: Outcome, e: ToolError) -> Refusal {
        Refusal {
            outcome,
            kind: Kind::Tool(e.kind),
            message: e.message,
            next: e.next.map(Cow::Owned),
            details: e.details.map(|v| Box::new(Details::Tool(v))),
        }
    }

    /// The ticket and question when this is `input_required`.
    pub fn input_required(&self) -> Option<&InputRequired> {
        match self.details.as_deref() {
            Some(Details::Ticket(t)) if self.kind == Kind::InputRequired => Some(t),
            _ => None,
        }
    }

    /// A tool's own details, as it gave them.
    pub fn tool_details(&self) -> Option<&Value> {
        match self.details.as_deref() {
            Some(Details::Tool(v)) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refusal_reads_as_a_tool_error_does() {
        let tool = ToolError::new(ErrorKind::NotFound, "no such package")
            .next("search first")
            .details(json!({"near": ["a"]}));
        let as_tool = serde_json::to_value(&tool).unwrap();
        let r = Refusal::of_tool(Outcome::Unresolved, tool.clone());
        assert_eq!(serde_json::to_value(&r).unwrap(), as_tool);
        assert_eq!(r.kind, Kind::Tool(ErrorKind::NotFound));
        let gate = Refusal::new(Outcome::Refused, Kind::Refused, "denied");
        assert_eq!(
            serde_json::to_value(&gate).unwrap(),
            json!({"kind": "refused", "message": "denied", "next": null})
        );
    }

    #[test]
    fn only_an_input_required_refusal_carries_a_ticket() {
        let t = InputRequired {
            ticket: "t-1".into(),
            client: "c".into(),
            tool: "x".into(),
            command: "/usr/bin/true".into(),
            tier: Tier::Act,
            deadline: 9,
            follows: None,
        };
        let r = Refusal::new(Outcome::InputRequired, Kind::InputRequired, "ask")
            .details(Details::Ticket(t.clone()));
        assert_eq!(r.input_required(), Some(&t));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["details"]["ticket"], "t-1");
        assert_eq!(v["details"]["question"]["tier"], "act");
        // The same ticket under another kind is not an input-required answer.
        let forged = Refusal::of_tool(
            Outcome::ToolError,
            ToolError::new(ErrorKind::Refused, "input_required").details(v["details"].clone()),
        );
        assert!(forged.input_required().is_none());
    }
}

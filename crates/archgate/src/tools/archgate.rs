//! archgate about itself, for the resources `archgate://policy` and `archgate://activity/recent`.
//! Read-only views: no tool can change policy, rules, grants, clients or config.

use archgate_core::exec::Permit;
use archgate_core::gate::Catalogue;
use archgate_core::policy::{CallFacts, PolicyInput, Tier};
use archgate_core::tool::{CallCx, ErrorKind, Tool, ToolError, ToolOutput, ToolSpec};
use futures::future::BoxFuture;
use std::collections::BTreeSet;
use std::sync::Arc;

use super::Services;
use super::packages::NoArgs;

/// The rules in force, and what they decide for every tool's plain route.
pub struct PolicyView {
    /// (name, tier) of every listed tool, taken when the catalogue was built.
    pub tools: Vec<(&'static str, Tier)>,
}

read_spec!(static POLICY = "archgate_policy", "archgate policy", open_world: false, provenance: archgate_core::provenance::Provenance::ArchgateOnly, "The policy in force, explained.");

impl Tool for PolicyView {
    type Args = NoArgs;
    type Run = NoArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &POLICY
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        _p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let rules = &cx.config.policy.rules;
            let acknowledged: &BTreeSet<String> = &cx.acknowledged;
            let decisions: Vec<_> = self
                .tools
                .iter()
                .map(|(name, tier)| {
                    archgate_core::policy::explain(
                        &CallFacts {
                            client: &cx.client,
                            tool: name,
                            route: name,
                            names: &[],
                            declared_tier: Some(*tier),
                            commands: &[],
                            needs_sudo: false,
                            targets_archgate: false,
                        },
                        &PolicyInput {
                            rules,
                            acknowledged,
                        },
                    )
                })
                .collect();
            Ok(ToolOutput::json(serde_json::json!({
                "rules": {
                    "deny": rules.deny.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                    "ask": rules.ask.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                    "allow": rules.allow.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
                },
                "how": "Rules are read deny, then ask, then allow; the first match wins. Without a match, \
                        read runs, act and destructive ask, unclassified routes ask. Anything that elevates \
                        privilege is blocked whatever the rules say. Only the person changes this, in config.toml.",
                "approval_timeout_s": cx.config.approval.timeout.as_secs(),
                "decisions": decisions,
            })))
        })
    }
}

/// This client's last 50 records.
pub struct ActivityView(pub Arc<Services>);

read_spec!(static ACTIVITY = "archgate_activity", "Recent activity", open_world: false, provenance: archgate_core::provenance::Provenance::ArchgateOnly, "This client's last 50 audit records.");

impl Tool for ActivityView {
    type Args = NoArgs;
    type Run = NoArgs;
    archgate_core::resolve_as_planned!();
    fn spec(&self) -> &'static ToolSpec {
        &ACTIVITY
    }
    fn execute<'a>(
        &'a self,
        cx: &'a CallCx,
        _p: Permit,
        _a: NoArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let path = self.0.paths.audit_log();
            let client = cx.client.clone();
            let records = tokio::task::spawn_blocking(move || {
                archgate_core::audit::recent(&path, Some(&client), 50)
            })
            .await
            .map_err(|e| ToolError::new(ErrorKind::InternalError, e.to_string()))?
            .map_err(|e| ToolError::new(ErrorKind::CouldNotRead, format!("activity log: {e}")))?;
            Ok(ToolOutput::json(serde_json::json!({ "records": records })))
        })
    }
}

pub fn register(c: &mut Catalogue, svc: &Arc<Services>) {
    let tools = c.all().map(|t| (t.spec().name, t.spec().tier)).collect();
    c.add_hidden(PolicyView { tools });
    c.add_hidden(ActivityView(svc.clone()));
}

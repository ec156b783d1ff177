//! `archgate policy explain ROUTE` and `archgate policy ack ROUTE`.

use archgate_core::policy::{CallFacts, PolicyInput, Tier};
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use crate::app::App;
use crate::cli::PolicyAction;

pub fn run(config: Option<PathBuf>, action: PolicyAction) -> anyhow::Result<ExitCode> {
    let app = App::open(config, None)?;
    let code = match action {
        PolicyAction::Explain { route, client } => {
            let cfg = app.gate.config.current();
            let route = archgate_core::policy::normalize_route(&route);
            let first = route.split_whitespace().next().unwrap_or("");
            // The tier a route has is the tool's declared tier when the route names a tool.
            let tool = app.gate.catalogue.get(first);
            let declared: Option<Tier> = tool.map(|t| t.spec().tier);
            let words: Vec<String> = route.split_whitespace().map(str::to_owned).collect();
            let acknowledged = app.gate.person.acknowledged();
            let e = archgate_core::policy::explain(
                &CallFacts {
                    client: &client,
                    tool: first,
                    route: &route,
                    declared_tier: declared,
                    argv: &words,
                    needs_sudo: false,
                    targets_archgate: false,
                },
                &PolicyInput {
                    rules: &cfg.policy.rules,
                    acknowledged: &acknowledged,
                },
            );
            out(format!("route:    {}", e.route));
            out(format!("decision: {}", e.decision));
            out(format!(
                "tier:     {}{}",
                e.tier,
                if e.classified { "" } else { " (unclassified)" }
            ));
            out(format!(
                "rule:     {}",
                e.rule.as_deref().unwrap_or("(built-in)")
            ));
            out(format!("reason:   {}", e.reason));
            ExitCode::SUCCESS
        }
        PolicyAction::Ack { route } => {
            app.gate.person.acknowledge(&route)?;
            out(format!(
                "acknowledged {route:?}: an allow prefix may now grant it"
            ));
            ExitCode::SUCCESS
        }
    };
    app.shutdown();
    Ok(code)
}

//! The stages of `Gate::call`, each one function returning a typed refusal: admission, the
//! policy decision (on the plan and on the resolved action), resolution, approval and
//! execution. `mod.rs` strings them together top to bottom; nothing here issues a permit.

use archgate_exec::{CommandSpec, Executor, Permit};
use archgate_policy::{Budget, CallFacts, PolicyInput, Routing, Tier, Verdict};
use futures::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use super::record::Pending;
use super::{Client, Gate, ask, is_visible};
use crate::audit::{ApprovalRecord, Outcome};
use crate::config::Config;
use crate::gate::ask::Relay;
use crate::tool::{Action, CallCx, DynTool, Plan, Probe, ToolError, ToolOutput};

impl Gate {
    /// Admission: the budget is charged first (so unknown tools, ungranted tools and malformed
    /// arguments cost the client too), then the tool must exist, be enabled and granted, and the
    /// arguments must fit and parse.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn admit(
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
    pub(super) fn decide(
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
    pub(super) async fn resolve(
        &self,
        cx: &CallCx,
        probe: &Probe,
        tool: &dyn DynTool,
        plan: &Plan,
        parsed: crate::tool::Erased,
    ) -> Result<(Action, crate::tool::Erased), (Outcome, ToolError)> {
        let spec = tool.spec();
        let (mut action, run) = match AssertUnwindSafe(tool.resolve(cx, probe, plan, parsed))
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
    pub(super) async fn approve(
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
    pub(super) async fn execute(
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
pub(super) fn check_route(plan: &Plan) -> Result<(), (Outcome, ToolError)> {
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
pub(super) fn pin_programs(
    executor: &Executor,
    mut action: Action,
) -> Result<Action, (Outcome, ToolError)> {
    for c in &mut action.commands {
        let file = executor
            .resolve_program(c.program())
            .map_err(|e| (Outcome::Unresolved, ToolError::from(e)))?;
        *c = std::mem::replace(c, CommandSpec::new(""))
            .with_program(file.to_string_lossy().into_owned());
    }
    Ok(action)
}

pub(super) fn budget_of(config: &Config) -> Budget {
    Budget {
        per_minute: config.budgets.per_minute,
        per_day: config.budgets.per_day,
        questions_per_hour: config.budgets.questions_per_hour,
    }
}

pub(super) fn refused(d: &archgate_policy::Decision) -> (Outcome, ToolError) {
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

pub(super) fn not_granted_tier(client: &Client, tier: Tier) -> (Outcome, ToolError) {
    (
        Outcome::NotGranted,
        ToolError::new(
            "not_granted",
            format!("client {:?} is not granted {tier} calls", client.name),
        ),
    )
}

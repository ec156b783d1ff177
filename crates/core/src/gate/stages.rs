//! The stages of `Gate::call`, each one function returning one typed `Refusal`: admission, the
//! policy decision on the plan and on the resolved action, resolution, approval and execution.
//! `mod.rs` strings them together top to bottom; nothing here issues a permit.

use archgate_exec::{CommandSpec, Executor, Permit};
use archgate_policy::{
    ApprovedBy, Budget, CallFacts, Decision, PolicyInput, Routing, Tier, Verdict,
};
use futures::FutureExt;
use serde_json::Value;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use super::record::{Approval, Trace};
use super::refusal::{Kind, Refusal};
use super::{Call, Client, Gate, ask, is_visible};
use crate::audit::Outcome;
use crate::config::Config;
use crate::provenance::Provenance;
use crate::tool::{Action, CallCx, DynTool, Erased, Plan, Probe, ToolError, ToolOutput};

impl Gate {
    /// Admission: the budget is charged first (so unknown tools, ungranted tools and malformed
    /// arguments cost the client too), then the tool must exist, be enabled and granted, and the
    /// arguments must fit and parse.
    pub(super) fn admit(
        &self,
        call: &Call<'_>,
        tool: Option<Arc<dyn DynTool>>,
        args: &Value,
    ) -> Result<(Arc<dyn DynTool>, Erased), Refusal> {
        let (config, client) = (call.config, call.client);
        if let Err(e) = self
            .person
            .charge_call(&client.name, &budget_of(config), call.now)
        {
            return Err(Refusal::budget_exhausted(e));
        }
        let Some(tool) = tool else {
            return Err(Refusal::new(
                Outcome::NotGranted,
                Kind::UnknownTool,
                format!(
                    "no tool named {:?}",
                    crate::audit::bound::cap(call.tool, crate::audit::bound::TOOL_NAME_LIMIT)
                ),
            )
            .next("list the tools and call one of them"));
        };
        let spec = tool.spec();
        if !is_visible(tool.as_ref(), client, config) {
            return Err(not_granted(spec.name, client));
        }
        let size = crate::audit::bound::json_len(args);
        if size > config.limits.max_args_bytes {
            return Err(Refusal::new(
                Outcome::InvalidArguments,
                Kind::TooLarge,
                format!(
                    "arguments are {size} bytes; the limit is {}",
                    config.limits.max_args_bytes
                ),
            ));
        }
        let parsed = tool.parse(args.clone()).map_err(|e| {
            Refusal::new(Outcome::InvalidArguments, Kind::InvalidArguments, e.0)
                .next("correct the arguments against the tool's schema")
        })?;
        Ok((tool, parsed))
    }

    /// Policy on the words alone: a denied plan is refused before anything is looked up, and
    /// route words that could not be shown safely are refused here too.
    pub(super) fn decide_plan(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        tool: &dyn DynTool,
        parsed: &Erased,
    ) -> Result<Plan, Refusal> {
        let plan = tool.plan(parsed.as_ref());
        check_route(&plan)?;
        trace.route = Some(plan.route.clone());
        let early = self.decide(
            call.config,
            call.client,
            tool.spec().name,
            &Action::from_plan(&plan),
            &plan.argv,
        );
        if early.verdict == Verdict::Deny {
            let r = refused(&early);
            trace.decision = Some(early);
            return Err(r);
        }
        Ok(plan)
    }

    /// Policy on what resolution settled, then on the files its programs are: a symlink to
    /// `sudo` is `sudo`. The second decision is the one that counts, and the client must be
    /// granted its tier.
    pub(super) fn decide_action(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        tool: &str,
        action: Action,
        probe: &Probe,
    ) -> Result<(Action, Decision), Refusal> {
        let words = self.decide(call.config, call.client, tool, &action, &[]);
        if words.verdict == Verdict::Deny {
            let r = refused(&words);
            trace.decision = Some(words);
            return Err(r);
        }
        // Pinning changes only the action's programs: with none, the action policy would judge
        // after it is the one it just judged, and that decision is the decision (issue 34).
        // (The trace holds this action already: `run` noted it.)
        let (action, decision) = if action.commands.is_empty() {
            (action, words)
        } else {
            let action = pin_programs(probe.permit.executor(), action)?;
            trace.resolved(&action);
            let decision = self.decide(call.config, call.client, tool, &action, &[]);
            (action, decision)
        };
        let denied = (decision.verdict == Verdict::Deny).then(|| refused(&decision));
        let tier = decision.tier;
        trace.decision = Some(decision.clone());
        if let Some(r) = denied {
            return Err(r);
        }
        if !call.client.grant.permits(tool, tier) {
            return Err(not_granted_tier(call.client, tier));
        }
        Ok((action, decision))
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
    ) -> Decision {
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
        parsed: Erased,
    ) -> Result<(Action, Erased), Refusal> {
        let (mut action, run) = match AssertUnwindSafe(tool.resolve(cx, probe, plan, parsed))
            .catch_unwind()
            .await
        {
            Ok(r) => r.map_err(|e| Refusal::of_tool(Outcome::Unresolved, e))?,
            Err(_) => {
                tracing::error!(
                    tool = tool.spec().name,
                    "resolution panicked; archgate keeps serving"
                );
                return Err(Refusal::new(
                    Outcome::Panicked,
                    Kind::InternalError,
                    "resolving the call failed unexpectedly; this is a bug in archgate",
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
    /// the person. A destructive call is the person's alone (`route_approval`).
    pub(super) async fn approve(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        spec: &'static crate::tool::ToolSpec,
        action: &Action,
        decision: &Decision,
        args: &Value,
    ) -> Result<(), Refusal> {
        let tool = spec.name;
        let (client, now) = (call.client, call.now);
        let dev = self.person.dev_mode_until(now);
        trace.dev_mode = dev.is_some();
        // What the session read just before: an act call after untrusted text is the person's.
        let follows = (decision.verdict == Verdict::Ask
            && archgate_policy::steps_back(decision.tier, true))
        .then(|| {
            self.untrusted.follows(
                call.session,
                &client.name,
                args,
                now,
                call.config.approval.untrusted_window.as_secs(),
            )
        })
        .flatten();
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
        let mut routing = archgate_policy::route_approval(
            decision,
            always_ask,
            dev,
            now,
            rule.as_ref(),
            follows.is_some(),
        );
        trace.follows = follows.clone();
        if let Routing::Approved {
            by: ApprovedBy::StandingRule(_),
        } = routing
        {
            // The rule may have been revoked or used up since the peek: then the person decides.
            routing = match self.person.use_matching_rule(
                &client.name,
                tool,
                &action.route,
                &fingerprint,
                args,
                now,
            ) {
                Some(id) => Routing::Approved {
                    by: ApprovedBy::StandingRule(id),
                },
                None => Routing::AskPerson,
            };
        }
        match routing {
            Routing::Refuse(reason) => Err(Refusal::new(
                Outcome::Refused,
                Kind::Refused,
                reason.to_string(),
            )),
            Routing::Approved { by } => {
                trace.approval = match by {
                    ApprovedBy::Policy => None,
                    ApprovedBy::DeveloperMode => Some(Approval::DeveloperMode),
                    ApprovedBy::StandingRule(id) => Some(Approval::StandingRule(id)),
                };
                Ok(())
            }
            Routing::AskPerson => {
                let summary = action.summary();
                // The grant's name leads the sentence: the agent's own `clientInfo` is its
                // word, shown beside the grant on every surface, never as who asks (attack 4 F3).
                let sentence = crate::sentence::sentence(spec, action, args, &client.name);
                let ask = ask::Ask {
                    config: call.config,
                    client,
                    tool,
                    route: &action.route,
                    summary: &summary,
                    sentence,
                    picture: action.picture.clone(),
                    fingerprint: &fingerprint,
                    pins: (
                        action
                            .commands
                            .iter()
                            .filter_map(CommandSpec::pinned)
                            .cloned()
                            .collect(),
                        action.files.clone(),
                    ),
                    tier: decision.tier,
                    canonical: args,
                    budget: &budget_of(call.config),
                    rule_allowed: !always_ask,
                    follows: follows.as_ref(),
                };
                self.ask_person(call, trace, ask).await
            }
        }
    }

    /// The call's answer carried text archgate did not write: the session read it now.
    pub(super) fn note_read(
        &self,
        call: &Call<'_>,
        trace: &mut Trace,
        provenance: Provenance,
        args: &Value,
        output: &ToolOutput,
    ) {
        let Provenance::Untrusted(source) = provenance else {
            return;
        };
        if output.own_words {
            return;
        }
        trace.read = Some(source);
        self.untrusted.record(
            call.session,
            &call.client.name,
            (source, source.label(args)),
            output,
            call.now,
            call.config.approval.untrusted_window.as_secs(),
        );
    }

    /// Execution, with a panic caught and the answer held to the output limit.
    pub(super) async fn execute(
        &self,
        cx: &CallCx,
        config: &Config,
        tool: &dyn DynTool,
        permit: Permit,
        run: Erased,
    ) -> Result<ToolOutput, Refusal> {
        let output = match AssertUnwindSafe(tool.execute(cx, permit, run))
            .catch_unwind()
            .await
        {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => return Err(Refusal::of_tool(Outcome::ToolError, e)),
            Err(_) => {
                tracing::error!(
                    tool = tool.spec().name,
                    "tool panicked; archgate keeps serving"
                );
                return Err(Refusal::new(
                    Outcome::Panicked,
                    Kind::InternalError,
                    "the tool failed unexpectedly; this is a bug in archgate",
                ));
            }
        };
        let mut output = output;
        let size = output.measure(config.limits.max_output_bytes);
        if size > config.limits.max_output_bytes {
            return Err(Refusal::new(
                Outcome::ToolError,
                Kind::TooLarge,
                format!(
                    "the answer is {size} bytes; the limit is {}",
                    config.limits.max_output_bytes
                ),
            )
            .next("narrow the request (a section, a page, a filter) and call again"));
        }
        Ok(output)
    }
}

/// Route words are printable and bounded (no control, bidi or invisible character): they reach
/// the person's screen in every question and the log.
fn check_route(plan: &Plan) -> Result<(), Refusal> {
    let words: Vec<&str> = plan.route.split_whitespace().collect();
    crate::text::check_route_words(&words).map_err(|e| {
        Refusal::new(Outcome::InvalidArguments, Kind::InvalidRoute, e.to_string())
            .next("call again with the route's words as omarchy_search or the schema give them")
    })
}

/// Each program of the action found, checked and pinned now (opened, its content digested, a
/// script's interpreter too): the person sees its path, policy judges that file, the permit runs
/// only it and only while it is unchanged, and a program that is missing or untrusted is refused
/// before anyone is asked.
pub(super) fn pin_programs(executor: &Executor, mut action: Action) -> Result<Action, Refusal> {
    for c in &mut action.commands {
        *c = executor
            .pin(std::mem::replace(c, CommandSpec::new("")))
            .map_err(|e| Refusal::of_tool(Outcome::Unresolved, ToolError::from(e)))?;
    }
    Ok(action)
}

/// At the yes: every file the call was judged on is still that file — each program (and its
/// interpreters) and each file an argument names. A file that changed between the question and
/// the answer refuses the call with the file and how it changed; nothing ran.
pub(super) fn check_pins(executor: &Executor, action: &Action) -> Result<(), Refusal> {
    let changed = |e: ToolError| Refusal::of_tool(Outcome::Refused, e);
    for pin in action.commands.iter().filter_map(CommandSpec::pinned) {
        executor
            .verify_pin(pin)
            .map_err(|e| changed(ToolError::from(e)))?;
    }
    for file in &action.files {
        file.check().map_err(|change| {
            changed(
                ToolError::new(
                    crate::tool::ErrorKind::ChangedSinceApproval,
                    format!(
                        "refusing to act on {}: it changed since it was approved ({change}); ask again",
                        file.path().display()
                    ),
                )
                .next(crate::tool::CHANGED_NEXT),
            )
        })?;
    }
    Ok(())
}

pub(super) fn budget_of(config: &Config) -> Budget {
    Budget {
        per_minute: config.budgets.per_minute,
        per_day: config.budgets.per_day,
        questions_per_hour: config.budgets.questions_per_hour,
    }
}

pub(super) fn not_granted(tool: &str, client: &Client) -> Refusal {
    Refusal::new(
        Outcome::NotGranted,
        Kind::NotGranted,
        format!("{tool} is not available to client {:?}", client.name),
    )
    .next("give up, or ask the person to grant it (`archgate clients`) or enable it in config")
}

fn refused(d: &Decision) -> Refusal {
    let next = if d.tier == Tier::Blocked {
        "give up: archgate never elevates privilege or touches itself; tell the person the command to run themselves"
    } else {
        "give up, or ask the person in chat to change their policy"
    };
    Refusal::new(Outcome::Refused, Kind::Refused, d.reason.to_string()).next(next)
}

fn not_granted_tier(client: &Client, tier: Tier) -> Refusal {
    Refusal::new(
        Outcome::NotGranted,
        Kind::NotGranted,
        format!("client {:?} is not granted {tier} calls", client.name),
    )
}

//! `Gate::explain`: the gate's own decision for a call, without charging, asking or running
//! anything but resolution's read-only look-ups (`archgate policy explain`).

use archgate_policy::{Tier, Verdict};
use serde_json::Value;

use super::refusal::{Kind, Refusal};
use super::stages::{not_granted, pin_programs};
use super::{Client, Gate, is_visible};
use crate::audit::Outcome;
use crate::tool::Action;

/// What the gate would decide for one call (see [`Gate::explain`]).
#[derive(Debug)]
pub struct Explained {
    /// What resolution settled (the plan's words when the plan was already denied).
    pub action: Action,
    /// Policy's decision on it.
    pub decision: archgate_policy::Decision,
    /// The standing rule that would approve it without asking, if any.
    pub standing_rule: Option<String>,
    /// Whether developer mode would approve it without asking.
    pub developer_mode: bool,
    /// For an act or destructive call that would be asked: within this many seconds after the
    /// calling session read text archgate did not write, developer mode and the standing rule
    /// (unless it opted in with `after_untrusted`) step back and the person is asked.
    pub untrusted_window_s: Option<u64>,
    /// Whether the standing rule opted in (`after_untrusted = true`), so it still approves
    /// after untrusted text.
    pub rule_after_untrusted: bool,
}

impl Gate {
    /// What the gate would decide for this call, without charging, asking or running anything
    /// but resolution's read-only look-ups: the same plan, resolution and decision `call` takes,
    /// and whether a standing rule or developer mode would approve it. `archgate policy explain`
    /// prints this, so it can never explain a different decision than the gate takes.
    pub async fn explain(
        &self,
        client: &Client,
        tool_name: &str,
        args: Value,
    ) -> Result<Explained, Refusal> {
        let config = self.config.current();
        let tool = self.catalogue.get(tool_name).cloned().ok_or_else(|| {
            Refusal::new(
                Outcome::NotGranted,
                Kind::UnknownTool,
                format!("no tool named {tool_name:?}"),
            )
        })?;
        let spec = tool.spec();
        if !is_visible(tool.as_ref(), client, &config) {
            return Err(not_granted(spec.name, client));
        }
        let parsed = tool
            .parse(args.clone())
            .map_err(|e| Refusal::new(Outcome::InvalidArguments, Kind::InvalidArguments, e.0))?;
        let plan = tool.plan(parsed.as_ref());
        let early = self.decide(
            &config,
            client,
            spec.name,
            &Action::from_plan(&plan),
            &plan.argv,
        );
        if early.verdict == Verdict::Deny {
            return Ok(Explained {
                action: Action::from_plan(&plan),
                decision: early,
                standing_rule: None,
                developer_mode: false,
                untrusted_window_s: None,
                rule_after_untrusted: false,
            });
        }
        let cx = self.cx_for("explain", client, &config);
        let probe = self.probe(&config, spec.name);
        let (action, _run) = self.resolve(&cx, &probe, &*tool, &plan, parsed).await?;
        let words = self.decide(&config, client, spec.name, &action, &[]);
        if words.verdict == Verdict::Deny {
            return Ok(Explained {
                action,
                decision: words,
                standing_rule: None,
                developer_mode: false,
                untrusted_window_s: None,
                rule_after_untrusted: false,
            });
        }
        let action = pin_programs(probe.permit.executor(), action)?;
        let decision = self.decide(&config, client, spec.name, &action, &[]);
        let now = self.clock.now_secs();
        let rule = (decision.verdict == Verdict::Ask && decision.tier != Tier::Destructive)
            .then(|| {
                self.person.matching_rule(
                    &client.name,
                    spec.name,
                    &action.route,
                    &action.fingerprint(),
                    &args,
                    now,
                )
            })
            .flatten();
        let untrusted_window_s = (decision.verdict == Verdict::Ask
            && decision.classified
            && archgate_policy::steps_back(decision.tier, true))
        .then(|| config.approval.untrusted_window.as_secs());
        Ok(Explained {
            developer_mode: decision.verdict == Verdict::Ask
                && self.person.dev_mode_until(now).is_some(),
            untrusted_window_s,
            rule_after_untrusted: rule.as_ref().is_some_and(|r| r.after_untrusted),
            standing_rule: rule.map(|r| r.id),
            action,
            decision,
        })
    }
}

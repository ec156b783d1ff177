//! What the person does, from whichever of their channels: answer a pending approval, switch
//! developer mode, list and revoke standing rules. One implementation behind the control socket
//! (the CLI) and the approval page, so both behave — and are audited — the same way.
//!
//! A yes — Allow, Always, developer mode on — goes through `presence::confirm` first
//! (`answer_confirmed`, `set_dev_mode_confirmed`): when `approval.presence` needs it, the person
//! authenticates to their polkit agent, and a yes that is not confirmed does nothing (the
//! question stays pending until another answer or its deadline). A no never waits for polkit.
//!
//! No tool reaches this module: it is called only by `control` and `page`, which only the person
//! can reach (a 0600 socket checked by peer uid; a loopback page behind a one-time login).

use archgate_core::approval::{Answer, AnswerError, Question};
use archgate_core::gate::Gate;
use archgate_core::person::{DEV_MODE_MAX_SECS, PersonChannel, PersonError};
use archgate_core::presence::Act;
use archgate_policy::StandingRule;
use serde::{Deserialize, Serialize};
use std::time::Duration;

use crate::person::presence::{self, PresenceError, Subject};

/// An answer as the person's channels send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Choice {
    Allow,
    AllowAlways,
    Deny,
}

impl Choice {
    pub fn answer(self) -> Answer {
        match self {
            Choice::Allow => Answer::Allow,
            Choice::AllowAlways => Answer::AllowAlways,
            Choice::Deny => Answer::Deny,
        }
    }
}

/// Developer mode as shown to the person.
#[derive(Debug, Clone, Serialize)]
pub struct DevMode {
    pub on: bool,
    /// Unix seconds when it ends.
    pub until: Option<u64>,
    pub max_secs: u64,
}

pub fn pending(gate: &Gate) -> Vec<Question> {
    gate.broker().pending()
}

/// Unconfirmed: reached only through `answer_confirmed`.
fn answer(gate: &Gate, id: &str, choice: Choice, channel: &str) -> Result<(), AnswerError> {
    let r = gate.broker().answer(id, choice.answer(), channel);
    match &r {
        Ok(()) => tracing::info!(id, channel, answer = ?choice, "the person answered"),
        Err(e) => tracing::info!(id, channel, "answer did nothing: {e}"),
    }
    r
}

/// Why a yes did nothing.
#[derive(Debug, thiserror::Error)]
pub enum YesError {
    #[error(transparent)]
    Answer(#[from] AnswerError),
    #[error(transparent)]
    Presence(#[from] PresenceError),
    #[error(transparent)]
    Person(#[from] PersonError),
}

impl YesError {
    pub fn kind(&self) -> &'static str {
        match self {
            YesError::Answer(e) => e.kind(),
            YesError::Presence(e) => e.kind(),
            YesError::Person(e) => e.kind(),
        }
    }
}

/// Answers one question. A yes is confirmed through polkit first when `approval.presence`
/// needs it, within the question's remaining time; refused, the question stays pending.
pub async fn answer_confirmed(
    gate: &Gate,
    id: &str,
    choice: Choice,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), YesError> {
    if choice != Choice::Deny {
        // Only a question waiting here is confirmed: the person is not asked for one that
        // another instance holds.
        let Some(q) = gate.broker().pending().into_iter().find(|q| q.id == id) else {
            return Err(AnswerError::NotPending(id.to_owned()).into());
        };
        let act = match choice {
            Choice::AllowAlways if q.rule_allowed => Act::AllowAlways(q.tier),
            _ => Act::Allow(q.tier),
        };
        let left = Duration::from_secs(q.deadline.saturating_sub(gate.now_secs()).max(1));
        let setting = gate.config().current().approval.presence;
        let asked = presence::Asked {
            what: "answer",
            id: Some(id),
            client: Some(&q.client),
            channel,
        };
        presence::confirm_recorded(gate.audit(), asked, setting, act, subject, left).await?;
    }
    Ok(answer(gate, id, choice, channel)?)
}

/// Developer mode on (confirmed through polkit first when presence needs it) or off.
pub async fn set_dev_mode_confirmed(
    gate: &Gate,
    person: &PersonChannel,
    secs: Option<u64>,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<DevMode, YesError> {
    if secs.is_some() {
        // A duration that would be refused anyway is refused before the person is asked.
        if secs.is_some_and(|s| s > DEV_MODE_MAX_SECS) {
            return Ok(set_dev_mode(gate, person, secs, channel)?);
        }
        confirm_change(
            gate,
            "developer_mode",
            None,
            channel,
            Act::DevModeOn,
            subject,
        )
        .await?;
    }
    Ok(set_dev_mode(gate, person, secs, channel)?)
}

pub fn dev_mode(gate: &Gate) -> DevMode {
    let until = gate.person().dev_mode_until(gate.now_secs());
    DevMode {
        on: until.is_some(),
        until,
        max_secs: DEV_MODE_MAX_SECS,
    }
}

/// Turns developer mode on for `secs` (at most 8 h) or off (`None`). Audited as an event.
/// Unconfirmed: reached only through `set_dev_mode_confirmed`.
fn set_dev_mode(
    gate: &Gate,
    person: &PersonChannel,
    secs: Option<u64>,
    channel: &str,
) -> Result<DevMode, PersonError> {
    let now = gate.now_secs();
    person.set_dev_mode(secs, now)?;
    let state = dev_mode(gate);
    gate.audit().event(&serde_json::json!({
        "event": "developer_mode",
        "on": state.on,
        "until": state.until,
        "channel": channel,
    }));
    tracing::warn!(on = state.on, until = ?state.until, channel, "developer mode changed");
    Ok(state)
}

/// Opts a standing rule in (`on`: it keeps approving an act call of a session that read
/// untrusted text within the window) or out. `on` widens what runs without a question, so it is
/// confirmed through polkit first where `approval.presence` needs it, as "Always" is; `off`
/// lowers nothing and is never held up. Audited as an event.
pub async fn set_after_untrusted_confirmed(
    gate: &Gate,
    person: &PersonChannel,
    id: &str,
    on: bool,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), YesError> {
    if !person.state().rules().iter().any(|r| r.id == id) {
        return Err(PersonError::NoRule(id.to_owned()).into());
    }
    if on {
        confirm_change(
            gate,
            "rule_after_untrusted",
            Some(id),
            channel,
            Act::Widen,
            subject,
        )
        .await?;
    }
    person.set_after_untrusted(id, on)?;
    gate.audit().event(&serde_json::json!({
        "event": "standing_rule_after_untrusted", "rule_id": id, "on": on, "channel": channel,
    }));
    tracing::warn!(
        rule = id,
        on,
        channel,
        "a standing rule's after_untrusted changed"
    );
    Ok(())
}

/// Acknowledges a route, so an `allow` prefix may grant it: it widens what runs without a
/// question, so it is confirmed through polkit first where `approval.presence` needs it. Audited.
pub async fn acknowledge_confirmed(
    gate: &Gate,
    person: &PersonChannel,
    route: &str,
    channel: &str,
    subject: Result<Subject, String>,
) -> Result<(), YesError> {
    confirm_change(gate, "acknowledge", None, channel, Act::Widen, subject).await?;
    person.acknowledge(route)?;
    gate.audit().event(&serde_json::json!({
        "event": "route_acknowledged", "route": route, "channel": channel,
    }));
    Ok(())
}

/// Confirms a change of the person's settings through polkit where `approval.presence` needs
/// it, recorded whatever the outcome (`presence::confirm_recorded`).
async fn confirm_change(
    gate: &Gate,
    what: &'static str,
    id: Option<&str>,
    channel: &str,
    act: Act,
    subject: Result<Subject, String>,
) -> Result<(), YesError> {
    let asked = presence::Asked {
        what,
        id,
        client: None,
        channel,
    };
    let setting = gate.config().current().approval.presence;
    presence::confirm_recorded(
        gate.audit(),
        asked,
        setting,
        act,
        subject,
        presence::CHANGE_WAIT,
    )
    .await?;
    Ok(())
}

pub fn rules(gate: &Gate) -> Vec<StandingRule> {
    let now = gate.now_secs();
    gate.person()
        .rules()
        .into_iter()
        .filter(|r| !r.is_expired(now))
        .collect()
}

pub fn revoke(
    gate: &Gate,
    person: &PersonChannel,
    id: &str,
    channel: &str,
) -> Result<(), PersonError> {
    person.revoke_rule(id)?;
    gate.audit().event(&serde_json::json!({
        "event": "standing_rule_revoked", "rule_id": id, "channel": channel,
    }));
    Ok(())
}

pub fn revoke_all(gate: &Gate, person: &PersonChannel, channel: &str) -> usize {
    let n = person.state().rules().len();
    person.revoke_all_rules();
    gate.audit().event(&serde_json::json!({
        "event": "standing_rules_revoked_all", "count": n, "channel": channel,
    }));
    n
}

/// Parses a duration the person types: `90s`, `30m`, `2h`, `1h30m`, or bare seconds.
pub fn parse_duration(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Ok(n) = s.parse::<u64>() {
        return Some(n);
    }
    let mut total: u64 = 0;
    let mut num = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let n: u64 = num.parse().ok()?;
        num.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86400,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    if !num.is_empty() {
        return None;
    }
    (total > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations_the_person_types() {
        for (s, want) in [
            ("2h", Some(7200)),
            ("30m", Some(1800)),
            ("1h30m", Some(5400)),
            ("90", Some(90)),
            ("45s", Some(45)),
            ("", None),
            ("h", None),
            ("2x", None),
            ("2h5", None),
            ("0m", None),
        ] {
            assert_eq!(parse_duration(s), want, "{s:?}");
        }
    }
}

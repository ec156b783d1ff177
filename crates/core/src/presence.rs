//! Person presence: which of the person's yeses must be confirmed by authenticating to the
//! desktop's own polkit agent, so that a process of the same user (an agent's shell) cannot say
//! yes in the person's name through archgate's channels.
//!
//! Pure: the binary asks polkit (`archgate::presence`); this module only decides whether to ask
//! and what a missing polkit means. A no (Deny, developer mode off, revoking a rule) never asks.
//!
//! | setting  | asks for                                                          | polkit missing |
//! |----------|-------------------------------------------------------------------|----------------|
//! | `off`    | nothing                                                           | —              |
//! | `auto`   | Allow of a destructive call, Always (a standing rule), developer  | the yes goes   |
//! |          | mode on, adding, renaming or revoking a client                    | through        |
//! | `polkit` | every Allow and Always, and all of `auto`                         | refused        |
//!
//! "polkit missing" means root's files say so: archgate's actions file not installed in
//! `/usr/share/polkit-1/actions/`, or no polkitd program — both root's to change. It is never
//! read from whether a connection succeeds now. Under `auto`, once root's files say polkit and
//! the actions are there, a yes that needs presence is refused on every failure to confirm — the
//! system bus out of reach, no agent answering: a same-user process cannot turn presence off by
//! holding its uid's bus connections or killing the person's polkit agent.

use archgate_policy::Tier;
use serde::{Deserialize, Serialize};

/// `approval.presence` in config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// Never ask polkit: any process of the person's user can say yes through the CLI.
    Off,
    /// Ask for the weighty yeses where polkit and archgate's actions are installed.
    #[default]
    Auto,
    /// Ask for every yes; without polkit every yes is refused.
    Polkit,
}

impl Presence {
    /// Parses the config value. `None` for anything else.
    pub fn parse(s: &str) -> Option<Presence> {
        match s {
            "off" => Some(Presence::Off),
            "auto" => Some(Presence::Auto),
            "polkit" => Some(Presence::Polkit),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Off => "off",
            Presence::Auto => "auto",
            Presence::Polkit => "polkit",
        }
    }
}

/// Something the person is doing that may need presence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Act {
    /// Allow one call of this tier.
    Allow(Tier),
    /// Allow and create a standing rule for identical calls.
    AllowAlways(Tier),
    Deny,
    DevModeOn,
    DevModeOff,
    /// Revoking standing rules only takes permission away.
    RevokeRule,
    /// Adding, renaming or revoking an HTTP client.
    ChangeClient,
    /// Widening what runs without a question beyond one answer: opting a standing rule in after
    /// untrusted text (`after_untrusted = true`), acknowledging a route an `allow` prefix may
    /// then grant. Authenticated as "Always" is (`org.archgate.approve-always`).
    Widen,
}

/// The polkit action a confirmed act authenticates; each has its own message in the dialog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Approve,
    ApproveAlways,
    DeveloperMode,
    Clients,
}

impl Action {
    pub fn id(self) -> &'static str {
        match self {
            Action::Approve => "org.archgate.approve",
            Action::ApproveAlways => "org.archgate.approve-always",
            Action::DeveloperMode => "org.archgate.developer-mode",
            Action::Clients => "org.archgate.clients",
        }
    }

    /// Every action the policy file must declare.
    pub const ALL: [Action; 4] = [
        Action::Approve,
        Action::ApproveAlways,
        Action::DeveloperMode,
        Action::Clients,
    ];
}

/// What to do before carrying out an act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Carry it out.
    Nothing,
    /// Authenticate `action`; if root's files say polkit is missing, `required` says whether to
    /// refuse (`true`) or carry it out anyway (`false`, only under `auto`). A failed, unanswered
    /// or unreachable authentication refuses in both cases.
    Authenticate { action: Action, required: bool },
}

/// The decision: does this act under this setting need the person to authenticate?
pub fn need(setting: Presence, act: Act) -> Need {
    let action = match act {
        Act::Deny | Act::DevModeOff | Act::RevokeRule => return Need::Nothing,
        Act::Allow(_) => Action::Approve,
        Act::AllowAlways(_) | Act::Widen => Action::ApproveAlways,
        Act::DevModeOn => Action::DeveloperMode,
        Act::ChangeClient => Action::Clients,
    };
    let weighty = match act {
        Act::Allow(tier) => tier >= Tier::Destructive,
        _ => true,
    };
    match setting {
        Presence::Off => Need::Nothing,
        Presence::Polkit => Need::Authenticate {
            action,
            required: true,
        },
        Presence::Auto if weighty => Need::Authenticate {
            action,
            required: false,
        },
        Presence::Auto => Need::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Presence::*;

    fn auth(action: Action, required: bool) -> Need {
        Need::Authenticate { action, required }
    }

    #[test]
    fn when_presence_is_needed() {
        use Act::*;
        let n = Need::Nothing;
        #[rustfmt::skip]
        let table = [
            // setting, act,                          need
            (Off,    Allow(Tier::Destructive),        n),
            (Off,    AllowAlways(Tier::Act),          n),
            (Off,    DevModeOn,                       n),
            (Off,    ChangeClient,                    n),
            (Off,    Widen,                           n),
            (Auto,   Allow(Tier::Read),               n),
            (Auto,   Allow(Tier::Act),                n),
            (Auto,   Allow(Tier::Destructive),        auth(Action::Approve, false)),
            (Auto,   Allow(Tier::Blocked),            auth(Action::Approve, false)),
            (Auto,   AllowAlways(Tier::Act),          auth(Action::ApproveAlways, false)),
            (Auto,   AllowAlways(Tier::Read),         auth(Action::ApproveAlways, false)),
            (Auto,   DevModeOn,                       auth(Action::DeveloperMode, false)),
            (Auto,   ChangeClient,                    auth(Action::Clients, false)),
            (Auto,   Widen,                           auth(Action::ApproveAlways, false)),
            (Polkit, Allow(Tier::Read),               auth(Action::Approve, true)),
            (Polkit, Allow(Tier::Act),                auth(Action::Approve, true)),
            (Polkit, Allow(Tier::Destructive),        auth(Action::Approve, true)),
            (Polkit, AllowAlways(Tier::Act),          auth(Action::ApproveAlways, true)),
            (Polkit, DevModeOn,                       auth(Action::DeveloperMode, true)),
            (Polkit, ChangeClient,                    auth(Action::Clients, true)),
            (Polkit, Widen,                           auth(Action::ApproveAlways, true)),
        ];
        for (setting, act, want) in table {
            assert_eq!(need(setting, act), want, "{setting:?} {act:?}");
        }
    }

    #[test]
    fn a_no_never_needs_presence() {
        for setting in [Off, Auto, Polkit] {
            for act in [Act::Deny, Act::DevModeOff, Act::RevokeRule] {
                assert_eq!(need(setting, act), Need::Nothing, "{setting:?} {act:?}");
            }
        }
    }

    #[test]
    fn config_values() {
        assert_eq!(Presence::default(), Auto);
        for p in [Off, Auto, Polkit] {
            assert_eq!(Presence::parse(p.as_str()), Some(p));
        }
        for bad in ["", "on", "Polkit", "true", "off "] {
            assert_eq!(Presence::parse(bad), None, "{bad:?}");
        }
    }
}

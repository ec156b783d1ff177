//! The first lines of `archgate doctor`: can a question reach the person and be answered here?
//! When another process of theirs can approve in their name (person presence is off, or not
//! installed under `auto`), that comes first of all.

use archgate_core::presence::Presence;

/// What the verdict is made of.
pub(super) struct Reach {
    pub presence: Presence,
    /// Whether polkit and archgate's actions are installed and polkit answers now.
    pub polkit_ready: bool,
    /// `[approval] notifications`.
    pub notifications_on: bool,
    /// The notification server that would show a question, or why none would.
    pub notifier: Result<String, String>,
    /// `[approval] page`.
    pub page_on: bool,
    pub timeout_s: u64,
}

/// The verdict's lines, the weakness first when it applies.
pub(super) fn verdict(r: &Reach) -> Vec<String> {
    let mut lines = Vec::new();
    let weak = match r.presence {
        Presence::Off => Some("person presence is off in your config"),
        Presence::Auto if !r.polkit_ready => {
            Some("polkit or archgate's polkit actions are not installed (presence = auto)")
        }
        _ => None,
    };
    if let Some(why) = weak {
        lines.push(format!(
            "FIRST: another process of yours can approve in your name: {why}, so any program running as you can say yes through `archgate approve` (see SECURITY.md, person presence)."
        ));
        lines.push(
            "       fix: install archgate's polkit actions and run a polkit agent; keep presence = auto or set presence = \"polkit\"".to_owned(),
        );
    }
    let answer_here = {
        let mut ways = Vec::new();
        if r.notifications_on && r.notifier.is_ok() {
            ways.push("in the notification (Allow / Deny)");
        }
        if r.page_on {
            ways.push("on the approval page (archgate ui)");
        }
        ways.push("with `archgate approve` in a terminal");
        ways.join(", ")
    };
    match (&r.notifier, r.notifications_on) {
        (Ok(server), true) => lines.push(format!(
            "VERDICT: yes. A question reaches you here as a desktop notification ({server}) naming the agent and the time left, and can be answered {answer_here}. Unanswered, it is declined after {} s.",
            r.timeout_s
        )),
        (why, on) => {
            let why = match (why, on) {
                (_, false) => "notifications are off ([approval] notifications = false)".to_owned(),
                (Err(e), true) => format!("no notification can ask: {e}"),
                (Ok(_), true) => unreachable!("matched above"),
            };
            lines.push(format!(
                "VERDICT: a question does NOT reach you by itself here: {why}. It waits silently and is declined after {} s unless you look: answer it {answer_here}.",
                r.timeout_s
            ));
            lines.push(
                "       fix: run a notification daemon with actions in your session (mako, Omarchy's shell) and keep [approval] notifications = true".to_owned(),
            );
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach() -> Reach {
        Reach {
            presence: Presence::Auto,
            polkit_ready: true,
            notifications_on: true,
            notifier: Ok("mako 1.7".into()),
            page_on: true,
            timeout_s: 60,
        }
    }

    #[test]
    fn a_reachable_person_gets_a_yes_naming_the_server_and_every_way_to_answer() {
        let v = verdict(&reach());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].starts_with("VERDICT: yes."), "{v:?}");
        assert!(v[0].contains("mako 1.7"));
        assert!(v[0].contains("in the notification") && v[0].contains("approval page"));
    }

    #[test]
    fn no_notification_server_is_a_no_with_the_reason() {
        let v = verdict(&Reach {
            notifier: Err("no notification server on the session bus".into()),
            ..reach()
        });
        assert!(
            v[0].starts_with("VERDICT: a question does NOT reach you"),
            "{v:?}"
        );
        assert!(v[0].contains("no notification server"), "{v:?}");
        assert!(!v[0].contains("in the notification"), "{v:?}");
    }

    #[test]
    fn approving_in_your_name_comes_first_when_it_applies() {
        for r in [
            Reach {
                presence: Presence::Off,
                ..reach()
            },
            Reach {
                polkit_ready: false,
                ..reach()
            },
        ] {
            let v = verdict(&r);
            assert!(
                v[0].starts_with("FIRST: another process of yours can approve in your name"),
                "{v:?}"
            );
        }
        let v = verdict(&Reach {
            presence: Presence::Polkit,
            polkit_ready: false,
            ..reach()
        });
        assert!(
            v[0].starts_with("VERDICT"),
            "under polkit a yes without polkit is refused: {v:?}"
        );
    }
}

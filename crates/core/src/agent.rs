//! The agent's own name: the `clientInfo` an MCP client sends in `initialize` ("claude-code
//! 2.1"), shown to the person beside the grant's name so they can tell which program asks.
//!
//! It is the client's word about itself, untrusted: bounded and made visible-only here
//! ([`label`]), escaped again by each surface for its own markup, and never used for identity,
//! grants, policy or rules — those follow the grant's name (the bearer token or the bridge's
//! hello), which the client cannot choose.

use crate::text::for_terminal_cut;

/// How much of the name and of the version is kept.
pub const NAME_MAX: usize = 48;
pub const VERSION_MAX: usize = 24;

/// The agent's label from its `clientInfo`: "name version", each part bounded and with every
/// control, bidi or invisible character written as a visible escape; `None` when the name is
/// blank.
pub fn label(name: &str, version: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty() {
        return None;
    }
    let name = for_terminal_cut(name, NAME_MAX);
    let version = version.trim();
    if version.is_empty() {
        return Some(name);
    }
    Some(format!("{name} {}", for_terminal_cut(version, VERSION_MAX)))
}

/// "default (says it is claude-code 2.1)": the grant's name first — the identity, which the
/// client cannot choose — then the agent's label (already visible-only, from [`label`]) as what
/// it says it is; the grant's name alone when the client sent none.
///
/// Class (attack 4 F3): *the agent's own words presented as identity*. A `clientInfo` written
/// as "claude-code 2.1 (as claude-code)" must never lead a line that a person reads as who asks;
/// every surface (notification, page, `approvals`/`show`, `log`) names the grant first.
pub fn who(client: &str, agent: Option<&str>) -> String {
    let client = crate::text::for_terminal(client);
    match agent {
        Some(a) => format!("{client} (says it is {a})"),
        None => client.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_bounded_and_visible_only() {
        assert_eq!(
            label("claude-code", "2.1").as_deref(),
            Some("claude-code 2.1")
        );
        assert_eq!(label("  ", "1").as_deref(), None);
        assert_eq!(label("cursor", "").as_deref(), Some("cursor"));
        let l = label(
            &format!("evil\u{1b}[2K\u{202e}{}", "x".repeat(500)),
            &"9".repeat(99),
        )
        .expect("a name");
        assert!(l.chars().count() <= NAME_MAX + 1 + VERSION_MAX, "{l}");
        assert!(
            !l.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{l:?}"
        );
        assert!(l.starts_with("evil\\x1b[2K\\u{202e}"), "{l}");
    }

    #[test]
    fn who_names_the_grant_first_and_the_agents_word_as_its_word() {
        assert_eq!(
            who("default", Some("claude-code 2.1")),
            "default (says it is claude-code 2.1)"
        );
        // A clientInfo written in the shape of another grant cannot come first: attack 4 F3.
        let forged = label("claude-code 2.1 (as claude-code)", "").unwrap();
        let w = who("default", Some(&forged));
        assert!(w.starts_with("default (says it is "), "{w}");
        assert_eq!(who("default", None), "default");
        assert_eq!(who("a\u{1b}b", None), "a\\x1bb");
    }
}

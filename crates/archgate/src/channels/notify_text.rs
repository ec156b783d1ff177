//! What a desktop notification says (`notify.rs` sends it): the summary line that every
//! notification server shows whole (mako at Omarchy's settings cuts the body, never the summary)
//! names the grant (then the agent's own word for itself) and the time left; the body holds the command, who asks, the deadline and
//! the arguments, cut to a bounded length with a pointer to the whole question.
//!
//! Every agent-written string (the agent's `clientInfo` name included) is escaped for the screen
//! (`for_terminal`) and for markup (`escape`).

use archgate_core::approval::Question;
use archgate_core::text::{cut, display_args, for_terminal, for_terminal_cut};

use crate::person::clock;

/// Characters of the sentence shown in a notification body.
const SENTENCE_SHOWN: usize = 160;
/// How much of the command and of the arguments a notification shows; the rest is on the page
/// and in `archgate show ID`.
const COMMAND_SHOWN: usize = 200;
const ARGS_SHOWN: usize = 300;
/// How much of "this follows text from …" a notification shows.
const FOLLOWS_SHOWN: usize = 300;
/// How much of the agent's name and of the tool's the summary shows.
const WHO_SHOWN: usize = 40;
const TOOL_SHOWN: usize = 40;

/// The summary line: the grant's name (the identity) first, the tool and the time left, and
/// only then the agent's own name as what it says it is (attack 4 F3: never the agent's word
/// alone, never first). A server that elides the summary (Omarchy's Quickshell card keeps two
/// lines) drops the agent's word before the time left.
fn summary_line(q: &Question, left: u64) -> String {
    let mut s = format!(
        "{} asks to run {} · {} left",
        plain(&for_terminal_cut(&q.client, WHO_SHOWN)),
        plain(&for_terminal_cut(&q.tool, TOOL_SHOWN)),
        clock::left(left)
    );
    if let Some(a) = &q.agent {
        // Already visible-only (`archgate_core::agent::label`): cut, not escaped twice.
        s.push_str(&format!(" · says it is {}", plain(&cut(a, WHO_SHOWN))));
    }
    s
}

/// The notification's summary and body for `q` at `now` (unix seconds).
pub(super) fn texts(q: &Question, now: u64) -> (String, String) {
    let summary = summary_line(q, q.deadline.saturating_sub(now));
    let command = for_terminal(&q.summary);
    let args: Vec<String> = display_args(&q.args)
        .into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let args = args.join("; ");
    let was_cut = command.chars().count() > COMMAND_SHOWN || args.chars().count() > ARGS_SHOWN;
    // The sentence first ("claude-code wants to put 42 lines on your clipboard"): built escaped
    // for a terminal by `archgate_core::sentence`, escaped here again for markup.
    let mut body = escape(&for_terminal_cut(&q.sentence.text(), SENTENCE_SHOWN));
    body.push('\n');
    body.push_str(&escape(&for_terminal_cut(&q.summary, COMMAND_SHOWN)));
    let then = i64::try_from(q.deadline)
        .ok()
        .and_then(clock::time_of_day)
        .map(|t| format!("declined at {t} unless answered"))
        .unwrap_or_else(|| "declined unless answered".to_owned());
    // Second, so a server that cuts the body still shows who asks and until when.
    body.push_str(&format!(
        "\n<i>{} · {} · {then} · id {}</i>",
        escape(&archgate_core::agent::who(&q.client, q.agent.as_deref())),
        q.tier,
        escape(&for_terminal(&q.id))
    ));
    if let Some(f) = &q.follows {
        // What the agent read just before: the person decides knowing it.
        body.push_str(&format!(
            "\n<b>After untrusted text:</b> {}",
            escape(&for_terminal_cut(&f.sentence, FOLLOWS_SHOWN))
        ));
    }
    if !args.is_empty() {
        body.push('\n');
        body.push_str(&escape(&cut(&args, ARGS_SHOWN)));
    }
    if was_cut {
        body.push_str(&format!(
            "\n… see <b>archgate show {}</b> or the approval page for all of it",
            escape(&for_terminal(&q.id))
        ));
    }
    (summary, body)
}

/// The plain follow-up for questions that ran out with no answer: `n` of them, the last `q`.
pub(super) fn expired(q: &Question, n: usize) -> (String, String) {
    let summary = if n == 1 {
        "archgate: a question ran out unanswered and was declined".to_owned()
    } else {
        format!("archgate: {n} questions ran out unanswered and were declined")
    };
    let at = i64::try_from(q.created)
        .ok()
        .and_then(clock::time_of_day)
        .map(|t| format!(" at {t}"))
        .unwrap_or_default();
    let body = format!(
        "{} asked{at} to run {}: nothing ran. The agent may ask again; see <b>archgate log</b>.",
        escape(&archgate_core::agent::who(&q.client, q.agent.as_deref())),
        escape(&for_terminal_cut(&q.tool, TOOL_SHOWN)),
    );
    (summary, body)
}

/// The summary is plain text by the specification, but not every server keeps to it: the three
/// markup characters become look-alikes there, so whatever the server does, nothing is markup.
fn plain(s: &str) -> String {
    s.replace('&', "\u{ff06}")
        .replace('<', "\u{2039}")
        .replace('>', "\u{203a}")
}

/// Notification bodies may be markup: what an agent wrote is shown as text.
pub(super) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(summary: &str, args: serde_json::Value) -> Question {
        Question {
            id: "c-7".into(),
            client: "local".into(),
            token: None,
            agent: Some("claude-code 2.1".into()),
            tool: "omarchy_run".into(),
            route: "omarchy_run theme set".into(),
            summary: summary.into(),
            sentence: archgate_core::sentence::Sentence {
                parts: vec![archgate_core::sentence::Part {
                    text: "claude-code 2.1 wants to run the Omarchy command <i>theme set</i>"
                        .into(),
                    strong: false,
                }],
                replaces: None,
            },
            picture: None,
            tier: archgate_policy::Tier::Act,
            args,
            created: 0,
            deadline: 92,
            rule_allowed: true,
            follows: None,
        }
    }

    #[test]
    fn the_summary_names_the_agent_and_the_time_left() {
        let q = question("omarchy-theme-set nord", serde_json::json!({}));
        let (summary, body) = texts(&q, 0);
        assert_eq!(
            summary,
            "local asks to run omarchy_run · 1:32 left · says it is claude-code 2.1"
        );
        assert!(
            body.contains("local (says it is claude-code 2.1) · act · declined at "),
            "{body}"
        );
        let (summary, _) = texts(&Question { agent: None, ..q }, 90);
        assert_eq!(summary, "local asks to run omarchy_run · 0:02 left");
    }

    #[test]
    fn a_forged_client_info_cannot_read_as_another_grant() {
        // Attack 4 F3: the agent's own word in the shape of "NAME (as GRANT)".
        let mut q = question("x", serde_json::json!({}));
        q.agent = archgate_core::agent::label("claude-code 2.1 (as claude-code)", "");
        let (summary, body) = texts(&q, 0);
        assert!(
            summary.starts_with("local asks to run omarchy_run · "),
            "{summary}"
        );
        assert!(
            summary.ends_with(" left · says it is claude-code 2.1 (as claude-code)"),
            "{summary}"
        );
        assert!(
            body.contains("local (says it is claude-code 2.1 (as claude-code))"),
            "{body}"
        );
        let (_, body) = expired(&q, 1);
        assert!(body.starts_with("local (says it is "), "{body}");
    }

    #[test]
    fn the_agents_own_name_cannot_become_markup_or_move_text() {
        let mut q = question("x", serde_json::json!({}));
        q.agent = archgate_core::agent::label("<b>evil</b>\u{1b}[2K\u{202e}", "1");
        let (summary, body) = texts(&q, 0);
        assert!(
            !summary.contains('<') && !summary.contains('>'),
            "{summary}"
        );
        assert!(
            summary.contains(
                " left · says it is \u{2039}b\u{203a}evil\u{2039}/b\u{203a}\\x1b[2K\\u{202e}"
            ),
            "{summary}"
        );
        assert!(
            body.contains("&lt;b&gt;evil&lt;/b&gt;\\x1b[2K\\u{202e}"),
            "{body}"
        );
        let (_, body) = expired(&q, 1);
        assert!(body.contains("&lt;b&gt;evil"), "{body}");
    }

    #[test]
    fn the_body_shows_the_command_and_the_arguments_escaped() {
        let q = question(
            "omarchy-theme-set \u{202e}x",
            serde_json::json!({"route": "theme set", "args": ["--help; rm -rf ~", "\u{1b}[2K<b>"]}),
        );
        let (summary, body) = texts(&q, 0);
        assert!(summary.contains("omarchy_run"), "{summary}");
        assert!(body.contains("omarchy-theme-set \\u{202e}x"), "{body}");
        assert!(body.contains("--help; rm -rf ~"), "{body}");
        assert!(
            body.starts_with("claude-code 2.1 wants to run the Omarchy command &lt;i&gt;theme set"),
            "the sentence first, as text: {body}"
        );
        assert!(body.contains("\\x1b[2K&lt;b&gt;"), "{body}");
        assert!(!body.contains("archgate show"), "nothing was cut: {body}");
        assert!(
            !body.chars().any(|c| c.is_control() && c != '\n'),
            "{body:?}"
        );
    }

    #[test]
    fn the_body_says_what_the_session_read_before_escaped() {
        let mut q = question("omarchy-theme-set nord", serde_json::json!({}));
        let label = "AUR package \u{1b}[2K<b>evil's PKGBUILD and files".to_owned();
        q.follows = Some(Box::new(archgate_core::untrusted::Follows {
            source: archgate_core::provenance::Source::AurFiles,
            sentence: format!("this follows text from {label}, read 12 s ago"),
            label,
            age_s: 12,
            matched: vec![],
            also: vec![],
        }));
        let (_, body) = texts(&q, 0);
        assert!(body.contains("After untrusted text:"), "{body}");
        assert!(body.contains("\\x1b[2K&lt;b&gt;evil's PKGBUILD"), "{body}");
        assert!(body.contains("read 12 s ago"), "{body}");
        assert!(
            !body.chars().any(|c| c.is_control() && c != '\n'),
            "{body:?}"
        );
    }

    #[test]
    fn a_long_body_is_cut_and_points_to_the_whole_question() {
        let q = question("wl-copy", serde_json::json!({"text": "z".repeat(2048)}));
        let (_, body) = texts(&q, 0);
        assert!(body.len() < 1000, "{} bytes", body.len());
        assert!(body.contains("archgate show c-7"), "{body}");
    }

    #[test]
    fn the_follow_up_counts_what_ran_out() {
        let q = question("x", serde_json::json!({}));
        assert!(expired(&q, 1).0.contains("a question ran out"));
        assert!(expired(&q, 3).0.contains("3 questions ran out"));
        assert!(expired(&q, 1).1.contains("nothing ran"));
    }

    #[test]
    fn agent_text_cannot_become_markup() {
        assert_eq!(
            escape("<b>rm</b> & <a href=x>"),
            "&lt;b&gt;rm&lt;/b&gt; &amp; &lt;a href=x&gt;"
        );
    }
}

//! `archgate show ID`: one waiting call, whole — client, tool, route, tier, the exact command,
//! every argument (unredacted, uncut, escaped, wrapped) and the deadline. What the person reads
//! here is what the call will do; the activity log keeps its redaction and cuts.

use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

use super::out;
use archgate_core::text::{display_args, for_terminal, json_for_terminal, wrap};

/// Lines are wrapped at this many characters.
const WIDTH: usize = 100;

/// `label: value`, the value wrapped with its continuation lines under its first character.
fn field(indent: &str, label: &str, value: &str) -> Vec<String> {
    let head = format!("{indent}{label}: ");
    let pad = " ".repeat(head.chars().count());
    let width = WIDTH.saturating_sub(head.chars().count()).max(20);
    wrap(value, width)
        .into_iter()
        .enumerate()
        .map(|(i, l)| format!("{}{l}", if i == 0 { &head } else { &pad }))
        .collect()
}

/// The route and every argument of a question, escaped and wrapped (under its row in
/// `archgate approvals`, and in `archgate show`).
pub(super) fn detail_lines(q: &Value, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    if q["agent"].is_string() {
        lines.extend(field(indent, "asked by", &who(q)));
    }
    lines.extend(diff_lines(q, indent));
    // What the agent read just before: a rule or developer mode did not approve this call.
    if let Some(f) = q["follows"]["sentence"].as_str() {
        lines.extend(field(indent, "after untrusted text", &for_terminal(f)));
    }
    lines.extend(field(
        indent,
        "route",
        &for_terminal(q["route"].as_str().unwrap_or("")),
    ));
    let args = display_args(&q["args"]);
    if args.is_empty() {
        lines.push(format!("{indent}arguments: none"));
    }
    for (k, v) in args {
        lines.extend(field(indent, &format!("argument {k}"), &v));
    }
    lines
}

/// How many lines of a file's change the CLI shows; the page shows all that the question
/// carries.
const DIFF_SHOWN: usize = 12;

/// A file the call writes with contents archgate knows: the file, the counts and the first lines
/// of the change (each line already visible-only in the question, escaped again here).
fn diff_lines(q: &Value, indent: &str) -> Vec<String> {
    let d = &q["picture"];
    if d["kind"] != "diff" {
        return Vec::new();
    }
    // Already visible-only in the question (`archgate_core::diff`): anything a terminal would
    // act on is escaped again here, the backslashes of those escapes are left as they are.
    let text = |v: &Value| {
        v.as_str()
            .unwrap_or("")
            .split('\\')
            .map(|p| for_terminal(p).into_owned())
            .collect::<Vec<_>>()
            .join("\\")
    };
    let mut out = Vec::new();
    out.extend(field(indent, "writes", &text(&d["path"])));
    let change = match d["note"].as_str() {
        Some(note) => format!("cannot be shown ({note})"),
        None => format!(
            "{} lines added, {} removed, from {} (as the files are now)",
            d["added"].as_u64().unwrap_or(0),
            d["removed"].as_u64().unwrap_or(0),
            text(&d["from"])
        ),
    };
    out.extend(field(indent, "change", &change));
    let lines = d["lines"].as_array().map(Vec::as_slice).unwrap_or_default();
    for l in lines.iter().take(DIFF_SHOWN) {
        let mark = match l["op"].as_str() {
            Some("added") => "+ ",
            Some("removed") => "- ",
            Some("hunk") => "",
            _ => "  ",
        };
        out.push(format!("{indent}    {mark}{}", text(&l["text"])));
    }
    if lines.len() > DIFF_SHOWN || d["cut"] == true {
        out.push(format!(
            "{indent}    … the whole change: the approval page ({} lines shown here)",
            DIFF_SHOWN.min(lines.len())
        ));
    }
    out
}

/// Who asks: the agent's own name (its `clientInfo`, already visible-only) and the client it
/// calls as, or the client alone.
pub(super) fn who(q: &Value) -> String {
    archgate_core::agent::who(q["client"].as_str().unwrap_or(""), q["agent"].as_str())
}

/// The whole question, one field per line.
pub(super) fn whole(q: &Value) -> Vec<String> {
    let text = |k: &str| for_terminal(q[k].as_str().unwrap_or("")).into_owned();
    let deadline = q["deadline"]
        .as_i64()
        .and_then(crate::person::clock::local)
        .unwrap_or_default();
    let mut lines = Vec::new();
    lines.extend(field("", "id", &text("id")));
    lines.extend(field("", "client", &text("client")));
    if q["agent"].is_string() {
        lines.extend(field(
            "",
            "agent",
            &format!("{} (its own name for itself, unverified)", text("agent")),
        ));
    }
    lines.extend(field("", "tool", &text("tool")));
    lines.extend(field("", "tier", &text("tier")));
    lines.extend(field("", "command", &text("summary")));
    lines.extend(detail_lines(q, ""));
    lines.extend(field(
        "",
        "deadline",
        &format!(
            "{deadline} ({} left, then declined; silence is no)",
            crate::person::clock::left(q["seconds_left"].as_u64().unwrap_or(0))
        ),
    ));
    lines.extend(field(
        "",
        "always",
        if q["rule_allowed"] == true {
            "may be offered (archgate approve ID --always)"
        } else {
            "not offered for this tool"
        },
    ));
    lines
}

pub fn run(config: Option<PathBuf>, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let q = match super::pick::pick(config, id)? {
        Ok(q) => q,
        Err(code) => return Ok(code),
    };
    if json {
        out(json_for_terminal(&serde_json::to_string_pretty(&q)?));
    } else {
        for l in whole(&q) {
            out(l);
        }
        out("\napprove: archgate approve ID [--always]   deny: archgate deny ID");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_question_after_untrusted_text_says_what_was_read_escaped() {
        let q = json!({
            "route": "omarchy_run theme set", "args": {},
            "follows": {"sentence": "this follows text from AUR package \u{1b}[2Kx's PKGBUILD, read 12 s ago"},
        });
        let text = detail_lines(&q, "").concat();
        assert!(
            text.starts_with(
                "after untrusted text: this follows text from AUR package \\x1b[2Kx's"
            ),
            "{text}"
        );
        assert!(text.replace(' ', "").contains("read12sago"), "{text}");
    }

    #[test]
    fn a_question_is_shown_whole_and_escaped() {
        let long = "y".repeat(2048);
        let q = json!({
            "id": "c-1", "client": "local", "tool": "clipboard_write", "tier": "act",
            "route": "clipboard_write\u{1b}[2K", "summary": "wl-copy \u{202e}txt",
            "args": {"text": long, "x": "\r\u{1b}[1A"}, "deadline": 0, "seconds_left": 5,
            "rule_allowed": false,
        });
        let lines = whole(&q);
        let text = lines.concat();
        assert!(
            text.replace(' ', "").contains(&long),
            "every byte of the argument"
        );
        assert!(text.contains("\\x1b[2K") && text.contains("\\u{202e}txt"));
        assert!(!text.contains("after untrusted text"), "it read nothing");
        assert!(text.contains(r#""\r\x1b[1A""#));
        for l in &lines {
            assert!(!l.chars().any(|c| c.is_control()), "{l:?}");
            assert!(l.chars().count() <= WIDTH, "{l:?}");
        }
    }
}

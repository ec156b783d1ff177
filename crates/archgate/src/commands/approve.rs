//! `archgate approve [ID] [--always]`, `archgate deny ID` and `archgate show ID` name a waiting
//! call by its id or by a unique prefix of it (`pick::resolve`). `approve` without an id, with exactly
//! one call waiting, shows that call whole and asks `[y/N/a]` on the person's terminal — never
//! from a pipe or a file: a yes is typed by the person at their terminal, or named by its id.
//! `approve --always` prints the standing rule it created and how to revoke it.

use serde_json::Value;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::approvals::NOTHING_WAITING;
use super::out;
use super::pick::{pick, waiting};
use crate::channels::control::{self, Request};
use crate::person::clock;
use archgate_core::text::{display_value, for_terminal};

pub fn deny(config: Option<PathBuf>, name: &str) -> anyhow::Result<ExitCode> {
    let q = match pick(config.clone(), name)? {
        Ok(q) => q,
        Err(code) => return Ok(code),
    };
    super::approvals::answer(config, q["id"].as_str().unwrap_or(""), false, true)
}

pub fn approve(
    config: Option<PathBuf>,
    name: Option<&str>,
    always: bool,
) -> anyhow::Result<ExitCode> {
    let (q, always) = match name {
        Some(name) => match pick(config.clone(), name)? {
            Ok(q) => (q, always),
            Err(code) => return Ok(code),
        },
        None => match ask_on_terminal(config.clone(), always)? {
            Ok(Some(got)) => got,
            Ok(None) => return Ok(ExitCode::SUCCESS),
            Err(code) => return Ok(code),
        },
    };
    let id = q["id"].as_str().unwrap_or("").to_owned();
    let before = archgate_core::person::now_secs();
    let code = super::approvals::answer(config.clone(), &id, always, false)?;
    if always && code == ExitCode::SUCCESS {
        print_rule(config, &q, before);
    }
    Ok(code)
}

/// The one waiting call, shown whole, and the person's typed answer: `Some((call, always))` for
/// a yes; `None` when they denied it here (already answered).
fn ask_on_terminal(
    config: Option<PathBuf>,
    always: bool,
) -> anyhow::Result<Result<Option<(Value, bool)>, ExitCode>> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        out(
            "not_a_terminal: `archgate approve` without an id asks on your terminal, and this is not one; name the call: archgate approve ID (see `archgate approvals`)",
        );
        return Ok(Err(ExitCode::from(2)));
    }
    let all = match waiting(config.clone())? {
        Ok(a) => a,
        Err(code) => return Ok(Err(code)),
    };
    let q = match all.as_slice() {
        [] => {
            out(NOTHING_WAITING);
            return Ok(Err(ExitCode::from(1)));
        }
        [one] => one.clone(),
        many => {
            out(format!(
                "{} calls are waiting; name one: archgate approve ID (see `archgate approvals`)",
                many.len()
            ));
            return Ok(Err(ExitCode::from(2)));
        }
    };
    for l in super::show::whole(&q) {
        out(l);
    }
    let offer_always = q["rule_allowed"] == true;
    let prompt = if offer_always {
        "Approve? y = yes once, N = no, a = always for identical calls [y/N/a] "
    } else {
        "Approve? y = yes once, N = no [y/N] "
    };
    let mut stdout = std::io::stdout();
    write!(stdout, "{prompt}")?;
    stdout.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(Ok(Some((q, always)))),
        "a" | "always" if offer_always => Ok(Ok(Some((q, true)))),
        _ => {
            // No (or anything else, or nothing): the call is denied now, not left to run out.
            let id = q["id"].as_str().unwrap_or("").to_owned();
            let code = super::approvals::answer(config, &id, false, true)?;
            Ok(Err(code))
        }
    }
}

/// After `approve --always`: the standing rule the answer created (the newest of this client
/// and tool, made since `since`), what it matches, and how to revoke it.
fn print_rule(config: Option<PathBuf>, q: &Value, since: u64) {
    let Ok((_, paths)) = crate::app::config_and_paths(config) else {
        return;
    };
    let wanted = |r: &Value| {
        r["client"] == q["client"]
            && r["tool"] == q["tool"]
            && r["created"].as_u64().is_some_and(|c| c + 1 >= since)
    };
    // The rule is stored by the call's own task right after the answer: a few looks, bounded.
    let mut rule = None;
    for _ in 0..20 {
        rule = control::sockets(&paths.runtime_dir).iter().find_map(|s| {
            let v = control::request(s, &Request::Rules).ok()?;
            v["rules"]
                .as_array()?
                .iter()
                .filter(|r| wanted(r))
                .max_by_key(|r| r["created"].as_u64().unwrap_or(0))
                .cloned()
        });
        if rule.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let Some(r) = rule else {
        out("no standing rule was made (this tool is always asked; see `archgate rules list`)");
        return;
    };
    for l in rule_lines(&r) {
        out(l);
    }
}

/// A standing rule as the person reads it, with the command that revokes it.
pub(super) fn rule_lines(r: &Value) -> Vec<String> {
    let text = |k: &str| for_terminal(r[k].as_str().unwrap_or("")).into_owned();
    let until = r["expires"]
        .as_i64()
        .and_then(clock::local)
        .unwrap_or_default();
    vec![
        format!("standing rule {} made:", text("id")),
        format!(
            "  approves {} for client {} when the arguments are exactly: {}",
            text("tool"),
            text("client"),
            display_value(&r["args"])
        ),
        format!(
            "  until {until}, at most {} uses a day",
            r["max_uses_per_day"]
        ),
        format!("  revoke it: archgate rules revoke {}", text("id")),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_rule_says_what_it_matches_and_how_to_revoke_it() {
        let r = json!({"id": "r-1", "client": "default", "tool": "clipboard_write",
                       "args": {"text": "hi"}, "expires": 0, "max_uses_per_day": 20});
        let text = rule_lines(&r).join("\n");
        assert!(text.contains("standing rule r-1"), "{text}");
        assert!(
            text.contains("clipboard_write for client default"),
            "{text}"
        );
        assert!(text.contains("\"hi\""), "{text}");
        assert!(text.contains("20 uses a day"), "{text}");
        assert!(text.contains("archgate rules revoke r-1"), "{text}");
    }
}

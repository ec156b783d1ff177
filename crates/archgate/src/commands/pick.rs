//! A waiting call named by the person: by its id, or by a unique prefix of it (`resolve`), as
//! `archgate approve`, `deny` and `show` take it. The ids in an error are escaped for the terminal.

use serde_json::Value;
use std::path::PathBuf;
use std::process::ExitCode;

use super::approvals::{NONE_RUNNING, gather};
use super::out;
use archgate_core::text::for_terminal;

/// How many matching ids an ambiguous prefix lists.
const LISTED: usize = 8;

/// A name that does not pick out one waiting call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error(
        "no pending approval {0}: it was already decided, withdrawn, or never existed (see `archgate approvals`)"
    )]
    NoMatch(String),
    #[error("{prefix} names {} waiting calls: {}; give more of the id", .matches.len(), .matches.join(", "))]
    Ambiguous {
        prefix: String,
        matches: Vec<String>,
    },
    #[error("an id is needed: nothing to match against an empty one")]
    Empty,
}

impl IdError {
    pub fn kind(&self) -> &'static str {
        match self {
            IdError::NoMatch(_) => "not_pending",
            IdError::Ambiguous { .. } => "ambiguous_id",
            IdError::Empty => "invalid_arguments",
        }
    }
}

/// The waiting call `name` picks out: the one whose id it is, else the only one whose id starts
/// with it. The ids in an error are escaped for the terminal.
pub fn resolve<'a>(name: &str, all: &'a [Value]) -> Result<&'a Value, IdError> {
    if name.is_empty() {
        return Err(IdError::Empty);
    }
    let id = |q: &Value| q["id"].as_str().unwrap_or("").to_owned();
    if let Some(q) = all.iter().find(|q| id(q) == name) {
        return Ok(q);
    }
    let hits: Vec<&Value> = all.iter().filter(|q| id(q).starts_with(name)).collect();
    match hits.as_slice() {
        [one] => Ok(one),
        [] => Err(IdError::NoMatch(for_terminal(name).into_owned())),
        many => {
            let mut matches: Vec<String> = many
                .iter()
                .take(LISTED)
                .map(|q| for_terminal(&id(q)).into_owned())
                .collect();
            if many.len() > LISTED {
                matches.push(format!("… {} more", many.len() - LISTED));
            }
            Err(IdError::Ambiguous {
                prefix: for_terminal(name).into_owned(),
                matches,
            })
        }
    }
}

/// The waiting calls, or the exit to take when none can be listed.
pub(super) fn waiting(config: Option<PathBuf>) -> anyhow::Result<Result<Vec<Value>, ExitCode>> {
    let (reached, all) = gather(config)?;
    if reached == 0 {
        out(NONE_RUNNING);
        return Ok(Err(ExitCode::from(1)));
    }
    Ok(Ok(all))
}

/// The call `name` picks out, or the exit after saying why none.
pub(super) fn pick(config: Option<PathBuf>, name: &str) -> anyhow::Result<Result<Value, ExitCode>> {
    let all = match waiting(config)? {
        Ok(a) => a,
        Err(code) => return Ok(Err(code)),
    };
    match resolve(name, &all) {
        Ok(q) => Ok(Ok(q.clone())),
        Err(e) => {
            out(format!("{}: {e}", e.kind()));
            Ok(Err(ExitCode::from(match e {
                IdError::NoMatch(_) => 1,
                _ => 2,
            })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn calls() -> Vec<Value> {
        ["a1b2c3", "a1ff00", "b7", "b7x"]
            .iter()
            .map(|id| json!({"id": id}))
            .collect()
    }

    #[test]
    fn an_id_is_named_whole_or_by_a_unique_prefix() {
        let all = calls();
        assert_eq!(resolve("a1b", &all).unwrap()["id"], "a1b2c3");
        // A whole id wins over the longer one it begins.
        assert_eq!(resolve("b7", &all).unwrap()["id"], "b7");
        assert_eq!(resolve("b7x", &all).unwrap()["id"], "b7x");
    }

    #[test]
    fn an_ambiguous_prefix_is_a_typed_error_listing_the_matches() {
        let all = calls();
        let e = resolve("a1", &all).unwrap_err();
        assert_eq!(e.kind(), "ambiguous_id");
        assert_eq!(
            e,
            IdError::Ambiguous {
                prefix: "a1".into(),
                matches: vec!["a1b2c3".into(), "a1ff00".into()]
            }
        );
        assert!(e.to_string().contains("a1b2c3, a1ff00"), "{e}");
        assert_eq!(resolve("zz", &all).unwrap_err().kind(), "not_pending");
        assert_eq!(resolve("", &all).unwrap_err(), IdError::Empty);
    }

    #[test]
    fn a_prefix_that_is_not_text_is_shown_escaped() {
        let e = resolve("\u{1b}[2K", &calls()).unwrap_err();
        assert!(e.to_string().contains("\\x1b[2K"), "{e}");
    }
}

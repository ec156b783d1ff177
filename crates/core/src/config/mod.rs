//! archgate's configuration: read in two stages (raw as written, then validated), never fatal.
//!
//! A file applies whole or not at all. `load` always yields a usable `Config` and every
//! `Problem` with its line: a syntax error, a wrong type, an unknown key, a value out of range,
//! an entry that cannot be read (`deny = ["a*b"]`) — any one of them and nothing of the file
//! applies (`Loaded::applies` is false, the config is the defaults). An entry is never dropped
//! with the rest applied: a misspelt deny rule must not leave the person believing it holds.
//! What *runs* never starts on those defaults when a file exists: `ConfigHandle::open_guarded`
//! falls back to the last config that applied (`guard.rs`). The running server holds the config
//! as an immutable `Arc<Config>` snapshot (`ConfigHandle`); one call is decided under one
//! snapshot.

mod example;
mod exec;
pub mod guard;
pub mod known;
mod locate;
pub mod raw;
mod reload;
mod restart;
mod types;
mod validate;

pub use example::EXAMPLE;
pub use exec::{OmarchySource, expand_home};
pub use guard::ConfigRefused;
pub use reload::{ConfigHandle, ConfigStatus, ReloadOutcome, in_force};
pub use restart::{START_ONLY, StartOnly, restart_needed};
pub use types::*;
pub use validate::*;

use std::path::Path;

/// A problem found while loading: where, and what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// 1-based line in config.toml, when known.
    pub line: Option<usize>,
    /// Dotted key path (`approval.timeout_s`), when known.
    pub key: Option<String>,
    pub message: String,
    /// True when the problem keeps the file from applying (every problem in the file does; a
    /// note about the config in force instead does not).
    pub fatal_to_file: bool,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.line, &self.key) {
            (Some(l), Some(k)) => write!(f, "line {l}: {k}: {}", self.message),
            (Some(l), None) => write!(f, "line {l}: {}", self.message),
            (None, Some(k)) => write!(f, "{k}: {}", self.message),
            (None, None) => write!(f, "{}", self.message),
        }
    }
}

/// What loading produced: the config in force and everything worth telling the person.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub problems: Vec<Problem>,
    /// False when the file is not applied: it did not parse, or an entry in it cannot be
    /// applied (the config is then all defaults).
    pub applies: bool,
    /// False when there is no file (defaults, and that is fine).
    pub exists: bool,
}

/// Reads and validates `path`, as the person's uid would have it applied (`guard::read_guarded`:
/// a file another user could write is not applied). A missing file is not a problem here: it
/// means defaults (whether a last good copy applies instead is `ConfigHandle`'s business).
pub fn load(path: &Path) -> Loaded {
    load_as(path, nix::unistd::getuid().as_raw())
}

/// [`load`] for `uid`.
pub fn load_as(path: &Path, uid: u32) -> Loaded {
    match guard::read_guarded(path, uid) {
        guard::OnDisk::Text(text) => load_str(&text),
        guard::OnDisk::Missing => Loaded {
            config: Config::default(),
            problems: Vec::new(),
            applies: true,
            exists: false,
        },
        guard::OnDisk::Refused(why) => refused(why),
    }
}

/// A file that may not be applied whatever it says (`guard::read_guarded`).
pub(crate) fn refused(why: String) -> Loaded {
    Loaded {
        config: Config::default(),
        problems: vec![Problem {
            line: None,
            key: None,
            message: why,
            fatal_to_file: true,
        }],
        applies: false,
        exists: true,
    }
}

/// Parses config text (stage one), then validates it (stage two).
pub fn load_str(text: &str) -> Loaded {
    let mut problems = Vec::new();
    let de = match toml::de::Deserializer::parse(text) {
        Ok(de) => de,
        Err(e) => return syntax_failure(text, &e),
    };
    let mut unknown = Vec::new();
    let raw: raw::RawConfig = match serde_ignored::deserialize(de, |p| {
        unknown.push(p.to_string().replace("?.", "").replace(".?", ""))
    }) {
        Ok(r) => r,
        Err(e) => return syntax_failure(text, &e),
    };
    for key in unknown {
        problems.push(unknown_key(text, key));
    }
    let config = validate::validate(raw, &mut |key: &str, message: String| {
        problems.push(Problem {
            line: locate::line_of_key(text, key),
            key: Some(key.to_owned()),
            message,
            fatal_to_file: true,
        })
    });
    let applies = problems.is_empty();
    Loaded {
        // Whole or not at all: a file with any problem gives nothing of itself.
        config: if applies { config } else { Config::default() },
        problems,
        applies,
        exists: true,
    }
}

/// A key archgate does not know: a misspelt `[policy] dney` would otherwise apply nothing while
/// the person believes it holds, so it keeps the file from applying like any other problem.
fn unknown_key(text: &str, key: String) -> Problem {
    Problem {
        line: locate::line_of_key(text, &key),
        message: "unknown key (misspelt?); the file was not applied".into(),
        key: Some(key),
        fatal_to_file: true,
    }
}

/// The file is not applied (defaults, or the last good config). Every problem is still
/// reported: toml and serde stop at the first, so the line at fault is set aside (blanked, or a
/// table header renamed to a set-aside table of its own, so the keys under it stay apart) and
/// the rest read again, until it reads or no progress is made; then the rest's unknown keys and
/// out-of-range values are reported too.
fn syntax_failure(text: &str, e: &toml::de::Error) -> Loaded {
    const SET_ASIDE: &str = "archgate-check-skipped-";
    let line_of =
        |t: &str, e: &toml::de::Error| e.span().map(|s| locate::line_of_offset(t, s.start));
    let mut problems = vec![Problem {
        line: line_of(text, e),
        key: None,
        message: format!("{}; the file was not applied", e.message().trim()),
        fatal_to_file: true,
    }];
    let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
    let mut at = problems[0].line;
    for _ in 0..50 {
        let Some(l) = at.filter(|l| (1..=lines.len()).contains(l)) else {
            break;
        };
        let was = &mut lines[l - 1];
        *was = if was.trim_start().starts_with('[') {
            format!("[{SET_ASIDE}{l}]")
        } else {
            String::new()
        };
        let rest = lines.join("\n");
        let mut again = load_parsed(&rest);
        match again {
            Ok(ref mut more) => {
                problems.extend(
                    more.drain(..)
                        .filter(|p| !p.key.as_deref().is_some_and(|k| k.starts_with(SET_ASIDE))),
                );
                break;
            }
            Err(e) => {
                let Some(next) = line_of(&rest, &e) else {
                    break;
                };
                if problems.iter().any(|p| p.line == Some(next)) {
                    // Reported already (an unclosed array is found lines below its start):
                    // set aside the nearest line above that is still there, and look again.
                    at = (1..next.min(l + 1)).rev().find(|&i| {
                        !lines[i - 1].trim().is_empty() && !lines[i - 1].contains(SET_ASIDE)
                    });
                    continue;
                }
                let next = Some(next);
                problems.push(Problem {
                    line: next,
                    key: None,
                    message: e.message().trim().to_owned(),
                    fatal_to_file: true,
                });
                at = next;
            }
        }
    }
    Loaded {
        config: Config::default(),
        problems,
        applies: false,
        exists: true,
    }
}

/// Stage one and two for text known to need another look: its problems, or the error that
/// still stops it.
fn load_parsed(text: &str) -> Result<Vec<Problem>, toml::de::Error> {
    let de = toml::de::Deserializer::parse(text)?;
    let mut unknown = Vec::new();
    let raw: raw::RawConfig = serde_ignored::deserialize(de, |p| {
        unknown.push(p.to_string().replace("?.", "").replace(".?", ""))
    })?;
    let mut problems: Vec<Problem> = unknown
        .into_iter()
        .map(|key| unknown_key(text, key))
        .collect();
    validate::validate(raw, &mut |key: &str, message: String| {
        problems.push(Problem {
            line: locate::line_of_key(text, key),
            key: Some(key.to_owned()),
            message,
            fatal_to_file: true,
        })
    });
    Ok(problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_parses_cleanly_and_equals_defaults() {
        let l = load_str(EXAMPLE);
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(l.config, Config::default());
    }

    #[test]
    fn syntax_error_keeps_defaults_and_names_the_line() {
        let l = load_str("[approval]\ntimeout_s = 30\n\n[policy\nallow = []\n");
        assert!(!l.applies);
        assert_eq!(l.config, Config::default());
        assert_eq!(l.problems.len(), 1);
        assert_eq!(l.problems[0].line, Some(4));
    }

    #[test]
    fn every_syntax_type_and_range_problem_is_reported_not_only_the_first() {
        let text = "[approval]\ntimeout_s = \"soon\"\nmax_questions = 9999\n\n[policy\nallow = [\"theme **\"]\n\
                    ask = [1,\n[server]\nport = \"x\"\n";
        let l = load_str(text);
        assert!(!l.applies);
        assert_eq!(l.config, Config::default(), "nothing of it applied");
        let lines: Vec<Option<usize>> = l.problems.iter().map(|p| p.line).collect();
        // The first syntax error, then the others and the type and range problems around them.
        assert_eq!(l.problems[0].line, Some(5), "{:?}", l.problems);
        for want in [2, 3, 9] {
            assert!(
                lines.contains(&Some(want)),
                "line {want} in {:#?}",
                l.problems
            );
        }
        assert!(
            !l.problems
                .iter()
                .any(|p| p.key.as_deref().is_some_and(|k| k.contains("skipped"))),
            "{:?}",
            l.problems
        );
    }

    #[test]
    fn wrong_type_names_the_line() {
        let l = load_str("[approval]\n\ntimeout_s = \"soon\"\n");
        assert!(!l.applies);
        assert_eq!(l.problems[0].line, Some(3), "{:?}", l.problems);
    }

    /// An unknown key is a misspelling as often as not (`[policy] dney`): the file does not
    /// apply, and every unknown key is named with its line.
    #[test]
    fn unknown_keys_keep_the_file_from_applying() {
        let l = load_str("[approval]\ntimeout_s = 30\ncolour = \"red\"\n[nonsense]\nx = 1\n");
        assert!(!l.applies);
        assert_eq!(l.config, Config::default(), "nothing of it applied");
        assert!(l.problems.iter().all(|p| p.fatal_to_file));
        let l = load_str("[policy]\ndney = [\"aur_search\"]\n");
        assert!(!l.applies);
        assert_eq!(l.problems[0].key.as_deref(), Some("policy.dney"));
        let l = load_str("[approval]\ntimeout_s = 30\ncolour = \"red\"\n[nonsense]\nx = 1\n");
        let keys: Vec<_> = l
            .problems
            .iter()
            .map(|p| (p.key.clone().unwrap(), p.line))
            .collect();
        assert!(
            keys.contains(&("approval.colour".into(), Some(3))),
            "{keys:?}"
        );
        assert!(
            keys.iter()
                .any(|(k, l)| k.starts_with("nonsense") && *l == Some(4)),
            "{keys:?}"
        );
    }

    /// A presence typo keeps the whole file from applying (the last good copy stays); the value
    /// `validate` would have put in its place is still the strictest, never the weakest.
    #[test]
    fn the_untrusted_window_is_the_persons_and_bounded() {
        let l = load_str("");
        assert_eq!(
            l.config.approval.untrusted_window,
            std::time::Duration::from_secs(600)
        );
        let l = load_str("[approval]\nuntrusted_window_s = 30\n");
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(
            l.config.approval.untrusted_window,
            std::time::Duration::from_secs(30)
        );
        for bad in ["0", "86401"] {
            let l = load_str(&format!("[approval]\nuntrusted_window_s = {bad}\n"));
            assert_eq!(
                l.config.approval.untrusted_window,
                std::time::Duration::from_secs(600)
            );
            assert!(
                l.problems
                    .iter()
                    .any(|p| p.key.as_deref() == Some("approval.untrusted_window_s")),
                "{:?}",
                l.problems
            );
        }
    }

    #[test]
    fn a_presence_typo_is_the_strictest_setting_not_the_weakest() {
        use crate::presence::Presence;
        assert_eq!(load_str("").config.approval.presence, Presence::Auto);
        for (v, want) in [
            ("off", Presence::Off),
            ("auto", Presence::Auto),
            ("polkit", Presence::Polkit),
        ] {
            let l = load_str(&format!("[approval]\npresence = \"{v}\"\n"));
            assert_eq!(l.config.approval.presence, want);
            assert!(l.problems.is_empty(), "{:?}", l.problems);
        }
        let l = load_str("[approval]\npresence = \"of\"\n");
        assert!(!l.applies);
        let mut said = Vec::new();
        let raw: raw::RawConfig = toml::from_str("[approval]\npresence = \"of\"\n").unwrap();
        let c = validate::validate(raw, &mut |k, m| said.push((k.to_owned(), m)));
        assert_eq!(c.approval.presence, Presence::Polkit);
        assert_eq!(said.len(), 1);
        assert!(
            l.problems
                .iter()
                .any(|p| p.key.as_deref() == Some("approval.presence") && p.line == Some(2))
        );
    }

    /// `clients.NAME.preset` and `wiki.prefer` are enums, validated once: every spelling maps
    /// to its value, and a typo is a problem naming the key, its line and the allowed values —
    /// a preset typo grants the narrowest preset, never the widest.
    #[test]
    fn enum_values_are_validated_once_naming_the_key_and_the_allowed_values() {
        use archgate_policy::Preset;
        for (v, want) in [
            ("read-only", Preset::ReadOnly),
            ("desktop", Preset::Desktop),
            ("full", Preset::Full),
        ] {
            let l = load_str(&format!("[clients.x]\npreset = \"{v}\"\n"));
            assert!(l.problems.is_empty(), "{:?}", l.problems);
            assert_eq!(l.config.clients["x"].preset, Some(want));
        }
        // A section that does not say leaves the preset unsaid (never the widest):
        // `clients::grant_parts` keeps the stored one, else the narrowest.
        assert_eq!(load_str("[clients.x]\n").config.clients["x"].preset, None);
        let l = load_str("[clients.x]\n\npreset = \"admin\"\n");
        assert!(!l.applies, "a typo grants nothing: the file does not apply");
        assert!(!l.config.clients.contains_key("x"));
        let p = l
            .problems
            .iter()
            .find(|p| p.key.as_deref() == Some("clients.x.preset"))
            .expect("a problem on the key");
        assert_eq!(p.line, Some(3));
        assert!(
            p.message.contains("\"admin\"") && p.message.contains("read-only, desktop, full"),
            "{}",
            p.message
        );

        for w in WikiPrefer::ALL {
            let l = load_str(&format!("[wiki]\nprefer = \"{}\"\n", w.as_str()));
            assert!(l.problems.is_empty(), "{:?}", l.problems);
            assert_eq!(l.config.wiki.prefer, w);
        }
        let l = load_str("[wiki]\nprefer = \"fastest\"\n");
        assert!(!l.applies);
        let p = l
            .problems
            .iter()
            .find(|p| p.key.as_deref() == Some("wiki.prefer"))
            .expect("a problem on the key");
        assert!(
            p.message
                .contains("offline_first, online_first, offline_only, online_only"),
            "{}",
            p.message
        );
    }

    #[test]
    fn a_journal_dir_must_be_absolute() {
        let l = load_str("[diagnostics]\njournal_dir = \"/mnt/var/log/journal\"\n");
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        assert_eq!(
            l.config.diagnostics.journal_dir.as_deref(),
            Some(Path::new("/mnt/var/log/journal"))
        );
        let l = load_str("[diagnostics]\njournal_dir = \"var/log/journal\"\n");
        assert!(!l.applies);
        assert!(
            l.problems
                .iter()
                .any(|p| p.key.as_deref() == Some("diagnostics.journal_dir") && p.line == Some(2))
        );
    }

    #[test]
    fn out_of_range_values_keep_the_file_from_applying() {
        let l = load_str(
            "[approval]\ntimeout_s = 4000\n[policy]\ndeny = [\"pkg_remove\"]\nallow = [\"theme **\"]\n",
        );
        assert!(!l.applies);
        assert!(l.config.policy.rules.is_empty(), "not even the good deny");
        assert!(
            l.problems
                .iter()
                .any(|p| p.key.as_deref() == Some("approval.timeout_s") && p.line == Some(2))
        );
        assert!(
            l.problems
                .iter()
                .any(|p| p.key.as_deref() == Some("policy.allow") && p.line == Some(5))
        );
    }
}

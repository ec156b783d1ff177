//! A `grep` is matched here, on each message as the answer shows it (its command line withheld,
//! cut to `MESSAGE_MAX`), never by journalctl on the whole message: everything an answer says —
//! its entries, its `next` cursor, how full the page is, how long it took — then depends only on
//! the text shown (attack 14 F4: journalctl's `--grep` matched withheld arguments, and the page's
//! note, then its `next` cursor, told whether a withheld password began with a guessed prefix;
//! class: *a signal derived from the withheld text*).
//!
//! journalctl's `--grep` semantics are kept where the `regex` crate has them: "smart case" (the
//! match ignores case unless the pattern holds a capital letter, journalctl(1) `--grep`; journalctl
//! looks for `[[:upper:]]`, ASCII, in the pattern's text, and so does this). What differs from
//! PCRE2: look-around and back-references are refused as an invalid pattern (the `regex` crate
//! has neither), and `\d`, `\w`, `\s`, `\b` are Unicode-aware (PCRE2 without `UCP`: ASCII).

use regex::{Regex, RegexBuilder};

use crate::diag::DiagError;

/// The compiled size a pattern may reach (the `regex` crate's own guard against a pattern
/// that would take too much memory).
const COMPILED_MAX: usize = 1 << 20;

/// A compiled grep.
#[derive(Debug)]
pub(crate) struct Grep(Regex);

impl Grep {
    /// Compiles `pattern` as journalctl would read it (see the module doc for what differs).
    pub(crate) fn new(pattern: &str) -> Result<Grep, DiagError> {
        let sensitive = pattern.bytes().any(|b| b.is_ascii_uppercase());
        RegexBuilder::new(pattern)
            .case_insensitive(!sensitive)
            .size_limit(COMPILED_MAX)
            .build()
            .map(Grep)
            .map_err(|e| DiagError::InvalidArgument {
                field: "grep",
                why: match e {
                    regex::Error::CompiledTooBig(_) => {
                        "the pattern is too large once compiled".to_owned()
                    }
                    e => format!(
                        "not a pattern this server reads (PCRE2 without look-around or back-references): {e}"
                    ),
                },
            })
    }

    /// Whether `message` (as shown) matches.
    pub(crate) fn matches(&self, message: &str) -> bool {
        self.0.is_match(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smart_case_as_journalctl() {
        let lower = Grep::new("session opened").unwrap();
        assert!(lower.matches("pam_unix: Session Opened for alice"));
        let upper = Grep::new("Session").unwrap();
        assert!(!upper.matches("pam_unix: session opened"));
        assert!(upper.matches("pam_unix: Session opened"));
    }

    #[test]
    fn what_pcre2_has_and_regex_has_not_is_a_clear_error() {
        for p in ["(?<=a)b", r"(a)\1", "a(", "[z-a]"] {
            let e = Grep::new(p).unwrap_err();
            assert_eq!(e.kind(), "invalid_arguments", "{p}");
        }
        assert!(Grep::new(&"(a|b)".repeat(200)).is_ok());
        let e = Grep::new(r"\w{1000}{1000}").unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
    }
}

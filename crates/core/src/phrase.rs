//! How a tool says what a call wants, declared beside the tool (`ToolSpec::says`): a few cases,
//! each a condition on the arguments and a template. `sentence.rs` builds the person's sentence
//! from it.

/// How a tool says what a call wants. The first case whose condition holds and whose
/// placeholders all have a value is used; see `sentence::sentence`.
#[derive(Debug, Clone, Copy)]
pub struct Phrase {
    /// `(when, says)` pairs. `when` is `""` (always), `"arg"` (the argument is present and not
    /// null) or `"arg=value"` (a string argument with that value). `says` follows "wants to" and
    /// may hold placeholders: `{arg}` (an argument's value, in bold), `{target}` (the resolved
    /// target, in bold), `{route}` (the canonical route, in bold), `{tool}` (the tool's
    /// title), `{size:arg}` (a text argument's lines and bytes: "42 lines (2.4 KB)") and
    /// `{link:arg}` (an address with its domain in bold).
    pub cases: &'static [(&'static str, &'static str)],
    /// What the call replaces, in the person's words ("what is on your clipboard now"), shown
    /// beside the text it puts there.
    pub replaces: Option<&'static str>,
}

impl Phrase {
    /// The phrase of a tool that only reads.
    pub const READS: Phrase = Phrase {
        cases: &[("", "read {tool} (it changes nothing)")],
        replaces: None,
    };

    /// What is wrong with the phrase's templates (an unclosed or unknown placeholder), for the
    /// catalogue's test: a template that cannot be filled would always fall back.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.cases.is_empty() {
            out.push("no case".to_owned());
        }
        for (_, says) in self.cases {
            let mut rest = *says;
            while let Some(open) = rest.find('{') {
                let Some(len) = rest[open..].find('}') else {
                    out.push(format!("{says:?}: an unclosed placeholder"));
                    break;
                };
                let key = &rest[open + 1..open + len];
                let known = match key.split_once(':') {
                    Some((kind, arg)) => matches!(kind, "size" | "link") && !arg.is_empty(),
                    None => !key.is_empty() && !key.contains(['{', ' ']),
                };
                if !known {
                    out.push(format!("{says:?}: unknown placeholder {{{key}}}"));
                }
                rest = &rest[open + len + 1..];
            }
        }
        out
    }

    /// A phrase of cases, replacing nothing.
    pub const fn cases(cases: &'static [(&'static str, &'static str)]) -> Phrase {
        Phrase {
            cases,
            replaces: None,
        }
    }
}

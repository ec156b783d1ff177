//! Route patterns and the person's `deny` / `ask` / `allow` rule lists.
//!
//! A route is a sequence of space-separated words (`"theme set"`). Routes are compared after
//! normalization: surrounding and repeated whitespace collapsed, ASCII letters lowercased, so a
//! `deny` written as `"Theme  *"` still restricts `theme set`.
//!
//! A pattern is either an exact route (`"theme set"`) or a prefix ending in `*`. A lone `*`
//! word is a prefix on word boundaries: `"theme *"` matches `theme` and `theme set x`, never
//! `themes` (and `"*"` matches everything). A `*` at the end of a word is a prefix of that word,
//! as a person writes it: `"aur_*"` matches `aur_search` and `aur_info`, `"theme s*"` matches
//! `theme set x`. A `*` anywhere else (`"a*b"`, `"* theme"`, `"theme**"`) is not a pattern: the
//! entry is refused with [`PatternError::MisplacedStar`], never dropped.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A route in canonical form: words separated by one space, ASCII lowercase.
pub fn normalize_route(route: &str) -> String {
    let mut out = String::with_capacity(route.len());
    for word in route.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().map(|c| c.to_ascii_lowercase()));
    }
    out
}

/// One pattern from the config: an exact route or a word-boundary prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern {
    /// Normalized words before the `*` (all words for an exact pattern).
    words: Vec<String>,
    /// Whether the pattern ended in `*`.
    prefix: bool,
    /// For `"aur_*"`: the start of the word after `words` (`aur_`); empty for a lone `*`.
    stem: String,
}

/// Why a pattern string is not a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The pattern has no words.
    #[error("the pattern is empty")]
    Empty,
    /// A `*` appears anywhere but at the end of the last word.
    #[error(
        "`*` may only end the last word (\"theme *\", \"aur_*\"); got {word:?}, which cannot be read"
    )]
    MisplacedStar {
        /// The offending word.
        word: String,
    },
    /// A control character (newline, tab other than whitespace, NUL...) appears.
    #[error("the pattern contains a control character")]
    ControlCharacter,
}

impl PatternError {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        "malformed"
    }
}

impl Pattern {
    /// Parses `"theme set"`, `"theme *"`, `"aur_*"` or `"*"`.
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        if text.chars().any(|c| c.is_control() && !c.is_whitespace()) {
            return Err(PatternError::ControlCharacter);
        }
        let normalized = normalize_route(text);
        let mut words: Vec<String> = normalized.split(' ').map(str::to_owned).collect();
        if normalized.is_empty() {
            return Err(PatternError::Empty);
        }
        let mut stem = String::new();
        let prefix = words.last().is_some_and(|w| w.ends_with('*'));
        if prefix {
            let last = words.pop().unwrap_or_default();
            stem = last[..last.len() - 1].to_owned();
            if stem.contains('*') {
                return Err(PatternError::MisplacedStar { word: last });
            }
        }
        if let Some(word) = words.iter().find(|w| w.contains('*')) {
            return Err(PatternError::MisplacedStar { word: word.clone() });
        }
        Ok(Pattern {
            words,
            prefix,
            stem,
        })
    }

    /// An exact pattern for `route` (normalized). A route containing `*` is matched literally.
    pub fn exact(route: &str) -> Self {
        Pattern {
            words: split_words(route),
            prefix: false,
            stem: String::new(),
        }
    }

    /// Whether this is a prefix pattern (`"... *"`).
    pub fn is_prefix(&self) -> bool {
        self.prefix
    }

    /// Whether this pattern matches `route` (normalized before comparing).
    pub fn matches(&self, route: &str) -> bool {
        let mut route_words = route.split_whitespace();
        for want in &self.words {
            match route_words.next() {
                Some(got) if got.eq_ignore_ascii_case(want) => {}
                _ => return false,
            }
        }
        if !self.prefix {
            return route_words.next().is_none();
        }
        if self.stem.is_empty() {
            return true;
        }
        route_words.next().is_some_and(|got| {
            got.get(..self.stem.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(&self.stem))
        })
    }
}

fn split_words(route: &str) -> Vec<String> {
    let normalized = normalize_route(route);
    if normalized.is_empty() {
        Vec::new()
    } else {
        normalized.split(' ').map(str::to_owned).collect()
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words.join(" "))?;
        if self.prefix {
            if !self.words.is_empty() {
                f.write_str(" ")?;
            }
            f.write_str(&self.stem)?;
            f.write_str("*")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Pattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pattern::parse(s)
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Pattern::parse(&text).map_err(|e| serde::de::Error::custom(format!("{text:?}: {e}")))
    }
}

/// Which of the person's lists a rule came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleList {
    /// Never run.
    Deny,
    /// Always ask.
    Ask,
    /// Run without asking (subject to tier and acknowledgement).
    Allow,
}

impl RuleList {
    /// The config key: `deny`, `ask`, `allow`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleList::Deny => "deny",
            RuleList::Ask => "ask",
            RuleList::Allow => "allow",
        }
    }
}

impl fmt::Display for RuleList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The person's rules, read in the order deny → ask → allow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Routes that never run.
    pub deny: Vec<Pattern>,
    /// Routes that always ask.
    pub ask: Vec<Pattern>,
    /// Routes that run without asking.
    pub allow: Vec<Pattern>,
}

/// An entry in the rule lists that is not a valid pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{list}[{index}] {entry:?}: {source}")]
pub struct RulesError {
    /// The list holding the entry.
    pub list: RuleList,
    /// Its position in that list (0-based).
    pub index: usize,
    /// The entry as written.
    pub entry: String,
    /// What is wrong with it.
    #[source]
    pub source: PatternError,
}

impl RulesError {
    /// Stable error code.
    pub fn kind(&self) -> &'static str {
        "malformed"
    }
}

/// The rule that matched a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleMatch<'a> {
    /// The list it is in.
    pub list: RuleList,
    /// The pattern.
    pub pattern: &'a Pattern,
}

impl RuleMatch<'_> {
    /// How the rule is written in config, for people: `deny: "theme *"`.
    pub fn describe(&self) -> String {
        format!("{}: \"{}\"", self.list, self.pattern)
    }
}

impl Rules {
    /// Builds rules from the strings as written in config, naming the first bad entry.
    pub fn from_lists<S: AsRef<str>>(
        deny: &[S],
        ask: &[S],
        allow: &[S],
    ) -> Result<Self, RulesError> {
        fn parse_list<S: AsRef<str>>(
            list: RuleList,
            items: &[S],
        ) -> Result<Vec<Pattern>, RulesError> {
            items
                .iter()
                .enumerate()
                .map(|(index, s)| {
                    Pattern::parse(s.as_ref()).map_err(|source| RulesError {
                        list,
                        index,
                        entry: s.as_ref().to_owned(),
                        source,
                    })
                })
                .collect()
        }
        Ok(Rules {
            deny: parse_list(RuleList::Deny, deny)?,
            ask: parse_list(RuleList::Ask, ask)?,
            allow: parse_list(RuleList::Allow, allow)?,
        })
    }

    /// The rule that decides `route`: the first match in `deny`, then `ask`, then `allow`.
    ///
    /// Within `allow`, an exact pattern wins over a prefix wherever it is written, because an
    /// exact allow grants directly while a prefix allow needs acknowledgement for each route.
    pub fn first_match(&self, route: &str) -> Option<RuleMatch<'_>> {
        fn find<'p>(list: RuleList, patterns: &'p [Pattern], route: &str) -> Option<RuleMatch<'p>> {
            patterns
                .iter()
                .find(|p| p.matches(route))
                .map(|pattern| RuleMatch { list, pattern })
        }
        find(RuleList::Deny, &self.deny, route)
            .or_else(|| find(RuleList::Ask, &self.ask, route))
            .or_else(|| {
                self.allow
                    .iter()
                    .find(|p| !p.is_prefix() && p.matches(route))
                    .map(|pattern| RuleMatch {
                        list: RuleList::Allow,
                        pattern,
                    })
            })
            .or_else(|| find(RuleList::Allow, &self.allow, route))
    }

    /// [`Rules::first_match`] over several names of one target: a deny on any name wins over
    /// an ask on any, which wins over an exact allow on any, which wins over a prefix allow.
    /// Another spelling of a denied target is still denied.
    pub fn first_match_any(&self, names: &[&str]) -> Option<RuleMatch<'_>> {
        fn find<'p>(
            list: RuleList,
            patterns: &'p [Pattern],
            names: &[&str],
            want: impl Fn(&Pattern) -> bool,
        ) -> Option<RuleMatch<'p>> {
            patterns
                .iter()
                .find(|p| want(p) && names.iter().any(|n| p.matches(n)))
                .map(|pattern| RuleMatch { list, pattern })
        }
        find(RuleList::Deny, &self.deny, names, |_| true)
            .or_else(|| find(RuleList::Ask, &self.ask, names, |_| true))
            .or_else(|| find(RuleList::Allow, &self.allow, names, |p| !p.is_prefix()))
            .or_else(|| find(RuleList::Allow, &self.allow, names, |_| true))
    }

    /// [`Rules::first_match_any`], where a deny or ask written as the tool's own name (`deny =
    /// ["omarchy_run"]`, `ask = ["processes"]`) covers every call of that tool, whatever route it
    /// takes (`omarchy_run state`, `processes cmdline`): a person who names the tool means all of
    /// it (attack 3, F6: the bare name matched only a call with no route, silently). Grants do not
    /// widen: an allow still matches the call's own names only.
    pub fn first_match_for_tool(&self, names: &[&str], tool: &str) -> Option<RuleMatch<'_>> {
        let mut with_tool: Vec<&str> = names.to_vec();
        if !tool.is_empty() {
            with_tool.push(tool);
        }
        fn restrict<'p>(
            list: RuleList,
            patterns: &'p [Pattern],
            names: &[&str],
        ) -> Option<RuleMatch<'p>> {
            patterns
                .iter()
                .find(|p| names.iter().any(|n| p.matches(n)))
                .map(|pattern| RuleMatch { list, pattern })
        }
        restrict(RuleList::Deny, &self.deny, &with_tool)
            .or_else(|| restrict(RuleList::Ask, &self.ask, &with_tool))
            .or_else(|| match self.first_match_any(names) {
                Some(m) if m.list == RuleList::Allow => Some(m),
                _ => None,
            })
    }

    /// Whether there are no rules at all.
    pub fn is_empty(&self) -> bool {
        self.deny.is_empty() && self.ask.is_empty() && self.allow.is_empty()
    }
}

/// The rule lists as written: `{ deny = [..], ask = [..], allow = [..] }`, each optional.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    ask: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
}

impl<'de> Deserialize<'de> for Rules {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawRules::deserialize(d)?;
        Rules::from_lists(&raw.deny, &raw.ask, &raw.allow).map_err(serde::de::Error::custom)
    }
}

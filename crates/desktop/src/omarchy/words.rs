//! The words of a script's line as the script readers see them (`script.rs`, `past_sudo.rs`,
//! `as_person.rs`): split at whitespace and shell punctuation, quotes dropped. A reading, not a
//! parse: what it finds is judged conservatively.

/// The words of a line, split at whitespace and shell punctuation, quotes dropped.
pub(crate) fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || ";|&(){}`<>!'\"$".contains(c))
        .filter(|w| !w.is_empty())
        .collect()
}

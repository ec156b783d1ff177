//! How withheld text is written in an answer: the marks that replace arguments and variables,
//! and the two cuts every rule uses (a command line to its program, sudo's `ENV=` field whole).
//! A leaf: the rules (`withheld.rs`, `audit.rs`, `writers.rs`, `../transient.rs`) use it and it
//! uses none of them.

/// What replaces withheld arguments.
pub const WITHHELD: &str = "[arguments withheld: a command line may hold secrets]";

/// What replaces the variables sudo logs as set for the command.
pub const ENV_WITHHELD: &str = "[variables withheld: they may hold secrets]";

/// A sudo line with its `ENV=` field (the variables set for the command, before `COMMAND=`)
/// withheld whole: a value may hold spaces, so the field is not split.
pub(crate) fn without_env(message: &str) -> String {
    let Some(at) = message.find(" ; ENV=").map(|i| i + " ; ENV=".len()) else {
        return message.to_owned();
    };
    let end = message[at..].find(" ; ").map_or(message.len(), |e| at + e);
    format!("{}{ENV_WITHHELD}{}", &message[..at], &message[end..])
}

/// `message` with `[at, end)`, a command line, cut to its first word and the withheld note.
pub(crate) fn keep_program(message: &str, at: usize, end: usize) -> String {
    let line = &message[at..end];
    let program = line.split_whitespace().next().unwrap_or("");
    let rest = line[line.find(program).map_or(0, |i| i + program.len())..].trim();
    let mut out = String::with_capacity(message.len());
    out.push_str(&message[..at]);
    out.push_str(program);
    if !rest.is_empty() {
        out.push(' ');
        out.push_str(WITHHELD);
    }
    out.push_str(&message[end..]);
    out
}

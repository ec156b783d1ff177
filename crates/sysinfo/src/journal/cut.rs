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
    let program = first_word(line);
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

/// A command line's first word: a quoted one whole, as systemd (`quote_command_line`: `"…"`
/// with `\` escapes, when the word holds a space or a shell character) and Python's
/// `shlex.join` (`'…'`) write it, so `"/home/alice/My Scripts/backup"` is kept as one program.
fn first_word(line: &str) -> &str {
    let line = line.trim_start();
    let quote = match line.chars().next() {
        Some(q @ ('"' | '\'')) => q,
        _ => return line.split_whitespace().next().unwrap_or(""),
    };
    let mut escaped = false;
    for (i, c) in line.char_indices().skip(1) {
        if escaped {
            escaped = false;
        } else if c == '\\' && quote == '"' {
            escaped = true;
        } else if c == quote {
            // The word goes on to the next whitespace (`'a b'"c"`).
            let after = i + c.len_utf8();
            let tail = line[after..]
                .find(char::is_whitespace)
                .map_or(line.len(), |e| after + e);
            return &line[..tail];
        }
    }
    line
}

/// What replaces a whole message of a writer of command lines whose shape is not known safe.
pub const MESSAGE_WITHHELD: &str =
    "[message withheld: this program logs other programs' command lines]";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_program_is_kept_whole() {
        let m = "\"/home/alice/My Scripts/backup\" --password=S3cret";
        assert_eq!(
            keep_program(m, 0, m.len()),
            format!("\"/home/alice/My Scripts/backup\" {WITHHELD}")
        );
        let m = "'/opt/my app/run' -pS3cret";
        assert_eq!(
            keep_program(m, 0, m.len()),
            format!("'/opt/my app/run' {WITHHELD}")
        );
        let m = "\"/a \\\" b\" x";
        assert_eq!(
            keep_program(m, 0, m.len()),
            format!("\"/a \\\" b\" {WITHHELD}")
        );
        // An unclosed quote is one word to the end: nothing after it is shown apart from it.
        assert_eq!(keep_program("\"/a b", 0, 5), "\"/a b");
        assert_eq!(
            keep_program("/usr/bin/x -y", 0, 13),
            format!("/usr/bin/x {WITHHELD}")
        );
    }
}

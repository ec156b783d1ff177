//! A PAM file's lines and tokens exactly as libpam reads them (attack 16 F1; class: *a parser
//! that re-implements libpam's and differs on input libpam accepts*). The rules are Linux-PAM's
//! line assembler (`libpam/include/pam_assemble_line.h`, also `pam_line.h`) and tokenizer
//! (`libpam/pam_misc.c`: `_pam_tokenize`, `_pam_StrTok` used by `_pam_mkargv`), restated:
//!
//! - The file is cut into lines at `\n` only (`getline`): a `\r` stays in the line.
//! - A line continues into the next when its last character that is not a space, a tab or the
//!   newline is `\`; that `\` becomes a space and what follows it is dropped.
//! - A `#` anywhere ends the logical line: what follows it is dropped and the next line never
//!   joins, even after a `\`.
//! - Leading spaces and tabs of each piece are skipped; a piece that is empty, or only the
//!   newline, starts nothing (but is kept once a line has begun: it ends it).
//! - Tokens are split on space, tab and newline only. A token beginning with `[` runs to the
//!   first `]` not written `\]`, which stands for `]`; the brackets are removed, whatever the
//!   token is (a type, a control, a module argument), and what follows the `]` is the next token.
//!
//! What libpam would read in a way archgate cannot be sure of is an error here, and the hand-off
//! refuses: a NUL byte (C strings end there); a file ending inside a continued line (libpam
//! aborts reading with part of the file installed); a continued line followed by a blank or
//! comment line (the line assembler before `pam_assemble_line.h` skipped such a line and went
//! on joining, the current one ends the line there); a logical line longer than the 1024 bytes
//! the older assembler's buffer held (it aborted reading).

/// The older line assembler's buffer (`BUF_SIZE` in `pam_handlers.c` before
/// `pam_assemble_line.h`).
const MAX_LINE: usize = 1024;

/// One logical line: the number of the physical line it starts on, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub number: usize,
    pub text: String,
}

/// The logical lines of a file, as libpam assembles them.
pub fn assemble(text: &str) -> Result<Vec<Line>, String> {
    if text.contains('\0') {
        return Err("holds a NUL byte, where libpam's reading of a line stops".into());
    }
    let mut out = Vec::new();
    // The line being assembled (libpam's `assembled`: `None` until a piece was added).
    let mut assembled: Option<String> = None;
    let mut starts_at = 0;
    // Whether the last physical line asked to be continued.
    let mut continuing = false;
    // The bytes of the logical line so far, as the older assembler's buffer held them.
    let mut bytes = 0;
    for (index, raw) in text.split_inclusive('\n').enumerate() {
        let (piece, eol) = prepare(raw);
        let nothing = piece.is_empty() || piece.starts_with('\n');
        if continuing && nothing {
            return Err(format!(
                "line {} continues into a blank or comment line, which libpam's versions read \
                 differently",
                index
            ));
        }
        bytes = if continuing {
            bytes + raw.len()
        } else {
            raw.len()
        };
        if bytes >= MAX_LINE {
            return Err(format!(
                "line {} is longer than older libpam reads",
                index + 1
            ));
        }
        if eol {
            continuing = false;
            if assembled.is_some() || !nothing {
                add(&mut assembled, &mut starts_at, index + 1, &piece);
            }
            match assembled.take() {
                Some(line) if !line.is_empty() => out.push(Line {
                    number: starts_at,
                    text: line,
                }),
                _ => {}
            }
        } else {
            continuing = true;
            add(&mut assembled, &mut starts_at, index + 1, &piece);
        }
    }
    if continuing {
        return Err(
            "ends inside a line continued with `\\`, which libpam reads only in part".into(),
        );
    }
    Ok(out)
}

fn add(assembled: &mut Option<String>, starts_at: &mut usize, number: usize, piece: &str) {
    if piece.is_empty() {
        return;
    }
    let line = assembled.get_or_insert_with(|| {
        *starts_at = number;
        String::new()
    });
    line.push_str(piece);
}

/// One physical line prepared as `_pam_str_prepare` does: the piece it adds, and whether the
/// logical line ends with it.
fn prepare(raw: &str) -> (String, bool) {
    // `_pam_str_unescnl`: the last character that is not ' ', '\t' or '\n'; a `\` there
    // becomes a space and the line is cut after it.
    let backslash = match raw
        .char_indices()
        .rev()
        .find(|(_, c)| !matches!(c, ' ' | '\t' | '\n'))
    {
        Some((i, '\\')) => Some(i),
        _ => None,
    };
    let eol = backslash.is_none() || raw.contains('#');
    let mut piece = match backslash {
        Some(i) => format!("{} ", &raw[..i]),
        None => raw.to_owned(),
    };
    // `_pam_str_trim`: leading spaces and tabs skipped; the first `#` ends the text.
    let start = piece.len() - piece.trim_start_matches([' ', '\t']).len();
    piece.drain(..start);
    if let Some(hash) = piece.find('#') {
        piece.truncate(hash);
    }
    (piece, eol)
}

/// The tokens of a logical line as `_pam_tokenize` / `_pam_StrTok` return them.
pub fn tokens(line: &str) -> Vec<String> {
    const DELIMITERS: [char; 3] = [' ', '\n', '\t'];
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        rest = rest.trim_start_matches(DELIMITERS);
        if rest.is_empty() {
            return out;
        }
        if let Some(inner) = rest.strip_prefix('[') {
            let mut token = String::new();
            let mut chars = inner.char_indices().peekable();
            let mut after = inner.len();
            while let Some((i, c)) = chars.next() {
                if c == ']' {
                    after = i + 1;
                    break;
                }
                if c == '\\' && chars.peek().is_some_and(|(_, n)| *n == ']') {
                    chars.next();
                    token.push(']');
                    continue;
                }
                token.push(c);
            }
            out.push(token);
            rest = &inner[after.min(inner.len())..];
        } else {
            let end = rest.find(DELIMITERS).unwrap_or(rest.len());
            out.push(rest[..end].to_owned());
            // The delimiter that ended the token is consumed with it.
            rest = &rest[end..];
        }
    }
}

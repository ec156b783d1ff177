//! Markdown pipe tables for htmd: the cell and row handlers mark their output with private-use
//! characters, and the table handler rebuilds rows and cells from those marks, so cells keep
//! their inline Markdown (code, links) instead of htmd's plain-text cells.

// Private-use characters that carry the table structure from the cell and row handlers to
// the table handler (htmd gives a handler only its children's Markdown).
pub(crate) const CELL: char = '\u{E000}';
pub(crate) const HEAD_CELL: char = '\u{E001}';
const CELL_END: char = '\u{E002}';
pub(crate) const ROW: char = '\u{E003}';
pub(crate) const ROW_END: char = '\u{E004}';

pub(crate) fn marked(kind: char, content: &str) -> String {
    let flat = content.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{kind}{}{CELL_END}", flat.replace('|', "\\|"))
}

/// A pipe table from the marked rows and cells; the first row is the header.
pub(crate) fn markdown_table(content: &str) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut caption = String::new();
    let mut outside = String::new();
    let mut row: Option<Vec<String>> = None;
    let mut cell: Option<String> = None;
    for ch in content.chars() {
        match ch {
            ROW => row = Some(Vec::new()),
            ROW_END => {
                if let Some(r) = row.take().filter(|r| !r.is_empty()) {
                    rows.push(r);
                }
            }
            CELL | HEAD_CELL => cell = Some(String::new()),
            CELL_END => {
                if let (Some(c), Some(r)) = (cell.take(), row.as_mut()) {
                    r.push(c.trim().to_owned());
                }
            }
            _ => match cell.as_mut() {
                Some(c) => c.push(ch),
                None if row.is_none() => outside.push(ch),
                None => {}
            },
        }
    }
    let outside = outside.trim();
    if !outside.is_empty() {
        caption = outside.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    if cols == 0 {
        return format!("\n\n{caption}\n\n");
    }
    let mut md = String::from("\n\n");
    if !caption.is_empty() {
        md.push_str(&format!("*{caption}*\n\n"));
    }
    for (i, r) in rows.iter().enumerate() {
        md.push('|');
        for c in 0..cols {
            md.push(' ');
            md.push_str(r.get(c).map(String::as_str).unwrap_or(""));
            md.push_str(" |");
        }
        md.push('\n');
        if i == 0 {
            md.push('|');
            for _ in 0..cols {
                md.push_str(" --- |");
            }
            md.push('\n');
        }
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_cells_become_a_pipe_table() {
        let content = format!(
            "\n{ROW}{}{}{ROW_END}\n{ROW}{}{ROW_END}",
            marked(HEAD_CELL, "Key"),
            marked(HEAD_CELL, "Action"),
            marked(CELL, "`a|b`")
        );
        assert_eq!(
            markdown_table(&content),
            "\n\n| Key | Action |\n| --- | --- |\n| `a\\|b` |  |\n\n"
        );
        assert_eq!(markdown_table("just text"), "\n\njust text\n\n");
    }
}

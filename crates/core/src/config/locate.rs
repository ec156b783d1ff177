//! Finding the line a config key stands on, for problems that name lines.
//!
//! The TOML parser reports spans for syntax errors; for keys that parse but are unknown or out
//! of range we scan for the table header and the key within it. Good enough for the flat,
//! hand-written files archgate reads; when the key cannot be found the problem has no line.

pub fn line_of_offset(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|b| *b == b'\n')
        .count()
        + 1
}

/// `key` is a dotted path such as `approval.timeout_s` or `clients.local.preset`.
pub fn line_of_key(text: &str, key: &str) -> Option<usize> {
    let parts: Vec<&str> = key.split('.').collect();
    // Try every split of the path into a table header and a key within that table.
    for split in (0..parts.len()).rev() {
        let (table, rest) = parts.split_at(split);
        let header = table.join(".");
        let Some(first) = rest.first() else { continue };
        let mut in_table = header.is_empty();
        for (i, line) in text.lines().enumerate() {
            let t = line.trim();
            if t.starts_with('[') {
                let name = t.trim_matches(|c| c == '[' || c == ']').trim();
                in_table = name == header;
                if rest.len() == 1 && name == format!("{header}.{first}").trim_start_matches('.') {
                    return Some(i + 1);
                }
                continue;
            }
            if in_table && key_of(t) == Some(first) {
                return Some(i + 1);
            }
        }
    }
    None
}

fn key_of(line: &str) -> Option<&str> {
    let (k, _) = line.split_once('=')?;
    Some(k.trim().trim_matches('"'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_in_tables_and_tables_themselves() {
        let text =
            "a = 1\n[approval]\n# c\ntimeout_s = 3\n[clients.local]\npreset = \"x\"\n[nonsense]\n";
        assert_eq!(line_of_key(text, "a"), Some(1));
        assert_eq!(line_of_key(text, "approval.timeout_s"), Some(4));
        assert_eq!(line_of_key(text, "clients.local.preset"), Some(6));
        assert_eq!(line_of_key(text, "nonsense"), Some(7));
        assert_eq!(line_of_key(text, "approval.missing"), None);
        assert_eq!(line_of_offset(text, 7), 2);
    }
}

//! A desktop entry's `Exec=` line read as the desktop-entry specification writes it: the main
//! group's key, quoting and escapes, field codes (`%f`, `%U`…) dropped; and [`split_words`],
//! the one `Exec=` word splitter (`url_handler.rs` puts a URL in place of the field codes).

/// The `Exec=` line of a desktop entry as argv, field codes (`%f`, `%U`…) dropped.
pub fn desktop_entry_exec(entry: &str) -> Option<Vec<String>> {
    let mut in_main = false;
    for line in entry.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_main = line == "[Desktop Entry]";
            continue;
        }
        if !in_main {
            continue;
        }
        if let Some(exec) = line.strip_prefix("Exec=") {
            let argv: Vec<String> = split_words(exec)
                .into_iter()
                .map(|(word, _)| word)
                .filter(|a| !(a.len() == 2 && a.starts_with('%')))
                .map(|a| a.replace("%%", "%"))
                .collect();
            return (!argv.is_empty()).then_some(argv);
        }
    }
    None
}

/// Words of an `Exec=` value split the way the desktop-entry spec quotes it (double quotes;
/// a backslash inside them takes the next character), each with whether it was quoted (a quoted
/// word holds no field code, per the spec). The one splitter: [`desktop_entry_exec`] here and
/// `url_handler::handler_argv`.
pub(crate) fn split_words(s: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut was_quoted = false;
    let mut any = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                was_quoted = true;
                any = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push((std::mem::take(&mut cur), was_quoted));
                    any = false;
                    was_quoted = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push((cur, was_quoted));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_lines_drop_field_codes_and_honour_quotes() {
        let entry = "[Desktop Entry]\nName=X\nExec=\"/opt/My App/run\" --new-window %U\n[Desktop Action new]\nExec=other\n";
        assert_eq!(
            desktop_entry_exec(entry).unwrap(),
            vec!["/opt/My App/run".to_owned(), "--new-window".to_owned()]
        );
        assert_eq!(desktop_entry_exec("[Other]\nExec=x\n"), None);
    }
}

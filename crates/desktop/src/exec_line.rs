//! A desktop entry's `Exec=` line read as the desktop-entry specification writes it: the main
//! group's key, quoting and escapes, field codes (`%f`, `%U`…) dropped.

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
            let argv: Vec<String> = split_exec(exec)
                .into_iter()
                .filter(|a| !(a.len() == 2 && a.starts_with('%')))
                .map(|a| a.replace("%%", "%"))
                .collect();
            return (!argv.is_empty()).then_some(argv);
        }
    }
    None
}

/// Splits an `Exec=` value the way the desktop-entry spec quotes it (double quotes, backslash).
fn split_exec(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            c if c.is_whitespace() && !quoted => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
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
